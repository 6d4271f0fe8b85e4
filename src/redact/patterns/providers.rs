//! Provider token shapes and credentials in command arguments.
//!
//! The token shapes follow gitleaks' rules (config/gitleaks.toml, MIT licence): prefixes and lengths
//! that a provider fixes, so a match is a token and not prose. Rules that gitleaks only trusts near a
//! keyword (Telegram, Mailgun) are used where the shape alone is distinctive enough. Every regex
//! runs in linear time (the `regex` crate); none needs look-around.

use super::Haystack::{Lowercase, Text};
use super::Source;
use super::Take::{GroupValue, Whole};

/// Provider tokens, tried before the generic `key=value` rules so the marker names the provider.
pub(super) fn tokens() -> Vec<Source> {
    vec![
        ("vault", Text, &["hvs.", "hvb."], r"(?-u:\b)hv[sb]\.[A-Za-z0-9_-]{24,}".into(), Whole),
        ("digitalocean", Text, &["dop_v1_", "doo_v1_", "dor_v1_"], r"(?-u:\b)do[opr]_v1_[a-f0-9]{64}".into(), Whole),
        ("sendgrid", Text, &["sg."], r"(?-u:\b)SG\.[A-Za-z0-9_-]{20,24}\.[A-Za-z0-9_-]{39,50}".into(), Whole),
        (
            "shopify",
            Text,
            &["shpat_", "shpss_", "shpca_", "shppa_"],
            r"(?-u:\b)shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}".into(),
            Whole,
        ),
        // A bot id, a colon, and 35 characters that start with `AA`.
        ("telegram", Text, &[":aa"], r"(?-u:\b)[0-9]{5,16}:AA[A-Za-z0-9_-]{33}(?-u:\b)".into(), Whole),
        (
            "discord-webhook",
            Text,
            &["discord"],
            r"(?-u:\b)discord(?:app)?\.com/api/webhooks/[0-9]{5,30}/[A-Za-z0-9_-]{20,}".into(),
            Whole,
        ),
        ("pypi", Text, &["pypi-ageichlwas5vcmc"], r"(?-u:\b)pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}".into(), Whole),
        ("twilio", Text, &["sk"], r"(?-u:\b)SK[0-9a-fA-F]{32}(?-u:\b)".into(), Whole),
        ("mailgun", Text, &["key-"], r"(?-u:\b)key-[0-9a-f]{32}(?-u:\b)".into(), Whole),
        ("age", Text, &["age-secret-key-1"], r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}".into(), Whole),
        ("databricks", Text, &["dapi"], r"(?-u:\b)dapi[a-f0-9]{32}(?:-[0-9])?(?-u:\b)".into(), Whole),
        ("sentry", Text, &["sntryu_", "sntrys_"], r"(?-u:\b)sntry[us]_[A-Za-z0-9+/=_]{40,}".into(), Whole),
        ("pulumi", Text, &["pul-"], r"(?-u:\b)pul-[a-f0-9]{40}(?-u:\b)".into(), Whole),
        ("doppler", Text, &["dp."], r"(?-u:\b)dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,44}".into(), Whole),
        ("linear", Text, &["lin_api_"], r"(?-u:\b)lin_api_[A-Za-z0-9]{40}".into(), Whole),
        ("postman", Text, &["pmak-"], r"(?-u:\b)PMAK-[a-f0-9]{24}-[a-f0-9]{34}".into(), Whole),
        ("brevo", Text, &["xkeysib-"], r"(?-u:\b)xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}".into(), Whole),
        (
            "grafana",
            Text,
            &["glc_", "glsa_"],
            r"(?-u:\b)(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})".into(),
            Whole,
        ),
        // Azure storage and Service Bus connection strings, and the signature of a SAS URL.
        (
            "azure",
            Lowercase,
            &["accountkey", "sharedaccesskey"],
            r"(?-u:\b)(?:accountkey|sharedaccesskey)[ \t]*=[ \t]*([a-z0-9+/=]{20,})".into(),
            GroupValue,
        ),
        ("azure", Lowercase, &["sig="], r"[?&]sig=([a-z0-9%+/=]{20,})".into(), GroupValue),
        // kubeconfig: the client's private key (certificates are public; `token:` is a generic rule).
        (
            "kubeconfig",
            Lowercase,
            &["client-key-data"],
            r#"client-key-data["']?[ \t]*:[ \t]*["']?([a-z0-9+/=]{16,})"#.into(),
            GroupValue,
        ),
        // ~/.docker/config.json: `"auth": "base64(user:password)"`.
        ("docker-auth", Lowercase, &["\"auth\""], r#""auth"[ \t]*:[ \t]*"([a-z0-9+/=]{8,})""#.into(), GroupValue),
        // .npmrc: `_auth=base64(user:password)` (`_authToken=` and `_password=` are generic rules).
        ("npm", Lowercase, &["_auth"], r#"(?:^|[^a-z0-9])_auth[ \t]*=[ \t]*["']?([^ \t\r\n"']+)"#.into(), GroupValue),
        ("cookie", Lowercase, &["cookie"], r#"(?-u:\b)(?:set-)?cookie[ \t]*:[ \t]*([^\r\n"']+)"#.into(), GroupValue),
    ]
}

/// Credentials the model writes into a command line: the command runs as written, but the audit
/// log and the session store keep it with these parts redacted.
pub(super) fn arguments() -> Vec<Source> {
    vec![
        // `curl -u user:pass`, `curl -su user:pass`, `--user=user:pass`, `-U`/`--proxy-user`.
        (
            "password",
            Lowercase,
            &["curl"],
            concat!(
                r#"(?:^|[^a-z0-9_-])curl[ \t](?:[^\n;&|]*?[ \t])?(?:-[a-z]*u|--user|--proxy-user)(?:[ \t]+|=)?"#,
                r#"["']?[^ \t\r\n"':]*:["']?([^ \t\r\n"']+)"#
            )
            .into(),
            GroupValue,
        ),
        // `mysql -uroot -pS3cret db`: the password is attached to `-p` (a separate word is a database).
        (
            "password",
            Text,
            &["mysql", "mariadb"],
            concat!(
                r#"(?:^|[^A-Za-z0-9_-])(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mariadb|mariadb-dump)"#,
                r#"[ \t](?:[^\n;&|]*?[ \t])?-p["']?([^ \t\r\n"'-][^ \t\r\n"']*)"#
            )
            .into(),
            GroupValue,
        ),
        // A password given as the next word of one option, for programs where that option means a
        // password: `redis-cli -a`, `mongosh -p`, `ldapsearch -w`, `sqlcmd -P`, `smbclient -U user%pass`.
        (
            "password",
            Text,
            &["redis-cli", "mongo", "ldap", "sqlcmd", "bcp"],
            concat!(
                r#"(?:^|[^A-Za-z0-9_-])(?:redis-cli[ \t](?:[^\n;&|]*?[ \t])?(?:-a|--pass)"#,
                r#"|mongo(?:sh|dump|restore|export|import)?[ \t](?:[^\n;&|]*?[ \t])?(?:-p|--password)"#,
                r#"|ldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn)[ \t](?:[^\n;&|]*?[ \t])?-w"#,
                r#"|(?:sqlcmd|bcp)[ \t](?:[^\n;&|]*?[ \t])?-P)"#,
                r#"[ \t]+["']?([^ \t\r\n"'-][^ \t\r\n"']*)"#
            )
            .into(),
            GroupValue,
        ),
        (
            "password",
            Text,
            &["smbclient", "rpcclient"],
            r#"(?:^|[^A-Za-z0-9_-])(?:smbclient|rpcclient)[ \t](?:[^\n;&|]*?[ \t])?(?:-U|--user)[ \t=]*["']?[^ \t\r\n"'%]+%([^ \t\r\n"']+)"#
                .into(),
            GroupValue,
        ),
        // openssl's `-passin pass:secret`, `-passout pass:secret`, `-k secret`-style pass phrases.
        (
            "password",
            Lowercase,
            &["pass:"],
            r#"(?:^|[ \t])-pass(?:in|out)?[ \t]+["']?pass:([^ \t\r\n"']+)"#.into(),
            GroupValue,
        ),
        // `sshpass -p secret ssh host`.
        (
            "password",
            Text,
            &["sshpass"],
            r#"(?:^|[^A-Za-z0-9_-])sshpass[ \t](?:[^\n;&|]*?[ \t])?-p[ \t]*["']?([^ \t\r\n"']+)"#.into(),
            GroupValue,
        ),
    ]
}
