//! The audit log's copy in PostgreSQL (`opsai serve --database URL`, issue 25): table `audit`, one
//! row per line the file gets, the same redacted and escaped fields, so a team with several
//! replicas reads one log.
//!
//! The file stays the record that counts: [`TableCopy`] queues rows (at most [`QUEUE`]) for one
//! writer thread and never blocks an append; a database that is down is retried with a growing
//! pause while the queue holds the rows, and a row that finds the queue full is dropped with a
//! warning (the file has it).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use postgres::Client;

use super::{AuditCopy, AuditRow};
use crate::store::database::{DatabaseError, DatabaseUrl};

/// The `audit` component's steps (append only: a released step is never edited).
const MIGRATIONS: &[&str] = &["CREATE TABLE audit (
        id BIGSERIAL PRIMARY KEY,
        at TIMESTAMPTZ NOT NULL,
        server TEXT NOT NULL,
        session TEXT NOT NULL,
        input TEXT NOT NULL,
        tool TEXT NOT NULL,
        user_name TEXT,
        approver TEXT,
        host TEXT,
        command TEXT NOT NULL,
        risk TEXT NOT NULL,
        confirmed TEXT NOT NULL,
        exit INTEGER,
        output TEXT NOT NULL,
        line TEXT NOT NULL
    );
    CREATE INDEX audit_at ON audit (at)"];

/// Rows waiting for the database, at most.
pub const QUEUE: usize = 1000;
/// Tries a line gets on a database that is reachable but fails the insert.
const REFUSED: usize = 3;
/// The longest pause between two tries while the database is down.
const MAX_PAUSE: Duration = Duration::from_secs(30);

/// Where the copy's warnings go (the server's log; this floor does not print).
pub type Warn = Arc<dyn Fn(&str) + Send + Sync>;

/// This machine's name, for the rows it writes to a database several replicas share.
pub fn machine_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Reading and writing the table directly (blocking).
pub struct AuditTable {
    url: DatabaseUrl,
    client: Client,
}

impl AuditTable {
    /// Connects and brings the table to this opsai's version.
    pub fn open(url: &DatabaseUrl) -> Result<Self, DatabaseError> {
        let mut client = url.connect()?;
        client.batch_execute("SET statement_timeout = '10s'").map_err(|err| url.query_error(&err))?;
        url.migrate(&mut client, "audit", MIGRATIONS)?;
        Ok(Self { url: url.clone(), client })
    }

    /// Inserts one row, `server` naming the machine that wrote it.
    pub fn insert(&mut self, server: &str, row: &AuditRow) -> Result<(), DatabaseError> {
        let exit = row.exit;
        self.client
            .execute(
                "INSERT INTO audit (at, server, session, input, tool, user_name, approver, host, command, risk,
                                    confirmed, exit, output, line)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
                &[
                    &row.at,
                    &server,
                    &row.session,
                    &row.input,
                    &row.tool,
                    &row.user,
                    &row.approver,
                    &row.host,
                    &row.command,
                    &row.risk.to_string(),
                    &row.confirmed.as_str(),
                    &exit,
                    &row.output,
                    &row.line,
                ],
            )
            .map(drop)
            .map_err(|err| self.url.query_error(&err))
    }

    /// The last `n` lines (oldest first), only those containing `pattern` when given: a plain
    /// substring, ignoring case when it has no uppercase letter, as `opsai audit --grep` matches.
    pub fn lines(&mut self, pattern: Option<&str>, n: usize) -> Result<Vec<String>, DatabaseError> {
        let limit = i64::try_from(n).unwrap_or(i64::MAX);
        let ignore_case = pattern.is_some_and(|p| !p.chars().any(char::is_uppercase));
        let rows = self
            .client
            .query(
                "SELECT line FROM (
                   SELECT id, at, line FROM audit
                   WHERE $1::text IS NULL
                      OR (CASE WHEN $2 THEN strpos(lower(line), lower($1)) ELSE strpos(line, $1) END) > 0
                   ORDER BY at DESC, id DESC LIMIT $3
                 ) newest ORDER BY at, id",
                &[&pattern, &ignore_case, &limit],
            )
            .map_err(|err| self.url.query_error(&err))?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }
}

/// How many rows were handed over and not yet stored (or given up), with a signal when it falls.
#[derive(Default)]
struct Pending {
    count: Mutex<usize>,
    changed: Condvar,
}

impl Pending {
    fn add(&self, delta: isize) {
        let mut count = self.count.lock().unwrap_or_else(PoisonError::into_inner);
        *count = count.saturating_add_signed(delta);
        self.changed.notify_all();
    }
}

/// The copy serve attaches to its audit log: a bounded queue and one writer thread.
pub struct TableCopy {
    queue: SyncSender<AuditRow>,
    pending: Arc<Pending>,
    dropped: AtomicU64,
    warn: Warn,
}

