//! The Submission owner's tables. Its aggregate (submissions, per-test results) and its two
//! outboxes (judge intents, integration events) live in one database so they commit together.

use platform::Migration;

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "submissions",
        postgres: "
            CREATE TABLE submissions (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                user_id BIGINT NOT NULL,
                problem_id BIGINT NOT NULL,
                language TEXT NOT NULL,
                source TEXT NOT NULL,
                facts TEXT NOT NULL,
                idempotency_key TEXT,
                fingerprint TEXT NOT NULL,
                state TEXT NOT NULL,
                generation BIGINT NOT NULL,
                current_attempt_id TEXT,
                judging_lease_expires_at BIGINT,
                recoveries BIGINT NOT NULL DEFAULT 0,
                last_recovery_reason TEXT,
                verdict TEXT,
                score DOUBLE PRECISION,
                max_score DOUBLE PRECISION,
                time_ms BIGINT,
                memory_kib BIGINT,
                compile_output TEXT,
                message TEXT,
                judged_generation BIGINT,
                judged_attempt_id TEXT,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                judged_at BIGINT,
                UNIQUE (user_id, idempotency_key)
            );
            CREATE INDEX submissions_leases ON submissions (state, judging_lease_expires_at);
            CREATE INDEX submissions_by_problem ON submissions (problem_id, id);
            CREATE TABLE submission_tests (
                submission_id BIGINT NOT NULL,
                generation BIGINT NOT NULL,
                position BIGINT NOT NULL,
                name TEXT NOT NULL,
                test_group TEXT NOT NULL,
                verdict TEXT NOT NULL,
                time_ms BIGINT NOT NULL,
                wall_time_ms BIGINT NOT NULL,
                memory_kib BIGINT NOT NULL,
                message TEXT NOT NULL,
                score DOUBLE PRECISION,
                output TEXT,
                PRIMARY KEY (submission_id, generation, position)
            );
            CREATE TABLE judge_outbox (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                submission_id BIGINT NOT NULL,
                generation BIGINT NOT NULL,
                payload TEXT NOT NULL,
                state TEXT NOT NULL,
                attempts BIGINT NOT NULL DEFAULT 0,
                last_error TEXT,
                next_retry_at BIGINT NOT NULL,
                created_at BIGINT NOT NULL,
                sent_at BIGINT,
                is_shadow BIGINT NOT NULL DEFAULT 0,
                UNIQUE (submission_id, generation)
            );
            CREATE INDEX judge_outbox_due ON judge_outbox (state, next_retry_at);
            CREATE TABLE events_outbox (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                event_id TEXT NOT NULL UNIQUE,
                event_type TEXT NOT NULL,
                aggregate_id BIGINT NOT NULL,
                aggregate_version BIGINT NOT NULL,
                schema_version BIGINT NOT NULL,
                payload TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                published_at BIGINT
            )",
        sqlite: "
            CREATE TABLE submissions (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                user_id INTEGER NOT NULL,
                problem_id INTEGER NOT NULL,
                language TEXT NOT NULL,
                source TEXT NOT NULL,
                facts TEXT NOT NULL,
                idempotency_key TEXT,
                fingerprint TEXT NOT NULL,
                state TEXT NOT NULL,
                generation INTEGER NOT NULL,
                current_attempt_id TEXT,
                judging_lease_expires_at INTEGER,
                recoveries INTEGER NOT NULL DEFAULT 0,
                last_recovery_reason TEXT,
                verdict TEXT,
                score REAL,
                max_score REAL,
                time_ms INTEGER,
                memory_kib INTEGER,
                compile_output TEXT,
                message TEXT,
                judged_generation INTEGER,
                judged_attempt_id TEXT,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                judged_at INTEGER,
                UNIQUE (user_id, idempotency_key)
            );
            CREATE INDEX submissions_leases ON submissions (state, judging_lease_expires_at);
            CREATE INDEX submissions_by_problem ON submissions (problem_id, id);
            CREATE TABLE submission_tests (
                submission_id INTEGER NOT NULL,
                generation INTEGER NOT NULL,
                position INTEGER NOT NULL,
                name TEXT NOT NULL,
                test_group TEXT NOT NULL,
                verdict TEXT NOT NULL,
                time_ms INTEGER NOT NULL,
                wall_time_ms INTEGER NOT NULL,
                memory_kib INTEGER NOT NULL,
                message TEXT NOT NULL,
                score REAL,
                output TEXT,
                PRIMARY KEY (submission_id, generation, position)
            );
            CREATE TABLE judge_outbox (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                submission_id INTEGER NOT NULL,
                generation INTEGER NOT NULL,
                payload TEXT NOT NULL,
                state TEXT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                last_error TEXT,
                next_retry_at INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                sent_at INTEGER,
                is_shadow INTEGER NOT NULL DEFAULT 0,
                UNIQUE (submission_id, generation)
            );
            CREATE INDEX judge_outbox_due ON judge_outbox (state, next_retry_at);
            CREATE TABLE events_outbox (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                event_id TEXT NOT NULL UNIQUE,
                event_type TEXT NOT NULL,
                aggregate_id INTEGER NOT NULL,
                aggregate_version INTEGER NOT NULL,
                schema_version INTEGER NOT NULL,
                payload TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                published_at INTEGER
            )",
    },
    platform::leases::MIGRATION,
    Migration {
        version: 2,
        name: "judging progress and per-user listing",
        postgres: "
            ALTER TABLE submissions ADD COLUMN progress TEXT;
            CREATE INDEX submissions_by_user ON submissions (user_id, id)",
        sqlite: "
            ALTER TABLE submissions ADD COLUMN progress TEXT;
            CREATE INDEX submissions_by_user ON submissions (user_id, id)",
    },
    Migration {
        version: 3,
        name: "run receipts",
        postgres: "
            CREATE TABLE run_receipts (
                id TEXT PRIMARY KEY,
                user_id BIGINT NOT NULL,
                idempotency_key TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                mode TEXT NOT NULL,
                state TEXT NOT NULL,
                request TEXT NOT NULL,
                result TEXT,
                error TEXT,
                node TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                UNIQUE (user_id, idempotency_key)
            );
            CREATE INDEX run_receipts_node ON run_receipts (node, state);
            CREATE INDEX run_receipts_expiry ON run_receipts (expires_at)",
        sqlite: "
            CREATE TABLE run_receipts (
                id TEXT PRIMARY KEY,
                user_id INTEGER NOT NULL,
                idempotency_key TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                mode TEXT NOT NULL,
                state TEXT NOT NULL,
                request TEXT NOT NULL,
                result TEXT,
                error TEXT,
                node TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                UNIQUE (user_id, idempotency_key)
            );
            CREATE INDEX run_receipts_node ON run_receipts (node, state);
            CREATE INDEX run_receipts_expiry ON run_receipts (expires_at)",
    },
    Migration {
        version: 4,
        name: "per-user fairness look-ups",
        postgres: "
            CREATE INDEX submissions_user_state ON submissions (user_id, state);
            CREATE INDEX judge_outbox_submission ON judge_outbox (submission_id, state);
            CREATE INDEX run_receipts_user ON run_receipts (user_id, expires_at)",
        sqlite: "
            CREATE INDEX submissions_user_state ON submissions (user_id, state);
            CREATE INDEX judge_outbox_submission ON judge_outbox (submission_id, state);
            CREATE INDEX run_receipts_user ON run_receipts (user_id, expires_at)",
    },
    Migration {
        version: 5,
        name: "the verdict of every generation (rejudge history)",
        postgres: "
            CREATE TABLE submission_verdicts (
                submission_id BIGINT NOT NULL,
                generation BIGINT NOT NULL,
                verdict TEXT NOT NULL,
                score DOUBLE PRECISION,
                judged_at BIGINT NOT NULL,
                PRIMARY KEY (submission_id, generation)
            );
            INSERT INTO submission_verdicts (submission_id, generation, verdict, score, judged_at)
                SELECT id, judged_generation, verdict, score, judged_at FROM submissions
                WHERE state = 'done' AND judged_generation IS NOT NULL AND verdict IS NOT NULL AND judged_at IS NOT NULL",
        sqlite: "
            CREATE TABLE submission_verdicts (
                submission_id INTEGER NOT NULL,
                generation INTEGER NOT NULL,
                verdict TEXT NOT NULL,
                score REAL,
                judged_at INTEGER NOT NULL,
                PRIMARY KEY (submission_id, generation)
            );
            INSERT INTO submission_verdicts (submission_id, generation, verdict, score, judged_at)
                SELECT id, judged_generation, verdict, score, judged_at FROM submissions
                WHERE state = 'done' AND judged_generation IS NOT NULL AND verdict IS NOT NULL AND judged_at IS NOT NULL",
    },
    // The first events outbox predates the shared envelope: it is renamed, the platform's
    // table takes its place, and its rows move over as already sent (nothing consumed them).
    Migration {
        version: 6,
        name: "make way for the shared events outbox",
        postgres: "
            ALTER TABLE events_outbox RENAME TO legacy_events_outbox;
            ALTER INDEX events_outbox_pkey RENAME TO legacy_events_outbox_pkey;
            ALTER INDEX events_outbox_event_id_key RENAME TO legacy_events_outbox_event_id_key;
            ALTER SEQUENCE events_outbox_id_seq RENAME TO legacy_events_outbox_id_seq",
        sqlite: "ALTER TABLE events_outbox RENAME TO legacy_events_outbox",
    },
    platform::events::OUTBOX_MIGRATION,
    Migration {
        version: 7,
        name: "move the first events into the shared outbox",
        postgres: "
            INSERT INTO events_outbox (event_id, owner, aggregate_type, aggregate_id, aggregate_version, event_type, schema_version, occurred_at, payload, state, next_retry_at, sent_at)
                SELECT event_id, 'submission', 'submission', aggregate_id, aggregate_version, event_type, schema_version, created_at, payload, 'SENT', created_at, created_at FROM legacy_events_outbox;
            DROP TABLE legacy_events_outbox",
        sqlite: "
            INSERT INTO events_outbox (event_id, owner, aggregate_type, aggregate_id, aggregate_version, event_type, schema_version, occurred_at, payload, state, next_retry_at, sent_at)
                SELECT event_id, 'submission', 'submission', aggregate_id, aggregate_version, event_type, schema_version, created_at, payload, 'SENT', created_at, created_at FROM legacy_events_outbox;
            DROP TABLE legacy_events_outbox",
    },
    Migration {
        version: 8,
        name: "per-test details of function problems (values, exception, prints)",
        postgres: "ALTER TABLE submission_tests ADD COLUMN detail TEXT",
        sqlite: "ALTER TABLE submission_tests ADD COLUMN detail TEXT",
    },
    Migration {
        version: 9,
        name: "execution jobs (programs run without judging, kept durably)",
        postgres: "
            CREATE TABLE execution_jobs (
                token TEXT PRIMARY KEY,
                state TEXT NOT NULL,
                language TEXT NOT NULL,
                outcome TEXT,
                request TEXT NOT NULL,
                echo TEXT NOT NULL,
                result TEXT,
                error TEXT,
                attempt TEXT,
                attempts BIGINT NOT NULL DEFAULT 0,
                node TEXT NOT NULL,
                callback_url TEXT,
                callback_state TEXT NOT NULL,
                callback_tries BIGINT NOT NULL DEFAULT 0,
                callback_next_at BIGINT,
                created_at BIGINT NOT NULL,
                finished_at BIGINT,
                updated_at BIGINT NOT NULL
            );
            CREATE INDEX execution_jobs_queue ON execution_jobs (node, state, created_at);
            CREATE INDEX execution_jobs_created ON execution_jobs (created_at);
            CREATE INDEX execution_jobs_callbacks ON execution_jobs (callback_state, callback_next_at)",
        sqlite: "
            CREATE TABLE execution_jobs (
                token TEXT PRIMARY KEY,
                state TEXT NOT NULL,
                language TEXT NOT NULL,
                outcome TEXT,
                request TEXT NOT NULL,
                echo TEXT NOT NULL,
                result TEXT,
                error TEXT,
                attempt TEXT,
                attempts INTEGER NOT NULL DEFAULT 0,
                node TEXT NOT NULL,
                callback_url TEXT,
                callback_state TEXT NOT NULL,
                callback_tries INTEGER NOT NULL DEFAULT 0,
                callback_next_at INTEGER,
                created_at INTEGER NOT NULL,
                finished_at INTEGER,
                updated_at INTEGER NOT NULL
            );
            CREATE INDEX execution_jobs_queue ON execution_jobs (node, state, created_at);
            CREATE INDEX execution_jobs_created ON execution_jobs (created_at);
            CREATE INDEX execution_jobs_callbacks ON execution_jobs (callback_state, callback_next_at)",
    },
];
