//! Contests as the API shows and takes them, and the checks on what it takes.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::scoring::{Format, Medals, ScoreMode};
use crate::service::AppError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum ContestVisibility {
    /// Listed; anyone may register.
    #[default]
    Public,
    /// Not listed; anyone with the link sees it, registering takes the invite code.
    Invite,
    /// Seen by its members and staff only; staff add teams.
    Private,
}

impl ContestVisibility {
    pub fn as_str(self) -> &'static str {
        match self {
            ContestVisibility::Public => "public",
            ContestVisibility::Invite => "invite",
            ContestVisibility::Private => "private",
        }
    }

    pub fn parse(text: &str) -> ContestVisibility {
        match text {
            "invite" => ContestVisibility::Invite,
            "private" => ContestVisibility::Private,
            _ => ContestVisibility::Public,
        }
    }
}

/// A member's part in a contest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemberRole {
    Participant,
    /// Answers clarifications, sees the live board, rejudges.
    Jury,
    /// Everything the jury does, and changes the contest and its staff.
    Admin,
}

impl MemberRole {
    pub fn as_str(self) -> &'static str {
        match self {
            MemberRole::Participant => "participant",
            MemberRole::Jury => "jury",
            MemberRole::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Option<MemberRole> {
        match text {
            "participant" => Some(MemberRole::Participant),
            "jury" => Some(MemberRole::Jury),
            "admin" => Some(MemberRole::Admin),
            _ => None,
        }
    }
}

/// Where the contest is in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContestStatus {
    Upcoming,
    Running,
    Ended,
}

/// A new contest. Times are epoch milliseconds; `freeze_ms` is contest time (from the start).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewContest {
    /// Lowercase letters, digits and `-`, not starting with `-`; at most 64.
    #[schema(pattern = "^[a-z0-9][a-z0-9-]{0,63}$")]
    pub slug: String,
    /// 1 to 200 characters, no control characters.
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    )]
    pub title: String,
    #[serde(default)]
    #[schema(max_length = 100000)]
    pub description: String,
    pub format: Format,
    /// Epoch milliseconds, before 2100.
    #[schema(minimum = 0, maximum = 4102444800000_i64)]
    pub start_ms: i64,
    /// 1 minute to 30 days.
    #[schema(minimum = 60000, maximum = 2592000000_i64)]
    pub duration_ms: i64,
    /// The public board shows results from this contest time on as pending.
    #[serde(default)]
    pub freeze_ms: Option<i64>,
    /// When the board unfreezes by itself (epoch ms).
    #[serde(default)]
    pub unfreeze_at_ms: Option<i64>,
    /// Per rejected attempt before the solve (ICPC: 20, AtCoder: 5 by default).
    #[serde(default)]
    #[schema(minimum = 0, maximum = 1000)]
    pub penalty_minutes: Option<i64>,
    #[serde(default)]
    pub visibility: ContestVisibility,
    /// Required with `invite` visibility: 6 to 64 characters.
    #[serde(default)]
    #[schema(pattern = "^[\\x21-\\x7e]{6,64}$")]
    pub invite_code: Option<String>,
    #[serde(default)]
    pub registration_start_ms: Option<i64>,
    #[serde(default)]
    pub registration_end_ms: Option<i64>,
    /// Judge submissions after the end as upsolving (default true).
    #[serde(default = "yes")]
    pub upsolving: bool,
    #[serde(default)]
    pub medals: Medals,
}

fn yes() -> bool {
    true
}

/// A partial update; absent fields are unchanged.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContestPatch {
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$"
    )]
    pub title: Option<String>,
    #[schema(max_length = 100000)]
    pub description: Option<String>,
    pub format: Option<Format>,
    #[schema(minimum = 0, maximum = 4102444800000_i64)]
    pub start_ms: Option<i64>,
    #[schema(minimum = 60000, maximum = 2592000000_i64)]
    pub duration_ms: Option<i64>,
    /// `null` is "unchanged"; send `-1` to remove the freeze.
    pub freeze_ms: Option<i64>,
    pub unfreeze_at_ms: Option<i64>,
    #[schema(minimum = 0, maximum = 1000)]
    pub penalty_minutes: Option<i64>,
    pub visibility: Option<ContestVisibility>,
    #[schema(pattern = "^([\\x21-\\x7e]{6,64})?$")]
    pub invite_code: Option<String>,
    pub registration_start_ms: Option<i64>,
    pub registration_end_ms: Option<i64>,
    pub upsolving: Option<bool>,
    pub medals: Option<Medals>,
}