impl TableCopy {
    /// Checks the database now (connects and migrates: a wrong URL fails at start, not at the first
    /// action), then starts the writer. `server` names this machine in each row.
    pub fn start(url: &DatabaseUrl, server: String, warn: Warn) -> Result<Arc<Self>, DatabaseError> {
        let table = AuditTable::open(url)?;
        let (queue, rows) = std::sync::mpsc::sync_channel(QUEUE);
        let pending = Arc::new(Pending::default());
        let writer =
            Writer { url: url.clone(), server, table: Some(table), pending: pending.clone(), warn: warn.clone() };
        std::thread::Builder::new().name("audit-copy".into()).spawn(move || writer.run(&rows)).map_err(|err| {
            DatabaseError::Query { url: url.to_string(), reason: format!("cannot start its writer: {err}") }
        })?;
        Ok(Arc::new(Self { queue, pending, dropped: AtomicU64::new(0), warn }))
    }

    /// Waits until every row sent so far is stored, at most `timeout`; `false`: some are not.
    pub fn flush(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut count = self.pending.count.lock().unwrap_or_else(PoisonError::into_inner);
        while *count > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            count = self.pending.changed.wait_timeout(count, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        true
    }
}

impl AuditCopy for TableCopy {
    fn send(&self, row: AuditRow) {
        self.pending.add(1);
        match self.queue.try_send(row) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                self.pending.add(-1);
                let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                // The first, then one line per hundred: a long outage must not flood the log.
                if dropped == 1 || dropped.is_multiple_of(100) {
                    (self.warn)(&format!(
                        "audit: {dropped} lines not copied to the database so far (its queue of {QUEUE} is full while \
                         it is slow or down); the audit file has every line"
                    ));
                }
            }
            Err(TrySendError::Disconnected(_)) => {
                self.pending.add(-1);
                (self.warn)("audit: the database copy stopped; the audit file has every line");
            }
        }
    }
}

/// The thread that stores the queued rows, in order, reconnecting as needed.
struct Writer {
    url: DatabaseUrl,
    server: String,
    table: Option<AuditTable>,
    pending: Arc<Pending>,
    warn: Warn,
}

impl Writer {
    fn run(mut self, rows: &Receiver<AuditRow>) {
        while let Ok(row) = rows.recv() {
            self.store(&row);
            self.pending.add(-1);
        }
    }

