//! Contest tables. The scoreboard's input (`contest_submissions`, `contest_judgings`) is
//! derived from Submission's events; `contest_events` is the CLICS event feed's log.

pub const POSTGRES: &str = "
CREATE TABLE contests (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    format TEXT NOT NULL,
    start_ms BIGINT NOT NULL,
    duration_ms BIGINT NOT NULL,
    freeze_ms BIGINT,
    unfreeze_at_ms BIGINT,
    unfrozen_at_ms BIGINT,
    finalized_at_ms BIGINT,
    penalty_minutes BIGINT NOT NULL,
    visibility TEXT NOT NULL,
    invite_code TEXT,
    registration_start_ms BIGINT,
    registration_end_ms BIGINT,
    upsolving BIGINT NOT NULL,
    gold BIGINT NOT NULL,
    silver BIGINT NOT NULL,
    bronze BIGINT NOT NULL,
    created_by BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version BIGINT NOT NULL,
    board_version BIGINT NOT NULL
);
CREATE TABLE contest_problems (
    contest_id BIGINT NOT NULL,
    label TEXT NOT NULL,
    problem_id BIGINT NOT NULL,
    ordinal BIGINT NOT NULL,
    color TEXT NOT NULL,
    rgb TEXT NOT NULL,
    points DOUBLE PRECISION NOT NULL,
    score_mode TEXT NOT NULL,
    PRIMARY KEY (contest_id, label),
    UNIQUE (contest_id, problem_id)
);
CREATE TABLE contest_teams (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    contest_id BIGINT NOT NULL,
    name TEXT NOT NULL,
    affiliation TEXT NOT NULL,
    category TEXT NOT NULL,
    hidden BIGINT NOT NULL,
    is_virtual BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (contest_id, name)
);
CREATE TABLE contest_members (
    contest_id BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    username TEXT NOT NULL,
    team_id BIGINT,
    role TEXT NOT NULL,
    virtual_start_ms BIGINT,
    joined_at BIGINT NOT NULL,
    PRIMARY KEY (contest_id, user_id)
);
CREATE TABLE contest_submissions (
    submission_id BIGINT PRIMARY KEY,
    contest_id BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    team_id BIGINT NOT NULL,
    label TEXT NOT NULL,
    phase TEXT NOT NULL,
    contest_time_ms BIGINT NOT NULL,
    language TEXT NOT NULL,
    submitted_at_ms BIGINT NOT NULL,
    valid_judging TEXT,
    rejudging_id BIGINT,
    rejudging_generation BIGINT,
    candidate_judging TEXT,
    discarded_through BIGINT NOT NULL
);
CREATE TABLE contest_judgings (
    submission_id BIGINT NOT NULL,
    generation BIGINT NOT NULL,
    contest_id BIGINT NOT NULL,
    judging TEXT NOT NULL,
    judged_at_ms BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    PRIMARY KEY (submission_id, generation)
);
CREATE TABLE contest_rejudgings (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    contest_id BIGINT NOT NULL,
    filter TEXT NOT NULL,
    state TEXT NOT NULL,
    created_by BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    closed_by BIGINT,
    closed_at BIGINT
);
CREATE TABLE contest_rejudging_items (
    rejudging_id BIGINT NOT NULL,
    submission_id BIGINT NOT NULL,
    old_judging TEXT NOT NULL,
    new_generation BIGINT,
    PRIMARY KEY (rejudging_id, submission_id)
);
CREATE TABLE contest_clarifications (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    contest_id BIGINT NOT NULL,
    from_team_id BIGINT,
    to_team_id BIGINT,
    problem_label TEXT,
    reply_to BIGINT,
    text TEXT NOT NULL,
    created_by BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    contest_time_ms BIGINT NOT NULL,
    answered BIGINT NOT NULL
);
CREATE TABLE contest_events (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    contest_id BIGINT NOT NULL,
    kind TEXT NOT NULL,
    object_id TEXT,
    data TEXT,
    at_ms BIGINT NOT NULL
);
CREATE INDEX contest_submissions_by_contest ON contest_submissions (contest_id, submission_id);
CREATE INDEX contest_judgings_by_contest ON contest_judgings (contest_id, seq);
CREATE INDEX contest_clarifications_by_contest ON contest_clarifications (contest_id, id);
CREATE INDEX contest_events_by_contest ON contest_events (contest_id, seq);
CREATE INDEX contest_members_by_team ON contest_members (team_id)
";

