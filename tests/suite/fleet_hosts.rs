//! Fleet host selection (issue 24) against the real Ansible: the same inventories read by
//! `ansible-inventory --list` and by opsai's static reader must give the same hosts, groups,
//! addresses, ports and users; patterns must select what `ansible PATTERN --list-hosts` selects.

use std::path::{Path, PathBuf};
use std::process::Command;

use opsai::fleet::Host;
use opsai::fleet::hosts::{self, HostsError, Reader, Sources};

use crate::support::tmux::require;

const INI: &str = "\
bastion ansible_host=192.0.2.1 ansible_port=2201
[web]
web[01:03].example.com ansible_user=deploy
[db]
db-[a:b] ansible_host=10.0.0.1
db-c:2222 ansible_ssh_user=legacy ansible_ssh_host=10.0.0.3
[prod:children]
db
web
[prod:vars]
ansible_user=produser
ansible_port=2022
[eu]
web02.example.com
db-a
[all:vars]
ansible_user=fallback
";

const YAML: &str = "\
all:
  vars:
    ansible_user: fallback
  hosts:
    bastion:
      ansible_host: 192.0.2.1
      ansible_port: 2201
  children:
    prod:
      vars:
        ansible_user: produser
        ansible_port: 2022
      children:
        db:
          hosts:
            db-[a:b]:
              ansible_host: 10.0.0.1
            db-c:2222:
              ansible_ssh_user: legacy
              ansible_ssh_host: 10.0.0.3
        web:
          hosts:
            web[01:03].example.com:
              ansible_user: deploy
    eu:
      hosts:
        web02.example.com:
        db-a:
";

/// A dynamic inventory: a program printing Ansible's JSON.
const SCRIPT: &str = r#"#!/bin/sh
[ "$1" = "--list" ] || { echo '{}'; exit 0; }
cat <<'JSON'
{
  "all": {"children": ["ungrouped", "cloud"]},
  "ungrouped": {"hosts": ["jump"]},
  "cloud": {"children": ["api", "workers"], "vars": {"ansible_user": "cloud-user"}},
  "api": {"hosts": ["api-1", "api-2"]},
  "workers": ["worker-1"],
  "_meta": {"hostvars": {
    "jump": {"ansible_host": "198.51.100.7", "ansible_port": 2200},
    "api-1": {"ansible_host": "10.1.0.1"},
    "worker-1": {"ansible_port": "2022", "unrelated": {"deep": [1, 2]}}
  }}
}
JSON
"#;

fn ansible_inventory() -> Option<PathBuf> {
    if !require("ansible-inventory") {
        return None;
    }
    hosts::find_program("ansible-inventory", std::env::var_os("PATH").as_deref())
}

/// The inventory's directory is also the home Ansible gets (its ~/.ansible stays in the test's
/// temporary directory).
fn sources(inventory: &Path, program: Option<&Path>) -> Sources {
    Sources {
        inventory: Some(inventory.display().to_string()),
        ansible_inventory: program.map(Path::to_path_buf),
        home: inventory.parent().map(Path::to_path_buf),
        ..Sources::new()
    }
}

/// Hosts with their groups sorted: Ansible does not promise a group order.
fn normalized(mut hosts: Vec<Host>) -> Vec<Host> {
    for host in &mut hosts {
        host.groups.sort();
    }
    hosts
}

/// The same inventory through ansible-inventory and through the static reader.
fn both(inventory: &Path, program: &Path) -> (Vec<Host>, Vec<Host>) {
    let real = hosts::select(&sources(inventory, Some(program)), "all").expect("ansible-inventory reads it");
    let ours = hosts::select(&sources(inventory, None), "all").expect("the static reader reads it");
    assert_eq!(real.sources[0].reader, Reader::AnsibleInventory);
    assert_eq!(ours.sources[0].reader, Reader::Static);
    (normalized(real.hosts), normalized(ours.hosts))
}

fn host<'a>(hosts: &'a [Host], name: &str) -> &'a Host {
    hosts.iter().find(|h| h.name == name).unwrap_or_else(|| panic!("{name} missing from {hosts:?}"))
}

