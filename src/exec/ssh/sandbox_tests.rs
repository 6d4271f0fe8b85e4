use super::*;

#[test]
fn only_a_single_command_of_literal_words_is_plain() {
    for plain in [
        "uptime",
        "df -h",
        "ls -la /var/log",
        "journalctl -u nginx --since=today -n 50",
        "date +%s",
        "git log --oneline -n 5 origin/main",
        "systemctl status nginx.service",
    ] {
        assert_eq!(plain_words(plain), Ok(()), "{plain}");
    }
    for (line, why) in [
        ("ls $HOME", "`$`"),
        ("echo `id`", "```"),
        ("ls *.log", "`*`"),
        ("cat ~/.bashrc", "`~`"),
        ("ls {a,b}", "`{`"),
        ("ls 'a b'", "`\\'`"),
        ("ls \"$x\"", "`\\\"`"),
        ("ls > out", "`>`"),
        ("ls | head", "`|`"),
        ("ls; id", "`;`"),
        ("ls && id", "`&`"),
        ("ls\nid", "`\\n`"),
        ("ls\tid", "`\\t`"),
        ("ls # x", "`#`"),
        ("ls ?", "`?`"),
        ("ls [a]", "`[`"),
        ("cat <(id)", "`<`"),
        ("echo \\$x", "`\\\\`"),
        ("PATH=/tmp ls", "not a program name"),
        (". ./env.sh", "runs other code"),
        ("eval ls", "runs other code"),
        ("", "empty"),
        ("   ", "empty"),
    ] {
        let err = plain_words(line).expect_err(line);
        assert!(err.contains(why), "{line:?}: {err}");
    }
}

#[test]
fn without_a_sandbox_only_plain_words_run_and_anything_else_says_why_it_asks() {
    let none = RemoteSandbox::None { reason: "no bwrap".into() };
    assert_eq!(auto_run(&none, SandboxProfile::Strict, "ls -la /etc"), Ok(None));
    let err = auto_run(&none, SandboxProfile::Strict, "ls $HOME").unwrap_err();
    assert!(err.contains("no sandbox on the remote host (no bwrap)") && err.contains("`$`"), "{err}");
    let bwrap = RemoteSandbox::Bubblewrap { path: "/usr/bin/bwrap".into(), arch: "x86_64".into() };
    assert_eq!(auto_run(&bwrap, SandboxProfile::Tool, "ls $HOME"), Ok(Some(SandboxProfile::Tool)));
}

#[test]
fn the_probe_answer_parses_and_anything_else_is_no_sandbox() {
    let opsai = parse("note x\nuse opsai /usr/local/bin/opsai per-pid profile strict; landlock: ABI V6\n");
    assert_eq!(
        opsai,
        RemoteSandbox::Opsai {
            path: "/usr/local/bin/opsai".into(),
            per_pid: true,
            details: "profile strict; landlock: ABI V6".into()
        }
    );
    assert_eq!(
        parse("use bwrap /usr/bin/bwrap aarch64\n"),
        RemoteSandbox::Bubblewrap { path: "/usr/bin/bwrap".into(), arch: "aarch64".into() }
    );
    for bad in ["", "garbage", "use bwrap bwrap x86_64", "use bwrap /usr/bin/bwrap mips", "use opsai /o maybe x"] {
        assert!(!parse(bad).contains(), "{bad:?}");
    }
    assert_eq!(
        parse("note opsai at /o is not this version (opsai 0.0.1)\nnote bwrap missing\nuse none\n"),
        RemoteSandbox::None { reason: "opsai at /o is not this version (opsai 0.0.1); bwrap missing".into() }
    );
}

#[test]
fn the_probe_script_runs_in_sh_and_names_a_sandbox_or_none() {
    let output = std::process::Command::new("sh").arg("-c").arg(probe_script()).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.lines().last().is_some_and(|line| line.starts_with("use ")), "{stdout}");
    let bwrap_here = std::process::Command::new("sh").args(["-c", "command -v bwrap"]).output().unwrap();
    if bwrap_here.status.success() && std::env::consts::ARCH == "x86_64" && !stdout.contains("use opsai") {
        // Where bwrap can make its namespaces, the probe finds it (else it says why not).
        assert!(stdout.contains("use bwrap ") || stdout.contains("cannot create its namespaces"), "{stdout}");
    }
}

