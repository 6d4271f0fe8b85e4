//! Sources together: order, precedence, YAML, host lists, errors a user acts on, and garbage.

use std::path::Path;

use super::*;

/// An executable script `name` in `dir`, written so that running it cannot meet "Text file busy".
fn program(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    crate::testing::write_program(&path, text);
    path
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn names(selection: &Selection) -> Vec<&str> {
    selection.hosts.iter().map(|h| h.name.as_str()).collect()
}

#[test]
fn sources_merge_in_order_and_the_first_definition_of_a_name_wins() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let inventory = write(dir.path(), "inv.yml", "web:\n  hosts:\n    web-1:\n      ansible_user: deploy\n    db-1:\n");
    write(&home, ".ssh/config", "Host ssh-only web-1 *.corp\nInclude more\n");
    write(&home, ".ssh/more", "Host DB-1 extra\n");
    let names_file = write(dir.path(), "names", "listed\nweb-1:2200\nroot@extra2:22\n");
    let sources = Sources {
        inventory: Some(inventory.display().to_string()),
        ssh_config: Some(home.join(".ssh/config")),
        names_file: Some(names_file.clone()),
        home: Some(home.clone()),
        ..Sources::new()
    };
    let selection = select(&sources, "all").unwrap();
    // ssh compares names without case, but inventory names are Ansible's and keep theirs.
    assert_eq!(names(&selection), ["web-1", "db-1", "ssh-only", "DB-1", "extra", "listed", "extra2"]);
    let web = &selection.hosts[0];
    assert_eq!((web.user.as_deref(), web.port), (Some("deploy"), None), "the inventory's web-1 wins");
    assert_eq!((selection.hosts[6].user.as_deref(), selection.hosts[6].port), (Some("root"), Some(22)));
    let labels: Vec<String> = selection.sources.iter().map(ToString::to_string).collect();
    assert_eq!(
        labels,
        [
            format!(
                "inventory {} (read by opsai's static reader: ansible-inventory is not installed): 2 hosts",
                inventory.display()
            ),
            format!("ssh config {}: 3 hosts", home.join(".ssh/config").display()),
            format!("host file {}: 2 hosts", names_file.display()),
        ]
    );
    // Later sources' hosts are ungrouped; `@web` is the inventory's group only.
    assert_eq!(names(&select(&sources, "@web").unwrap()), ["web-1", "db-1"]);
    assert_eq!(names(&select(&sources, "ungrouped:&e*").unwrap()), ["extra", "extra2"]);
}

#[test]
fn a_byte_order_mark_does_not_become_part_of_a_name() {
    let dir = tempfile::tempdir().unwrap();
    let ini = write(dir.path(), "inv", "\u{feff}[web]\nw1\n");
    let names_file = write(dir.path(), "names", "\u{feff}n1\n");
    let sources =
        Sources { inventory: Some(ini.display().to_string()), names_file: Some(names_file), ..Sources::new() };
    assert_eq!(names(&select(&sources, "web:n1").unwrap()), ["w1", "n1"]);
}

#[test]
fn the_option_replaces_the_environment_and_a_comma_list_is_hosts_or_paths() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.ini", "a1\n");
    let b = write(dir.path(), "b.ini", "[g]\nb1 ansible_host=10.0.0.2\n");
    let env = Sources { ansible_inventory_env: Some(format!("{}, {},", a.display(), b.display())), ..Sources::new() };
    assert_eq!(names(&select(&env, "all").unwrap()), ["a1", "b1"]);
    let option = Sources { inventory: Some(b.display().to_string()), ..env };
    assert_eq!(names(&select(&option, "all").unwrap()), ["b1"]);
    let list = Sources { inventory: Some("web1,web2:2222,".into()), ..Sources::new() };
    let selection = select(&list, "web*").unwrap();
    assert_eq!(names(&selection), ["web1", "web2"]);
    assert_eq!(selection.hosts[1].port, Some(2222));
    let home = Sources { inventory: Some("~/a.ini".into()), home: Some(dir.path().to_owned()), ..Sources::new() };
    assert_eq!(names(&select(&home, "a1").unwrap()), ["a1"]);
}

