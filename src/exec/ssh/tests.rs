//! `exec::ssh`: the control socket directory, and the remote line as ssh gets it.

mod socket_dir {
    use super::super::*;

    #[test]
    fn a_control_dir_too_long_for_a_socket_moves_to_a_private_dir_under_tmp() {
        let short = Path::new("/home/ops/.opsai/ssh");
        assert_eq!(socket_dir(short), short);
        let long = PathBuf::from(format!("/tmp/{}/opsai-home-abcdef/ssh", "d".repeat(40)));
        let fallback = socket_dir(&long);
        assert_eq!(fallback, PathBuf::from(format!("/tmp/opsai-ssh-{}", nix::unistd::getuid())));
        assert!(fallback.as_os_str().len() + SOCKET_NAME_LEN <= MAX_SOCKET_PATH);
    }

    #[test]
    fn a_shared_socket_dir_others_can_enter_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(private_dir(&open, true).is_err());
        // The user's own `$OPSAI_HOME/ssh` is taken as it is.
        assert!(private_dir(&open, false).is_ok());
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path().join("made"), &link).unwrap();
        std::fs::create_dir(dir.path().join("made")).unwrap();
        assert!(private_dir(&link, true).is_err(), "a symlink is not taken");
        let fresh = dir.path().join("fresh");
        private_dir(&fresh, true).unwrap();
        assert_eq!(std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o700);
    }
}

mod line {
    use super::super::*;

    /// The transport and the directory holding its control dir, removed when dropped (a test
    /// leaves nothing in `$TMPDIR`).
    fn transport() -> (tempfile::TempDir, SshTransport) {
        let dir = tempfile::tempdir().unwrap();
        let transport =
            SshTransport::new("db-1", &dir.path().join("ssh"), 600, vec!["-F".into(), "/tmp/x config".into()]);
        (dir, transport.unwrap())
    }

    #[test]
    fn host_names_that_could_be_options_are_refused() {
        let dir = std::env::temp_dir();
        for bad in ["", "-oProxyCommand=touch x", "a b", "a\nb"] {
            assert!(SshTransport::new(bad, &dir, 600, vec![]).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_terminal_command_quotes_every_word_and_never_weakens_host_keys() {
        let (_dir, transport) = transport();
        let line = transport.terminal_command(&remote_line(Path::new("/srv/my app"), "echo 'hi' && ls"));
        assert!(line.starts_with("ssh -tt -o ControlPath="), "{line}");
        assert!(line.contains("-o ControlMaster=no") && line.contains("-F '/tmp/x config' -- db-1 "), "{line}");
        assert!(!line.contains("StrictHostKeyChecking"), "{line}");
        // A shell sees the remote line as ssh's last argument, unchanged.
        let remote = remote_line(Path::new("/srv/my app"), "echo 'hi' && ls");
        let last = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("ssh() {{ for a; do last=$a; done; printf %s \"$last\"; }}; {line}"))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&last.stdout), remote);
        assert!(remote.starts_with("cd '/srv/my app' && if command -v bash"), "{remote}");
        // The remote line itself runs the command as one word in any POSIX shell.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(remote_line(Path::new("/"), "printf '%s|' one 'two words'; exit 3"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "one|two words|");
    }

    #[test]
    fn a_leading_tilde_is_left_for_the_remote_shell_and_the_rest_quoted() {
        assert_eq!(remote_dir(Path::new("~")), "~");
        assert_eq!(remote_dir(Path::new("~/my logs")), "~/'my logs'");
        assert_eq!(remote_dir(Path::new("/srv/app")), "/srv/app");
        assert_eq!(remote_dir(Path::new("./x;id")), "'./x;id'");
        // `~user` is not expanded: it stays one quoted word.
        assert_eq!(remote_dir(Path::new("~bob/x")), "'~bob/x'");
    }

    #[test]
    fn two_destinations_on_one_address_with_other_ports_are_two_keys() {
        let dir = tempfile::tempdir().unwrap();
        let at = |port: &str| {
            SshTransport::new("127.0.0.1", &dir.path().join("ssh"), 30, vec!["-p".into(), port.into()]).unwrap()
        };
        assert_ne!(at("2201").destination_key(), at("2202").destination_key());
        assert_eq!(at("2201").destination_key(), at("2201").destination_key());
    }
}
