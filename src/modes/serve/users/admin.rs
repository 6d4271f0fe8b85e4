//! `opsai serve user add|remove|list|import`: the users of a users file (`--users FILE`, the
//! default `$OPSAI_HOME/serve-users.json`) or of a database's users table (`--database URL` or
//! `OPSAI_DATABASE_URL`), with the same checks, messages and exit codes for both.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use super::{RESERVED, User, UsersError, UsersFile, UsersTable, default_path, hash_password, role_name, valid_name};
use crate::cli::UserCommand;
use crate::home::Paths;
use crate::store::database::DatabaseUrl;

/// Where the users are managed.
enum Store {
    File(PathBuf),
    Table(Box<UsersTable>),
}

impl Store {
    /// `--users FILE` (explicit, so it wins over a URL from the environment), else `--database
    /// URL`, else the default file. `Err`: the exit code (a message was printed).
    fn choose(paths: &Paths, users: &Option<PathBuf>, database: Option<&str>) -> anyhow::Result<Result<Self, u8>> {
        if let Some(path) = users {
            return Ok(Ok(Store::File(path.clone())));
        }
        let Some(text) = database else { return Ok(Ok(Store::File(default_path(paths)))) };
        let url = match DatabaseUrl::parse(text) {
            Ok(url) => url,
            Err(err) => {
                crate::modes::common::warn(&err.to_string());
                return Ok(Err(2));
            }
        };
        Ok(Ok(Store::Table(Box::new(UsersTable::open(&url)?))))
    }

    fn place(&self) -> String {
        match self {
            Store::File(path) => path.display().to_string(),
            Store::Table(table) => table.url().to_string(),
        }
    }

    /// Adds or replaces `user`; the verb that says which.
    fn put(&mut self, user: User) -> Result<&'static str, UsersError> {
        match self {
            Store::File(path) => {
                let _lock = super::lock_file(path)?;
                let mut file = UsersFile::load(path)?;
                let verb = match file.users.iter_mut().find(|u| u.name == user.name) {
                    Some(existing) => {
                        *existing = user;
                        "updated"
                    }
                    None => {
                        file.users.push(user);
                        "added"
                    }
                };
                file.save(path)?;
                Ok(verb)
            }
            Store::Table(table) => Ok(if table.put(&user)? { "added" } else { "updated" }),
        }
    }

    /// `false`: there was no such user.
    fn remove(&mut self, name: &str) -> Result<bool, UsersError> {
        match self {
            Store::File(path) => {
                let _lock = super::lock_file(path)?;
                let mut file = UsersFile::load(path)?;
                let before = file.users.len();
                file.users.retain(|u| u.name != name);
                if file.users.len() == before {
                    return Ok(false);
                }
                file.save(path)?;
                Ok(true)
            }
            Store::Table(table) => Ok(table.remove(name)?),
        }
    }

    fn list(&mut self) -> Result<UsersFile, UsersError> {
        match self {
            Store::File(path) => UsersFile::load(path),
            Store::Table(table) => Ok(table.all()?),
        }
    }
}

