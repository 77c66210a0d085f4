//! Who is calling, and what they may do. Auth issues and verifies identities; every other
//! owner receives a verified [`Principal`] and asks [`Role::can`] — the one permission matrix.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::ids::UserId;
use crate::judging::PortError;

/// An account's role. Roles are ordered: each has every permission of the ones before it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    #[default]
    User,
    Setter,
    Admin,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::User, Role::Setter, Role::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Setter => "setter",
            Role::Admin => "admin",
        }
    }

    /// The permission matrix.
    pub fn can(self, permission: Permission) -> bool {
        use Permission::*;
        match permission {
            Submit | RunCode | ViewPublicProblems => true,
            ManageProblems | ManageContests | ViewHiddenProblems | ViewTestDetails => {
                self >= Role::Setter
            }
            ViewAnySource | Rejudge | ViewPipeline | ManageUsers => self == Role::Admin,
        }
    }
}

impl std::str::FromStr for Role {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("unknown role {s:?} (expected user, setter or admin)"))
    }
}

/// What an authenticated caller may be allowed to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Permission {
    /// Submit code for judging.
    Submit,
    /// Run code without judging (preview and the execution API).
    RunCode,
    ViewPublicProblems,
    /// Create problems, edit them and upload their test data.
    ManageProblems,
    /// Create contests (their creator is their contest admin).
    ManageContests,
    ViewHiddenProblems,
    /// Read any submission's source code.
    ViewAnySource,
    /// Read checker messages and outputs of secret tests (they may quote hidden test data).
    ViewTestDetails,
    Rejudge,
    /// The admin views of the pipeline (outbox, queue, dead letters, leases).
    ViewPipeline,
    ManageUsers,
}

/// A verified caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Principal {
    pub user_id: UserId,
    pub username: String,
    pub role: Role,
}

impl Principal {
    pub fn can(&self, permission: Permission) -> bool {
        self.role.can(permission)
    }
}

/// Why a presented access token was refused. The HTTP edge answers 401 for all of them and
/// never says which check failed beyond this coarse reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenRejection {
    #[error("the token is malformed")]
    Malformed,
    #[error("the token's algorithm or key is not accepted")]
    UnacceptedKey,
    #[error("the token's signature does not verify")]
    BadSignature,
    #[error("the token is not an access token for this service")]
    WrongAudience,
    #[error("the token has expired")]
    Expired,
    #[error("the token was revoked (role or password changed, or account gone)")]
    Revoked,
    #[error("the token could not be checked: {0}")]
    Unavailable(String),
}

/// Auth's verifier for access tokens, used by every owner's HTTP edge.
#[async_trait]
pub trait TokenVerifier: Send + Sync {
    async fn verify_access(&self, token: &str) -> Result<Principal, TokenRejection>;
}

/// Auth's view of accounts for other owners (App's facts snapshot asks whether a user exists).
/// Username and password checks, for compatibility APIs that take HTTP Basic (the CLICS
/// Contest API).
#[async_trait]
pub trait PasswordCheck: Send + Sync {
    /// The account these credentials belong to; `None` when they are wrong.
    async fn check_password(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<Principal>, PortError>;
}

/// Accounts a contest package names (its teams' accounts): found, or created without a
/// usable password (an admin sets one, or the owner resets it by mail).
#[async_trait]
pub trait AccountProvisioner: Send + Sync {
    async fn ensure_user(&self, username: &str) -> Result<UserId, PortError>;
}

#[async_trait]
pub trait UserDirectory: Send + Sync {
    async fn user_exists(&self, user: UserId) -> Result<bool, PortError>;

    /// The account's role now (a token's role is as of its verification); `None` when the
    /// account is gone. Long operations re-check it before they commit.
    async fn current_role(&self, user: UserId) -> Result<Option<Role>, PortError>;

    /// The account with this username (as typed: Auth normalises it), if any.
    async fn find_user(&self, username: &str) -> Result<Option<UserId>, PortError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_permission_matrix() {
        use Permission::*;
        let table = [
            (Submit, [true, true, true]),
            (RunCode, [true, true, true]),
            (ViewPublicProblems, [true, true, true]),
            (ManageProblems, [false, true, true]),
            (ManageContests, [false, true, true]),
            (ViewHiddenProblems, [false, true, true]),
            (ViewTestDetails, [false, true, true]),
            (ViewAnySource, [false, false, true]),
            (Rejudge, [false, false, true]),
            (ViewPipeline, [false, false, true]),
            (ManageUsers, [false, false, true]),
        ];
        for (permission, expected) in table {
            for (role, allowed) in Role::ALL.into_iter().zip(expected) {
                assert_eq!(role.can(permission), allowed, "{role:?} {permission:?}");
            }
        }
    }

    #[test]
    fn roles_parse_from_their_names_only() {
        for role in Role::ALL {
            assert_eq!(role.as_str().parse::<Role>(), Ok(role));
        }
        assert!("root".parse::<Role>().is_err());
        assert!("Admin".parse::<Role>().is_err());
    }
}

/// Who a notification goes to, as Auth knows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recipient {
    pub username: String,
    /// The account's address, only once verified.
    pub email: Option<String>,
    /// The interface language the account chose (BCP 47), if any.
    pub locale: Option<String>,
}

/// Auth's port for the Notification owner: where and in which language to reach a user.
#[async_trait::async_trait]
pub trait Recipients: Send + Sync {
    /// `None`: no such account.
    async fn recipient(&self, user: UserId) -> Result<Option<Recipient>, PortError>;
}
