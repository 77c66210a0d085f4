//! The Auth owner's tables: accounts, refresh-token families and signing keys.

use platform::Migration;

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "accounts",
        postgres: "
        CREATE TABLE users (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            username TEXT NOT NULL UNIQUE,
            password_hash TEXT NOT NULL,
            role TEXT NOT NULL,
            authz_version BIGINT NOT NULL DEFAULT 1,
            created_at BIGINT NOT NULL,
            updated_at BIGINT NOT NULL
        );
        CREATE TABLE refresh_tokens (
            token_hash TEXT PRIMARY KEY,
            family_id TEXT NOT NULL,
            user_id BIGINT NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            used_at BIGINT,
            revoked_at BIGINT
        );
        CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
        CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id);
        CREATE TABLE signing_keys (
            kid TEXT PRIMARY KEY,
            secret_hex TEXT NOT NULL,
            created_at BIGINT NOT NULL
        );
    ",
        sqlite: "
        CREATE TABLE users (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            username TEXT NOT NULL UNIQUE,
            password_hash TEXT NOT NULL,
            role TEXT NOT NULL,
            authz_version INTEGER NOT NULL DEFAULT 1,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL
        );
        CREATE TABLE refresh_tokens (
            token_hash TEXT PRIMARY KEY,
            family_id TEXT NOT NULL,
            user_id INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            used_at INTEGER,
            revoked_at INTEGER
        );
        CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
        CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id);
        CREATE TABLE signing_keys (
            kid TEXT PRIMARY KEY,
            secret_hex TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
    ",
    },
    Migration {
        version: 2,
        name: "usernames unique whatever their letter case",
        postgres: "CREATE UNIQUE INDEX users_username_ci ON users (lower(username));",
        sqlite: "CREATE UNIQUE INDEX users_username_ci ON users (lower(username));",
    },
    Migration {
        version: 3,
        name: "the interface language an account chose",
        postgres: "ALTER TABLE users ADD COLUMN locale TEXT;",
        sqlite: "ALTER TABLE users ADD COLUMN locale TEXT;",
    },
    platform::events::OUTBOX_MIGRATION,
    platform::leases::MIGRATION,
    Migration {
        version: 4,
        name: "account email, verification and reset tokens",
        postgres: "
            ALTER TABLE users ADD COLUMN email TEXT;
            ALTER TABLE users ADD COLUMN email_verified_at BIGINT;
            CREATE UNIQUE INDEX users_verified_email ON users (lower(email)) WHERE email_verified_at IS NOT NULL;
            CREATE TABLE account_tokens (
                token_hash TEXT PRIMARY KEY,
                user_id BIGINT NOT NULL,
                purpose TEXT NOT NULL,
                email TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                used_at BIGINT
            );
            CREATE INDEX account_tokens_user ON account_tokens (user_id, purpose)",
        sqlite: "
            ALTER TABLE users ADD COLUMN email TEXT;
            ALTER TABLE users ADD COLUMN email_verified_at INTEGER;
            CREATE UNIQUE INDEX users_verified_email ON users (lower(email)) WHERE email_verified_at IS NOT NULL;
            CREATE TABLE account_tokens (
                token_hash TEXT PRIMARY KEY,
                user_id INTEGER NOT NULL,
                purpose TEXT NOT NULL,
                email TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                used_at INTEGER
            );
            CREATE INDEX account_tokens_user ON account_tokens (user_id, purpose)",
    },
    Migration {
        version: 5,
        name: "signing keys retire after a rotation",
        postgres: "ALTER TABLE signing_keys ADD COLUMN retire_at BIGINT;",
        sqlite: "ALTER TABLE signing_keys ADD COLUMN retire_at INTEGER;",
    },
];
