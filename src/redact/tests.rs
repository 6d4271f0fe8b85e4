use pretty_assertions::assert_eq;
use proptest::prelude::*;
use rstest::rstest;

use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect()
}

const PEM: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDkQ3H8Vdl7Y1jvAzQUgX4HHlMz5CrmIGQAXDbq0oX6zwAAAJgAAAAA\n-----END OPENSSH PRIVATE KEY-----";

#[rstest]
#[case::openai("key sk-abcdefghij0123456789ABCDEFGHIJ0123456789abcdefgh ok", "key [REDACTED:openai] ok")]
#[case::openai_project("sk-proj-Ab3dEf_Gh1jKlMnOpQrStUvWx-yz0123456789", "[REDACTED:openai]")]
#[case::anthropic("x=sk-ant-api03-AbCdEf0123456789_abcdefghij-XYZ", "x=[REDACTED:anthropic]")]
#[case::aws_key_id("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "aws_access_key_id = [REDACTED:aws-access-key-id]")]
#[case::aws_session_key_id("ASIAY34FZKBOKMUTVV7A,", "[REDACTED:aws-access-key-id],")]
#[case::aws_secret(
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "aws_secret_access_key = [REDACTED:aws-secret-key]"
)]
#[case::aws_secret_json(
    r#""SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY","#,
    r#""SecretAccessKey": "[REDACTED:aws-secret-key]","#
)]
#[case::github_classic("token ghp_1234567890abcdefghijABCDEFGHIJ123456 end", "token [REDACTED:github] end")]
#[case::github_app("ghs_16C7e42F292c6912E7710c838347Ae178B4a", "[REDACTED:github]")]
#[case::github_fine_grained(
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU",
    "[REDACTED:github]"
)]
#[case::gitlab("glpat-xYz123AbC456dEf789gH", "[REDACTED:gitlab]")]
#[case::slack("SLACK=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "SLACK=[REDACTED:slack]")]
#[case::slack_webhook(
    "curl https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "curl https://[REDACTED:slack]"
)]
#[case::google("AIzaSyA-1234567890abcdefghijklmnopqrstu", "[REDACTED:google-api-key]")]
#[case::stripe_live("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED:stripe]")]
#[case::stripe_restricted("rk_test_4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED:stripe]")]
#[case::npm(
    "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
    "//registry.npmjs.org/:_authToken=[REDACTED:npm]"
)]
#[case::jwt(
    "id eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U.",
    "id [REDACTED:jwt]."
)]
#[case::bearer(
    "curl -H 'Authorization: Bearer abc123def456ghi789'",
    "curl -H 'Authorization: Bearer [REDACTED:authorization]'"
)]
#[case::bearer_alone("use bearer 0a1b2c3d4e5f6a7b", "use bearer [REDACTED:bearer]")]
#[case::basic("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED:authorization]")]
#[case::pem(PEM, "[REDACTED:private-key]")]
#[case::pem_in_text(
    "cat id:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\ndone",
    "cat id:\n[REDACTED:private-key]\ndone"
)]
#[case::pem_head_only(
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n... [900 bytes truncated] ...",
    "[REDACTED:private-key]\n... [900 bytes truncated] ..."
)]
#[case::pem_tail_only(
    "... [900 bytes truncated] ...\nBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END PRIVATE KEY-----\n$ ",
    "... [900 bytes truncated] ...\n[REDACTED:private-key]\n$ "
)]
#[case::password_eq("mysql password=hunter22 -h db", "mysql password=[REDACTED:password] -h db")]
#[case::password_colon("passwd: s3cr3t!", "passwd: [REDACTED:password]")]
#[case::password_json(
    r#"{"password": "correct horse", "user": "bob"}"#,
    r#"{"password": "[REDACTED:password]", "user": "bob"}"#
)]
#[case::password_env("DB_PASSWORD='p@ss w0rd'", "DB_PASSWORD='[REDACTED:password]'")]
#[case::password_flag("mysql --password hunter22", "mysql --password [REDACTED:password]")]
#[case::token_assignment("export API_TOKEN=abcd1234", "export API_TOKEN=[REDACTED:secret]")]
#[case::client_secret("client_secret: AbCdEf", "client_secret: [REDACTED:secret]")]
#[case::url_password("postgres://app:s3cret@db:5432/x", "postgres://app:[REDACTED:url-password]@db:5432/x")]
#[case::url_password_no_user("redis://:hunter22@localhost:6379", "redis://:[REDACTED:url-password]@localhost:6379")]
#[case::url_password_with_at("https://u:p@ss@host/x", "https://u:[REDACTED:url-password]@host/x")]
fn redacts(#[case] text: &str, #[case] expected: &str) {
    assert_eq!(Redactor::default().redact(text), expected);
}

