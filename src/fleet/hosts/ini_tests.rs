use std::path::Path;

use super::*;
use crate::fleet::hosts::inventory::Resolved;

fn resolve(text: &str) -> Resolved {
    let mut inventory = Inventory::new();
    read(Path::new("inv.ini"), text, &mut inventory).unwrap();
    inventory.resolve()
}

fn error(text: &str) -> String {
    let mut inventory = Inventory::new();
    read(Path::new("inv.ini"), text, &mut inventory).err().map(|e| e.to_string()).unwrap_or_default()
}

fn names(resolved: &Resolved) -> Vec<&str> {
    resolved.hosts.iter().map(|h| h.name.as_str()).collect()
}

const INVENTORY: &str = "\
# comment
h0 ansible_port=2200
; another comment
[web]
web[01:03].example.com ansible_user=deploy
[db]
db-[a:b] ansible_host=10.0.0.1 # trailing comment
db-c:2222 ansible_ssh_user='old'
[prod:children]
db
web
[prod:vars]
ansible_user=produser
ansible_port = 2022
[eu]
web02.example.com
db-a
";

#[test]
fn groups_children_vars_ranges_and_ports_land_as_ansible_puts_them() {
    let inventory = resolve(INVENTORY);
    // Ansible's order for `all`: ungrouped, then the top groups' own hosts, then a level deeper.
    assert_eq!(
        names(&inventory),
        ["h0", "web02.example.com", "db-a", "db-b", "db-c", "web01.example.com", "web03.example.com"]
    );
    let host = |name: &str| inventory.hosts.iter().find(|h| h.name == name).unwrap();
    assert_eq!((host("h0").port, host("h0").user.as_deref(), host("h0").groups.len()), (Some(2200), None, 0));
    // Host vars beat group vars; a child group's parents' vars reach its hosts.
    let web = host("web01.example.com");
    assert_eq!((web.user.as_deref(), web.port, web.address.as_deref()), (Some("deploy"), Some(2022), None));
    assert_eq!(web.groups, ["web", "prod"]);
    let db = host("db-a");
    assert_eq!((db.address.as_deref(), db.user.as_deref()), (Some("10.0.0.1"), Some("produser")));
    assert_eq!(db.groups, ["db", "prod", "eu"]);
    // `host:port` is the host's own ansible_port; `ansible_ssh_user` is honoured.
    let old = host("db-c");
    assert_eq!((old.port, old.user.as_deref()), (Some(2222), Some("old")));
    let group = |name: &str| inventory.groups.iter().find(|(g, _)| g == name).map(|(_, hosts)| hosts.len());
    assert_eq!((group("ungrouped"), group("prod"), group("all")), (Some(1), Some(6), Some(7)));
}

#[test]
fn malformed_lines_name_the_line_and_what_to_do() {
    assert_eq!(
        error("[web]\nh1\n[web:bogus]\n"),
        "inv.ini:3: section [web:bogus] has an unknown type `bogus` (hosts, vars or children)"
    );
    assert!(error("[web]\nh1 user\n").starts_with("inv.ini:2: expected a key=value host variable"));
    assert!(error("[web]\nh1 a='open\n").starts_with("inv.ini:2: no closing quotation"));
    assert!(error("[web ]\n").starts_with("inv.ini:1: invalid section"));
    assert!(error("[web:vars]\nno_equals\n").starts_with("inv.ini:2: expected key=value"));
    assert!(
        error("[p:children]\nghost\n").starts_with("inv.ini:2: section [p:children] names the undeclared group ghost")
    );
    assert!(error("[x:vars]\na=1\n").starts_with("inv.ini:1: section [x:vars] is for a group no section declares"));
    assert!(error("[a:children]\nb\n[b:children]\na\n").contains("loop"));
    assert!(error("web[1:]\n").starts_with("inv.ini:1: host range"));
    // Declared later is fine, as in Ansible.
    assert!(error("[p:children]\nc\n[c:vars]\nx=1\n[c]\nh\n").is_empty());
}

#[test]
fn values_are_typed_as_ansible_reads_them() {
    assert_eq!(parse_value("22"), Value::from(22));
    assert_eq!(parse_value("\"a b\""), Value::from("a b"));
    assert_eq!(parse_value("True"), Value::Bool(true));
    assert_eq!(parse_value("10.0.0.1"), Value::from("10.0.0.1"));
    assert_eq!(split_words(r#"h a="x y" b='q' c=\#d #comment"#).unwrap(), ["h", "a=x y", "b=q", "c=#d"]);
}

#[test]
fn unusable_connection_values_are_recorded_for_the_host() {
    let inventory = resolve("a ansible_port=http\nb ansible_host='{{ x }}'\nc ansible_user=ok\n");
    let problem = |at: usize| inventory.problems[at].clone().unwrap_or_default();
    assert!(problem(0).contains("not a port"), "{}", problem(0));
    assert!(problem(1).contains("template"), "{}", problem(1));
    assert!(inventory.problems[2].is_none());
}
