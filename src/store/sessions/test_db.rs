//! The store's tests on both back ends: [`each_db`] runs a test on a new SQLite file, then on a
//! new database on a PostgreSQL server of its own.

use std::sync::Arc;

use super::SessionStore;
use super::tests::raw;
use crate::redact::Redactor;
use crate::store::database::DatabaseUrl;
use crate::testing::postgres::PgServer;

/// Where one run of a test keeps its store: a new SQLite file, or a new database on a PostgreSQL
/// server of its own.
pub(super) enum Db {
    Sqlite(tempfile::TempDir),
    Postgres { url: Box<DatabaseUrl>, _server: PgServer },
}

impl Db {
    pub(super) fn open(&self) -> SessionStore {
        self.open_with(Arc::new(Redactor::default()))
    }

    pub(super) fn open_with(&self, redactor: Arc<Redactor>) -> SessionStore {
        match self {
            Db::Sqlite(dir) => SessionStore::open(&dir.path().join("sessions.db"), redactor).unwrap(),
            Db::Postgres { url, .. } => SessionStore::open_database(url, redactor).unwrap(),
        }
    }

    /// The first column of each row `sql` selects, as text: what is really stored, seen past the
    /// store (`sql` is written to run on both, e.g. with `CAST(x AS TEXT)`).
    pub(super) fn column(&self, sql: &str) -> Vec<String> {
        match self {
            Db::Sqlite(dir) => raw(&dir.path().join("sessions.db"))
                .prepare(sql)
                .unwrap()
                .query_map([], |row| row.get::<_, Option<String>>(0))
                .unwrap()
                .map(|text| text.unwrap().unwrap_or_default())
                .collect(),
            Db::Postgres { url, .. } => url
                .connect()
                .unwrap()
                .query(sql, &[])
                .unwrap()
                .iter()
                .map(|row| row.get::<_, Option<String>>(0).unwrap_or_default())
                .collect(),
        }
    }
}

/// Runs `test` on a new SQLite store, then on a new Postgres one (skipped, with the reason
/// printed, where PostgreSQL is not installed outside CI).
pub(super) fn each_db(test: impl Fn(&Db)) {
    test(&Db::Sqlite(tempfile::tempdir().unwrap()));
    let Some(server) = PgServer::start() else { return };
    let url = DatabaseUrl::parse(&server.database("sessions")).unwrap();
    let db = Db::Postgres { url: Box::new(url), _server: server };
    // A failure names the back end it happened on.
    struct Named;
    impl Drop for Named {
        fn drop(&mut self) {
            if std::thread::panicking() {
                use std::io::Write;
                let _ = writeln!(std::io::stderr(), "(this failure is on the Postgres back end)");
            }
        }
    }
    let _named = Named;
    test(&db);
}
