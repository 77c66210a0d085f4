//! Singleton leases: at most one runner of a periodic job at a time, with fence tokens.
//!
//! A lease row is `(name, fence_token, owner_token, leased_until)`. Acquire inserts the row or
//! takes over an expired one by incrementing `fence_token`; renew and release require the
//! owner and the token. Tokens only increase. Every write a job makes must be conditioned on
//! still holding the current token — [`Lease::guard`] renders that condition.

use std::time::Duration;

use crate::db::{Db, DbError, Migration, Row};

/// The table, for owners to include in their migrations.
pub const MIGRATION: Migration = Migration {
    version: 1_000,
    name: "platform_leases",
    postgres: "CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY, fence_token BIGINT NOT NULL, owner_token TEXT NOT NULL, leased_until BIGINT NOT NULL)",
    sqlite: "CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY, fence_token INTEGER NOT NULL, owner_token TEXT NOT NULL, leased_until INTEGER NOT NULL)",
};

/// A held lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub name: String,
    pub owner: String,
    pub fence_token: i64,
}

impl Lease {
    /// `EXISTS (...)` that holds only while this lease is current; binds three parameters
    /// starting at `$first` (name, owner, token — see [`Lease::guard_params`]).
    pub fn guard(first: usize) -> String {
        format!(
            "EXISTS (SELECT 1 FROM leases WHERE name = ${} AND owner_token = ${} AND fence_token = ${} AND leased_until > {{now}})",
            first,
            first + 1,
            first + 2
        )
    }

    /// The values for [`Lease::guard`], in order.
    pub fn guard_params(&self) -> (String, String, i64) {
        (self.name.clone(), self.owner.clone(), self.fence_token)
    }
}

/// Lease operations on one owner's database.
#[derive(Debug, Clone)]
pub struct Leases {
    db: Db,
}

fn ttl_ms(ttl: Duration) -> i64 {
    ttl.as_millis().min(i64::MAX as u128) as i64
}

impl Leases {
    pub fn new(db: Db) -> Self {
        Self { db }
    }