#[rstest]
#[case::git_sha("commit 3f786850e387550fdab836ed7e6dc881de23001b")]
#[case::uuid("id 123e4567-e89b-12d3-a456-426614174000")]
#[case::sk_in_prose("see task-sk-1 and sk-2")]
#[case::sk_branch("git checkout sk-learn-notes-for-monday-review")]
#[case::password_word("Enter your password to continue; password reset is at /reset")]
#[case::password_prompt("[sudo] password for alice: ")]
#[case::password_placeholder("password: ${DB_PASSWORD}")]
#[case::password_empty("password=\nnext")]
#[case::ssh_public_key("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@laptop")]
#[case::public_key_block("-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----")]
#[case::usage_counts(r#"{"prompt_tokens": 35, "max_tokens": 4096}"#)]
#[case::url_without_password("https://alice@example.com/repo.git and http://localhost:8080/a@b")]
#[case::bearer_prose("the API takes a Bearer token in the header")]
#[case::stripe_publishable("pk_live_4eC39HqLyjWDarjtT1zdp7dc")]
#[case::k8s_secret_ref("kind: Secret\nsecretName: db-creds")]
#[case::env_output("HOME=/root\nPATH=/usr/bin\nSSH_AUTH_SOCK=/tmp/ssh-x/agent.1")]
#[case::empty("")]
fn keeps(#[case] text: &str) {
    assert_eq!(Redactor::default().redact(text), text);
}

#[rstest]
#[case("GITHUB_TOKEN", true)]
#[case("AWS_SECRET_ACCESS_KEY", true)]
#[case("OPENAI_API_KEY", true)]
#[case("apikey", true)]
#[case("PGPASSWORD", true)]
#[case("MYSQL_PASSWD", true)]
#[case("GOOGLE_APPLICATION_CREDENTIALS", true)]
#[case("PRIVATE_KEY_PEM", true)]
#[case("NPM_AUTH", true)]
#[case("OAUTH_CLIENT", true)]
#[case("SESSION_ID", true)]
#[case("COOKIE_JAR", true)]
#[case("HOME", false)]
#[case("PATH", false)]
#[case("KEYMAP", false)]
#[case("OPSAI_KEYMAP", false)]
#[case("SSH_AUTH_SOCK", false)]
#[case("XDG_SESSION_ID", false)]
#[case("XDG_SESSION_TYPE", false)]
#[case("SESSION_MANAGER", false)]
#[case("DBUS_SESSION_BUS_ADDRESS", false)]
#[case("GPG_AGENT_INFO", false)]
#[case("GIT_AUTHOR_NAME", false)]
#[case("XAUTHORITY", false)]
#[case("GNOME_KEYRING_CONTROL", false)]
#[case("KEYRING_PASSWORD", true)]
#[case("DB_PASS", true)]
#[case("MYSQL_PWD", true)]
#[case("SENTRY_DSN", true)]
#[case("AZURE_CREDS", true)]
#[case("OPENAI_API", true)]
#[case("db-password", true)]
#[case("Session.Secret", true)]
#[case("PWD", false)]
#[case("OLDPWD", false)]
#[case("MAX_TOKENS", false)]
#[case("max_tokens", false)]
#[case("OPENAI_MAX_TOKENS", false)]
#[case("SESSION_TIMEOUT", false)]
#[case("TOKEN_TYPE", false)]
#[case("SSH_KEY_PATH", false)]
#[case("PGPASSFILE", true)]
#[case("PASSWORD_FILE", false)]
#[case("KEYBOARD_LAYOUT", false)]
#[case("HTTP_PROXY_BYPASS", false)]
#[case("TOKENIZERS_PARALLELISM", false)]
#[case("CREDIT_LIMIT", false)]
#[case("RAPID_MODE", false)]
#[case("PRIVATE_IP", false)]
#[case("AUTH_USER", false)]
#[case("JWT_ALGORITHM", false)]
#[case("SESSION_DOMAIN", false)]
#[case("", false)]
fn secret_names(#[case] name: &str, #[case] secret: bool) {
    assert_eq!(is_secret_name(name), secret, "{name}");
}

