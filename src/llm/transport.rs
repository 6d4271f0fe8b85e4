//! Why a request never reached the endpoint: refused or unresolvable (`Connect`), a TLS failure
//! (`Tls`), or the HTTP proxy in the way (`Proxy`), each with its own advice, and the proxy that
//! applies to an endpoint (the same environment variables reqwest reads). Also the one HTTP client
//! builder, with the extra CA certificates of `llm.ca_file`.

use std::path::Path;
use std::time::Duration;

use super::LlmError;

/// How long establishing the TCP (and TLS) connection may take.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Ollama's OpenAI-compatible endpoint, the default `llm.base_url`: only there does the
/// cannot-connect hint talk about Ollama.
pub(crate) const OLLAMA_DEFAULT_URL: &str = "http://localhost:11434/v1";

/// The error for a connect failure whose cause chain reads `chain` (lower or mixed case).
/// `proxy` is the proxy this request went through, if any; `model` may be empty (`GET /models`).
pub(crate) fn connect_error(chain: &str, url: &str, model: &str, proxy: Option<&str>) -> LlmError {
    let lower = chain.to_ascii_lowercase();
    let model = Some(model.to_owned()).filter(|m| !m.is_empty());
    // TLS first: behind a proxy the tunnel may work and the handshake with the endpoint fail.
    if ["certificate", "tls", "ssl", "handshake", "corrupt message", "alert"].iter().any(|m| lower.contains(m)) {
        return LlmError::Tls { url: url.to_owned(), detail: chain.to_owned() };
    }
    match proxy {
        Some(proxy) => LlmError::Proxy { url: url.to_owned(), proxy: proxy.to_owned(), detail: chain.to_owned() },
        None => LlmError::Connect { url: url.to_owned(), model },
    }
}

/// The message of `LlmError::Connect`.
pub(crate) fn connect_message(url: &str, model: Option<&str>) -> String {
    if url.trim_end_matches('/') == OLLAMA_DEFAULT_URL {
        let model = model.unwrap_or("qwen2.5:7b");
        return format!(
            "cannot connect to Ollama at {url}. Is it running? Start it with `ollama serve`, then \
             `ollama pull {model}`; or point opsai at another endpoint with `opsai config set-llm`. \
             `opsai doctor` checks the connection step by step"
        );
    }
    let model = model.map(|m| format!(" (model {m})")).unwrap_or_default();
    format!(
        "cannot connect to the model endpoint {url}{model}: check that the server is running and \
         reachable from here and that the URL is right (`opsai config show`); change it with \
         `opsai config set-llm`. `opsai doctor` checks the connection step by step"
    )
}

/// The advice after a TLS failure: a certificate problem or, most often, https:// on a plain
/// HTTP port.
pub(crate) fn tls_advice(detail: &str) -> &'static str {
    if detail.to_ascii_lowercase().contains("certificate") {
        "The server's certificate is not trusted here: check that the URL's host name matches the \
         certificate and that its issuer (a private CA too) is installed in the system's trust store"
    } else {
        "Does the server speak HTTPS on that port? A plain HTTP endpoint needs an http:// URL"
    }
}

/// The HTTP client for an endpoint: `loopback` ones bypass the proxy, plain `http://` loads no
/// certificates, and `https://` trusts the system's roots (or `SSL_CERT_FILE`/`SSL_CERT_DIR`)
/// plus `extra_roots`.
pub(crate) fn http_client(
    url: &reqwest::Url,
    loopback: bool,
    extra_roots: Vec<reqwest::Certificate>,
) -> Result<reqwest::Client, LlmError> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .tcp_nodelay(true)
        .user_agent(concat!("opsai/", env!("CARGO_PKG_VERSION")));
    if loopback {
        // A local model never goes through the user's HTTP proxy.
        builder = builder.no_proxy();
    }
    if url.scheme() == "http" {
        // Plain HTTP needs no certificates; loading the system's roots costs 3–10 ms of startup.
        builder = builder.tls_certs_only(Vec::<reqwest::Certificate>::new());
    } else if !extra_roots.is_empty() {
        builder = builder.tls_certs_merge(extra_roots);
    }
    builder.build().map_err(|err| LlmError::Client(super::sse::describe(&err)))
}

/// The PEM certificates in `llm.ca_file`.
pub(crate) fn read_ca_file(path: &Path) -> Result<Vec<reqwest::Certificate>, LlmError> {
    let problem = |why: String| {
        LlmError::Client(format!(
            "llm.ca_file {}: {why}; point it at a PEM file of CA certificates, or remove the key",
            path.display()
        ))
    };
    let pem = std::fs::read(path).map_err(|err| problem(format!("cannot be read ({err})")))?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|err| problem(format!("is not PEM ({err})")))?;
    if certs.is_empty() {
        return Err(problem("holds no certificate".to_owned()));
    }
    Ok(certs)
}