/// What both readers must find in INI and YAML alike.
fn assert_expected(hosts: &[Host]) {
    let names: Vec<&str> = hosts.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names.len(), 7, "{names:?}");
    let bastion = host(hosts, "bastion");
    assert_eq!((bastion.address.as_deref(), bastion.port, bastion.groups.len()), (Some("192.0.2.1"), Some(2201), 0));
    assert_eq!(bastion.user.as_deref(), Some("fallback"));
    let web = host(hosts, "web02.example.com");
    assert_eq!((web.user.as_deref(), web.port), (Some("deploy"), Some(2022)));
    assert_eq!(web.groups, ["eu", "prod", "web"]);
    let db = host(hosts, "db-c");
    assert_eq!((db.address.as_deref(), db.port, db.user.as_deref()), (Some("10.0.0.3"), Some(2222), Some("legacy")));
    assert_eq!(host(hosts, "db-b").user.as_deref(), Some("produser"));
}

#[test]
fn an_ini_inventory_reads_the_same_through_ansible_and_the_static_reader() {
    let Some(program) = ansible_inventory() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hosts.ini");
    std::fs::write(&file, INI).unwrap();
    let (real, ours) = both(&file, &program);
    assert_expected(&real);
    assert_eq!(ours, real);
}

#[test]
fn a_yaml_inventory_reads_the_same_through_ansible_and_the_static_reader() {
    let Some(program) = ansible_inventory() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hosts.yml");
    std::fs::write(&file, YAML).unwrap();
    let (real, ours) = both(&file, &program);
    assert_expected(&real);
    assert_eq!(ours, real);
}

#[test]
fn a_directory_inventory_with_group_and_host_vars_reads_the_same() {
    let Some(program) = ansible_inventory() else { return };
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("inventory");
    std::fs::create_dir_all(inv.join("group_vars/web")).unwrap();
    std::fs::create_dir_all(inv.join("host_vars")).unwrap();
    // A YAML file, an INI file without extension, and files Ansible skips in a directory.
    std::fs::write(inv.join("10-prod.yml"), "prod:\n  children:\n    web:\n      hosts:\n        w1:\n        w2:\n")
        .unwrap();
    std::fs::write(inv.join("20-extra"), "[db]\nd1 ansible_port=5432\n[web]\nw3\n").unwrap();
    std::fs::write(
        inv.join("30-more.json"),
        r#"{"db": {"hosts": {"d2": {"ansible_port": 2345}}, "vars": {"ansible_user": "dba"}}}"#,
    )
    .unwrap();
    std::fs::write(inv.join("README.md"), "[nope]\nnot-a-host\n").unwrap();
    std::fs::write(inv.join("old.ini"), "ignored-host\n").unwrap();
    std::fs::write(inv.join("group_vars/all.yml"), "ansible_user: everyone\nntp: pool.example\n").unwrap();
    std::fs::write(inv.join("group_vars/web/ssh.yaml"), "ansible_user: www\n").unwrap();
    std::fs::write(inv.join("host_vars/w2"), "---\nansible_host: 10.9.9.2\nansible_port: 2202\n").unwrap();
    let (real, ours) = both(&inv, &program);
    let names: Vec<&str> = real.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names.len(), 5, "{names:?}");
    let d2 = host(&real, "d2");
    // Ansible's precedence: group_vars/all.yml outranks the inventory file's own `db` vars.
    assert_eq!((d2.port, d2.user.as_deref()), (Some(2345), Some("everyone")));
    let w2 = host(&real, "w2");
    assert_eq!((w2.address.as_deref(), w2.port, w2.user.as_deref()), (Some("10.9.9.2"), Some(2202), Some("www")));
    assert_eq!(host(&real, "d1").user.as_deref(), Some("everyone"));
    assert_eq!(ours, real);
}

#[test]
fn a_script_inventory_runs_through_ansible_and_the_static_reader_alike() {
    let Some(program) = ansible_inventory() else { return };
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("cloud.sh");
    opsai::testing::write_program(&script, SCRIPT);
    let (real, ours) = both(&script, &program);
    let jump = host(&real, "jump");
    assert_eq!((jump.address.as_deref(), jump.port, jump.user.as_deref()), (Some("198.51.100.7"), Some(2200), None));
    let worker = host(&real, "worker-1");
    assert_eq!((worker.port, worker.user.as_deref()), (Some(2022), Some("cloud-user")));
    assert_eq!(worker.groups, ["cloud", "workers"]);
    assert_eq!(ours, real);
    let selected = hosts::select(&sources(&script, Some(&program)), "@cloud:!api-2").unwrap();
    let names: Vec<&str> = selected.hosts.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["api-1", "worker-1"]);
}

