use std::os::unix::fs::PermissionsExt;

use super::*;

fn touch(path: &Path, mode: u32) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "x").unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Whether `grants` let `path` be read, as Landlock decides it.
fn readable(grants: &Grants, path: &Path) -> bool {
    grants.read.iter().any(|dir| path.starts_with(dir)) || grants.read_files.iter().any(|file| file == path)
}

/// A temp dir (removed when the guard drops) and its canonical path. In `/var/tmp` where there is
/// one: `/tmp` of a busy machine can hold more entries than the view splits.
fn tempdir() -> (tempfile::TempDir, PathBuf) {
    let base = if Path::new("/var/tmp").is_dir() { "/var/tmp" } else { "/tmp" };
    let dir = tempfile::Builder::new().prefix("opsai-view-").tempdir_in(base).unwrap();
    let path = std::fs::canonicalize(dir.path()).unwrap();
    (dir, path)
}

/// Credentials of tools nobody listed (and a private note), planted in [`home_with_secrets`].
const HOME_SECRETS: &[&str] = &[
    ".ssh/id_x",
    ".config/some-new-cli/token",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".local/share/keyrings/login.keyring",
    ".mozilla/firefox/p.default/logins.json",
    ".config/git/credentials",
    "notes.txt",
];

/// A home with credentials of tools nobody listed, and harmless files.
fn home_with_secrets() -> (tempfile::TempDir, PathBuf) {
    let (guard, home) = tempdir();
    for rel in HOME_SECRETS {
        touch(&home.join(rel), 0o600);
    }
    for rel in [".bashrc", ".config/git/config", ".local/bin/tool"] {
        touch(&home.join(rel), 0o644);
    }
    (guard, home)
}

fn inputs(home: &Path, cwd: Option<PathBuf>) -> Inputs {
    let mut open: Vec<PathBuf> = HOME_HARMLESS.iter().map(|rel| home.join(rel)).collect();
    open.push(home.join(".local/bin"));
    Inputs { profile_tool: false, deny: Vec::new(), homes: vec![home.to_path_buf()], open, cwd }
}

fn view(inputs: &Inputs) -> Grants {
    let mut grants = system(inputs);
    working_directory(inputs, &mut grants);
    grants
}

#[test]
fn a_home_is_closed_but_for_its_harmless_files() {
    let (_home, home) = home_with_secrets();
    let grants = view(&inputs(&home, None));
    for closed in HOME_SECRETS {
        assert!(!readable(&grants, &home.join(closed)), "{closed}");
    }
    for open in [".bashrc", ".config/git/config", ".local/bin/tool"] {
        assert!(readable(&grants, &home.join(open)), "{open}");
    }
    assert!(grants.list.contains(&home), "`ls ~` lists names");
    assert!(readable(&grants, Path::new("/usr/bin/env")));
}

#[test]
fn a_home_as_working_directory_opens_its_visible_files_only() {
    let (_home, home) = home_with_secrets();
    touch(&home.join("project/src/main.rs"), 0o600);
    let grants = view(&inputs(&home, Some(home.clone())));
    assert!(readable(&grants, &home.join("notes.txt")));
    assert!(readable(&grants, &home.join("project/src/main.rs")));
    assert!(!readable(&grants, &home.join(".pgpass")));
    assert!(!readable(&grants, &home.join(".config/some-new-cli/token")));
}

