//! The fleet fan-out (`opsai::fleet::fanout`) against real sshd on 127.0.0.1, one per host, and
//! hosts that fail the ways real ones do (down, changed host key, hanging, refusing the key):
//! per-host outcomes, grouping, the model's view, reused connections, rollout (canary, serial,
//! max-fail) and cancellation that ends every remote process.

use std::sync::Mutex;
use std::time::Duration;

use futures_util::future::BoxFuture;
use opsai::fleet::fanout::{
    Fanout, FanoutConfig, FleetRequest, FleetResult, HostRun, MaxFail, Outcome, Plan, Proceed, RolloutHook, Skip,
    for_human, for_model, groups,
};
use tokio_util::sync::CancellationToken;

use crate::support::fleet::{Fleet, Kind};
use crate::support::sshd::require;

fn fanout(fleet: &Fleet, forks: usize, timeout_s: u64) -> Fanout {
    let mut config = FanoutConfig::new(&fleet.path().join("ssh"));
    config.forks = forks;
    config.timeout = Duration::from_secs(timeout_s);
    config.connect_timeout = Duration::from_secs(2);
    config.persist_s = 120;
    config.ssh_options = fleet.ssh_options();
    Fanout::new(config)
}

fn request(command: &str) -> FleetRequest {
    FleetRequest::new(command, "/")
}

fn outcome(result: &FleetResult, host: &str) -> Outcome {
    result.run(host).map(|run| run.outcome).unwrap_or_else(|| panic!("no run for {host}: {result:#?}"))
}

fn text(run: Option<&HostRun>) -> String {
    run.map(|run| run.output.text()).unwrap_or_default()
}