/// `ansible PATTERN -i INV --list-hosts`, as names in Ansible's order.
fn ansible_lists(inventory: &Path, pattern: &str, home: &Path) -> Vec<String> {
    let out = Command::new("ansible")
        .args([pattern, "-i", &inventory.display().to_string(), "--list-hosts"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("ANSIBLE_NOCOLOR", "1")
        .current_dir(home)
        .output()
        .expect("run ansible");
    assert!(out.status.success(), "ansible {pattern}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().skip(1).map(|line| line.trim().to_owned()).filter(|line| !line.is_empty()).collect()
}

#[test]
fn patterns_select_what_ansible_selects_in_the_same_order() {
    if ansible_inventory().is_none() || !require("ansible") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hosts.ini");
    std::fs::write(&file, INI).unwrap();
    for pattern in [
        "all",
        "*",
        "web",
        "prod",
        "web:db",
        "db,bastion",
        "prod:&eu",
        "prod:!eu",
        "!eu",
        "&eu:web",
        "web*",
        "*.example.com",
        "db-?",
        "db-[ab]",
        "~web0[13]",
        "~(db|bastion)",
        "web[0]",
        "web[1:]",
        "prod[0:2]",
        "web[-1]",
        "eu:web:!web01.example.com",
    ] {
        let expected = ansible_lists(&file, pattern, dir.path());
        for program in [Some(ansible_inventory().unwrap()), None] {
            let selection = hosts::select(&sources(&file, program.as_deref()), pattern)
                .unwrap_or_else(|error| panic!("{pattern}: {error}"));
            let mut names: Vec<String> = selection.hosts.into_iter().map(|h| h.name).collect();
            let mut expected = expected.clone();
            // Host wildcards match in the order the file defines hosts, which ansible-inventory's
            // JSON does not keep: through it, only the set is Ansible's.
            if program.is_some() && pattern.contains(['*', '?', '[', '~', '.']) {
                names.sort();
                expected.sort();
            }
            assert_eq!(names, expected, "pattern {pattern} (ansible-inventory: {})", program.is_some());
        }
    }
}

#[test]
fn a_malformed_inventory_is_ansibles_error_or_the_static_readers_line() {
    let Some(program) = ansible_inventory() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.ini");
    std::fs::write(&file, "[web]\nweb1\n[web:bogus]\nx\n").unwrap();
    let error = hosts::select(&sources(&file, Some(&program)), "all").unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, HostsError::AnsibleFailed { .. }), "{text}");
    assert!(text.contains("bogus") && text.contains("static reader was not used"), "{text}");
    let error = hosts::select(&sources(&file, None), "all").unwrap_err().to_string();
    assert!(error.starts_with(&format!("{}:3: section [web:bogus]", file.display())), "{error}");
    let missing = dir.path().join("missing.ini");
    let error = hosts::select(&sources(&missing, Some(&program)), "all").unwrap_err().to_string();
    assert!(error.starts_with(&format!("cannot read {}", missing.display())), "{error}");
}

#[test]
fn edge_cases_of_both_formats_read_the_same_as_ansible() {
    let Some(program) = ansible_inventory() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "edge.ini",
            "[parents:children]\nkids\n[kids]\n10.0.0.5 ansible_port=\"2200\"\nnode-[08:10]:2022 ansible_user='op'\n\
             [kids:vars]\nansible_user = kid\n[lonely]\n[other]\nkids\n; comment\n[other:vars]\nansible_ssh_port=2323\n",
        ),
        (
            "edge.yaml",
            "all:\n  children:\n    empty:\n    nullkids:\n      children:\n    single:\n      hosts: solo\n      vars:\n        \
             ansible_port: 2299\n    web:\n      hosts:\n        \"web[a:c]\":\n          ansible_host: 10.1.1.1\n        \
             web9:2200:\n      children:\n        inner:\n          hosts:\n            weba:\n              ansible_user: u\n",
        ),
    ];
    for (name, text) in cases {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let real = hosts::select(&sources(&file, Some(&program)), "all");
        let ours = hosts::select(&sources(&file, None), "all");
        match (real, ours) {
            (Ok(real), Ok(ours)) => assert_eq!(normalized(ours.hosts), normalized(real.hosts), "{name}"),
            (Err(real), Err(ours)) => panic!("{name}: both refused it: {real} / {ours}"),
            (real, ours) => panic!("{name}: ansible-inventory {real:?}, static reader {ours:?}"),
        }
    }
}