    /// Takes `name` for `owner`: a new lease, a takeover of an expired one (token + 1), or a
    /// renewal of the caller's own. `None` while someone else holds it.
    pub async fn acquire(
        &self,
        name: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>, DbError> {
        let pool = self.db.pool();
        let inserted = self
            .db
            .query("INSERT INTO leases (name, fence_token, owner_token, leased_until) VALUES ($1, 1, $2, {now} + $3) ON CONFLICT (name) DO NOTHING")
            .bind(name.to_string())
            .bind(owner.to_string())
            .bind(ttl_ms(ttl))
            .execute(pool)
            .await?
            .rows_affected();
        if inserted == 1 {
            return Ok(Some(Lease {
                name: name.into(),
                owner: owner.into(),
                fence_token: 1,
            }));
        }
        let row = self
            .db
            .query(
                "UPDATE leases SET fence_token = CASE WHEN owner_token = $2 AND leased_until > {now} THEN fence_token ELSE fence_token + 1 END, \
                 owner_token = $2, leased_until = {now} + $3 \
                 WHERE name = $1 AND (leased_until <= {now} OR owner_token = $2) RETURNING fence_token",
            )
            .bind(name.to_string())
            .bind(owner.to_string())
            .bind(ttl_ms(ttl))
            .fetch_optional(pool)
            .await?;
        Ok(match row {
            Some(row) => Some(Lease {
                name: name.into(),
                owner: owner.into(),
                fence_token: row.try_get(0)?,
            }),
            None => None,
        })
    }

    /// Takes `name` for `owner` whoever holds it, with a new token (held or not). Only for a
    /// caller that knows every earlier holder is dead: the embedded shape's process at start,
    /// which holds its data directory's lock, so no other process of it can be running.
    pub async fn take_over(
        &self,
        name: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<Lease, DbError> {
        let row = self
            .db
            .query(
                "INSERT INTO leases (name, fence_token, owner_token, leased_until) VALUES ($1, 1, $2, {now} + $3) \
                 ON CONFLICT (name) DO UPDATE SET fence_token = leases.fence_token + 1, \
                 owner_token = excluded.owner_token, leased_until = excluded.leased_until \
                 RETURNING fence_token",
            )
            .bind(name.to_string())
            .bind(owner.to_string())
            .bind(ttl_ms(ttl))
            .fetch_one(self.db.pool())
            .await?;
        Ok(Lease {
            name: name.into(),
            owner: owner.into(),
            fence_token: row.try_get(0)?,
        })
    }

    /// Extends a held lease; `false` when it was lost (expired and taken over).
    pub async fn renew(&self, lease: &Lease, ttl: Duration) -> Result<bool, DbError> {
        let done = self
            .db
            .query("UPDATE leases SET leased_until = {now} + $4 WHERE name = $1 AND owner_token = $2 AND fence_token = $3 AND leased_until > {now}")
            .bind(lease.name.clone())
            .bind(lease.owner.clone())
            .bind(lease.fence_token)
            .bind(ttl_ms(ttl))
            .execute(self.db.pool())
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Gives a lease up early (the row stays, so tokens keep increasing).
    pub async fn release(&self, lease: &Lease) -> Result<bool, DbError> {
        let done = self
            .db
            .query("UPDATE leases SET leased_until = 0 WHERE name = $1 AND owner_token = $2 AND fence_token = $3")
            .bind(lease.name.clone())
            .bind(lease.owner.clone())
            .bind(lease.fence_token)
            .execute(self.db.pool())
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Every lease: (name, fence token, owner, leased until) — for dashboards and checks.
    pub async fn list(&self) -> Result<Vec<(String, i64, String, i64)>, DbError> {
        let rows = self
            .db
            .query("SELECT name, fence_token, owner_token, leased_until FROM leases ORDER BY name")
            .fetch_all(self.db.pool())
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?, r.try_get(3)?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn leases() -> (tempfile::TempDir, Leases) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::sqlite_owner(dir.path(), "leases").await.unwrap();
        db.migrate(&[MIGRATION]).await.unwrap();
        (dir, Leases::new(db))
    }

    #[tokio::test]
    async fn one_holder_at_a_time_and_tokens_only_increase() {
        let (_dir, leases) = leases().await;
        let long = Duration::from_secs(60);
        let a = leases.acquire("reaper", "a", long).await.unwrap().unwrap();
        assert_eq!(a.fence_token, 1);
        assert_eq!(leases.acquire("reaper", "b", long).await.unwrap(), None);
        // Re-acquiring your own lease renews it without a new token.
        assert_eq!(
            leases
                .acquire("reaper", "a", long)
                .await
                .unwrap()
                .unwrap()
                .fence_token,
            1
        );
        assert!(leases.renew(&a, long).await.unwrap());
        assert!(leases.release(&a).await.unwrap());
        let b = leases.acquire("reaper", "b", long).await.unwrap().unwrap();
        assert_eq!(b.fence_token, 2);
        assert!(!leases.renew(&a, long).await.unwrap(), "a lost it");
        assert!(!leases.release(&a).await.unwrap());
    }

    #[tokio::test]
    async fn a_take_over_fences_out_a_live_holder() {
        let (_dir, leases) = leases().await;
        let long = Duration::from_secs(60);
        let fresh = leases.take_over("reaper", "b", long).await.unwrap();
        assert_eq!(fresh.fence_token, 1);
        let a = leases.acquire("reaper", "a", long).await.unwrap();
        assert_eq!(a, None, "b holds it");
        let c = leases.take_over("reaper", "c", long).await.unwrap();
        assert_eq!(c.fence_token, 2);
        assert!(
            !leases.renew(&fresh, long).await.unwrap(),
            "b was fenced out"
        );
        assert!(leases.renew(&c, long).await.unwrap());
        assert_eq!(
            leases
                .acquire("reaper", "c", long)
                .await
                .unwrap()
                .unwrap()
                .fence_token,
            2,
            "the new holder renews without a new token"
        );
    }

    #[tokio::test]
    async fn an_expired_lease_is_taken_over_with_a_new_token() {
        let (_dir, leases) = leases().await;
        let a = leases
            .acquire("sweeper", "a", Duration::from_millis(1))
            .await
            .unwrap()
            .unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        let b = leases
            .acquire("sweeper", "b", Duration::from_secs(60))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(b.fence_token, a.fence_token + 1);
        assert!(!leases.renew(&a, Duration::from_secs(60)).await.unwrap());
        // The guard holds for the current holder only.
        let db = &leases.db;
        let check = |lease: Lease| async move {
            let sql = format!("SELECT CASE WHEN {} THEN 1 ELSE 0 END", Lease::guard(1));
            let (name, owner, token) = lease.guard_params();
            let row = db
                .query(&sql)
                .bind(name)
                .bind(owner)
                .bind(token)
                .fetch_one(db.pool())
                .await
                .unwrap();
            row.try_get::<i64, _>(0).unwrap() == 1
        };
        assert!(check(b).await);
        assert!(!check(a).await);
    }
}