    /// Tries until the row is in while the database is unreachable (the queue behind it is
    /// bounded, and the file has it anyway); a row a reachable database refuses [`REFUSED`] times
    /// is given up with a warning.
    fn store(&mut self, row: &AuditRow) {
        let mut pause = Duration::from_secs(1);
        let (mut failing, mut refused) = (false, 0);
        loop {
            let table = match self.table.take() {
                Some(table) => Ok(table),
                None => AuditTable::open(&self.url),
            };
            let result = table.and_then(|mut table| {
                let inserted = table.insert(&self.server, row);
                if inserted.is_ok() {
                    self.table = Some(table);
                } else {
                    refused += 1;
                }
                inserted
            });
            let Err(err) = result else {
                if failing {
                    (self.warn)("audit: the database copy works again");
                }
                return;
            };
            // A connection that failed is dropped (it may be what broke): the next try makes a new one.
            if refused >= REFUSED {
                (self.warn)(&format!("audit: the database refuses a line ({err}); it is only in the audit file"));
                return;
            }
            if !failing {
                (self.warn)(&format!(
                    "audit: cannot copy a line to the database ({err}); trying again, the audit file has it"
                ));
            }
            failing = true;
            std::thread::sleep(pause);
            pause = (pause * 2).min(MAX_PAUSE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{AuditLog, AuditRecord, Confirmed};
    use super::*;
    use crate::protocol::Risk;
    use crate::redact::Redactor;
    use crate::testing::postgres::PgServer;

    const SECRET: &str = "learned-secret-value";
    const GITHUB_TOKEN: &str = "ghp_1234567890abcdefghijABCDEFGHIJ123456";

    fn record(user: &str, approver: Option<&str>, command: &str, confirmed: Confirmed) -> AuditRecord {
        AuditRecord {
            session: "web-7".into(),
            input: format!("please\nuse {SECRET}"),
            tool: "shell.run_command".into(),
            command: command.into(),
            risk: Risk::Medium,
            confirmed,
            exit: (confirmed == Confirmed::Yes).then_some(0),
            output: format!("token {GITHUB_TOKEN} \u{1b}[31mred"),
            host: None,
            user: Some(user.into()),
            approver: approver.map(Into::into),
        }
    }

    type Warnings = Arc<Mutex<Vec<String>>>;

    fn collecting() -> (Warn, Warnings) {
        let warnings = Warnings::default();
        let sink = warnings.clone();
        (Arc::new(move |text: &str| sink.lock().unwrap().push(text.to_owned())), warnings)
    }

    fn log_in(dir: &tempfile::TempDir) -> AuditLog {
        let redactor = Arc::new(Redactor::new([("MY_API_KEY".to_owned(), SECRET.to_owned())]));
        AuditLog::new(dir.path().join("audit.log"), 10, 90, redactor)
    }

    #[test]
    fn every_line_is_copied_with_its_fields_redacted_as_the_file_has_it() {
        let Some(server) = PgServer::start() else { return };
        let url = DatabaseUrl::parse(&server.database("audit")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut log = log_in(&dir);
        let (warn, warnings) = collecting();
        log.copy_to(TableCopy::start(&url, "box-1".into(), warn).unwrap());
        let copy = TableCopy::start(&url, "box-2".into(), collecting().0).unwrap();
        log.append(&record("bob", Some("alice"), &format!("touch made && echo {SECRET}"), Confirmed::Yes)).unwrap();
        log.append(&record("bob", None, "rm -rf /srv/x", Confirmed::No)).unwrap();
        // A second replica's log on the same table.
        let mut other = log_in(&dir);
        other.copy_to(copy.clone());
        let _ = std::fs::remove_file(dir.path().join("audit.log"));
        other.append(&record("carol", None, "uptime", Confirmed::Auto)).unwrap();
        let file_lines = std::fs::read_to_string(dir.path().join("audit.log")).unwrap();
        assert!(copy.flush(Duration::from_secs(10)), "stored: {warnings:?}");
        let mut client = url.connect().unwrap();
        // The first log's copy has its own writer: wait on it through the table. The two writers
        // interleave, so rows are read per server, each in its own order.
        assert!(crate::testing::wait_until(Duration::from_secs(10), || {
            client.query_one("SELECT count(*) FROM audit", &[]).unwrap().get::<_, i64>(0) == 3
        }));
        let rows = client
            .query(
                "SELECT server, session, input, user_name, approver, host, command, risk, confirmed, exit, output, line,
                        audit::text FROM audit ORDER BY server, id",
                &[],
            )
            .unwrap();
        let text = |i: usize, col: usize| rows[i].get::<_, Option<String>>(col);
        assert_eq!(text(0, 0).as_deref(), Some("box-1"));
        assert_eq!(text(0, 1).as_deref(), Some("web-7"));
        assert_eq!(text(0, 2).as_deref(), Some("please\\nuse [REDACTED:env:MY_API_KEY]"), "escaped as in the file");
        assert_eq!((text(0, 3).as_deref(), text(0, 4).as_deref(), text(0, 5)), (Some("bob"), Some("alice"), None));
        assert_eq!(text(0, 6).as_deref(), Some("touch made && echo [REDACTED:env:MY_API_KEY]"));
        assert_eq!((text(0, 7).as_deref(), text(0, 8).as_deref()), (Some("medium"), Some("yes")));
        assert_eq!(rows[0].get::<_, Option<i32>>(9), Some(0));
        assert!(text(0, 10).unwrap().contains("\\u{1b}[31mred"), "no raw escape: {:?}", text(0, 10));
        assert_eq!((text(1, 4), text(1, 8).as_deref(), rows[1].get::<_, Option<i32>>(9)), (None, Some("no"), None));
        assert_eq!(text(2, 0).as_deref(), Some("box-2"));
        assert_eq!(
            text(2, 11).map(|line| format!("{line}\n")).as_deref(),
            Some(file_lines.as_str()),
            "the file's line"
        );
        for row in &rows {
            let whole: String = row.get(12);
            assert!(!whole.contains(SECRET) && !whole.contains(GITHUB_TOKEN), "{whole}");
        }
        // Read back as `opsai audit --database` does: newest last, smart case.
        let mut table = AuditTable::open(&url).unwrap();
        let lines = table.lines(None, 2).unwrap();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].contains("CMD: \"rm -rf /srv/x\"") && lines[1].contains("USER: carol"), "{lines:?}");
        assert_eq!(table.lines(Some("USER: BOB"), 10).unwrap().len(), 0, "uppercase matches case");
        assert_eq!(table.lines(Some("user: bob"), 10).unwrap().len(), 2, "lowercase ignores it");
        assert!(warnings.lock().unwrap().is_empty(), "{warnings:?}");
    }

    #[test]
    fn a_database_that_is_down_neither_blocks_nor_loses_a_file_line() {
        let Some(server) = PgServer::start() else { return };
        let url = DatabaseUrl::parse(&server.database("down")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut log = log_in(&dir);
        let (warn, warnings) = collecting();
        let copy = TableCopy::start(&url, "box".into(), warn).unwrap();
        log.copy_to(copy.clone());
        drop(server);
        let started = Instant::now();
        let n = QUEUE + 50;
        for i in 0..n {
            log.append(&record("bob", None, &format!("echo {i}"), Confirmed::Auto)).unwrap();
        }
        let took = started.elapsed();
        let lines = std::fs::read_to_string(dir.path().join("audit.log")).unwrap();
        assert_eq!(lines.lines().count(), n, "every line in the file");
        assert!(took < Duration::from_secs(20), "{n} appends took {took:?}");
        assert!(!copy.flush(Duration::from_millis(200)), "nothing can be stored");
        let warnings = warnings.lock().unwrap().clone();
        assert!(warnings.iter().any(|w| w.contains("cannot copy a line to the database")), "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("lines not copied to the database")), "{warnings:?}");
        assert!(warnings.len() < 10, "a warning per hundred, not per line: {}", warnings.len());
    }
}