/// A classic BPF interpreter for the few instructions the program uses.
fn run(program: &[(u16, u8, u8, u32)], arch: u32, nr: u32, arg0: u32) -> u32 {
    let mut acc = 0;
    let mut pc = 0;
    loop {
        let (code, jt, jf, k) = program[pc];
        pc += 1;
        match code {
            0x20 => acc = [(0, nr), (4, arch), (16, arg0)].iter().find(|(off, _)| *off == k).unwrap().1,
            0x15 => pc += usize::from(if acc == k { jt } else { jf }),
            0x35 => pc += usize::from(if acc >= k { jt } else { jf }),
            0x06 => return k,
            other => panic!("unexpected opcode {other:#x}"),
        }
    }
}

#[test]
fn the_remote_filter_denies_sockets_keyrings_and_foreign_abis() {
    const X86: u32 = 0xC000_003E;
    const EPERM: u32 = 0x0005_0001;
    const ALLOW: u32 = 0x7fff_0000;
    let strict = seccomp::instructions("x86_64", SandboxProfile::Strict).unwrap();
    assert_eq!(run(&strict, X86, 0, 0), ALLOW, "read");
    assert_eq!(run(&strict, X86, 41, 1), EPERM, "socket(AF_UNIX)");
    assert_eq!(run(&strict, X86, 41, 2), EPERM, "socket(AF_INET)");
    assert_eq!(run(&strict, X86, 41, 16), ALLOW, "socket(AF_NETLINK)");
    assert_eq!(run(&strict, X86, 250, 0), EPERM, "keyctl");
    assert_eq!(run(&strict, X86, 101, 0), EPERM, "ptrace");
    assert_eq!(run(&strict, X86, 0x4000_0000 + 41, 1), EPERM, "x32 socket");
    assert_eq!(run(&strict, 0x4000_0003, 41, 1), 0x8000_0000, "i386 is killed");
    let tool = seccomp::instructions("x86_64", SandboxProfile::Tool).unwrap();
    assert_eq!(run(&tool, X86, 41, 2), ALLOW, "the tool profile reaches its API server");
    assert_eq!(run(&tool, X86, 250, 0), EPERM, "keyctl");
    let arm = seccomp::instructions("aarch64", SandboxProfile::Strict).unwrap();
    assert_eq!(run(&arm, 0xC000_00B7, 198, 1), EPERM, "aarch64 socket(AF_UNIX)");
    assert_eq!(run(&arm, 0xC000_00B7, 63, 0), ALLOW, "aarch64 read");
    assert!(seccomp::printf_escapes("mips", SandboxProfile::Strict).is_none());
    let escaped = seccomp::printf_escapes("x86_64", SandboxProfile::Strict).unwrap();
    assert_eq!(escaped.len(), strict.len() * 8 * 4, "every byte as \\ooo");
}

#[test]
fn lines_quote_the_command_as_one_word_and_name_the_helper() {
    let opsai = RemoteSandbox::Opsai { path: "/opt/my tools/opsai".into(), per_pid: false, details: String::new() };
    let line = opsai.line(std::path::Path::new("/srv"), "ls 'a b'", SandboxProfile::Strict).unwrap();
    assert!(line.contains("'/opt/my tools/opsai' __opsai-sandbox strict -- bash --norc -c 'ls '"), "{line}");
    let none = RemoteSandbox::None { reason: String::new() };
    assert_eq!(none.line(std::path::Path::new("/"), "ls", SandboxProfile::Strict), None);
}

/// The bubblewrap line run here, as the host would run it; `None` (skipped) without bwrap.
fn in_bwrap(cwd: &std::path::Path, command: &str, profile: SandboxProfile) -> Option<std::process::Output> {
    let bwrap = std::process::Command::new("sh").args(["-c", "command -v bwrap"]).output().unwrap();
    if !bwrap.status.success() || std::env::consts::ARCH != "x86_64" {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "bwrap is required under CI=true (.ci/run installs it)");
        let _ = std::io::Write::write_all(&mut std::io::stderr(), b"skipped: bwrap is not installed (x86_64)\n");
        return None;
    }
    let path = String::from_utf8_lossy(&bwrap.stdout).trim().to_owned();
    let sandbox = RemoteSandbox::Bubblewrap { path, arch: "x86_64".into() };
    let line = sandbox.line(cwd, command, profile).unwrap();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(line)
        .env("DEPLOY_TOKEN", "tok-in-the-session")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    Some(out)
}

