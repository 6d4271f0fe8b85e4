//! `opsai serve --database postgres://…` (issue 25): the one place a Postgres URL is read, a
//! connection is made, and a part's tables are migrated. Every part that keeps data in Postgres
//! (conversations, users, audit, the replicas' shared state) names itself a *component* with its
//! own append-only list of migrations, so parts evolve without touching each other's steps.
//!
//! - The URL's password is never printed: [`DatabaseUrl`]'s `Display` hides it, and every error
//!   names the database by that form.
//! - Migrations: table `opsai_schema (component, version)`; each component's pending steps run in
//!   one transaction that first takes a transaction-level advisory lock, so replicas starting at
//!   once migrate exactly once. A database migrated by a newer opsai is refused, untouched.
//! - Calls block (the `postgres` crate drives its own runtime): from async code, run them on a
//!   blocking thread.

use std::fmt;
use std::time::Duration;

use postgres::{Client, NoTls};
use thiserror::Error;

/// How long a connection attempt may take before the database counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Advisory lock key every migration takes (`opsai` in ASCII), so migrations of all components
/// are serialized across processes.
const MIGRATION_LOCK: i64 = 0x6f_70_73_61_69;

#[derive(Debug, Error)]
pub enum DatabaseError {
    #[error(
        "`{0}` is not a Postgres URL; give one such as postgres://USER@HOST:5432/DB (the password \
         is best given in PGPASSWORD or ~/.pgpass, not on the command line)"
    )]
    BadUrl(String),
    #[error("cannot connect to the database {url}: {reason}; check that it runs, the URL and the credentials")]
    Connect { url: String, reason: String },
    #[error("the database {url} failed: {reason}")]
    Query { url: String, reason: String },
    #[error(
        "the database {url} has {component} schema version {found}, newer than this opsai knows \
         ({known}); opsai left it untouched. Upgrade opsai on every replica"
    )]
    TooNew { url: String, component: String, found: i64, known: i64 },
}

/// A parsed `postgres://` (or `postgresql://`) URL, printable without its password.
#[derive(Clone)]
pub struct DatabaseUrl {
    raw: String,
    config: tokio_postgres::Config,
}

impl DatabaseUrl {
    pub fn parse(text: &str) -> Result<Self, DatabaseError> {
        let trimmed = text.trim();
        let scheme_ok = trimmed.starts_with("postgres://") || trimmed.starts_with("postgresql://");
        let shown = || Self::hide_password(trimmed);
        if !scheme_ok {
            return Err(DatabaseError::BadUrl(shown()));
        }
        let mut config: tokio_postgres::Config = trimmed.parse().map_err(|_| DatabaseError::BadUrl(shown()))?;
        if config.get_password().is_none()
            && let Some(password) = std::env::var("PGPASSWORD").ok().or_else(|| pgpass(&config))
        {
            config.password(password);
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("opsai");
        }
        // A connection whose server vanished without a word (a partition, a dead host) fails
        // within seconds instead of hanging its queries until the kernel's two-hour keepalive.
        config
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(10))
            .keepalives_interval(Duration::from_secs(2))
            .keepalives_retries(3)
            .tcp_user_timeout(Duration::from_secs(15));
        Ok(Self { raw: trimmed.to_owned(), config })
    }

    /// `postgres://user:***@host/db`: the URL as it may be shown.
    fn hide_password(raw: &str) -> String {
        let Some((scheme, rest)) = raw.split_once("://") else { return raw.to_owned() };
        let (authority, tail) = match rest.find(['/', '?']) {
            Some(at) => rest.split_at(at),
            None => (rest, ""),
        };
        match authority.rsplit_once('@') {
            Some((credentials, host)) => match credentials.split_once(':') {
                Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
                None => raw.to_owned(),
            },
            None => raw.to_owned(),
        }
    }

    /// A new blocking connection.
    pub fn connect(&self) -> Result<Client, DatabaseError> {
        postgres::Config::from(self.config.clone())
            .connect(NoTls)
            .map_err(|err| DatabaseError::Connect { url: self.to_string(), reason: reason(&err) })
    }

    /// The async driver's settings (LISTEN/NOTIFY between replicas).
    pub fn config(&self) -> &tokio_postgres::Config {
        &self.config
    }

    /// The error of a failed query on this database.
    pub fn query_error(&self, err: &postgres::Error) -> DatabaseError {
        DatabaseError::Query { url: self.to_string(), reason: reason(err) }
    }

    /// Brings `component`'s tables to the last of `migrations` (step `n` takes version `n` to
    /// `n + 1`; append only, a released step is never edited).
    pub fn migrate(&self, client: &mut Client, component: &str, migrations: &[&str]) -> Result<(), DatabaseError> {
        let failed = |err: postgres::Error| self.query_error(&err);
        let known = migrations.len() as i64;
        let mut tx = client.transaction().map_err(failed)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).map_err(failed)?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS opsai_schema (component TEXT PRIMARY KEY, version BIGINT NOT NULL)",
        )
        .map_err(failed)?;
        let found: i64 = tx
            .query_opt("SELECT version FROM opsai_schema WHERE component = $1", &[&component])
            .map_err(failed)?
            .map_or(0, |row| row.get(0));
        if found > known {
            return Err(DatabaseError::TooNew { url: self.to_string(), component: component.to_owned(), found, known });
        }
        for step in &migrations[found as usize..] {
            tx.batch_execute(step).map_err(failed)?;
        }
        tx.execute(
            "INSERT INTO opsai_schema (component, version) VALUES ($1, $2)
             ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version",
            &[&component, &known],
        )
        .map_err(failed)?;
        tx.commit().map_err(failed)
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&Self::hide_password(&self.raw))
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatabaseUrl({self})")
    }
}

