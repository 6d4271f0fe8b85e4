//! The users in PostgreSQL (`--database URL`, issue 25): table `web_users`, one row per user with
//! the same name, role and argon2id PHC hash a users file holds, so every replica on the database
//! logs in the same users. Calls block: the server makes them off its async threads.

use postgres::Client;

use super::{User, UsersFile};
use crate::cli::ServeRole;
use crate::store::database::{DatabaseError, DatabaseUrl};

/// The `users` component's steps (append only: a released step is never edited).
const MIGRATIONS: &[&str] = &["CREATE TABLE web_users (
        name TEXT PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9._-]{1,64}$' AND name <> 'owner'),
        role TEXT NOT NULL CHECK (role IN ('viewer', 'operator')),
        password_hash TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )"];

/// Adds a user or replaces an existing one's role and password; returns whether it was added
/// (`xmax = 0`: the row was inserted, not updated).
const UPSERT: &str = "INSERT INTO web_users (name, role, password_hash) VALUES ($1, $2, $3)
    ON CONFLICT (name) DO UPDATE
      SET role = EXCLUDED.role, password_hash = EXCLUDED.password_hash, updated_at = now()
    RETURNING (xmax = 0) AS added";

/// How long one query may run before it counts as failed (a login waits for it).
const STATEMENT_TIMEOUT: &str = "SET statement_timeout = '5s'";

/// A connection to the users table, migrated.
pub struct UsersTable {
    url: DatabaseUrl,
    client: Client,
}

impl UsersTable {
    /// Connects and brings the table to this opsai's version.
    pub fn open(url: &DatabaseUrl) -> Result<Self, DatabaseError> {
        let mut client = url.connect()?;
        client.batch_execute(STATEMENT_TIMEOUT).map_err(|err| url.query_error(&err))?;
        url.migrate(&mut client, "users", MIGRATIONS)?;
        Ok(Self { url: url.clone(), client })
    }

    pub fn url(&self) -> &DatabaseUrl {
        &self.url
    }

    /// Every user, by name. A row a hand-made SQL statement broke (an unknown role) is left out
    /// with a line in the log, as a bad entry of a users file is.
    pub fn all(&mut self) -> Result<UsersFile, DatabaseError> {
        let rows = self
            .client
            .query("SELECT name, role, password_hash FROM web_users ORDER BY name", &[])
            .map_err(|err| self.url.query_error(&err))?;
        let mut users = Vec::with_capacity(rows.len());
        for row in rows {
            let (name, role, password_hash): (String, String, String) = (row.get(0), row.get(1), row.get(2));
            match parse_role(&role) {
                Some(role) => users.push(User { name, role, password_hash }),
                None => {
                    super::super::log(&format!("ignoring the user {name:?} in the database: unknown role {role:?}"))
                }
            }
        }
        Ok(UsersFile { users })
    }

    /// Adds `user`, or gives an existing one this role and password. `true`: added.
    pub fn put(&mut self, user: &User) -> Result<bool, DatabaseError> {
        let role = super::role_name(user.role);
        let row = self
            .client
            .query_one(UPSERT, &[&user.name, &role, &user.password_hash])
            .map_err(|err| self.url.query_error(&err))?;
        Ok(row.get(0))
    }

    /// Removes the user `name`. `false`: there was none.
    pub fn remove(&mut self, name: &str) -> Result<bool, DatabaseError> {
        let removed = self
            .client
            .execute("DELETE FROM web_users WHERE name = $1", &[&name])
            .map_err(|err| self.url.query_error(&err))?;
        Ok(removed > 0)
    }

    /// Copies every user of `file` (already checked) in one transaction: all or nothing.
    /// Returns (added, updated).
    pub fn import(&mut self, file: &UsersFile) -> Result<(usize, usize), DatabaseError> {
        let url = self.url.clone();
        let failed = |err: postgres::Error| url.query_error(&err);
        let mut tx = self.client.transaction().map_err(failed)?;
        let (mut added, mut updated) = (0, 0);
        for user in &file.users {
            let row = tx
                .query_one(UPSERT, &[&user.name, &super::role_name(user.role), &user.password_hash])
                .map_err(failed)?;
            if row.get::<_, bool>(0) {
                added += 1;
            } else {
                updated += 1;
            }
        }
        tx.commit().map_err(failed)?;
        Ok((added, updated))
    }
}

fn parse_role(role: &str) -> Option<ServeRole> {
    match role {
        "viewer" => Some(ServeRole::Viewer),
        "operator" => Some(ServeRole::Operator),
        _ => None,
    }
}