/// A problem attached to a contest.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContestProblemInput {
    /// `A`, `B`, … (1 to 10 letters or digits).
    #[schema(pattern = "^[A-Za-z0-9]{1,10}$")]
    pub label: String,
    /// The problem's slug.
    pub problem: String,
    #[serde(default)]
    pub color: Option<String>,
    /// `#RRGGBB`.
    #[serde(default)]
    pub rgb: Option<String>,
    /// A full solve's worth (IOI, AtCoder; default 100).
    #[serde(default)]
    pub points: Option<f64>,
    #[serde(default)]
    pub score_mode: Option<ScoreMode>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ContestProblemView {
    pub label: String,
    pub ordinal: i64,
    pub problem_id: i64,
    pub slug: String,
    pub title: String,
    pub color: String,
    pub rgb: String,
    pub points: f64,
    pub score_mode: ScoreMode,
    pub time_limit_ms: i64,
}

/// What the caller is in this contest.
#[derive(Debug, Clone, Serialize, ToSchema, Default)]
pub struct Standing {
    pub role: Option<MemberRole>,
    pub team_id: Option<i64>,
    /// A virtual participant's start.
    pub virtual_start_ms: Option<i64>,
    /// Whether the caller may act as staff (contest jury or admin, or a site admin).
    pub staff: bool,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ContestView {
    pub id: i64,
    pub slug: String,
    pub title: String,
    pub description: String,
    pub format: Format,
    pub start_ms: i64,
    pub duration_ms: i64,
    pub end_ms: i64,
    pub freeze_ms: Option<i64>,
    pub unfreeze_at_ms: Option<i64>,
    pub unfrozen_at_ms: Option<i64>,
    pub finalized_at_ms: Option<i64>,
    pub penalty_minutes: i64,
    pub visibility: ContestVisibility,
    /// Staff only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invite_code: Option<String>,
    pub registration_start_ms: Option<i64>,
    pub registration_end_ms: Option<i64>,
    pub upsolving: bool,
    pub medals: Medals,
    pub status: ContestStatus,
    /// Whether the public board is frozen now.
    pub frozen: bool,
    /// Empty for non-staff before the start.
    pub problems: Vec<ContestProblemView>,
    pub viewer: Standing,
    pub created_by: i64,
    pub version: i64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TeamView {
    pub id: i64,
    pub name: String,
    pub affiliation: String,
    pub category: String,
    pub hidden: bool,
    pub is_virtual: bool,
    pub members: Vec<String>,
}

/// Registering for a contest: the caller becomes a team of their own.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Registration {
    /// Defaults to the caller's username.
    #[serde(default)]
    pub team_name: Option<String>,
    #[serde(default)]
    pub affiliation: Option<String>,
    #[serde(default)]
    pub invite_code: Option<String>,
}

/// A staff member to add (or change).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StaffMember {
    pub username: String,
    /// `jury` or `admin`; `participant` removes the staff role.
    pub role: MemberRole,
}

pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> AppError {
    AppError::Invalid {
        field,
        reason: reason.into(),
    }
}

const MAX_DURATION_MS: i64 = 30 * 24 * 3_600_000;

pub(crate) fn check_label(label: &str) -> Result<(), AppError> {
    let ok = (1..=10).contains(&label.len()) && label.chars().all(|c| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(invalid("label", "1 to 10 letters or digits"))
    }
}

pub(crate) fn check_rgb(rgb: &str) -> Result<(), AppError> {
    let hex = rgb.strip_prefix('#').unwrap_or("");
    if [3, 6].contains(&hex.len()) && hex.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(invalid("rgb", "#RGB or #RRGGBB"))
    }
}

pub(crate) fn check_name(field: &'static str, text: &str, max: usize) -> Result<(), AppError> {
    let chars = text.chars().count();
    if (1..=max).contains(&chars) && !text.chars().any(char::is_control) {
        Ok(())
    } else {
        Err(invalid(
            field,
            format!("1 to {max} characters, no control characters"),
        ))
    }
}

