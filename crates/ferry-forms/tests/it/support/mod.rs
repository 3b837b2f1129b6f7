//! Helpers shared by the forms tests.

pub(crate) mod agent;
pub(crate) mod leak_matrix;
pub(crate) mod site;

use std::time::Duration;

/// Whether Chromium is here; a loud skip outside CI, a failure under `CI=true`.
pub(crate) use ferry_testkit::chromium_or_skip;

/// An upper bound for every test, so a hung browser fails the test instead of the suite.
pub(crate) const TEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `body` under [`TEST_TIMEOUT`].
pub(crate) async fn bounded<F: std::future::Future<Output = ()>>(body: F) {
    tokio::time::timeout(TEST_TIMEOUT, body)
        .await
        .expect("test exceeded its time limit");
}