#[test]
fn a_pattern_that_matches_nothing_says_what_was_read_and_what_is_near() {
    let dir = tempfile::tempdir().unwrap();
    let inventory = write(dir.path(), "inv.ini", "[prod]\nweb-01\nweb-02\n[stage]\nweb-09\n");
    let sources = Sources { inventory: Some(inventory.display().to_string()), ..Sources::new() };
    let error = select(&sources, "prd").unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "no host matches `prd`: read inventory {} (read by opsai's static reader: ansible-inventory is not \
             installed): 3 hosts. Did you mean prod?",
            inventory.display()
        )
    );
    let error = select(&sources, "prod:!web-1").unwrap_err().to_string();
    assert!(error.starts_with("no host matches `web-1` (in `prod:!web-1`)"), "{error}");
    assert!(error.ends_with("Did you mean web-01?"), "{error}");
    assert!(matches!(select(&sources, "~[").unwrap_err(), HostsError::BadPattern { .. }));
    assert!(matches!(select(&Sources::new(), "all").unwrap_err(), HostsError::NoSources));
}

#[test]
fn a_selected_host_with_unusable_vars_is_an_error_and_an_unselected_one_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let inventory = write(dir.path(), "inv.ini", "good\nbad ansible_host='{{ lookup(\"x\") }}'\n-oProxyCommand=x\n");
    let sources = Sources { inventory: Some(inventory.display().to_string()), ..Sources::new() };
    assert_eq!(names(&select(&sources, "good").unwrap()), ["good"]);
    let error = select(&sources, "all").unwrap_err().to_string();
    assert!(error.starts_with("host bad: ansible_host is the template"), "{error}");
    let error = select(&sources, "~-o.*").unwrap_err().to_string();
    assert!(error.contains("starting with `-`"), "{error}");
}

#[test]
fn shell_syntax_and_hidden_characters_in_names_addresses_and_users_are_unusable() {
    let dir = tempfile::tempdir().unwrap();
    let inventory = write(
        dir.path(),
        "inv.yml",
        "all:\n  hosts:\n    ok:\n      ansible_host: 10.0.0.1\n      ansible_user: deploy\n\
         \x20   inj-host:\n      ansible_host: \"a$(id)\"\n\
         \x20   inj-tick:\n      ansible_host: \"a`id`\"\n\
         \x20   inj-user:\n      ansible_user: \"u;id\"\n\
         \x20   inj-pipe:\n      ansible_user: \"u|id\"\n\
         \x20   bidi-user:\n      ansible_user: \"de\u{202e}ploy\"\n\
         \x20   \"we\u{200b}b\":\n\
         \x20   \"na;me\":\n\
         \x20   \"alias;ok\":\n      ansible_host: 10.0.0.2\n",
    );
    let sources = Sources { inventory: Some(inventory.display().to_string()), ..Sources::new() };
    let ok = select(&sources, "ok").unwrap();
    assert_eq!((ok.hosts[0].address.as_deref(), ok.hosts[0].user.as_deref()), (Some("10.0.0.1"), Some("deploy")));
    for (host, says) in [
        ("inj-host", "not a host name or address"),
        ("inj-tick", "not a host name or address"),
        ("inj-user", "not a user name"),
        ("inj-pipe", "not a user name"),
        ("bidi-user", "not a usable name"),
        ("we\u{200b}b", "invisible"),
        ("na;me", "not a host name or address"),
    ] {
        let error = select(&sources, host).unwrap_err().to_string();
        assert!(error.contains(says), "{host}: {error}");
    }
    // A name that is only an alias (its address given) may hold what a host name cannot.
    assert_eq!(select(&sources, "alias;ok").unwrap().hosts[0].destination(), "10.0.0.2");
}