/// The settings a contest must keep, checked on create and on every patch's result.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub title: String,
    pub description: String,
    pub format: Format,
    pub start_ms: i64,
    pub duration_ms: i64,
    pub freeze_ms: Option<i64>,
    pub unfreeze_at_ms: Option<i64>,
    pub penalty_minutes: i64,
    pub visibility: ContestVisibility,
    pub invite_code: Option<String>,
    pub registration_start_ms: Option<i64>,
    pub registration_end_ms: Option<i64>,
    pub upsolving: bool,
    pub medals: Medals,
}

impl Settings {
    pub fn check(&self) -> Result<(), AppError> {
        check_name("title", &self.title, 200)?;
        if self.description.chars().count() > 100_000 {
            return Err(invalid("description", "at most 100000 characters"));
        }
        if !(60_000..=MAX_DURATION_MS).contains(&self.duration_ms) {
            return Err(invalid("duration_ms", "1 minute to 30 days"));
        }
        if !(0..=4_102_444_800_000).contains(&self.start_ms) {
            return Err(invalid(
                "start_ms",
                "an epoch time in milliseconds before 2100",
            ));
        }
        if let Some(freeze) = self.freeze_ms {
            if !(0..=self.duration_ms).contains(&freeze) {
                return Err(invalid(
                    "freeze_ms",
                    "contest time between the start and the end",
                ));
            }
        }
        if let Some(at) = self.unfreeze_at_ms {
            if self.freeze_ms.is_none() {
                return Err(invalid("unfreeze_at_ms", "needs a freeze"));
            }
            if at < self.start_ms + self.duration_ms {
                return Err(invalid("unfreeze_at_ms", "not before the end"));
            }
        }
        if !(0..=1000).contains(&self.penalty_minutes) {
            return Err(invalid("penalty_minutes", "0 to 1000"));
        }
        match (&self.visibility, &self.invite_code) {
            (ContestVisibility::Invite, None) => {
                return Err(invalid("invite_code", "required with invite visibility"))
            }
            (_, Some(code))
                if !(6..=64).contains(&code.len())
                    || !code.bytes().all(|b| (0x21..=0x7e).contains(&b)) =>
            {
                return Err(invalid(
                    "invite_code",
                    "6 to 64 visible ASCII characters (no spaces)",
                ))
            }
            _ => {}
        }
        if let (Some(start), Some(end)) = (self.registration_start_ms, self.registration_end_ms) {
            if end < start {
                return Err(invalid("registration_end_ms", "not before its start"));
            }
        }
        let Medals {
            gold,
            silver,
            bronze,
        } = self.medals;
        if gold + silver + bronze > 1000 {
            return Err(invalid("medals", "at most 1000 in all"));
        }
        Ok(())
    }
}

impl NewContest {
    pub(crate) fn settings(&self) -> Settings {
        Settings {
            title: self.title.clone(),
            description: self.description.clone(),
            format: self.format,
            start_ms: self.start_ms,
            duration_ms: self.duration_ms,
            freeze_ms: self.freeze_ms,
            unfreeze_at_ms: self.unfreeze_at_ms,
            penalty_minutes: self.penalty_minutes.unwrap_or(match self.format {
                Format::Icpc => 20,
                Format::Atcoder => 5,
                Format::Ioi => 0,
            }),
            visibility: self.visibility,
            invite_code: self.invite_code.clone(),
            registration_start_ms: self.registration_start_ms,
            registration_end_ms: self.registration_end_ms,
            upsolving: self.upsolving,
            medals: self.medals,
        }
    }
}

impl ContestPatch {
    pub(crate) fn apply(self, mut s: Settings) -> Settings {
        macro_rules! set {
            ($($field:ident),*) => { $( if let Some(v) = self.$field { s.$field = v; } )* };
        }
        set!(
            title,
            description,
            format,
            start_ms,
            duration_ms,
            penalty_minutes,
            visibility,
            upsolving,
            medals
        );
        if let Some(freeze) = self.freeze_ms {
            s.freeze_ms = (freeze >= 0).then_some(freeze);
        }
        if let Some(at) = self.unfreeze_at_ms {
            s.unfreeze_at_ms = (at >= 0).then_some(at);
        }
        if let Some(code) = self.invite_code {
            s.invite_code = (!code.is_empty()).then_some(code);
        }
        if let Some(at) = self.registration_start_ms {
            s.registration_start_ms = (at >= 0).then_some(at);
        }
        if let Some(at) = self.registration_end_ms {
            s.registration_end_ms = (at >= 0).then_some(at);
        }
        s
    }
}