/// `opsai serve user …`.
pub fn run(paths: &Paths, command: &UserCommand) -> anyhow::Result<u8> {
    let mut out = std::io::stdout().lock();
    match command {
        UserCommand::Add { name, role, users, database } => {
            // Input errors exit 2, as a password too short does; checked before connecting.
            if !valid_name(name) {
                crate::modes::common::warn(&UsersError::BadName(name.clone()).to_string());
                return Ok(2);
            }
            if name == RESERVED {
                crate::modes::common::warn(&UsersError::Reserved(name.clone()).to_string());
                return Ok(2);
            }
            let mut store = match Store::choose(paths, users, database.url.as_deref())? {
                Ok(store) => store,
                Err(code) => return Ok(code),
            };
            let Some(password) = read_password(name)? else { return Ok(2) };
            let hash = hash_password(&password)?;
            let verb = store.put(User { name: name.clone(), role: *role, password_hash: hash })?;
            writeln!(out, "{verb} {name} ({}) in {}", role_name(*role), store.place())?;
            Ok(0)
        }
        UserCommand::Remove { name, users, database } => {
            let mut store = match Store::choose(paths, users, database.url.as_deref())? {
                Ok(store) => store,
                Err(code) => return Ok(code),
            };
            if !store.remove(name)? {
                crate::modes::common::warn(&format!(
                    "no user {name} in {}; `opsai serve user list` shows them",
                    store.place()
                ));
                return Ok(1);
            }
            let when = match store {
                Store::File(_) => "a running server logs them out at their next request",
                Store::Table(_) => "every server on this database logs them out within seconds",
            };
            writeln!(out, "removed {name} from {} ({when})", store.place())?;
            Ok(0)
        }
        UserCommand::List { users, database } => {
            let mut store = match Store::choose(paths, users, database.url.as_deref())? {
                Ok(store) => store,
                Err(code) => return Ok(code),
            };
            let file = store.list()?;
            if file.users.is_empty() {
                writeln!(
                    out,
                    "no users in {}; add one with `opsai serve user add NAME --role operator`",
                    store.place()
                )?;
            }
            for user in &file.users {
                if valid_name(&user.name) && user.name != RESERVED {
                    writeln!(out, "{}\t{}", user.name, role_name(user.role))?;
                } else {
                    writeln!(
                        out,
                        "{:?}\t{}\t(not a valid name: opsai serve ignores it)",
                        user.name,
                        role_name(user.role)
                    )?;
                }
            }
            Ok(0)
        }
        UserCommand::Import { users, database } => {
            let path = users.clone().unwrap_or_else(|| default_path(paths));
            let Some(url) = database.url.as_deref() else {
                crate::modes::common::warn(
                    "import copies a users file into a database: give it with --database URL or OPSAI_DATABASE_URL",
                );
                return Ok(2);
            };
            let url = match DatabaseUrl::parse(url) {
                Ok(url) => url,
                Err(err) => {
                    crate::modes::common::warn(&err.to_string());
                    return Ok(2);
                }
            };
            if !path.exists() {
                crate::modes::common::warn(&format!(
                    "there is no users file {}: give the one `opsai serve --users FILE` reads with --users FILE",
                    path.display()
                ));
                return Ok(1);
            }
            // The entries no server would let in stay behind, each named in a line.
            let file = UsersFile::load(&path)?.checked(&path.display().to_string());
            if file.users.is_empty() {
                crate::modes::common::warn(&format!("no users to import in {}", path.display()));
                return Ok(1);
            }
            let (added, updated) = UsersTable::open(&url)?.import(&file)?;
            writeln!(
                out,
                "imported {} users from {} into {url} ({added} added, {updated} updated); start the servers with \
                 --database instead of --users",
                added + updated,
                path.display()
            )?;
            Ok(0)
        }
    }
}

/// The password: asked twice on a terminal, else the first line of stdin. `None`: nothing usable
/// (a message was printed).
fn read_password(name: &str) -> anyhow::Result<Option<String>> {
    let password = if std::io::stdin().is_terminal() {
        // Asked twice by hand: dialoguer's own confirmation asks again on a mismatch, drawing the
        // first prompt a second time under its error.
        let first = dialoguer::Password::new().with_prompt(format!("Password for {name}")).interact()?;
        let again = dialoguer::Password::new().with_prompt("Repeat it").interact()?;
        if first != again {
            crate::modes::common::warn("the passwords differ: nothing was changed; run the command again");
            return Ok(None);
        }
        first
    } else {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        let password = line.trim_end_matches(['\n', '\r']).to_owned();
        if password.is_empty() {
            crate::modes::common::warn(
                "no password on standard input: pipe it in (`echo \"$PASSWORD\" | opsai serve user add NAME …`) or \
                 run this in a terminal",
            );
            return Ok(None);
        }
        password
    };
    if password.chars().count() < 8 {
        crate::modes::common::warn("the password is too short: use at least 8 characters");
        return Ok(None);
    }
    Ok(Some(password))
}