/// The password `~/.pgpass` (or `PGPASSFILE`) holds for this URL's host, port, database and user,
/// as libpq reads it: `host:port:database:user:password`, `*` matching anything, `\\` escaping.
/// Ignored, as libpq does, unless only its owner can read it.
fn pgpass(config: &tokio_postgres::Config) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let path = match std::env::var_os("PGPASSFILE") {
        Some(path) => std::path::PathBuf::from(path),
        None => std::path::PathBuf::from(std::env::var_os("HOME")?).join(".pgpass"),
    };
    let meta = std::fs::metadata(&path).ok()?;
    if meta.permissions().mode() & 0o077 != 0 {
        return None;
    }
    let host = match config.get_hosts().first()? {
        tokio_postgres::config::Host::Tcp(name) => name.clone(),
        tokio_postgres::config::Host::Unix(_) => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432).to_string();
    let user = config.get_user()?.to_owned();
    let database = config.get_dbname().unwrap_or(&user).to_owned();
    let wanted = [host, port, database, user];
    std::fs::read_to_string(path).ok()?.lines().find_map(|line| pgpass_match(line, &wanted))
}

fn pgpass_match(line: &str, wanted: &[String; 4]) -> Option<String> {
    if line.starts_with('#') {
        return None;
    }
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut()?.extend(chars.next()),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut()?.push(c),
        }
    }
    let [host, port, database, user, password]: [String; 5] = fields.try_into().ok()?;
    let matches = [host, port, database, user].iter().zip(wanted).all(|(field, want)| field == "*" || field == want);
    matches.then_some(password)
}

/// The server's own message when there is one (it never holds the password), else the driver's.
fn reason(err: &postgres::Error) -> String {
    match err.as_db_error() {
        Some(db) => db.message().to_owned(),
        None => {
            let mut text = err.to_string();
            let mut source = std::error::Error::source(err);
            while let Some(inner) = source {
                text = format!("{text}: {inner}");
                source = inner.source();
            }
            text
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::postgres::PgServer;

    #[test]
    fn the_password_is_never_shown() {
        let url = DatabaseUrl::parse("postgres://ops:s3cret@db.example:5432/opsai?sslmode=disable").unwrap();
        assert_eq!(url.to_string(), "postgres://ops:***@db.example:5432/opsai?sslmode=disable");
        assert!(!format!("{url:?}").contains("s3cret"));
        let bad = DatabaseUrl::parse("mysql://ops:s3cret@db/x").unwrap_err().to_string();
        assert!(bad.contains("mysql://ops:***@db/x") && !bad.contains("s3cret"), "{bad}");
        assert_eq!(DatabaseUrl::parse("postgresql://db/x").unwrap().to_string(), "postgresql://db/x");
    }

    #[test]
    fn a_pgpass_line_matches_like_libpq_reads_it() {
        let wanted = ["db.example".to_owned(), "5432".to_owned(), "opsai".to_owned(), "ops".to_owned()];
        assert_eq!(pgpass_match("db.example:5432:opsai:ops:pw", &wanted).as_deref(), Some("pw"));
        assert_eq!(pgpass_match("*:*:*:ops:a\\:b\\\\c", &wanted).as_deref(), Some("a:b\\c"));
        assert_eq!(pgpass_match("other:5432:opsai:ops:pw", &wanted), None);
        assert_eq!(pgpass_match("#db.example:5432:opsai:ops:pw", &wanted), None);
        assert_eq!(pgpass_match("db.example:5432:opsai", &wanted), None);
    }

    #[test]
    fn an_unreachable_database_says_so_without_the_password() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let url = DatabaseUrl::parse(&format!("postgres://ops:s3cret@127.0.0.1:{port}/x")).unwrap();
        let err = url.connect().err().unwrap().to_string();
        assert!(
            err.starts_with(&format!("cannot connect to the database postgres://ops:***@127.0.0.1:{port}/x")),
            "{err}"
        );
        assert!(!err.contains("s3cret"), "{err}");
    }

    #[test]
    fn components_migrate_once_each_even_at_the_same_moment_and_a_newer_schema_is_refused() {
        let Some(server) = PgServer::start() else { return };
        let url = DatabaseUrl::parse(&server.database("m")).unwrap();
        let steps = ["CREATE TABLE a (n INT)", "INSERT INTO a VALUES (1)"];
        let racers: Vec<_> = (0..4)
            .map(|_| {
                let url = url.clone();
                std::thread::spawn(move || url.migrate(&mut url.connect().unwrap(), "a", &steps))
            })
            .collect();
        for racer in racers {
            racer.join().unwrap().unwrap();
        }
        let mut client = url.connect().unwrap();
        let rows: i64 = client.query_one("SELECT count(*) FROM a", &[]).unwrap().get(0);
        assert_eq!(rows, 1, "each step ran once");
        url.migrate(&mut client, "b", &["CREATE TABLE b (n INT)"]).unwrap();
        let err = url.migrate(&mut client, "a", &steps[..1]).unwrap_err().to_string();
        assert!(err.contains("has a schema version 2, newer than this opsai knows (1)"), "{err}");
    }
}