#[test]
fn learns_secret_env_values() {
    let redactor = Redactor::new(env(&[
        ("MY_SERVICE_TOKEN", "plainwordsecret"),
        ("DB_PASSWORD", "hunter2hunter2"),
        ("SHORT_KEY", "abc"),
        ("EDITOR", "vimvimvim"),
        ("weird-KEY", "dash-named-value"),
    ]));
    assert_eq!(
        redactor.redact("token plainwordsecret and hunter2hunter2, abc, vimvimvim, dash-named-value"),
        "token [REDACTED:env:MY_SERVICE_TOKEN] and [REDACTED:env:DB_PASSWORD], abc, vimvimvim, [REDACTED:env]"
    );
    assert!(!format!("{redactor:?}").contains("hunter2"));
}

#[test]
fn yes_no_and_mode_values_are_not_learned() {
    let redactor = Redactor::new(env(&[("AUTH_ON", "true"), ("SESSION_SAVE", "enabled"), ("API_X", "disabled")]));
    assert_eq!(redactor.redact("true enabled disabled"), "true enabled disabled");
}

fn encode(bytes: &[u8], url: bool) -> String {
    let alphabet: &[u8] = if url {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    } else {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    };
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `env | base64`, `printenv X | xxd -p`, a value cut by the terminal: the value is found in each.
#[test]
fn learned_values_are_found_encoded_and_across_line_breaks() {
    let secret = "Tr0ub4dor&3-horse>?";
    let redactor = Redactor::new(env(&[("DB_PASS", secret)]));
    for prefix in ["", "A", "AB", "HOME=/root\nDB_PASS="] {
        let plain = format!("{prefix}{secret}\nPATH=/usr/bin\n");
        for url in [false, true] {
            let encoded = encode(plain.as_bytes(), url);
            let out = redactor.redact(&encoded);
            assert!(out.contains("[REDACTED:env:DB_PASS]"), "{prefix:?} url={url}: {encoded} -> {out}");
            // `base64` wraps at 76 columns; a PTY ends lines with \r\n.
            let wrapped: String = encoded
                .as_bytes()
                .chunks(7)
                .map(|line| String::from_utf8_lossy(line).into_owned())
                .collect::<Vec<_>>()
                .join("\r\n");
            let out = redactor.redact(&wrapped);
            assert!(out.contains("[REDACTED:env:DB_PASS]"), "{wrapped} -> {out}");
            assert_eq!(out.matches("\r\n").count(), wrapped.matches("\r\n").count(), "line breaks stay");
        }
    }
    let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
    assert_eq!(redactor.redact(&format!("x {hex} y")), "x [REDACTED:env:DB_PASS] y");
    assert_eq!(redactor.redact(&format!("x {} y", hex.to_uppercase())), "x [REDACTED:env:DB_PASS] y");
    assert_eq!(
        redactor.redact("pw: Tr0ub4dor&3\r\n-horse>? ok"),
        "pw: [REDACTED:env:DB_PASS]\r\n[REDACTED:env:DB_PASS] ok"
    );
    assert_eq!(
        redactor.redact("GET /login?x=Tr0ub4dor%263-horse%3e%3f&y=1"),
        "GET /login?x=[REDACTED:env:DB_PASS]&y=1"
    );
    let quoted = Redactor::new(env(&[("API_TOKEN", r#"ab"cd\ef12"#)]));
    assert_eq!(quoted.redact(r#"{"t":"ab\"cd\\ef12"}"#), r#"{"t":"[REDACTED:env:API_TOKEN]"}"#);
    // Unrelated base64 and hex stay.
    let other = encode(b"nothing to see here at all", false);
    assert_eq!(redactor.redact(&other), other);
}

#[test]
fn longer_values_win_and_shared_values_name_one_variable() {
    let redactor = Redactor::new(env(&[("B_TOKEN", "secret1"), ("A_TOKEN", "secret1"), ("C_TOKEN", "secret1-long")]));
    assert_eq!(redactor.redact("secret1-long secret1"), "[REDACTED:env:C_TOKEN] [REDACTED:env:A_TOKEN]");
}

#[test]
fn a_fake_marker_does_not_hide_a_secret() {
    let text = "[REDACTED:ghp_1234567890abcdefghijABCDEFGHIJ123456]";
    assert_eq!(Redactor::default().redact(text), "[REDACTED:[REDACTED:github]]");
}

#[test]
fn learned_value_inside_a_marker_is_left_alone() {
    let redactor = Redactor::new(env(&[("X_TOKEN", "REDACTED")]));
    let once = redactor.redact("REDACTED and password=hunter22");
    assert_eq!(once, "[REDACTED:env:X_TOKEN] and password=[REDACTED:password]");
    assert_eq!(redactor.redact(&once), once);
}

#[test]
fn large_output_is_linear() {
    let line = "drwxr-xr-x 2 root root 4096 Jan  1 00:00 sk-proj-notakey password token=\n";
    let text = line.repeat(20_000);
    let started = std::time::Instant::now();
    let out = Redactor::new(env(&[("A_TOKEN", "zzzzzzzz")])).redact(&text);
    assert_eq!(out.len(), text.len());
    // 1.4 MB: far above the 4 KB observations; generous for debug builds on a busy machine.
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
}

/// Fragments that make patterns start, stop and overlap.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("password".to_owned()),
        Just("_TOKEN".to_owned()),
        Just("=".to_owned()),
        Just(": ".to_owned()),
        Just("\"".to_owned()),
        Just("'".to_owned()),
        Just(" ".to_owned()),
        Just("\n".to_owned()),
        Just("Bearer ".to_owned()),
        Just("Authorization: ".to_owned()),
        Just("sk-ant-".to_owned()),
        Just("ghp_".to_owned()),
        Just("https://u:".to_owned()),
        Just("@".to_owned()),
        Just("[REDACTED:".to_owned()),
        Just("[REDACTED:github]".to_owned()),
        Just("]".to_owned()),
        Just("eyJ".to_owned()),
        Just(".".to_owned()),
        Just("-----BEGIN RSA PRIVATE KEY-----".to_owned()),
        Just("-----END RSA PRIVATE KEY-----".to_owned()),
        Just("AKIA".to_owned()),
        Just("s3cr3tvalue".to_owned()),
        "[A-Za-z0-9_/+-]{1,40}",
        "\\PC{0,6}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn redacting_is_idempotent(parts in prop::collection::vec(fragment(), 0..24)) {
        let redactor = Redactor::new(env(&[("MY_TOKEN", "s3cr3tvalue")]));
        let text = parts.concat();
        let once = redactor.redact(&text);
        prop_assert!(!once.contains("s3cr3tvalue"));
        prop_assert_eq!(redactor.redact(&once), once, "input {:?}", text);
    }

    #[test]
    fn never_panics_or_grows_unboundedly(text in "\\PC{0,300}", parts in prop::collection::vec(fragment(), 0..24)) {
        let redactor = Redactor::new(env(&[("MY_TOKEN", "s3cr3tvalue")]));
        for text in [text, parts.concat()] {
            let out = redactor.redact(&text);
            prop_assert!(out.len() <= text.len() * 4 + 64, "{} -> {}", text.len(), out.len());
        }
    }
}

/// Token shapes after gitleaks' rules (MIT), and credentials in command arguments.
#[rstest]
#[case::vault(
    "VAULT_TOKEN=hvs.PtYgjmUhBel31iEl2hpChYgCfrL1spNxnyVmihA-2O76UMFxFkM-R5Kjp1vRt_1fjORS-6ilI8ihN5KXSc7Tvo-hBKqFYY",
    "VAULT_TOKEN=[REDACTED:vault]"
)]
#[case::vault_batch(
    "hvb.fkCzJr4i0B3JrTAwR4y9ojfljoQoaF1LlqsajAIxNKu8iS2G8NPRVdD53X83RZJzzzzgEOzdmenCkhvMdgaKjIg8xNbe3nNyjOq9wMxEhh2FDEEtfjgVvVqE1SkHbn88HxjSI6bWHtP3 x",
    "[REDACTED:vault] x"
)]
#[case::digitalocean(
    "do: dop_v1_28b5b7a767c76fb008f86bebb2737f6a6f0fb23c6f5da2cec255404e4fb44003",
    "do: [REDACTED:digitalocean]"
)]
#[case::sendgrid("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", "[REDACTED:sendgrid]")]
#[case::shopify("X-Shopify: 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", "X-Shopify: [REDACTED:shopify]")]
#[case::stripe_webhook("signing whsec_QtYh5Xj8TPQxjq4i9DoV8gz4FkQ1okTB", "signing [REDACTED:stripe]")]
#[case::stripe_prod("sk_prod_GzvAmwufUxbvJDCTbyvHNsG9", "[REDACTED:stripe]")]
#[case::telegram("bot 123456789:AAeh6Yo4gfqrc5XlrWi0B26R08qzjI6GKFS ok", "bot [REDACTED:telegram] ok")]
#[case::discord_webhook(
    "curl https://discord.com/api/webhooks/123456789012345678/PlJhx2jIclHkCiHp6bR1IqfEouHgxzNNAL5wIScGebcy8F5n3-YNBDRzrZSgqbjG3uhk",
    "curl https://[REDACTED:discord-webhook]"
)]
#[case::slack_workflow(
    "https://hooks.slack.com/workflows/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",
    "https://[REDACTED:slack]"
)]
#[case::pypi(
    "password = pypi-AgEIcHlwaS5vcmcQ1y3GQsMpSscDlkrCaqx9vJupc94tnwlavyfErGPmpGXafq0fjzLczbttOof",
    "password = [REDACTED:pypi]"
)]
#[case::twilio("TWILIO SK4caf4941d4072014b3ce107f80e222f8", "TWILIO [REDACTED:twilio]")]
#[case::mailgun("api:key-28767efc2f91624a8940f1f836f99eee", "api:[REDACTED:mailgun]")]
#[case::age(
    "# key\nAGE-SECRET-KEY-18VN97PJAYU3CDDY9FSHG38HWLLEP2QLUENF6KC584Q54E8VQJSHYECYHM3\n",
    "# key\n[REDACTED:age]\n"
)]
#[case::databricks("dapi18319478da6bd0c621de49f145fda998", "[REDACTED:databricks]")]
#[case::gitlab_deploy("gldt-VVPqzPptEJQzhkPkenG5", "[REDACTED:gitlab]")]
#[case::azure_storage(
    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==;EndpointSuffix=core.windows.net",
    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED:azure];EndpointSuffix=core.windows.net"
)]
#[case::azure_service_bus(
    "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=aGVsbG8gd29ybGQgc2VjcmV0IGtleQ=",
    "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=[REDACTED:azure]"
)]
#[case::azure_sas(
    "https://a.blob.core.windows.net/c?sv=2022-11-02&sig=Ab3dEf%2Bgh1jKlMnOpQrStUvWxYz0123%3D",
    "https://a.blob.core.windows.net/c?sv=2022-11-02&sig=[REDACTED:azure]"
)]
#[case::kubeconfig(
    "    client-certificate-data: LS0tLS1CRUdJTiBDRVJU\n    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVk=\n    token: abc123def456\n",
    "    client-certificate-data: LS0tLS1CRUdJTiBDRVJU\n    client-key-data: [REDACTED:kubeconfig]\n    token: [REDACTED:secret]\n"
)]
#[case::docker_auth(
    r#"{"auths": {"ghcr.io": {"auth": "dXNlcjpodW50ZXIyeHl6"}}}"#,
    r#"{"auths": {"ghcr.io": {"auth": "[REDACTED:docker-auth]"}}}"#
)]
#[case::npmrc(
    "//registry.npmjs.org/:_authToken=abc123secretvalue\n_auth=dXNlcjpwYXNz\n",
    "//registry.npmjs.org/:_authToken=[REDACTED:secret]\n_auth=[REDACTED:npm]\n"
)]
#[case::cookie("< Set-Cookie: session=9f8e7d6c5b4a; HttpOnly", "< Set-Cookie: [REDACTED:cookie]")]
#[case::curl_user(
    "curl -sS -u admin:hunter2xyz https://api.example.com/x",
    "curl -sS -u admin:[REDACTED:password] https://api.example.com/x"
)]
#[case::curl_user_attached("curl -uadmin:hunter2xyz http://x", "curl -uadmin:[REDACTED:password] http://x")]
#[case::curl_user_long("curl --user=admin:'hunter2xyz' http://x", "curl --user=admin:'[REDACTED:password]' http://x")]
#[case::curl_cluster("curl -su admin:hunter2xyz http://x", "curl -su admin:[REDACTED:password] http://x")]
#[case::mysql_attached(
    "mysql -h db -uroot -pS3cretPw app -e 'select 1'",
    "mysql -h db -uroot -p[REDACTED:password] app -e 'select 1'"
)]
#[case::mysqldump("mysqldump -pS3cretPw app", "mysqldump -p[REDACTED:password] app")]
#[case::password_option_eq("mysql --password=S3cretPw app", "mysql --password=[REDACTED:password] app")]
#[case::pgpassword("PGPASSWORD=S3cretPw psql -h db", "PGPASSWORD=[REDACTED:password] psql -h db")]
#[case::url_query_token(
    "curl 'https://x/api?token=abc123xyz&passwd=pw123456&q=1'",
    "curl 'https://x/api?token=[REDACTED:secret]&passwd=[REDACTED:password]&q=1'"
)]
#[case::api_key_header(
    "curl -H 'X-Api-Key: 0123abcd4567' https://x",
    "curl -H 'X-Api-Key: [REDACTED:secret]' https://x"
)]
#[case::bearer_header(
    "curl -H \"Authorization: Bearer abc.def.ghi123\" https://x",
    "curl -H \"Authorization: Bearer [REDACTED:authorization]\" https://x"
)]
#[case::url_userinfo(
    "git clone https://bob:pa55word@git.example.com/r.git",
    "git clone https://bob:[REDACTED:url-password]@git.example.com/r.git"
)]
#[case::sshpass("sshpass -p 'hunter2xyz' ssh root@db", "sshpass -p '[REDACTED:password]' ssh root@db")]
#[case::sshpass_attached("sshpass -phunter2xyz ssh db", "sshpass -p[REDACTED:password] ssh db")]
#[case::redis_cli("redis-cli -h cache -a hunter2xyz ping", "redis-cli -h cache -a [REDACTED:password] ping")]
#[case::mongosh("mongosh --host db -u admin -p hunter2xyz", "mongosh --host db -u admin -p [REDACTED:password]")]
#[case::ldapsearch(
    "ldapsearch -x -D cn=admin -w hunter2xyz -b dc=x",
    "ldapsearch -x -D cn=admin -w [REDACTED:password] -b dc=x"
)]
#[case::sqlcmd("sqlcmd -S db -U sa -P 'hunter2xyz'", "sqlcmd -S db -U sa -P '[REDACTED:password]'")]
#[case::smbclient("smbclient //fs/share -U alice%hunter2xyz", "smbclient //fs/share -U alice%[REDACTED:password]")]
#[case::openssl_passin(
    "openssl rsa -in k.pem -passin pass:hunter2xyz -out x",
    "openssl rsa -in k.pem -passin pass:[REDACTED:password] -out x"
)]
fn redacts_provider_tokens_and_command_credentials(#[case] text: &str, #[case] expected: &str) {
    assert_eq!(Redactor::default().redact(text), expected);
}