#[test]
fn yaml_inventories_are_read_as_ansible_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let inventory = write(
        dir.path(),
        "inv.yaml",
        "defaults: &d\n  ansible_user: base\nweb:\n  hosts: single\n  vars:\n    <<: *d\n    ansible_port: '2201'\n\
         db:\n  hosts:\n    \"db-[1:2]\": {ansible_host: 10.0.0.9}\n  unknown_key: ignored\n",
    );
    let sources = Sources { inventory: Some(inventory.display().to_string()), ..Sources::new() };
    let selection = select(&sources, "all").unwrap();
    assert_eq!(names(&selection), ["single", "db-1", "db-2"]);
    assert_eq!((selection.hosts[0].user.as_deref(), selection.hosts[0].port), (Some("base"), Some(2201)));
    assert_eq!(selection.hosts[2].address.as_deref(), Some("10.0.0.9"));
    let fail = |text: &str| {
        let file = write(dir.path(), "bad.yml", text);
        let sources = Sources { inventory: Some(file.display().to_string()), ..Sources::new() };
        select(&sources, "all").unwrap_err().to_string()
    };
    let bad = dir.path().join("bad.yml").display().to_string();
    assert!(fail("web:\n  hosts: [a, b]\n").starts_with(&format!("{bad}:2: `hosts` of group web must be a mapping")));
    assert!(fail("web: [\n").starts_with(&format!("{bad}:2: not valid YAML")), "{}", fail("web: [\n"));
    assert!(fail("plugin: aws_ec2\nregions: [eu-west-1]\n").contains("install ansible-core"));
    assert!(fail("- a\n- b\n").contains("a mapping of groups"));
    assert!(fail("").contains("empty"));
    let bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n\
                c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n\
                e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n\
                g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n";
    assert!(fail(bomb).contains("more than"), "{}", fail(bomb));
}

#[test]
fn find_program_looks_only_on_the_path_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let program = write(dir.path(), "ansible-inventory", "#!/bin/sh\n");
    assert_eq!(find_program("ansible-inventory", Some(dir.path().as_os_str())), None, "not executable");
    std::fs::set_permissions(&program, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    assert_eq!(find_program("ansible-inventory", Some(dir.path().as_os_str())), Some(program));
    assert_eq!(find_program("ansible-inventory", None), None);
}

#[test]
fn ansible_inventory_gets_the_inventories_in_order_and_the_home_handed_in() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("the-home");
    std::fs::create_dir(&home).unwrap();
    let a = write(dir.path(), "a.ini", "");
    let b = write(dir.path(), "b.ini", "");
    // Prints its arguments and HOME back as host names.
    let fake = program(
        dir.path(),
        "fake-ansible-inventory",
        "#!/bin/sh\nprintf '{\"g\": [\"%s\", \"%s\", \"%s\"]}' \"$(basename \"$2\")\" \"$(basename \"$4\")\" \"$(basename \"$HOME\")\"\n",
    );
    let sources = Sources {
        ansible_inventory_env: Some(format!("{},{}", a.display(), b.display())),
        ansible_inventory: Some(fake),
        home: Some(home),
        ..Sources::new()
    };
    let selection = select(&sources, "g").unwrap();
    assert_eq!(names(&selection), ["a.ini", "b.ini", "the-home"]);
    assert_eq!(selection.sources[0].reader, Reader::AnsibleInventory);
}

