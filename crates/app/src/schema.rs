//! The App owner's tables: problems and their test-data packages (by content hash), and
//! contests (`contest::schema`).

use platform::Migration;

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "problems",
        postgres: "
        CREATE TABLE problems (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            slug TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL,
            statement TEXT NOT NULL,
            time_limit_ms BIGINT NOT NULL,
            memory_mib BIGINT NOT NULL,
            tags TEXT NOT NULL,
            difficulty BIGINT,
            visibility TEXT NOT NULL,
            package_hash TEXT,
            samples TEXT NOT NULL,
            created_by BIGINT NOT NULL,
            created_at BIGINT NOT NULL,
            updated_at BIGINT NOT NULL
        );
        CREATE TABLE packages (
            hash TEXT PRIMARY KEY,
            archive BYTEA NOT NULL,
            size_bytes BIGINT NOT NULL,
            created_at BIGINT NOT NULL
        );
    ",
        sqlite: "
        CREATE TABLE problems (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            slug TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL,
            statement TEXT NOT NULL,
            time_limit_ms INTEGER NOT NULL,
            memory_mib INTEGER NOT NULL,
            tags TEXT NOT NULL,
            difficulty INTEGER,
            visibility TEXT NOT NULL,
            package_hash TEXT,
            samples TEXT NOT NULL,
            created_by INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL
        );
        CREATE TABLE packages (
            hash TEXT PRIMARY KEY,
            archive BLOB NOT NULL,
            size_bytes INTEGER NOT NULL,
            created_at INTEGER NOT NULL
        );
    ",
    },
    Migration {
        version: 2,
        name: "problem versions (for derived data such as the search index)",
        postgres: "ALTER TABLE problems ADD COLUMN version BIGINT NOT NULL DEFAULT 1",
        sqlite: "ALTER TABLE problems ADD COLUMN version INTEGER NOT NULL DEFAULT 1",
    },
    Migration {
        version: 3,
        name: "contests",
        postgres: crate::contest::schema::POSTGRES,
        sqlite: crate::contest::schema::SQLITE,
    },
    Migration {
        version: 4,
        name: "function problems: the signature, comparison and starter code of the package",
        postgres: "ALTER TABLE problems ADD COLUMN function_spec TEXT",
        sqlite: "ALTER TABLE problems ADD COLUMN function_spec TEXT",
    },
    platform::events::OUTBOX_MIGRATION,
    platform::events::INBOX_MIGRATION,
    platform::leases::MIGRATION,
];