#[test]
fn secrets_in_the_working_directory_are_closed_at_any_depth() {
    let (_home, home) = home_with_secrets();
    let project = home.join("work/project");
    for rel in
        ["README.md", "src/main.rs", "a/b/c/d/notes.txt", "a/b/c/ca.pem", "src/token.rs", "node_modules/x/index.js"]
    {
        touch(&project.join(rel), 0o644);
    }
    std::fs::write(project.join("a/b/c/ca.pem"), "-----BEGIN CERTIFICATE-----\n").unwrap();
    let secrets = [
        "a/b/c/d/.env",
        "a/b/c/d/server.key",
        "a/b/c/d/terraform.tfstate",
        "deploy/kubeconfig-prod",
        "config/master.key",
        "a/b/c/d/id_deploy",
        "a/b/c/d/app.secret.yml",
        "a/b/c/d/creds.json",
    ];
    for rel in secrets {
        touch(&project.join(rel), 0o644);
    }
    std::fs::write(project.join("a/b/c/d/creds.json"), r#"{"private_key": "-----BEGIN PRIVATE KEY-----"}"#).unwrap();
    let grants = view(&inputs(&home, Some(project.clone())));
    for rel in secrets {
        assert!(!readable(&grants, &project.join(rel)), "{rel}");
    }
    for rel in
        ["README.md", "src/main.rs", "a/b/c/d/notes.txt", "a/b/c/ca.pem", "src/token.rs", "node_modules/x/index.js"]
    {
        assert!(readable(&grants, &project.join(rel)), "{rel}");
    }
    // The rest of the home stays closed; the way to the project can be listed.
    assert!(!readable(&grants, &home.join(".pgpass")));
    assert!(grants.list.contains(&home.join("work")));
}

#[test]
fn outside_homes_only_what_every_user_may_read() {
    let (_home, home) = home_with_secrets();
    let (_tree, tree) = tempdir();
    std::fs::set_permissions(&tree, std::fs::Permissions::from_mode(0o755)).unwrap();
    touch(&tree.join("public.conf"), 0o644);
    touch(&tree.join("root-only.conf"), 0o600);
    touch(&tree.join("private-dir/x.conf"), 0o644);
    std::fs::set_permissions(tree.join("private-dir"), std::fs::Permissions::from_mode(0o700)).unwrap();
    touch(&tree.join("sub/also-public"), 0o644);
    touch(&tree.join("sub/ipsec.secrets"), 0o644);
    let denied = tree.join("sub/users.json");
    touch(&denied, 0o644);
    let mut inputs = inputs(&home, None);
    inputs.deny.push(denied.clone());
    let grants = view(&inputs);
    assert!(readable(&grants, &tree.join("public.conf")));
    assert!(readable(&grants, &tree.join("sub/also-public")));
    assert!(!readable(&grants, &tree.join("root-only.conf")));
    assert!(!readable(&grants, &tree.join("private-dir/x.conf")));
    assert!(!readable(&grants, &tree.join("sub/ipsec.secrets")), "secret-shaped, though world-readable");
    assert!(!readable(&grants, &denied));
    if Path::new("/etc/hostname").exists() {
        assert!(readable(&grants, Path::new("/etc/hostname")));
    }
    if Path::new("/etc/shadow").exists() {
        assert!(!readable(&grants, Path::new("/etc/shadow")));
    }
}

#[test]
fn beyond_the_walk_bound_the_working_directory_is_not_granted_whole() {
    let (_home, home) = home_with_secrets();
    let big = home.join("big");
    std::fs::create_dir_all(&big).unwrap();
    for i in 0..CWD_BOUNDS.entries + 10 {
        std::fs::write(big.join(format!("f{i:05}")), "x").unwrap();
    }
    let grants = view(&inputs(&home, Some(big.clone())));
    assert!(!grants.read.contains(&big));
    let granted = grants.read_files.iter().filter(|file| file.starts_with(&big)).count();
    assert!(granted <= CWD_BOUNDS.entries, "{granted}");
}

#[test]
fn a_working_directory_in_a_system_tree_or_above_a_home_opens_nothing_more() {
    let (_home, home) = home_with_secrets();
    let parent = home.parent().unwrap().to_path_buf();
    let above = view(&inputs(&home, Some(parent)));
    assert!(!readable(&above, &home.join("notes.txt")));
    let etc = view(&inputs(&home, Some(PathBuf::from("/etc"))));
    if Path::new("/etc/shadow").exists() {
        assert!(!readable(&etc, Path::new("/etc/shadow")));
    }
}

#[test]
fn a_huge_mixed_directory_is_closed_rather_than_split_into_a_rule_per_file() {
    let (_home, home) = home_with_secrets();
    let (_tree, tree) = tempdir();
    std::fs::set_permissions(&tree, std::fs::Permissions::from_mode(0o755)).unwrap();
    let deeper = tree.join("a/b");
    std::fs::create_dir_all(&deeper).unwrap();
    for dir in [tree.join("a"), deeper.clone()] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for i in 0..SYSTEM_BOUNDS.split_rules + 1 {
        std::fs::write(deeper.join(format!("f{i}")), "x").unwrap();
    }
    touch(&deeper.join("hidden"), 0o600);
    touch(&tree.join("f0"), 0o644);
    touch(&tree.join("hidden"), 0o600);
    let grants = view(&inputs(&home, None));
    assert!(!grants.read_files.iter().any(|file| file.starts_with(&deeper)));
    assert!(grants.list.contains(&deeper));
    // Within the bound the directory is split: its public files stay readable.
    assert!(readable(&grants, &tree.join("f0")));
    assert!(!readable(&grants, &tree.join("hidden")));
}

#[test]
fn rules_beneath_a_rule_that_grants_as_much_are_dropped() {
    let grants = without_redundant_rules(Grants {
        read: vec![PathBuf::from("/usr"), PathBuf::from("/usr/share"), PathBuf::from("/srv/app")],
        read_files: vec![PathBuf::from("/usr/bin/env"), PathBuf::from("/etc/hostname")],
        list: vec![PathBuf::from("/"), PathBuf::from("/etc"), PathBuf::from("/home/u")],
    });
    assert_eq!(grants.read, [PathBuf::from("/srv/app"), PathBuf::from("/usr")]);
    assert_eq!(grants.read_files, [PathBuf::from("/etc/hostname")]);
    assert_eq!(grants.list, [PathBuf::from("/")]);
}

#[test]
fn a_fifo_named_like_a_file_to_sniff_is_closed_without_being_opened() {
    let (_home, home) = home_with_secrets();
    let (_tree, tree) = tempdir();
    let fifo = tree.join("settings.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    touch(&tree.join("plain.txt"), 0o644);
    let inputs = inputs(&home, Some(tree.clone()));
    // Opening the FIFO to sniff it would block until a writer came: the walk runs in a thread so a
    // regression fails the test instead of hanging it.
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(view(&inputs));
    });
    let grants = finished.recv_timeout(std::time::Duration::from_secs(20)).expect("the walk blocked on a FIFO");
    assert!(!readable(&grants, &fifo));
    assert!(readable(&grants, &tree.join("plain.txt")));
}