#[test]
fn a_failing_or_hanging_inventory_program_is_an_error_with_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let inventory = write(dir.path(), "inv.ini", "h\n");
    let fake = program(dir.path(), "fake-ansible-inventory", "#!/bin/sh\necho 'ERROR! boom on line 1' >&2\nexit 5\n");
    let mut sources = Sources {
        inventory: Some(inventory.display().to_string()),
        ansible_inventory: Some(fake.clone()),
        ..Sources::new()
    };
    let error = select(&sources, "all").unwrap_err().to_string();
    assert!(error.contains("ERROR! boom on line 1") && error.contains("exit status: 5"), "{error}");
    assert!(error.contains("static reader was not used because ansible-inventory is installed"), "{error}");
    std::fs::write(&fake, "#!/bin/sh\nsleep 30\n").unwrap();
    sources.timeout = Duration::from_millis(300);
    let started = std::time::Instant::now();
    let error = select(&sources, "all").unwrap_err().to_string();
    assert!(error.contains("ran longer than"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10), "the program was stopped, not waited for");
}

/// Deterministic pseudo-random bytes (no extra crate): a fuzz-style sweep of every reader.
fn garbage(seed: u64, alphabet: &[u8], len: usize) -> String {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            alphabet[(state % alphabet.len() as u64) as usize] as char
        })
        .collect()
}

#[test]
fn no_input_panics_any_reader_or_the_pattern_language() {
    let dir = tempfile::tempdir().unwrap();
    let alphabet = b"[]:=,#;!&@~*?{}()\"'\\- \n\tab01.|<>^$%yY";
    let ini = dir.path().join("fuzz.ini");
    let yml = dir.path().join("fuzz.yml");
    let json = dir.path().join("fuzz.json");
    let ssh = dir.path().join("ssh_config");
    let names_file = dir.path().join("names");
    let mut ok = 0;
    for seed in 0..150u64 {
        let text = garbage(seed, alphabet, (seed as usize % 200) + 1);
        for path in [&ini, &yml, &json, &ssh, &names_file] {
            std::fs::write(path, &text).unwrap();
        }
        std::fs::write(&json, format!("{{\"all\": {{\"children\": [\"g\"]}}, \"g\": {text}}}")).unwrap();
        for inventory in [&ini, &yml] {
            let sources = Sources {
                inventory: Some(inventory.display().to_string()),
                ssh_config: Some(ssh.clone()),
                names_file: Some(names_file.clone()),
                home: Some(dir.path().to_owned()),
                ..Sources::new()
            };
            if let Ok(catalog) = Catalog::load(&sources) {
                ok += 1;
                let _ = catalog.select(&text);
                let _ = catalog.select(&garbage(seed + 1, alphabet, 12));
            }
        }
        let mut inventory = Inventory::new();
        let _ = json::read(&json, &std::fs::read_to_string(&json).unwrap(), &mut inventory);
        let _ = pattern::evaluate(&text, &inventory.resolve());
    }
    assert!(ok > 0, "some garbage still reads as an inventory (the sweep reaches selection)");
}

#[test]
fn deeply_nested_yaml_and_json_are_errors_or_readable_never_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("deep.yml", format!("a: {}{}\n", "[".repeat(200_000), "]".repeat(200_000))),
        ("deep2.yml", format!("a: {}1{}\n", "{b: ".repeat(50_000), "}".repeat(50_000))),
        ("deep.json", format!("{{\"a\": {}{}}}", "[".repeat(200_000), "]".repeat(200_000))),
    ] {
        let file = write(dir.path(), name, &text);
        let sources = Sources { inventory: Some(file.display().to_string()), ..Sources::new() };
        let _ = select(&sources, "all");
    }
}

#[test]
fn a_script_leaving_a_child_on_its_output_does_not_hold_the_selection_past_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let script = program(dir.path(), "inv.sh", "#!/bin/sh\necho '{\"g\": [\"h1\"]}'\nsetsid sleep 3 &\nexit 0\n");
    let sources = Sources {
        inventory: Some(script.display().to_string()),
        timeout: Duration::from_millis(500),
        ..Sources::new()
    };
    let started = std::time::Instant::now();
    let error = select(&sources, "all").unwrap_err().to_string();
    assert!(error.contains("ran longer than"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10));
}
