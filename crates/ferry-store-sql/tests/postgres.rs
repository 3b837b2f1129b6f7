//! The PostgreSQL store against a real server: the conformance suite, restarts, group commit,
//! failures, concurrent opens and an unreachable server.
//!
//! The server is `postgres://postgres@127.0.0.1:5432/test` unless `FERRY_TEST_POSTGRES` names
//! another URL. Each test works in a schema of its own (chosen with the URL's
//! `options=-csearch_path%3D…`), dropped at its end, so tests run in parallel and leave
//! nothing behind. When the server cannot be reached the tests say so loudly and pass, except
//! under `CI=true`, where that is a failure.

mod scenarios;

use ferry_store::{TaskKey, TaskStore, conformance};
use ferry_store_sql::{OpenError, PostgresStore, StoreOptions, open};
use futures_util::FutureExt;
use sqlx::{Connection, Executor, PgConnection};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const DEFAULT_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

fn base_url() -> String {
    std::env::var("FERRY_TEST_POSTGRES").unwrap_or_else(|_| DEFAULT_URL.to_owned())
}

/// A schema of one test's own, and the URL that selects it.
struct TestSchema {
    admin: PgConnection,
    name: String,
    url: String,
}

impl TestSchema {
    /// A new, empty schema; `None` (after a loud note) when PostgreSQL cannot be reached
    /// outside CI. Under `CI=true` an unreachable server fails the test.
    async fn create() -> Option<TestSchema> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let base = base_url();
        let shown = match url::Url::parse(&base) {
            Ok(mut u) if u.password().is_some() => {
                let _ = u.set_password(Some("***"));
                u.to_string()
            }
            Ok(u) => u.to_string(),
            Err(_) => "(FERRY_TEST_POSTGRES, not a URL)".to_owned(),
        };
        let connected =
            tokio::time::timeout(Duration::from_secs(5), PgConnection::connect(&base)).await;
        let mut admin = match connected {
            Ok(Ok(conn)) => conn,
            failed => {
                let why = match failed {
                    Ok(Err(e)) => e.to_string(),
                    _ => "no answer within 5 s".to_owned(),
                };
                if std::env::var("CI").as_deref() == Ok("true") {
                    panic!("PostgreSQL is unreachable at {shown} under CI=true: {why}");
                }
                eprintln!(
                    "SKIPPED: PostgreSQL is unreachable at {shown} ({why}); these tests need it \
                     (set FERRY_TEST_POSTGRES to another server; under CI=true this fails)"
                );
                return None;
            }
        };
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "ferry_test_{}_{}_{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        admin
            .execute(format!("CREATE SCHEMA {name}").as_str())
            .await
            .expect("create the test schema");
        let mut url = url::Url::parse(&base).expect("FERRY_TEST_POSTGRES is a URL");
        url.query_pairs_mut()
            .append_pair("options", &format!("-csearch_path={name}"));
        Some(TestSchema {
            admin,
            name,
            url: url.to_string(),
        })
    }

    /// Runs `test`, drops the schema whatever happened, then passes a panic on.
    async fn run<F: Future<Output = ()>>(mut self, test: F) {
        let outcome = AssertUnwindSafe(test).catch_unwind().await;
        self.admin
            .execute(format!("DROP SCHEMA {} CASCADE", self.name).as_str())
            .await
            .expect("drop the test schema");
        let _ = self.admin.close().await;
        if let Err(panic) = outcome {
            std::panic::resume_unwind(panic);
        }
    }
}

async fn open_store(url: &str) -> PostgresStore {
    PostgresStore::open(url, &StoreOptions::default())
        .await
        .expect("open the postgresql store")
}

#[tokio::test]
async fn the_postgresql_store_passes_the_conformance_suite() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let url = schema.url.clone();
    schema
        .run(async {
            conformance::run_all(&open_store(&url).await).await;
        })
        .await;
}