/// True for a model on this machine: `localhost` or a loopback address.
pub(crate) fn is_loopback(url: &reqwest::Url) -> bool {
    let host = url.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The proxy reqwest uses for `url` according to the environment (`HTTPS_PROXY`/`HTTP_PROXY`,
/// then `ALL_PROXY`, either case; `NO_PROXY` exempts hosts), or `None`. `loopback` endpoints are
/// never proxied (the client is built with `no_proxy` for them).
pub(crate) fn proxy_for(url: &reqwest::Url, loopback: bool, env: impl Fn(&str) -> Option<String>) -> Option<String> {
    if loopback {
        return None;
    }
    let var = |name: &str| env(name).or_else(|| env(&name.to_ascii_lowercase())).filter(|v| !v.trim().is_empty());
    let scheme_var = if url.scheme() == "https" { "HTTPS_PROXY" } else { "HTTP_PROXY" };
    let proxy = var(scheme_var).or_else(|| var("ALL_PROXY"))?;
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    let exempt = var("NO_PROXY").is_some_and(|list| {
        list.split(',').map(|entry| entry.trim().to_ascii_lowercase()).any(|entry| {
            let domain = entry.trim_start_matches('.');
            entry == "*" || (!domain.is_empty() && (host == domain || host.ends_with(&format!(".{domain}"))))
        })
    });
    (!exempt).then(|| mask_credentials(&proxy))
}

/// `scheme://user:password@host…` (or without a scheme) with the credentials replaced by `***`:
/// the proxy is named in messages, and its password must never be. Any `…@` before the host counts,
/// a bare token (`http://TOKEN@proxy`) too.
pub(crate) fn mask_credentials(url: &str) -> String {
    let start = url.find("://").map_or(0, |at| at + 3);
    let authority_end = url[start..].find(['/', '?', '#']).map_or(url.len(), |at| start + at);
    match url[start..authority_end].rfind('@') {
        Some(at) => format!("{}***{}", &url[..start], &url[start + at..]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn proxy_credentials_are_never_named() {
        assert_eq!(mask_credentials("http://u:pw@proxy:3128"), "http://***@proxy:3128");
        assert_eq!(mask_credentials("user:pw@proxy.lan:3128"), "***@proxy.lan:3128");
        assert_eq!(mask_credentials("http://TOKEN@proxy/path@x"), "http://***@proxy/path@x");
        assert_eq!(mask_credentials("http://proxy:3128"), "http://proxy:3128");
        let env = |name: &str| (name == "HTTPS_PROXY").then(|| "http://alice:s3cret@proxy:3128".to_owned());
        let url = reqwest::Url::parse("https://api.example.com/v1").unwrap();
        assert_eq!(proxy_for(&url, false, env).as_deref(), Some("http://***@proxy:3128"));
    }

    #[test]
    fn the_ollama_hint_only_for_ollamas_default_endpoint() {
        let ollama = connect_message("http://localhost:11434/v1", Some("llama3.2"));
        assert!(ollama.contains("ollama serve") && ollama.contains("ollama pull llama3.2"), "{ollama}");
        let other = connect_message("http://gpu-box:8000/v1", Some("mistral-7b"));
        assert!(!other.to_ascii_lowercase().contains("ollama"), "{other}");
        assert!(other.contains("http://gpu-box:8000/v1") && other.contains("mistral-7b"), "{other}");
        let no_model = connect_message("https://api.openai.com/v1", None);
        assert!(!no_model.contains("(model"), "{no_model}");
        for message in [ollama, other, no_model] {
            assert!(message.contains("`opsai doctor` checks the connection step by step"), "{message}");
        }
    }

    #[test]
    fn a_ca_file_that_is_missing_or_not_pem_is_named_with_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let missing = read_ca_file(&dir.path().join("nope.pem")).unwrap_err().to_string();
        assert!(missing.contains("llm.ca_file") && missing.contains("cannot be read"), "{missing}");
        let text = dir.path().join("text.pem");
        std::fs::write(&text, "not a certificate\n").unwrap();
        let empty = read_ca_file(&text).unwrap_err().to_string();
        assert!(empty.contains("holds no certificate") || empty.contains("is not PEM"), "{empty}");
    }

    #[test]
    fn tls_and_proxy_failures_are_told_apart_from_refused_connections() {
        let url = "https://llm.example/v1";
        let cert = "client error (Connect): invalid peer certificate: UnknownIssuer";
        let err = connect_error(cert, url, "m", Some("http://proxy:3128"));
        assert!(matches!(&err, LlmError::Tls { .. }), "{err:?}");
        assert!(err.to_string().contains("trust store"), "{err}");
        let plain = connect_error("received corrupt message of type InvalidContentType", url, "m", None);
        assert!(plain.to_string().contains("http:// URL"), "{plain}");
        let tunnel =
            connect_error("client error (Connect): tunnel error: unsuccessful", url, "m", Some("http://p:3128"));
        assert!(matches!(&tunnel, LlmError::Proxy { proxy, .. } if proxy == "http://p:3128"), "{tunnel:?}");
        assert!(tunnel.to_string().contains("NO_PROXY"), "{tunnel}");
        let refused = connect_error("tcp connect error: Connection refused (os error 111)", url, "m", None);
        assert!(
            matches!(&refused, LlmError::Connect { url: u, model: Some(m) } if u == url && m == "m"),
            "{refused:?}"
        );
    }

    #[test]
    fn the_proxy_comes_from_the_environment_unless_exempt() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
        };
        let https = reqwest::Url::parse("https://api.example.com/v1").unwrap();
        let http = reqwest::Url::parse("http://gpu.lan:8000/v1").unwrap();
        let vars = env(&[("https_proxy", "http://p:3128"), ("NO_PROXY", ".lan, localhost")]);
        assert_eq!(proxy_for(&https, false, vars), Some("http://p:3128".to_owned()));
        assert_eq!(proxy_for(&http, false, vars), None, "no HTTP_PROXY");
        assert_eq!(proxy_for(&https, true, vars), None, "loopback is never proxied");
        let all = env(&[("ALL_PROXY", "socks5://s:1080"), ("no_proxy", "example.com")]);
        assert_eq!(proxy_for(&http, false, all), Some("socks5://s:1080".to_owned()));
        assert_eq!(proxy_for(&https, false, all), None, "exempt by domain");
    }
}
