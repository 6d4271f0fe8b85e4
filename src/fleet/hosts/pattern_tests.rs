use std::path::Path;

use super::*;
use crate::fleet::hosts::ini;
use crate::fleet::hosts::inventory::Inventory;

const INVENTORY: &str = "\
bastion
[web]
web-1.eu
web-2.eu
web-3.us
[db]
db-1.eu
db-2.us
[eu]
web-1.eu
web-2.eu
db-1.eu
[prod:children]
web
db
[prod-db:children]
db
";

fn inventory() -> Resolved {
    let mut inventory = Inventory::new();
    ini::read(Path::new("inv"), INVENTORY, &mut inventory).unwrap();
    inventory.resolve()
}

fn select(pattern: &str) -> Result<Vec<String>, PatternError> {
    let inventory = inventory();
    evaluate(pattern, &inventory).map(|hosts| hosts.into_iter().map(|h| inventory.hosts[h].name.clone()).collect())
}

fn names(pattern: &str) -> Vec<String> {
    select(pattern).unwrap_or_else(|error| panic!("{pattern}: {error:?}"))
}

#[test]
fn names_groups_all_and_wildcards() {
    assert_eq!(names("bastion"), ["bastion"]);
    assert_eq!(names("db"), ["db-1.eu", "db-2.us"]);
    assert_eq!(names("all").len(), 6);
    assert_eq!(names("*"), names("all"));
    assert_eq!(names("web-*"), ["web-1.eu", "web-2.eu", "web-3.us"]);
    assert_eq!(names("*.us"), ["web-3.us", "db-2.us"]);
    assert_eq!(names("web-[12].eu"), ["web-1.eu", "web-2.eu"]);
    assert_eq!(names("web-[!12].*"), ["web-3.us"]);
    assert_eq!(names("db-?.eu"), ["db-1.eu"]);
}

#[test]
fn union_intersection_and_exclusion_apply_in_ansibles_order() {
    assert_eq!(names("db:bastion"), ["db-1.eu", "db-2.us", "bastion"]);
    assert_eq!(names("db,bastion"), names("db:bastion"));
    assert_eq!(names("db , bastion"), names("db:bastion"));
    assert_eq!(names("prod:&eu"), ["web-1.eu", "web-2.eu", "db-1.eu"]);
    assert_eq!(names("prod:!eu"), ["web-3.us", "db-2.us"]);
    // Exclusions come last wherever they are written, intersections after every union.
    assert_eq!(names("!eu:prod"), names("prod:!eu"));
    assert_eq!(names("&eu:web:db"), ["web-1.eu", "web-2.eu", "db-1.eu"]);
    assert_eq!(names("web:&eu:!web-2.eu:db"), ["web-1.eu", "db-1.eu"]);
    // Only narrowing terms start from `all`.
    assert_eq!(names("!prod"), ["bastion"]);
    // Duplicates once, in first-seen order.
    assert_eq!(names("eu:web"), ["web-1.eu", "web-2.eu", "db-1.eu", "web-3.us"]);
}

#[test]
fn regex_subscripts_and_the_at_group_shorthand() {
    assert_eq!(names("~web-[13]"), ["web-1.eu", "web-3.us"]);
    // Ansible matches a regex from the start of the name.
    assert_eq!(select(r"~\.eu$"), Err(PatternError::Unmatched(r"~\.eu$".into())));
    assert_eq!(names("~.*eu$"), ["web-1.eu", "web-2.eu", "db-1.eu"]);
    assert_eq!(names("web[0]"), ["web-1.eu"]);
    assert_eq!(names("web[-1]"), ["web-3.us"]);
    assert_eq!(names("web[1:]"), ["web-2.eu", "web-3.us"]);
    assert_eq!(names("web[0:1]"), ["web-1.eu", "web-2.eu"]);
    assert_eq!(names("@prod-db"), ["db-1.eu", "db-2.us"]);
    assert_eq!(names("@prod-*:!@eu"), ["db-2.us"]);
    assert_eq!(names("@prod*:!@eu"), ["web-3.us", "db-2.us"]);
    // `@` names groups only: a host name is not one.
    assert_eq!(select("@bastion"), Err(PatternError::Unmatched("@bastion".into())));
}

#[test]
fn a_term_that_matches_nothing_is_named_even_when_others_match() {
    assert_eq!(select("web:!prd"), Err(PatternError::Unmatched("prd".into())));
    assert_eq!(select("web:nope"), Err(PatternError::Unmatched("nope".into())));
    assert_eq!(select("web[7]"), Err(PatternError::Unmatched("web[7]".into())));
    assert!(matches!(select("~("), Err(PatternError::Invalid(_))));
    assert!(matches!(select(""), Err(PatternError::Invalid(_))));
    assert!(select(" , :").is_err());
    assert!(matches!(select("web:!"), Err(PatternError::Invalid(_))));
}

#[test]
fn a_host_named_like_a_group_is_the_host_alone_but_the_group_when_narrowing() {
    let mut inventory = Inventory::new();
    ini::read(Path::new("inv"), "web\nother\n[web]\nw1\n[all2:children]\nweb\n", &mut inventory).unwrap();
    let inventory = inventory.resolve();
    let pick = |pattern: &str| -> Vec<String> {
        evaluate(pattern, &inventory).unwrap().into_iter().map(|h| inventory.hosts[h].name.clone()).collect()
    };
    assert_eq!(pick("web"), ["web"]);
    assert_eq!(pick("all:!web"), ["web", "other"]);
}

#[test]
fn colons_in_addresses_and_ranges_do_not_split() {
    assert_eq!(split("fe80::1").unwrap(), ["fe80::1"]);
    assert_eq!(split("web:22").unwrap(), ["web:22"]);
    assert_eq!(split("web[1:3]:db").unwrap(), ["web[1:3]", "db"]);
    assert_eq!(split("a:&b:!c").unwrap(), ["a", "&b", "!c"]);
    assert_eq!(split("a:b,c").unwrap(), ["a:b", "c"]);
}

#[test]
fn globs_are_pythons_fnmatch() {
    assert!(glob_matches("web-*", "web-1"));
    assert!(!glob_matches("web-*", "xweb-1"));
    assert!(glob_matches("[!a]b", "cb"));
    assert!(glob_matches("a[", "a["));
    assert!(glob_matches("x[&~]y", "x&y"));
    assert!(!glob_matches("a?", "a"));
    assert!(glob_matches("*.conf", "x.conf"));
}