#[tokio::test]
async fn postgresql_push_configs_pass_the_push_checks_across_two_replicas() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let url = schema.url.clone();
    schema
        .run(async {
            conformance::run_push_checks(&open_store(&url).await).await;
            // A second process on the same schema sees them, and shares the limit.
            let other = open_store(&url).await;
            let key = ferry_store::TaskKey::new("c-push-race", "t-1");
            let kept = ferry_store::push::PushConfigStore::list_push_configs(&other, &key)
                .await
                .expect("list");
            assert_eq!(kept.len(), 3, "{kept:?}");
            let refused = ferry_store::push::PushConfigStore::put_push_config(
                &other,
                &key,
                conformance::push_config("late", "https://x", 99),
                3,
            )
            .await;
            assert_eq!(
                refused,
                Err(ferry_store::StoreError::PushConfigLimit { limit: 3 })
            );
        })
        .await;
}

#[tokio::test]
async fn the_postgresql_outbox_passes_the_outbox_checks_and_two_replicas_never_claim_a_row_twice() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let url = schema.url.clone();
    schema
        .run(async {
            let one = open_store(&url).await;
            conformance::run_outbox_checks(&one).await;
            let two = open_store(&url).await;
            conformance::two_claimers_share_the_outbox(&one, &two).await;
        })
        .await;
}

#[tokio::test]
async fn postgresql_profiles_pass_the_profile_checks_across_two_replicas() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let url = schema.url.clone();
    schema
        .run(async {
            conformance::run_profile_checks(&open_store(&url).await).await;
            // A second process on the same schema sees them, and its stale write is refused.
            let other = open_store(&url).await;
            let owner = ferry_store::profiles::ProfileOwner::new("p-read", "alice");
            let kept = ferry_store::profiles::ProfileStore::get_profile(&other, &owner, "home")
                .await
                .expect("get")
                .expect("shared");
            assert_eq!(kept.version, 2);
            let stale =
                ferry_store::profiles::ProfileStore::save_profile(&other, &owner, kept, 1, 8).await;
            assert_eq!(stale, Err(ferry_store::StoreError::Changed("home".into())));
            // Two processes creating one owner's profiles at once: the limit holds across
            // them (the owner's lock is the database's, not a process's).
            let first = open_store(&url).await;
            let owner = ferry_store::profiles::ProfileOwner::new("p-replicas", "alice");
            let creates = (0..12).map(|n| {
                let store = if n % 2 == 0 { &first } else { &other };
                let owner = owner.clone();
                let profile = ferry_store::profiles::Profile {
                    name: format!("p{n:02}"),
                    ..ferry_store::profiles::Profile::default()
                };
                async move {
                    ferry_store::profiles::ProfileStore::save_profile(store, &owner, profile, 0, 4)
                        .await
                }
            });
            let outcomes = futures_util::future::join_all(creates).await;
            let saved = outcomes.iter().filter(|o| o.is_ok()).count();
            assert_eq!(saved, 4, "{outcomes:?}");
            let listed = ferry_store::profiles::ProfileStore::list_profiles(&first, &owner)
                .await
                .expect("list");
            assert_eq!(listed.len(), 4, "{listed:?}");
        })
        .await;
}

#[tokio::test]
async fn tasks_and_events_survive_a_reopen_of_the_schema() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let url = schema.url.clone();
    schema
        .run(async {
            let store = open_store(&url).await;
            conformance::run_restart_checks(&store, || async {
                Box::new(open_store(&url).await) as Box<dyn TaskStore>
            })
            .await;
        })
        .await;
}

#[tokio::test]
async fn an_event_is_serialized_once_and_read_back_as_kept() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let url = schema.url.clone();
    schema
        .run(async {
            scenarios::an_event_is_serialized_once_and_read_back_as_kept(&open_store(&url).await)
                .await;
        })
        .await;
}

#[tokio::test]
async fn a_burst_of_appends_lands_with_consecutive_numbers() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let url = schema.url.clone();
    schema
        .run(async {
            scenarios::a_burst_of_appends_lands_with_consecutive_numbers(&open_store(&url).await)
                .await;
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_writers_on_several_threads_all_land() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let url = schema.url.clone();
    schema
        .run(async {
            scenarios::racing_writers_all_land(Arc::new(open_store(&url).await)).await;
        })
        .await;
}

#[tokio::test]
async fn a_failed_batch_writes_nothing_and_the_writer_goes_on() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let url = schema.url.clone();
    let name = schema.name.clone();
    schema
        .run(async {
            let store = open_store(&url).await;
            let rename = |from: &'static str, to: &'static str| {
                let sql = format!("ALTER TABLE {name}.{from} RENAME TO {to}");
                async move {
                    let mut side = PgConnection::connect(&base_url()).await.expect("connect");
                    side.execute(sql.as_str()).await.expect("rename");
                    let _ = side.close().await;
                }
            };
            scenarios::a_failed_batch_writes_nothing_and_the_writer_goes_on(
                &store,
                rename("events", "events_away"),
                rename("events_away", "events"),
            )
            .await;
        })
        .await;
}

