//! The tables the replicas share.

/// The replicas' tables, one step per version (append only).
pub(super) const MIGRATIONS: &[&str] = &[
    "CREATE TABLE web_replicas (id TEXT PRIMARY KEY, seen_ms BIGINT NOT NULL);
    CREATE TABLE web_logins (
        token_hash TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        user_name TEXT NOT NULL,
        role TEXT NOT NULL,
        credential BIGINT,
        sso BOOLEAN NOT NULL,
        csrf TEXT NOT NULL,
        opened_ms BIGINT NOT NULL,
        seen_ms BIGINT NOT NULL
    );
    CREATE TABLE web_turns (
        conversation BIGINT PRIMARY KEY,
        replica TEXT NOT NULL,
        claim TEXT NOT NULL,
        owner TEXT NOT NULL,
        started_ms BIGINT NOT NULL
    );
    CREATE TABLE web_turn_events (
        conversation BIGINT NOT NULL,
        seq BIGINT NOT NULL,
        data TEXT NOT NULL,
        kept_ms BIGINT NOT NULL DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
        PRIMARY KEY (conversation, seq)
    );
    CREATE TABLE web_pendings (
        request_id TEXT PRIMARY KEY,
        replica TEXT NOT NULL,
        conversation BIGINT NOT NULL,
        call_id TEXT NOT NULL,
        owner TEXT NOT NULL,
        request TEXT NOT NULL,
        since BIGINT NOT NULL
    );
    CREATE INDEX web_pendings_by_call ON web_pendings (call_id);",
    // 2: single sign-on logins started on one replica, finished on another.
    "CREATE TABLE web_sso (
        state_hash TEXT PRIMARY KEY,
        binding_hash TEXT NOT NULL,
        verifier TEXT NOT NULL,
        nonce TEXT NOT NULL,
        started_ms BIGINT NOT NULL
    );",
    // 3: operators' "always this session" grants, for the conversation's turns on any replica.
    "CREATE TABLE web_grants (
        conversation BIGINT NOT NULL,
        user_name TEXT NOT NULL,
        credential BIGINT,
        grant_key TEXT NOT NULL,
        PRIMARY KEY (conversation, user_name, grant_key)
    );",
];