fn same(text: &str) -> String {
    text.to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_host_gets_its_own_outcome_and_identical_outputs_group() {
    if !require() {
        return;
    }
    let fleet = Fleet::start(&[
        ("web-1", Kind::Up("web")),
        ("web-2", Kind::Up("web")),
        ("web-3", Kind::Up("web")),
        ("db-1", Kind::Up("db")),
        ("down-1", Kind::Down),
        ("rekeyed-1", Kind::ChangedKey),
        ("hangs-1", Kind::Hangs),
        ("locked-1", Kind::AuthFails),
    ]);
    let fanout = fanout(&fleet, 16, 8);
    let cancel = CancellationToken::new();
    // Connecting first (as a caller does while the person reads the prompt) names the hosts that
    // cannot be reached, and runs nothing.
    let unreached = fanout.connect(&fleet.hosts(), &cancel).await;
    let mut kinds: Vec<(String, Outcome)> = unreached.iter().map(|run| (run.host.name.clone(), run.outcome)).collect();
    kinds.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        kinds,
        [
            ("down-1".to_owned(), Outcome::Unreachable),
            ("hangs-1".to_owned(), Outcome::TimedOut),
            ("locked-1".to_owned(), Outcome::AuthFailed),
            ("rekeyed-1".to_owned(), Outcome::HostKey),
        ]
    );
    let command = r#"printf '\033[1mrole\033[0m %s\n' "$OPSAI_FLEET_ROLE"; [ "$OPSAI_FLEET_ROLE" = web ] || exit 255"#;
    let result = fanout.run(&fleet.hosts(), &request(command), &cancel).await;

    for web in ["web-1", "web-2", "web-3"] {
        assert_eq!(outcome(&result, web), Outcome::Ran { exit_code: 0 });
        // ANSI stripped, the terminal's CRLF a plain newline.
        assert_eq!(text(result.run(web)), "role web\n");
    }
    // A remote exit 255 is the command's, not ssh's (ssh said nothing).
    assert_eq!(outcome(&result, "db-1"), Outcome::Ran { exit_code: 255 });
    assert_eq!(text(result.run("db-1")), "role db\n");
    assert_eq!(outcome(&result, "down-1"), Outcome::Unreachable);
    assert_eq!(outcome(&result, "rekeyed-1"), Outcome::HostKey);
    assert_eq!(outcome(&result, "hangs-1"), Outcome::TimedOut);
    assert_eq!(outcome(&result, "locked-1"), Outcome::AuthFailed);
    assert!(result.run("down-1").is_some_and(|run| run.detail.contains("Connection refused")), "{result:#?}");

    let all = groups(&result.runs);
    assert_eq!(all[0].hosts, ["web-1", "web-2", "web-3"]);
    assert_eq!(all.len(), 6, "{all:#?}");
    let human = for_human(&result, &same);
    assert!(human.contains("── 3 hosts: web-[1:3] · exit 0\nrole web\n"), "{human}");
    assert!(human.contains("── 1 host: db-1 · exit 255\nrole db\n"), "{human}");
    assert!(human.contains("── 1 host: hangs-1 · timed out"), "{human}");
    let model = for_model(&result, &same);
    assert!(
        model.contains("on 8 hosts: ran on 4 (3 exit 0, 1 non-zero); 4 failed (unreachable 1, host-key 1, timed-out 1, auth-failed 1), 3 not reached; 0 not run"),
        "{model}"
    );
    assert!(model.contains("## 1 host: rekeyed-1 · host key changed"), "{model}");

    let audit = result.audit();
    assert_eq!(audit.len(), 8);
    let db = audit.iter().find(|line| line.host == "db-1").unwrap();
    assert_eq!((db.exit, db.outcome, db.bytes, db.command.as_str()), (Some(255), "ran", 8, command));
    let down = audit.iter().find(|line| line.host == "down-1").unwrap();
    assert_eq!((down.exit, down.outcome), (None, "unreachable"));
    assert!(down.output.contains("Connection refused"), "{down:?}");

    // The second command of the turn goes through the same connections: every session of a
    // master reports the master's client port.
    let first = fanout.run(&fleet.hosts()[..4], &request("echo $SSH_CONNECTION"), &cancel).await;
    let second = fanout.run(&fleet.hosts()[..4], &request("echo $SSH_CONNECTION"), &cancel).await;
    for host in ["web-1", "web-2", "web-3", "db-1"] {
        let (a, b) = (text(first.run(host)), text(second.run(host)));
        assert!(a.starts_with("127.0.0.1 ") && a == b, "{host}: {a:?} then {b:?}");
    }
    fanout.disconnect_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_is_bounded_per_host_and_hosts_differing_in_the_middle_do_not_group() {
    if !require() {
        return;
    }
    let fleet = Fleet::start(&[("big-1", Kind::Up("a")), ("big-2", Kind::Up("b"))]);
    let fanout = fanout(&fleet, 4, 60);
    // 20 MB each, equal at both ends, different in the middle.
    let command =
        "head -c 10000000 /dev/zero | tr '\\0' x; echo \"$OPSAI_FLEET_ROLE\"; head -c 10000000 /dev/zero | tr '\\0' y";
    let result = fanout.run(&fleet.hosts(), &request(command), &CancellationToken::new()).await;
    for run in &result.runs {
        assert_eq!(run.outcome, Outcome::Ran { exit_code: 0 }, "{}", run.detail);
        assert!(run.output.total_bytes >= 20_000_000, "{}", run.output.total_bytes);
        assert!(run.output.head.len() + run.output.tail.len() <= 4 * 2000 + 8, "bounded capture");
    }
    assert_eq!(groups(&result.runs).len(), 2, "same head and tail, different middle");
    fanout.disconnect_all().await;
}

/// Records the batches and answers the canary question as told.
struct Recorder {
    proceed: Proceed,
    asked: Mutex<u32>,
    batches: Mutex<Vec<Vec<String>>>,
}

impl Recorder {
    fn new(proceed: Proceed) -> Self {
        Self { proceed, asked: Mutex::new(0), batches: Mutex::new(Vec::new()) }
    }
}

impl RolloutHook for Recorder {
    fn after_canary<'a>(&'a self, canary: &'a FleetResult) -> BoxFuture<'a, Proceed> {
        assert_eq!(canary.runs.len(), 1);
        *self.asked.lock().unwrap() += 1;
        Box::pin(async move { self.proceed })
    }

    fn batch_done(&self, _index: usize, runs: &[HostRun]) {
        self.batches.lock().unwrap().push(runs.iter().map(|run| run.host.name.clone()).collect());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_canary_stops_the_rollout_and_a_no_after_it_too() {
    if !require() {
        return;
    }
    let fleet =
        Fleet::start(&[("app-1", Kind::Up("canary")), ("app-2", Kind::Up("rest")), ("app-3", Kind::Up("rest"))]);
    let fanout = fanout(&fleet, 16, 20);
    let cancel = CancellationToken::new();
    let plan = Plan::change(None, MaxFail::Count(5));
    let hook = Recorder::new(Proceed::Continue);
    let failing = request(r#"[ "$OPSAI_FLEET_ROLE" != canary ]"#);
    let result = fanout.rollout(&fleet.hosts(), &failing, &plan, &hook, &cancel).await;
    assert_eq!(outcome(&result, "app-1"), Outcome::Ran { exit_code: 1 });
    assert_eq!(outcome(&result, "app-2"), Outcome::NotRun(Skip::CanaryFailed));
    assert_eq!(outcome(&result, "app-3"), Outcome::NotRun(Skip::CanaryFailed));
    assert_eq!(*hook.asked.lock().unwrap(), 0, "nobody is asked after a failed canary");

    let hook = Recorder::new(Proceed::Stop);
    let result = fanout.rollout(&fleet.hosts(), &request("true"), &plan, &hook, &cancel).await;
    assert_eq!(*hook.asked.lock().unwrap(), 1);
    assert_eq!(outcome(&result, "app-1"), Outcome::Ran { exit_code: 0 });
    assert_eq!(outcome(&result, "app-3"), Outcome::NotRun(Skip::Declined));
    let model = for_model(&result, &same);
    assert!(model.contains("2 hosts: app-[2:3] · not run: stopped after the canary"), "{model}");
    fanout.disconnect_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serial_batches_run_in_order_and_max_fail_stops_the_rest() {
    if !require() {
        return;
    }
    let fleet = Fleet::start(&[
        ("s-1", Kind::Up("ok")),
        ("s-2", Kind::Up("ok")),
        ("s-3", Kind::Up("ok")),
        ("s-4", Kind::Up("ok")),
        ("s-5", Kind::Up("ok")),
        ("s-6", Kind::Up("ok")),
    ]);
    let fanout = fanout(&fleet, 16, 20);
    let cancel = CancellationToken::new();
    let hosts = fleet.hosts();
    let log = fleet.path().join("order.log");
    // Each host logs its sshd port (the last word of SSH_CONNECTION) when it starts and ends.
    let command = format!(
        "p=${{SSH_CONNECTION##* }}; echo \"start $p\" >> {log}; sleep 0.3; echo \"end $p\" >> {log}",
        log = log.display()
    );
    let hook = Recorder::new(Proceed::Continue);
    let result =
        fanout.rollout(&hosts, &request(&command), &Plan::change(Some(2), MaxFail::Count(0)), &hook, &cancel).await;
    assert!(result.runs.iter().all(|run| run.outcome.succeeded()), "{result:#?}");
    let batches = hook.batches.lock().unwrap().clone();
    assert_eq!(batches, [vec!["s-1"], vec!["s-2", "s-3"], vec!["s-4", "s-5"], vec!["s-6"]]);
    // In the log, every line of a batch comes before every line of the next batch.
    let lines: Vec<String> = std::fs::read_to_string(&log).unwrap().lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 12, "{lines:?}");
    let batch_of = |line: &str| {
        let port: u16 = line.split(' ').nth(1).unwrap().parse().unwrap();
        batches.iter().position(|batch| batch.iter().any(|host| port_of(&fleet, host) == port)).unwrap()
    };
    let order: Vec<usize> = lines.iter().map(|line| batch_of(line)).collect();
    assert!(order.windows(2).all(|pair| pair[0] <= pair[1]), "{lines:?}");

    // Two hosts of the first batch after the canary fail: more than max-fail 1, the rest never start.
    let port = "${SSH_CONNECTION##* }";
    let fail_some =
        request(&format!("[ {port} != {} ] && [ {port} != {} ]", port_of(&fleet, "s-2"), port_of(&fleet, "s-3")));
    let plan = Plan::change(Some(2), MaxFail::Count(1));
    let result = fanout.rollout(&hosts, &fail_some, &plan, &NoQuestionsHook, &cancel).await;
    assert_eq!(outcome(&result, "s-1"), Outcome::Ran { exit_code: 0 });
    assert_eq!(outcome(&result, "s-2"), Outcome::Ran { exit_code: 1 });
    assert_eq!(outcome(&result, "s-3"), Outcome::Ran { exit_code: 1 });
    for host in ["s-4", "s-5", "s-6"] {
        assert_eq!(outcome(&result, host), Outcome::NotRun(Skip::MaxFail));
    }
    let plan = Plan::change(Some(2), MaxFail::Percent(50));
    let result = fanout.rollout(&hosts, &fail_some, &plan, &NoQuestionsHook, &cancel).await;
    assert!(result.runs.iter().all(|run| run.outcome.ran()), "2 of 6 is not more than 50%: {result:#?}");
    fanout.disconnect_all().await;
}

struct NoQuestionsHook;

impl RolloutHook for NoQuestionsHook {
    fn after_canary<'a>(&'a self, _canary: &'a FleetResult) -> BoxFuture<'a, Proceed> {
        Box::pin(async { Proceed::Continue })
    }
}

/// The sshd port of `host`, from the fleet's client config.
fn port_of(fleet: &Fleet, host: &str) -> u16 {
    let config = std::fs::read_to_string(fleet.ssh_config()).unwrap();
    let block = config.split("Host ").find(|block| block.starts_with(&format!("{host}\n"))).unwrap();
    block.lines().find_map(|line| line.trim().strip_prefix("Port ")).unwrap().parse().unwrap()
}

fn pgrep(pattern: &str) -> usize {
    let out = std::process::Command::new("pgrep").args(["-f", pattern]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_mid_batch_ends_every_remote_process_and_says_who_ran() {
    if !require() {
        return;
    }
    let fleet =
        Fleet::start(&[("c-1", Kind::Up("x")), ("c-2", Kind::Up("x")), ("c-3", Kind::Up("x")), ("c-4", Kind::Up("x"))]);
    // Two at once: c-1 and c-2 run, c-3 and c-4 wait their turn.
    let fanout = fanout(&fleet, 2, 120);
    let marker = format!("300.{}", rand::random::<u32>() % 1_000_000);
    let pattern = format!("^sleep {marker}$");
    let cancel = CancellationToken::new();
    let watcher = {
        let (cancel, pattern) = (cancel.clone(), pattern.clone());
        tokio::task::spawn_blocking(move || {
            let both = opsai::testing::wait_until(Duration::from_secs(30), || pgrep(&pattern) == 2);
            cancel.cancel();
            both
        })
    };
    // The command ignores the hang-up: only ending its process group through the master stops it.
    let command = format!("trap '' HUP; sleep {marker}; echo survived");
    let result = fanout.run(&fleet.hosts(), &request(&command), &cancel).await;
    assert!(watcher.await.unwrap(), "both remote sleeps started");
    assert_eq!(outcome(&result, "c-1"), Outcome::Cancelled);
    assert_eq!(outcome(&result, "c-2"), Outcome::Cancelled);
    assert_eq!(outcome(&result, "c-3"), Outcome::NotRun(Skip::Cancelled));
    assert_eq!(outcome(&result, "c-4"), Outcome::NotRun(Skip::Cancelled));
    let model = for_model(&result, &same);
    assert!(model.contains("2 hosts: c-[1:2] · cancelled while running"), "{model}");
    assert!(model.contains("2 hosts: c-[3:4] · cancelled before it started"), "{model}");

    // Asked through each host: no `sleep` of this run is left anywhere.
    let check = format!("pgrep -f '{pattern}' || echo none");
    let gone = opsai::testing::wait_until(Duration::from_secs(10), || pgrep(&pattern) == 0);
    let after = fanout.run(&fleet.hosts(), &request(&check), &CancellationToken::new()).await;
    for run in &after.runs {
        assert_eq!(run.output.text(), "none\n", "{}: {}", run.host.name, run.detail);
    }
    assert!(gone, "a remote sleep survived the cancel");
    fanout.disconnect_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_nobody_approved_runs_in_each_hosts_sandbox_or_not_at_all() {
    if !require() {
        return;
    }
    let fleet = Fleet::start(&[("box-1", Kind::Up("a")), ("box-2", Kind::Up("b"))]);
    let fanout = fanout(&fleet, 4, 30);
    let cancel = CancellationToken::new();
    // What each host offers, asked the way `--ssh-host` asks.
    let transport =
        opsai::exec::ssh::SshTransport::new("box-1", &fleet.path().join("probe"), 30, fleet.ssh_options()).unwrap();
    let sandbox = opsai::exec::ssh::sandbox::probe(&transport).await;
    transport.disconnect().await;
    let contained =
        |command: &str| FleetRequest { sandbox: Some(opsai::protocol::SandboxProfile::Strict), ..request(command) };
    // Not plain words: runs only inside a sandbox.
    let result =
        fanout.run(&fleet.hosts(), &contained("echo \"in $PWD\"; touch /opsai-fleet-sandbox-probe"), &cancel).await;
    for run in &result.runs {
        if sandbox.contains() {
            assert_eq!(run.outcome, Outcome::Ran { exit_code: 1 }, "{}: {}", run.host.name, run.output.text());
            assert!(run.output.text().starts_with("in /\n"), "{}", run.output.text());
        } else {
            assert_eq!(run.outcome, Outcome::NoSandbox, "{}", run.host.name);
            assert!(run.detail.contains("no sandbox on the remote host"), "{}", run.detail);
        }
    }
    assert!(!std::path::Path::new("/opsai-fleet-sandbox-probe").exists(), "the sandbox kept / read-only");
    let view = for_model(&result, &same);
    if !sandbox.contains() {
        assert!(view.contains("2 hosts: box-[1:2] · no sandbox there"), "{view}");
    }
    fanout.disconnect_all().await;
}