#[tokio::test]
async fn stores_opening_a_new_schema_at_once_migrate_it_once() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let url = schema.url.clone();
    schema
        .run(async {
            let options = StoreOptions::default();
            let opens = (0..4).map(|_| PostgresStore::open(&url, &options));
            let stores = futures_util::future::join_all(opens).await;
            for store in &stores {
                assert!(store.is_ok(), "every open succeeds: {store:?}");
            }
            // The `postgresql://` spelling opens the same schema.
            let alias = url.replacen("postgres://", "postgresql://", 1);
            let again = open(&alias).await.expect("open by postgresql://");
            let t = conformance::task("", "t-1", "ctx", ferry_proto::TaskState::Working, 10);
            again.create(t.clone()).await.expect("create");
            let first = stores
                .into_iter()
                .next()
                .and_then(Result::ok)
                .expect("a store");
            assert_eq!(
                first.get(&t.key()).await,
                Ok(Some(t)),
                "one schema, one set of tables"
            );
        })
        .await;
}

#[tokio::test]
async fn an_unreachable_server_is_a_prompt_clear_error_without_the_password() {
    // Nothing listens on port 1: the connection is refused at once. This needs no server.
    let url = "postgres://ferry:s3cret-Passw0rd@127.0.0.1:1/test";
    let refused = PostgresStore::open(url, &StoreOptions::default()).await;
    let Err(error @ OpenError::Connect { .. }) = &refused else {
        panic!("expected OpenError::Connect, got {refused:?}");
    };
    let message = error.to_string();
    eprintln!("{message}");
    assert!(
        !message.contains("s3cret-Passw0rd"),
        "no password: {message}"
    );
    assert!(
        message.starts_with(
            "cannot connect to the postgresql task store at postgres://ferry:***@127.0.0.1:1/test: "
        ),
        "names the server: {message}"
    );
    assert!(message.contains("refused"), "says why: {message}");
    let by_url = open("postgresql://ferry:s3cret-Passw0rd@127.0.0.1:1/test").await;
    assert!(
        matches!(&by_url, Err(OpenError::Connect { url, .. }) if !url.contains("s3cret")),
        "{by_url:?}"
    );
}

#[tokio::test]
async fn a_create_racing_another_process_is_exists_and_the_writer_goes_on() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let url = schema.url.clone();
    let app = format!("{}_racer", schema.name);
    schema
        .run(async {
            let store = open_store(&format!("{url}&application_name={app}")).await;
            let t = conformance::task("", "t-1", "ctx", ferry_proto::TaskState::Working, 10);
            // Another process inserts the same task and commits only once this store's
            // writer waits for it: the writer's plan (no such task) is stale by then.
            let mut other = PgConnection::connect(&url).await.expect("connect");
            other.execute("BEGIN").await.expect("begin");
            sqlx::query(
                "INSERT INTO tasks (tenant, id, context_id, state, seq, status_ms, snapshot) \
                 VALUES ('', 't-1', 'ctx', 'TASK_STATE_WORKING', 0, 10, $1)",
            )
            .bind(serde_json::to_string(&*t.task).expect("json"))
            .execute(&mut other)
            .await
            .expect("insert");
            let mut watcher = PgConnection::connect(&url).await.expect("connect");
            let commit_once_waited_for = async {
                let mut waiting = 0i64;
                for _ in 0..100_000 {
                    waiting = sqlx::query_scalar(
                        "SELECT count(*) FROM pg_stat_activity \
                         WHERE application_name = $1 AND wait_event_type = 'Lock'",
                    )
                    .bind(&app)
                    .fetch_one(&mut watcher)
                    .await
                    .expect("pg_stat_activity");
                    if waiting > 0 {
                        break;
                    }
                }
                assert!(waiting > 0, "the writer never waited for the other insert");
                other.execute("COMMIT").await.expect("commit");
            };
            // A task of its own in the same batch: the batch's first statement, written
            // without locks, fails whole, and the batch is written again under them.
            let own = conformance::task("", "t-2", "ctx", ferry_proto::TaskState::Working, 10);
            let both = async {
                let racing = store.queue_create(t.clone()).await.expect("queued");
                let alone = store.queue_create(own.clone()).await.expect("queued");
                (racing.await, alone.await)
            };
            let ((created, created_own), ()) =
                futures_util::future::join(both, commit_once_waited_for).await;
            assert_eq!(created, Err(ferry_store::StoreError::Exists("t-1".into())));
            assert_eq!(
                created_own,
                Ok(()),
                "the other task of the batch is written once"
            );
            assert_eq!(store.get(&own.key()).await, Ok(Some(own)));
            let next = conformance::with_state(&t, ferry_proto::TaskState::Completed);
            assert_eq!(
                store
                    .append(&t.key(), 0, conformance::event(&next), next)
                    .await,
                Ok(1),
                "the writer goes on, on the other process's task"
            );
        })
        .await;
}

