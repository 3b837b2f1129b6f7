//! Saved profiles in the `profiles` table: [`ferry_store::profiles::ProfileStore`] for both databases,
//! written once like the task reads (the same SQL text; `$1` placeholders).
//!
//! Profile writes are rare and single-row, so they do not go through the task writer's
//! batches: each runs on the read pool by itself. The version check is in the statement
//! (`INSERT … ON CONFLICT DO NOTHING` for a new profile, `UPDATE … WHERE version = $n` for a
//! change), so two replicas saving one profile at once never both win. A creation also counts
//! the owner's profiles, in a transaction that holds the owner's lock
//! ([`Dialect::LOCK_PROFILE_OWNER`]), so creations at once never pass the owner's limit.

use crate::dialect::Dialect;
use crate::store::{SqlStore, stored};
use ferry_store::StoreError;
use ferry_store::profiles::{Profile, ProfileOwner};
use sqlx::Connection;
use sqlx::{ColumnIndex, Decode, Encode, Executor, IntoArguments, Row, Type};
use std::collections::BTreeMap;

/// The columns a profile is read from, in this order.
const COLUMNS: &str = "name, form_values, cards, version, updated_ms";

impl<DB> SqlStore<DB>
where
    DB: Dialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> bool: Encode<'q, DB> + Type<DB>,
    for<'r> i64: Decode<'r, DB>,
    for<'r> Option<i64>: Decode<'r, DB>,
    for<'r> &'r str: Decode<'r, DB>,
    for<'r> bool: Decode<'r, DB>,
    usize: ColumnIndex<DB::Row>,
{
    fn profile_of(&self, row: &DB::Row) -> Result<Profile, StoreError> {
        let decode = |e: sqlx::Error| self.failed(&e);
        let name: &str = row.try_get(0).map_err(decode)?;
        let values: &str = row.try_get(1).map_err(decode)?;
        let cards: bool = row.try_get(2).map_err(decode)?;
        let version: i64 = row.try_get(3).map_err(decode)?;
        let updated_ms: i64 = row.try_get(4).map_err(decode)?;
        let values: BTreeMap<String, String> = serde_json::from_str(values).map_err(|e| {
            self.unavailable(format!("the stored profile {name:?} does not parse: {e}"))
        })?;
        Ok(Profile {
            name: name.to_owned(),
            values,
            cards,
            version: u64::try_from(version).unwrap_or(0),
            updated_ms: u64::try_from(updated_ms).unwrap_or(0),
        })
    }

    pub(crate) async fn save_profile(
        &self,
        owner: &ProfileOwner,
        profile: &Profile,
        expected_version: u64,
        max_profiles: usize,
    ) -> Result<u64, StoreError> {
        let values = serde_json::to_string(&profile.values).map_err(|e| {
            StoreError::Unavailable(format!("cannot serialize profile {:?}: {e}", profile.name))
        })?;
        let row = ProfileRow {
            owner,
            profile,
            values: &values,
            version: expected_version.saturating_add(1),
        };
        let saved = self
            .on_reads_writing(async |conn| {
                if expected_version == 0 {
                    create_within_limit::<DB>(conn, &row, max_profiles).await
                } else {
                    update_at_version::<DB>(conn, &row, expected_version).await
                }
            })
            .await?;
        match saved {
            Saved::Yes => Ok(row.version),
            Saved::Stale => Err(StoreError::Changed(profile.name.clone())),
            Saved::OverLimit => Err(StoreError::ProfileLimit {
                limit: max_profiles,
            }),
        }
    }

    pub(crate) async fn get_profile(
        &self,
        owner: &ProfileOwner,
        name: &str,
    ) -> Result<Option<Profile>, StoreError> {
        Ok(self.select_profiles(owner, Some(name)).await?.pop())
    }

    pub(crate) async fn list_profiles(
        &self,
        owner: &ProfileOwner,
    ) -> Result<Vec<Profile>, StoreError> {
        self.select_profiles(owner, None).await
    }

    /// The profiles of `owner` (only `name`, when given), by name.
    async fn select_profiles(
        &self,
        owner: &ProfileOwner,
        name: Option<&str>,
    ) -> Result<Vec<Profile>, StoreError> {
        let only = if name.is_some() { " AND name = $3" } else { "" };
        let sql = format!(
            "SELECT {COLUMNS} FROM profiles WHERE tenant = $1 AND caller = $2{only} ORDER BY name"
        );
        let mut query = sqlx::query::<DB>(&sql)
            .bind(owner.tenant.as_str())
            .bind(owner.caller.as_str());
        if let Some(name) = name {
            query = query.bind(name);
        }
        let rows = self
            .on_reads(async |conn| query.fetch_all(conn).await)
            .await?;
        rows.iter().map(|row| self.profile_of(row)).collect()
    }

    pub(crate) async fn delete_profile(
        &self,
        owner: &ProfileOwner,
        name: &str,
    ) -> Result<bool, StoreError> {
        let query = sqlx::query::<DB>(
            "DELETE FROM profiles WHERE tenant = $1 AND caller = $2 AND name = $3",
        )
        .bind(owner.tenant.as_str())
        .bind(owner.caller.as_str())
        .bind(name);
        let done = self
            .on_reads_writing(async |conn| query.execute(conn).await)
            .await?;
        Ok(DB::rows_affected(&done) > 0)
    }
}