#[test]
fn nothing_a_command_starts_in_bubblewrap_outlives_it() {
    let marker = format!("{}.{}", 500 + rand::random::<u16>() % 400, rand::random::<u16>() % 1000);
    let Some(out) =
        in_bwrap(std::path::Path::new("/"), &format!("setsid -f sleep {marker}; echo started"), SandboxProfile::Strict)
    else {
        return;
    };
    assert!(String::from_utf8_lossy(&out.stdout).contains("started"), "{}", String::from_utf8_lossy(&out.stderr));
    let running = || {
        std::process::Command::new("pgrep").args(["-f", &format!("sleep {marker}")]).output().unwrap().status.success()
    };
    assert!(
        crate::testing::wait_until(std::time::Duration::from_secs(5), || !running()),
        "`sleep {marker}` outlived its sandbox"
    );
}

#[test]
fn the_bubblewrap_view_masks_secrets_sockets_and_the_sessions_environment() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("app")).unwrap();
    std::fs::write(dir.path().join("app/.env"), "DB_PASSWORD=in-dotenv\n").unwrap();
    std::fs::write(dir.path().join("app/tls.key"), "PRIVATE-IN-WORKDIR\n").unwrap();
    std::fs::write(dir.path().join("readme.txt"), "README-TEXT\n").unwrap();
    let socket = dir.path().join("daemon.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let script = "cat readme.txt; cat app/.env app/tls.key; echo \"token=${DEPLOY_TOKEN:-unset}\"; \
                  touch new 2>&1 | sed 's/^/touch: /'; \
                  exec 3<>/dev/tcp/127.0.0.1/1 2>/dev/null || echo tcp-refused; \
                  if command -v python3 >/dev/null; then python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); \
                  s.connect(\"daemon.sock\")' 2>&1 | tail -n 1; fi";
    let Some(out) = in_bwrap(dir.path(), script, SandboxProfile::Strict) else { return };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("README-TEXT"), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("in-dotenv") && !text.contains("PRIVATE-IN-WORKDIR"), "{text}");
    assert!(text.contains("token=unset"), "{text}");
    assert!(text.contains("touch: touch: cannot touch 'new': Read-only file system"), "{text}");
    assert!(text.contains("tcp-refused"), "{text}");
    if text.contains("Error") {
        assert!(text.contains("PermissionError") || text.contains("Operation not permitted"), "{text}");
    }
    assert!(!dir.path().join("new").exists(), "{text}");
}

/// `COST_DIR=/srv/app cargo test --lib exec::ssh::sandbox::tests::cost -- --ignored --nocapture`:
/// what the bubblewrap line adds to a command on the host, without ssh, in that directory.
#[test]
#[ignore = "a measurement, not a check"]
fn cost() {
    use std::io::Write as _;
    use std::time::Instant;
    let Some(_) = in_bwrap(std::path::Path::new("/"), "true", SandboxProfile::Strict) else { return };
    let dir = std::env::var_os("COST_DIR").map_or_else(|| std::env::current_dir().unwrap(), std::path::PathBuf::from);
    let runs = 30;
    let time = |f: &dyn Fn()| {
        let start = Instant::now();
        for _ in 0..runs {
            f();
        }
        start.elapsed().as_secs_f64() * 1000.0 / f64::from(runs)
    };
    let plain = time(&|| {
        let line = super::super::remote_line(&dir, "true");
        std::process::Command::new("sh").arg("-c").arg(line).status().unwrap();
    });
    let boxed = time(&|| {
        let out = in_bwrap(&dir, "true", SandboxProfile::Strict).unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    });
    let _ = writeln!(std::io::stderr(), "plain {plain:.2} ms, bubblewrap {boxed:.2} ms, added {:.2} ms", boxed - plain);
}

#[test]
fn a_working_directory_the_view_closes_is_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let closed = dir.path().join("app").join("secrets");
    std::fs::create_dir_all(&closed).unwrap();
    let Some(out) = in_bwrap(&closed, "echo ran", SandboxProfile::Strict) else { return };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(121), "{stderr}");
    assert!(stderr.contains("opsai sandbox: the working directory") && stderr.contains("not run"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("ran"));
}