/// Two replicas (two stores on one schema): a creation's lease fences the other replica's
/// takeover until it runs out; a takeover makes a new epoch, which refuses the old holder's
/// writes (counted) and takes the other's; given back, the task can be leased again; a
/// renewal reaches only live leases; and every append is heard by the other replica, never by
/// the one that wrote it.
#[tokio::test]
async fn leases_fence_a_replica_that_lost_its_task_and_notices_cross_replicas() {
    use ferry_proto::TaskState;
    use ferry_store::replicas::{Notice, ReplicaStore};
    use ferry_store::{Lease, StoreError, StoredTask};
    use futures_util::StreamExt;

    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let url = schema.url.clone();
    schema
        .run(async {
            let (a, b) = (open_store(&url).await, open_store(&url).await);
            assert_ne!(a.replica_id(), b.replica_id());
            let mut heard_by_b = b.notices();
            let mut heard_by_a = a.notices();
            assert_eq!(heard_by_b.next().await, Some(Notice::Missed), "listening");
            assert_eq!(heard_by_a.next().await, Some(Notice::Missed), "listening");

            let held = |store: &PostgresStore, epoch: u64, until_ms: u64| Lease {
                replica: store.replica_id().into(),
                epoch,
                until_ms,
                last: false,
            };
            let mut t = conformance::task("", "leased", "ctx", TaskState::Submitted, 10);
            t.lease = Some(held(&a, 1, 1_000));
            a.create(t.clone()).await.expect("create");
            let key = t.key();
            let on = |t: &StoredTask, lease: Lease| StoredTask {
                lease: Some(lease),
                ..conformance::with_state(t, TaskState::Working)
            };
            let first = on(&t, held(&a, 1, 1_000));
            assert_eq!(
                a.append(&key, 0, conformance::event(&first), first.clone())
                    .await,
                Ok(1)
            );
            let heard = heard_by_b.next().await;
            assert!(
                matches!(&heard, Some(Notice::Wrote { key: k, seq: 1, sent_ms }) if *k == key && *sent_ms > 0),
                "{heard:?}"
            );

            assert_eq!(b.take_lease(&key, 5_000).await, Ok(None), "A holds it");
            assert_eq!(
                b.take_expired(999, 5_000, 10).await,
                Ok(vec![]),
                "not run out yet"
            );
            assert_eq!(a.renew_leases(999, 2_000).await, Ok(1));
            let taken = b.take_expired(2_001, 5_000, 10).await.expect("take over");
            assert_eq!(taken, vec![(key.clone(), held(&b, 2, 5_000))]);
            assert_eq!(
                a.renew_leases(2_001, 9_000).await,
                Ok(0),
                "A's lease is gone"
            );

            let late = on(&first, held(&a, 1, 9_000));
            assert_eq!(
                a.append(&key, 1, conformance::event(&late), late.clone())
                    .await,
                Err(StoreError::Fenced {
                    task: "leased".into(),
                    held: 1,
                    current: 2
                })
            );
            assert_eq!(a.fenced_writes(), 1);
            let ended = on(&first, held(&b, 2, 5_000));
            assert_eq!(
                b.append(&key, 1, conformance::event(&ended), ended.clone())
                    .await,
                Ok(2)
            );
            let heard = heard_by_a.next().await;
            assert!(
                matches!(&heard, Some(Notice::Wrote { key: k, seq: 2, .. }) if *k == key),
                "A hears B's write, and never its own: {heard:?}"
            );

            b.release_lease(&key, 2).await.expect("give back");
            let again = a.take_lease(&key, 7_000).await.expect("take");
            assert_eq!(
                again,
                Some(held(&a, 4, 7_000)),
                "a new epoch after the release"
            );
            // A write that leaves the task waiting for input gives the lease back with it.
            let asking = StoredTask {
                lease: Some(Lease {
                    last: true,
                    ..held(&a, 4, 7_000)
                }),
                ..conformance::with_state(&ended, TaskState::InputRequired)
            };
            assert_eq!(
                a.append(&key, 2, conformance::event(&asking), asking.clone()).await,
                Ok(3)
            );
            assert_eq!(
                b.take_lease(&key, 8_000).await,
                Ok(Some(held(&b, 6, 8_000))),
                "free at once, at the epoch after the give-back"
            );
            assert_eq!(
                b.take_lease(&TaskKey::new("", "missing"), 1).await,
                Err(StoreError::NotFound("missing".into()))
            );
        })
        .await;
}