/// Look-alikes of the shapes above that are not secrets.
#[rstest]
#[case::vault_word("see hvs.docs for details")]
#[case::sendgrid_short("SG.example.com and SG.x")]
#[case::shopify_short("shpat_abc")]
#[case::telegram_time("at 12:30:AA, 2024")]
#[case::twilio_short("SKU SK1234 and SKATE")]
#[case::mailgun_word("key-value store, key-0123")]
#[case::docker_auth_empty(r#"{"auth": ""}"#)]
#[case::kubeconfig_cert("client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t")]
#[case::curl_no_user("curl -s https://example.com/a:b")]
#[case::docker_uid("docker run -u 1000:1000 alpine id")]
#[case::mysql_port("mysql -h db -P3306 -u root -p app")]
#[case::ssh_port("ssh -p 2222 host")]
#[case::redis_other_flag("redis-cli -h cache -n 2 ping")]
#[case::mongosh_port("mongosh --port 27017 db")]
#[case::smbclient_no_password("smbclient //fs/share -U alice")]
#[case::openssl_env_pass("openssl rsa -in k.pem -passin env:KEY_PASS")]
#[case::azure_account_name("AccountName=acct;EndpointSuffix=core.windows.net")]
#[case::cookie_placeholder("Cookie: $COOKIE")]
fn keeps_look_alikes(#[case] text: &str) {
    assert_eq!(Redactor::default().redact(text), text);
}

