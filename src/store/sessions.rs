//! Conversations and their messages in `$OPSAI_HOME/sessions.db` (SQLite, WAL).