/// The registry of replicas: a new conversation goes to its first claimer (of two racing,
/// exactly one), stays with a replica while it announces itself, and moves, saying from
/// where, once that replica is silent past the liveness window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_stay_with_a_live_replica_and_move_from_a_silent_one() {
    use ferry_store::replicas::{Claim, ReplicaStore};

    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let url = schema.url.clone();
    schema
        .run(async {
            let (a, b) = (open_store(&url).await, open_store(&url).await);
            a.announce("http://10.0.0.1:8765", 1_000)
                .await
                .expect("announce");
            b.announce("http://10.0.0.2:8765", 1_000)
                .await
                .expect("announce");

            // Racing for a new conversation: one gets it, the other is sent to it.
            let (on_a, on_b) = tokio::join!(a.claim("c-1", 1_000, 0), b.claim("c-1", 1_000, 0));
            let claims = [on_a.expect("claim"), on_b.expect("claim")];
            let here = Claim::Here { moved_from: None };
            assert_eq!(
                claims.iter().filter(|c| **c == here).count(),
                1,
                "{claims:?}"
            );
            let (holder, other) = if claims[0] == here {
                (&a, &b)
            } else {
                (&b, &a)
            };
            let holder_url = if claims[0] == here {
                "http://10.0.0.1:8765"
            } else {
                "http://10.0.0.2:8765"
            };
            let elsewhere = Claim::Elsewhere {
                replica: holder.replica_id().to_owned(),
                url: holder_url.to_owned(),
            };
            assert!(claims.contains(&elsewhere), "{claims:?}");
            // The holder keeps it, and so it stays while the holder announces itself.
            assert_eq!(
                holder.claim("c-1", 2_000, 1_500).await.expect("claim"),
                here
            );
            holder.announce(holder_url, 5_000).await.expect("announce");
            assert_eq!(
                other.claim("c-1", 6_000, 4_000).await.expect("claim"),
                elsewhere
            );

            // Silent since 5 000: past the window, the conversation moves, saying from where.
            let moved = other.claim("c-1", 9_000, 6_000).await.expect("claim");
            assert_eq!(
                moved,
                Claim::Here {
                    moved_from: Some(holder.replica_id().to_owned())
                }
            );
            assert_eq!(other.claim("c-1", 9_001, 6_000).await.expect("claim"), here);
            // A replica that never announced itself holds nothing against a claim.
            let c = open_store(&url).await;
            assert_eq!(c.claim("c-2", 9_000, 6_000).await.expect("claim"), here);
            let taken = other.claim("c-2", 9_000, 6_000).await.expect("claim");
            assert_eq!(
                taken,
                Claim::Here {
                    moved_from: Some(c.replica_id().to_owned())
                }
            );
        })
        .await;
}