mod issue21;

#[test]
fn a_token_whole_before_a_line_break_leaves_the_next_line_alone_but_a_wrapped_tail_is_masked() {
    let r = Redactor::new([]);
    let token = "ghp_1234567890abcdefghijABCDEFGHIJ123456";
    for (text, expected) in [
        (format!("{token}\nnot-inherited\n"), "[REDACTED:github]\nnot-inherited\n"),
        (format!("GITHUB_TOKEN={token}\nGOPATH=/go\n"), "GITHUB_TOKEN=[REDACTED:github]\nGOPATH=/go\n"),
        (format!("{token}\nDone in 3s"), "[REDACTED:github]\nDone in 3s"),
        // Cut short of a whole token on its first line: the rest is on the next.
        (
            "token ghp_1234567890abcdefghij\nABCDEFGHIJ123456 end".to_owned(),
            "token [REDACTED:github]\n[REDACTED:github] end",
        ),
        // Whole on its first line, and the next line holds nothing else: a wrapped tail.
        (format!("{token}\nXYZ789\n"), "[REDACTED:github]\n[REDACTED:github]\n"),
        // A long key hard-wrapped mid-way, its tail followed by more text: still one secret.
        (
            "{\"key\": \"sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\nQwErTy7UiOp9AsDfGh\", \"org\": 1}".to_owned(),
            "{\"key\": \"[REDACTED:openai]\n[REDACTED:openai]\", \"org\": 1}",
        ),
        (
            "github_pat_11ABCDEFG0123456789abcdefghijk\nKLMNOPqrstu12345; echo ok".to_owned(),
            "[REDACTED:github]\n[REDACTED:github]; echo ok",
        ),
    ] {
        assert_eq!(r.redact(&text), expected, "{text:?}");
    }
}