/// A profile as it is written.
struct ProfileRow<'a> {
    owner: &'a ProfileOwner,
    profile: &'a Profile,
    /// The values, as JSON.
    values: &'a str,
    /// The version it is written at.
    version: u64,
}

/// What a save did.
enum Saved {
    Yes,
    /// The stored profile is not at the writer's version (or exists, for a creation).
    Stale,
    /// A creation, refused: the owner has the most profiles already.
    OverLimit,
}

/// Creates the profile `row` if it does not exist and its owner has fewer than
/// `max_profiles`: in one transaction, the owner's lock (where the database needs one),
/// then the count and the insert in one statement.
async fn create_within_limit<DB>(
    conn: &mut DB::Connection,
    row: &ProfileRow<'_>,
    max_profiles: usize,
) -> Result<Saved, sqlx::Error>
where
    DB: Dialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> bool: Encode<'q, DB> + Type<DB>,
    for<'r> i64: Decode<'r, DB>,
    usize: ColumnIndex<DB::Row>,
{
    let (tenant, caller) = (row.owner.tenant.as_str(), row.owner.caller.as_str());
    let mut tx = conn.begin_with(DB::BEGIN_WRITE).await?;
    if let Some(lock) = DB::LOCK_PROFILE_OWNER {
        sqlx::query::<DB>(lock)
            .bind(tenant)
            .bind(caller)
            .execute(&mut *tx)
            .await?;
    }
    let done = sqlx::query::<DB>(
        "INSERT INTO profiles (tenant, caller, name, form_values, cards, version, updated_ms) \
         SELECT $1, $2, $3, $4, $5, $6, $7 \
         WHERE (SELECT count(*) FROM profiles WHERE tenant = $1 AND caller = $2) < $8 \
         ON CONFLICT (tenant, caller, name) DO NOTHING",
    )
    .bind(tenant)
    .bind(caller)
    .bind(row.profile.name.as_str())
    .bind(row.values)
    .bind(row.profile.cards)
    .bind(stored(row.version))
    .bind(stored(row.profile.updated_ms))
    .bind(i64::try_from(max_profiles).unwrap_or(i64::MAX))
    .execute(&mut *tx)
    .await?;
    let saved = if DB::rows_affected(&done) == 1 {
        Saved::Yes
    } else {
        // Not inserted: the name is taken, else the owner is at the limit.
        let taken: i64 = sqlx::query_scalar::<DB, i64>(
            "SELECT count(*) FROM profiles WHERE tenant = $1 AND caller = $2 AND name = $3",
        )
        .bind(tenant)
        .bind(caller)
        .bind(row.profile.name.as_str())
        .fetch_one(&mut *tx)
        .await?;
        if taken > 0 {
            Saved::Stale
        } else {
            Saved::OverLimit
        }
    };
    tx.commit().await?;
    Ok(saved)
}

/// Replaces the profile `row` if it is still at `expected_version`: one statement.
async fn update_at_version<DB>(
    conn: &mut DB::Connection,
    row: &ProfileRow<'_>,
    expected_version: u64,
) -> Result<Saved, sqlx::Error>
where
    DB: Dialect,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> bool: Encode<'q, DB> + Type<DB>,
{
    let done = sqlx::query::<DB>(
        "UPDATE profiles SET form_values = $4, cards = $5, version = $6, updated_ms = $7 \
         WHERE tenant = $1 AND caller = $2 AND name = $3 AND version = $8",
    )
    .bind(row.owner.tenant.as_str())
    .bind(row.owner.caller.as_str())
    .bind(row.profile.name.as_str())
    .bind(row.values)
    .bind(row.profile.cards)
    .bind(stored(row.version))
    .bind(stored(row.profile.updated_ms))
    .bind(stored(expected_version))
    .execute(conn)
    .await?;
    Ok(if DB::rows_affected(&done) == 1 {
        Saved::Yes
    } else {
        Saved::Stale
    })
}

/// The `ProfileStore` of a database's store type, delegating to its `inner: SqlStore<DB>`.
macro_rules! delegate_profile_store {
    ($store:ty) => {
        impl ferry_store::profiles::ProfileStore for $store {
            fn save_profile(
                &self,
                owner: &ferry_store::profiles::ProfileOwner,
                profile: ferry_store::profiles::Profile,
                expected_version: u64,
                max_profiles: usize,
            ) -> StoreFuture<'_, u64> {
                let owner = owner.clone();
                Box::pin(async move {
                    self.inner
                        .save_profile(&owner, &profile, expected_version, max_profiles)
                        .await
                })
            }

            fn get_profile(
                &self,
                owner: &ferry_store::profiles::ProfileOwner,
                name: &str,
            ) -> StoreFuture<'_, Option<ferry_store::profiles::Profile>> {
                let (owner, name) = (owner.clone(), name.to_owned());
                Box::pin(async move { self.inner.get_profile(&owner, &name).await })
            }

            fn list_profiles(
                &self,
                owner: &ferry_store::profiles::ProfileOwner,
            ) -> StoreFuture<'_, Vec<ferry_store::profiles::Profile>> {
                let owner = owner.clone();
                Box::pin(async move { self.inner.list_profiles(&owner).await })
            }

            fn delete_profile(
                &self,
                owner: &ferry_store::profiles::ProfileOwner,
                name: &str,
            ) -> StoreFuture<'_, bool> {
                let (owner, name) = (owner.clone(), name.to_owned());
                Box::pin(async move { self.inner.delete_profile(&owner, &name).await })
            }
        }
    };
}
pub(crate) use delegate_profile_store;
