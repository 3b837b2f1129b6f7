//! Saved profiles in the `profiles` table: [`ferry_store::ProfileStore`] for both databases,
//! written once like the task reads (the same SQL text; `$1` placeholders).
//!
//! Profile writes are rare and single-row, so they do not go through the task writer's
//! batches: each is one statement on the read pool, atomic by itself. The version check is in
//! the statement (`INSERT … ON CONFLICT DO NOTHING` for a new profile, `UPDATE … WHERE
//! version = $n` for a change), so two replicas saving one profile at once never both win.

use crate::error::describe;
use crate::store::{Dialect, SqlStore, stored};
use ferry_store::{Profile, ProfileOwner, StoreError};
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
        let decode = |e: sqlx::Error| self.unavailable(describe(&e, self.acquire_timeout));
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
    ) -> Result<u64, StoreError> {
        let values = serde_json::to_string(&profile.values).map_err(|e| {
            StoreError::Unavailable(format!("cannot serialize profile {:?}: {e}", profile.name))
        })?;
        let version = expected_version.saturating_add(1);
        let sql = if expected_version == 0 {
            "INSERT INTO profiles (tenant, caller, name, form_values, cards, version, updated_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (tenant, caller, name) DO NOTHING"
        } else {
            "UPDATE profiles SET form_values = $4, cards = $5, version = $6, updated_ms = $7 \
             WHERE tenant = $1 AND caller = $2 AND name = $3 AND version = $8"
        };
        let mut query = sqlx::query::<DB>(sql)
            .bind(owner.tenant.as_str())
            .bind(owner.caller.as_str())
            .bind(profile.name.as_str())
            .bind(values.as_str())
            .bind(profile.cards)
            .bind(stored(version))
            .bind(stored(profile.updated_ms));
        if expected_version != 0 {
            query = query.bind(stored(expected_version));
        }
        let mut conn = self.connection(&self.reads).await?;
        let result = tokio::time::timeout(self.statement_timeout, query.execute(&mut *conn)).await;
        let done = self.finish(conn, result)?;
        if DB::rows_affected(&done) == 1 {
            Ok(version)
        } else {
            Err(StoreError::Changed(profile.name.clone()))
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
        let mut conn = self.connection(&self.reads).await?;
        let result =
            tokio::time::timeout(self.statement_timeout, query.fetch_all(&mut *conn)).await;
        let rows = self.finish(conn, result)?;
        rows.iter().map(|row| self.profile_of(row)).collect()
    }

    pub(crate) async fn delete_profile(
        &self,
        owner: &ProfileOwner,
        name: &str,
    ) -> Result<bool, StoreError> {
        let mut conn = self.connection(&self.reads).await?;
        let result = tokio::time::timeout(
            self.statement_timeout,
            sqlx::query::<DB>(
                "DELETE FROM profiles WHERE tenant = $1 AND caller = $2 AND name = $3",
            )
            .bind(owner.tenant.as_str())
            .bind(owner.caller.as_str())
            .bind(name)
            .execute(&mut *conn),
        )
        .await;
        let done = self.finish(conn, result)?;
        Ok(DB::rows_affected(&done) > 0)
    }
}

/// The `ProfileStore` of a database's store type, delegating to its `inner: SqlStore<DB>`.
macro_rules! delegate_profile_store {
    ($store:ty) => {
        impl ferry_store::ProfileStore for $store {
            fn save_profile(
                &self,
                owner: &ferry_store::ProfileOwner,
                profile: ferry_store::Profile,
                expected_version: u64,
            ) -> StoreFuture<'_, u64> {
                let owner = owner.clone();
                Box::pin(async move {
                    self.inner
                        .save_profile(&owner, &profile, expected_version)
                        .await
                })
            }

            fn get_profile(
                &self,
                owner: &ferry_store::ProfileOwner,
                name: &str,
            ) -> StoreFuture<'_, Option<ferry_store::Profile>> {
                let (owner, name) = (owner.clone(), name.to_owned());
                Box::pin(async move { self.inner.get_profile(&owner, &name).await })
            }

            fn list_profiles(
                &self,
                owner: &ferry_store::ProfileOwner,
            ) -> StoreFuture<'_, Vec<ferry_store::Profile>> {
                let owner = owner.clone();
                Box::pin(async move { self.inner.list_profiles(&owner).await })
            }

            fn delete_profile(
                &self,
                owner: &ferry_store::ProfileOwner,
                name: &str,
            ) -> StoreFuture<'_, bool> {
                let (owner, name) = (owner.clone(), name.to_owned());
                Box::pin(async move { self.inner.delete_profile(&owner, &name).await })
            }
        }
    };
}
pub(crate) use delegate_profile_store;