/// An access ACL as the kernel stores it (`system.posix_acl_access`, version 2): owner rw, the
/// named user `uid` read, the owning group and others nothing, mask read.
fn acl_granting_read_to(uid: u32) -> Vec<u8> {
    let mut acl = 2u32.to_le_bytes().to_vec();
    for (tag, perm, id) in
        [(0x01u16, 6u16, u32::MAX), (0x02, 4, uid), (0x04, 0, u32::MAX), (0x10, 4, u32::MAX), (0x20, 0, u32::MAX)]
    {
        acl.extend_from_slice(&tag.to_le_bytes());
        acl.extend_from_slice(&perm.to_le_bytes());
        acl.extend_from_slice(&id.to_le_bytes());
    }
    acl
}

#[test]
fn a_file_an_acl_opens_to_this_user_is_not_taken_for_one_the_kernel_refuses() {
    use std::os::unix::fs::MetadataExt;
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: needs root to give the file another owner");
        return;
    }
    let (_home, home) = home_with_secrets();
    let (_tree, tree) = tempdir();
    std::fs::set_permissions(&tree, std::fs::Permissions::from_mode(0o755)).unwrap();
    touch(&tree.join("public.conf"), 0o644);
    let granted = tree.join("db.conf");
    touch(&granted, 0o600);
    std::os::unix::fs::chown(&granted, Some(65534), Some(65534)).unwrap();
    if rustix::fs::setxattr(
        &granted,
        "system.posix_acl_access",
        &acl_granting_read_to(0),
        rustix::fs::XattrFlags::empty(),
    )
    .is_err()
    {
        eprintln!("skipped: this file system has no POSIX ACLs");
        return;
    }
    assert_eq!(std::fs::metadata(&granted).unwrap().mode() & 0o777, 0o640, "the mask shows in the group bits");
    let grants = view(&inputs(&home, None));
    assert!(readable(&grants, &tree.join("public.conf")));
    assert!(!readable(&grants, &granted), "another user's 0600 file that an ACL opens to root");
}
