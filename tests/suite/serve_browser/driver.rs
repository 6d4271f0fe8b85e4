//! The browser side of the page's tests: chromedriver, a WebDriver session with headless Chromium,
//! and waits that poll a DOM condition with a deadline.

use std::future::Future;
use std::io::{BufRead, BufReader};
use std::panic::AssertUnwindSafe;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use futures_util::FutureExt;
use serde_json::{Value, json};

use crate::support::tmux::require;

/// The longest one wait may take: generous, as the whole suite shares two cores with the browsers.
pub const LIMIT: Duration = Duration::from_secs(60);
pub const ENTER: &str = "\u{e007}";

/// Whether Chromium and chromedriver are installed: under `CI=true` a missing one fails the test,
/// elsewhere the test is skipped with the reason printed.
pub fn browser_installed() -> bool {
    require("chromedriver") && require("chromium")
}

fn stop(child: &mut Child) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if child.try_wait().ok().flatten().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// chromedriver on a port of its choosing; it and the browser it started end when dropped.
struct Driver {
    child: Child,
    port: u16,
    profile: tempfile::TempDir,
}

impl Driver {
    fn start() -> Driver {
        let mut child = Command::new("chromedriver")
            .arg("--port=0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        // "ChromeDriver was started successfully on port 40767." — read on a thread, so a
        // chromedriver that never says it bounds the wait instead of hanging the test. The thread
        // keeps draining its output afterwards: a full pipe would block it.
        let stdout = child.stdout.take().expect("piped stdout");
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        let deadline = Instant::now() + LIMIT;
        let line = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match receive.recv_timeout(left) {
                Ok(line) if line.contains("started successfully") => break line,
                Ok(_) => {}
                Err(_) => panic!("chromedriver did not say it listens within {LIMIT:?}"),
            }
        };
        let port = line.trim().trim_end_matches('.').rsplit(' ').next().and_then(|p| p.parse().ok());
        let profile = tempfile::tempdir().expect("browser profile dir");
        Driver { child, port: port.unwrap_or_else(|| panic!("chromedriver's port in {line:?}")), profile }
    }

    async fn browser(&self) -> Client {
        // As root (CI), Chromium runs only without its sandbox; --headless=new is the real browser.
        let caps = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {"args": [
                "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1200,900", format!("--user-data-dir={}", self.profile.path().display()),
            ]},
        });
        let Value::Object(caps) = caps else { unreachable!("a JSON object") };
        ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .expect("a WebDriver session with headless Chromium")
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

/// Runs `body` with a browser session; the session is closed even when `body` panics, so no
/// Chromium outlives the test.
pub fn with_browser<F, Fut>(body: F)
where
    F: FnOnce(Client) -> Fut,
    Fut: Future<Output = ()>,
{
    let driver = Driver::start();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let client = driver.browser().await;
        let outcome = AssertUnwindSafe(body(client.clone())).catch_unwind().await;
        let _ = client.close().await;
        if let Err(panic) = outcome {
            std::panic::resume_unwind(panic);
        }
    });
}

/// Polls the JavaScript expression `condition` until it is truthy, within [`LIMIT`]; its value.
pub async fn wait_for(c: &Client, what: &str, condition: &str) -> Value {
    let deadline = Instant::now() + LIMIT;
    loop {
        // A script run while the page navigates (a login's redirects) fails: not there yet.
        let value = match c.execute(&format!("return ({condition});"), vec![]).await {
            Ok(value) => value,
            Err(err) if Instant::now() <= deadline => {
                let _ = err;
                Value::Null
            }
            Err(err) => panic!(
                "timed out waiting for {what} ({condition}): the page runs no script: {err}; {}",
                where_the_page_is(c).await
            ),
        };
        let falsy = matches!(&value, Value::Null | Value::Bool(false))
            || value.as_str() == Some("")
            || value.as_f64() == Some(0.0);
        if !falsy {
            return value;
        }
        if Instant::now() > deadline {
            panic!("timed out waiting for {what} ({condition}); {}", where_the_page_is(c).await);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The page's address and the start of its text, for a failure's message: a wait that timed out
/// says where the browser was (the provider's page, an error page, a blank tab). Bounded: a page
/// stuck loading must not hold back the failure it explains.
async fn where_the_page_is(c: &Client) -> String {
    tokio::time::timeout(Duration::from_secs(10), page_description(c))
        .await
        .unwrap_or_else(|_| "the browser did not say where it is within 10 s".to_owned())
}

async fn page_description(c: &Client) -> String {
    let url = c.current_url().await.map_or_else(|err| format!("no address ({err})"), |url| url.to_string());
    let text = match c.execute("return document.body ? document.body.innerText : '';", vec![]).await {
        Ok(Value::String(text)) => text.chars().take(800).collect(),
        Ok(other) => other.to_string(),
        Err(err) => format!("(no text: {err})"),
    };
    format!("the browser is at {url} and the page shows:\n{text}")
}

pub async fn js(c: &Client, expression: &str) -> Value {
    c.execute(&format!("return ({expression});"), vec![]).await.expect("run a script in the page")
}

pub async fn type_into(c: &Client, css: &str, text: &str) {
    c.find(Locator::Css(css)).await.unwrap_or_else(|e| panic!("{css}: {e}")).send_keys(text).await.expect("type");
}

pub async fn click(c: &Client, css: &str) {
    c.find(Locator::Css(css)).await.unwrap_or_else(|e| panic!("{css}: {e}")).click().await.expect("click");
}