pub const SQLITE: &str = "
CREATE TABLE contests (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    slug TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    format TEXT NOT NULL,
    start_ms INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    freeze_ms INTEGER,
    unfreeze_at_ms INTEGER,
    unfrozen_at_ms INTEGER,
    finalized_at_ms INTEGER,
    penalty_minutes INTEGER NOT NULL,
    visibility TEXT NOT NULL,
    invite_code TEXT,
    registration_start_ms INTEGER,
    registration_end_ms INTEGER,
    upsolving INTEGER NOT NULL,
    gold INTEGER NOT NULL,
    silver INTEGER NOT NULL,
    bronze INTEGER NOT NULL,
    created_by INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    version INTEGER NOT NULL,
    board_version INTEGER NOT NULL
);
CREATE TABLE contest_problems (
    contest_id INTEGER NOT NULL,
    label TEXT NOT NULL,
    problem_id INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    color TEXT NOT NULL,
    rgb TEXT NOT NULL,
    points REAL NOT NULL,
    score_mode TEXT NOT NULL,
    PRIMARY KEY (contest_id, label),
    UNIQUE (contest_id, problem_id)
);
CREATE TABLE contest_teams (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    contest_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    affiliation TEXT NOT NULL,
    category TEXT NOT NULL,
    hidden INTEGER NOT NULL,
    is_virtual INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (contest_id, name)
);
CREATE TABLE contest_members (
    contest_id INTEGER NOT NULL,
    user_id INTEGER NOT NULL,
    username TEXT NOT NULL,
    team_id INTEGER,
    role TEXT NOT NULL,
    virtual_start_ms INTEGER,
    joined_at INTEGER NOT NULL,
    PRIMARY KEY (contest_id, user_id)
);
CREATE TABLE contest_submissions (
    submission_id INTEGER PRIMARY KEY,
    contest_id INTEGER NOT NULL,
    user_id INTEGER NOT NULL,
    team_id INTEGER NOT NULL,
    label TEXT NOT NULL,
    phase TEXT NOT NULL,
    contest_time_ms INTEGER NOT NULL,
    language TEXT NOT NULL,
    submitted_at_ms INTEGER NOT NULL,
    valid_judging TEXT,
    rejudging_id INTEGER,
    rejudging_generation INTEGER,
    candidate_judging TEXT,
    discarded_through INTEGER NOT NULL
);
CREATE TABLE contest_judgings (
    submission_id INTEGER NOT NULL,
    generation INTEGER NOT NULL,
    contest_id INTEGER NOT NULL,
    judging TEXT NOT NULL,
    judged_at_ms INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (submission_id, generation)
);
CREATE TABLE contest_rejudgings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    contest_id INTEGER NOT NULL,
    filter TEXT NOT NULL,
    state TEXT NOT NULL,
    created_by INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    closed_by INTEGER,
    closed_at INTEGER
);
CREATE TABLE contest_rejudging_items (
    rejudging_id INTEGER NOT NULL,
    submission_id INTEGER NOT NULL,
    old_judging TEXT NOT NULL,
    new_generation INTEGER,
    PRIMARY KEY (rejudging_id, submission_id)
);
CREATE TABLE contest_clarifications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    contest_id INTEGER NOT NULL,
    from_team_id INTEGER,
    to_team_id INTEGER,
    problem_label TEXT,
    reply_to INTEGER,
    text TEXT NOT NULL,
    created_by INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    contest_time_ms INTEGER NOT NULL,
    answered INTEGER NOT NULL
);
CREATE TABLE contest_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    contest_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    object_id TEXT,
    data TEXT,
    at_ms INTEGER NOT NULL
);
CREATE INDEX contest_submissions_by_contest ON contest_submissions (contest_id, submission_id);
CREATE INDEX contest_judgings_by_contest ON contest_judgings (contest_id, seq);
CREATE INDEX contest_clarifications_by_contest ON contest_clarifications (contest_id, id);
CREATE INDEX contest_events_by_contest ON contest_events (contest_id, seq);
CREATE INDEX contest_members_by_team ON contest_members (team_id)
";
