//! The store `--store` names: memory, or a SQL store with its tasks and saved profiles.

use anyhow::Context;

/// The store the setting names (its tasks and its saved profiles); `None` for the memory
/// store (the server's default). A store that cannot be reached is a start-up error that
/// says which, without its password.
pub(crate) async fn open_stores(setting: &str) -> anyhow::Result<Option<ferry_store_sql::Stores>> {
    if setting.is_empty() || setting == "memory" {
        return Ok(None);
    }
    let options = ferry_store_sql::StoreOptions::default();
    let store = ferry_store_sql::open_stores(setting, &options).await.with_context(|| {
        format!(
            "cannot open the task store {} (--store, FERRY_STORE or `store` in the config file)",
            ferry_server::redact_store_url(setting)
        )
    })?;
    tracing::info!(store = %ferry_server::redact_store_url(setting), "task store opened");
    Ok(Some(store))
}
