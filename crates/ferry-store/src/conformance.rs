//! The conformance suite: the behaviour every [`TaskStore`] must have, as plain async
//! functions that panic with the rule they check. A store's own tests call [`run_all`]
//! (or one check at a time) on a fresh, empty store.
//!
//! ```no_run
//! # async fn demo() {
//! let store = ferry_store::MemoryStore::default();
//! ferry_store::conformance::run_all(&store).await;
//! # }
//! ```

use crate::profiles::{Profile, ProfileOwner, ProfileStore};
use crate::push::{
    DeliveryOutcome, DeliveryStatus, FinishedDelivery, PushConfig, PushConfigStore, PushStore,
};
use crate::store::{StoreError, TaskStore};
use crate::types::{Event, ListQuery, Page, StoredTask, TaskKey};
use ferry_proto::{Part, StreamResponse, Task, TaskState, TaskStatus};
use std::sync::Arc;

/// Every check, in order, each on tasks of its own tenant (so one store serves them all).
pub async fn run_all(store: &dyn TaskStore) {
    created_tasks_read_back(store).await;
    events_get_consecutive_sequence_numbers(store).await;
    a_stale_writer_gets_a_conflict(store).await;
    listing_filters_sorts_and_pages(store).await;
    expiry_forgets_only_what_is_due(store).await;
    tenants_never_meet(store).await;
    owners_are_kept_and_filter_listings(store).await;
    unfinished_tasks_are_found_in_every_tenant(store).await;
    concurrent_writers_never_both_win(store).await;
    large_parts_round_trip(store).await;
}

/// Every check that needs a second handle on the same data (a restart): `reopen` opens the
/// store again over what `store` wrote.
pub async fn run_restart_checks<F, Fut>(store: &dyn TaskStore, reopen: F)
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Box<dyn TaskStore>>,
{
    let tenant = "c-restart";
    let mut t = task(tenant, "t-1", "ctx", TaskState::Submitted, 10);
    store.create(t.clone()).await.expect("create");
    for (n, state) in [TaskState::Working, TaskState::InputRequired]
        .into_iter()
        .enumerate()
    {
        t = with_state(&t, state);
        store
            .append(&t.key(), n as u64, event(&t), t.clone())
            .await
            .expect("append");
    }
    let again = reopen().await;
    let got = again.get(&t.key()).await.expect("get").expect("kept");
    assert_eq!(got.seq, 2, "the sequence survives a restart");
    assert_eq!(got.state(), TaskState::InputRequired);
    let seqs: Vec<u64> = again
        .events_after(&t.key(), 0, 10)
        .await
        .expect("events")
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, [1, 2], "and so do the events");
    let next = with_state(&got, TaskState::Completed);
    assert_eq!(
        again.append(&t.key(), 2, event(&next), next).await,
        Ok(3),
        "writing continues where it stopped"
    );
}

/// A task in `tenant`, updated at `status_ms`.
pub fn task(tenant: &str, id: &str, context: &str, state: TaskState, status_ms: u64) -> StoredTask {
    StoredTask {
        tenant: tenant.to_owned(),
        owner: None,
        task: Arc::new(Task::new(id, context, TaskStatus::now(state, None))),
        seq: 0,
        status_ms,
        expires_ms: None,
        lease: None,
    }
}

/// The event that carries `snapshot` whole.
pub fn event(snapshot: &StoredTask) -> Arc<Event> {
    Arc::new(Event::new(Arc::new(StreamResponse::Task(
        snapshot.task.clone(),
    ))))
}

/// `snapshot` in `state` (a new snapshot, as a writer makes one).
pub fn with_state(snapshot: &StoredTask, state: TaskState) -> StoredTask {
    let mut next = snapshot.clone();
    Arc::make_mut(&mut next.task).status = TaskStatus::now(state, None);
    next
}

/// `create` then `get` returns the task at sequence 0; a second `create` is `Exists`; an
/// unknown key is `None`.
pub async fn created_tasks_read_back(store: &dyn TaskStore) {
    let t = task("c-read", "t-1", "ctx", TaskState::Submitted, 10);
    store.create(t.clone()).await.expect("create");
    let got = store.get(&t.key()).await.expect("get");
    assert_eq!(got, Some(t.clone()), "a created task reads back as stored");
    assert_eq!(
        store.create(t.clone()).await,
        Err(StoreError::Exists("t-1".into())),
        "a second create of one key is refused"
    );
    assert_eq!(
        store.get(&TaskKey::new("c-read", "nope")).await,
        Ok(None),
        "an unknown task is None"
    );
}

/// Appends number events 1, 2, 3…; the snapshot carries the last one; `events_after`
/// returns exactly those after the given point, oldest first, up to the limit.
pub async fn events_get_consecutive_sequence_numbers(store: &dyn TaskStore) {
    let mut t = task("c-seq", "t-1", "ctx", TaskState::Submitted, 10);
    store.create(t.clone()).await.expect("create");
    for (n, state) in [TaskState::Working, TaskState::Working, TaskState::Completed]
        .into_iter()
        .enumerate()
    {
        t = with_state(&t, state);
        t.status_ms += 1;
        let seq = store
            .append(&t.key(), n as u64, event(&t), t.clone())
            .await
            .expect("append");
        assert_eq!(seq, n as u64 + 1, "sequence numbers are consecutive from 1");
    }
    let got = store.get(&t.key()).await.expect("get").expect("exists");
    assert_eq!(got.seq, 3, "the snapshot carries the last sequence number");
    assert_eq!(
        got.state(),
        TaskState::Completed,
        "the snapshot is the last one written"
    );
    let after: Vec<u64> = store
        .events_after(&t.key(), 1, 10)
        .await
        .expect("events")
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(after, vec![2, 3], "events after 1, oldest first");
    let limited = store.events_after(&t.key(), 0, 2).await.expect("events");
    assert_eq!(limited.len(), 2, "at most `limit` events");
    assert_eq!(limited[0].seq, 1);
    assert!(
        store
            .events_after(&t.key(), 3, 10)
            .await
            .expect("events")
            .is_empty(),
        "nothing after the last event"
    );
}

/// A writer that names an old sequence number changes nothing and learns where the task is.
pub async fn a_stale_writer_gets_a_conflict(store: &dyn TaskStore) {
    let t = task("c-conflict", "t-1", "ctx", TaskState::Submitted, 10);
    store.create(t.clone()).await.expect("create");
    store
        .append(&t.key(), 0, event(&t), t.clone())
        .await
        .expect("first writer");
    let stale = with_state(&t, TaskState::Failed);
    assert_eq!(
        store.append(&t.key(), 0, event(&stale), stale).await,
        Err(StoreError::Conflict {
            task: "t-1".into(),
            expected: 0,
            actual: 1,
        }),
        "a stale writer is refused"
    );
    let got = store.get(&t.key()).await.expect("get").expect("exists");
    assert_eq!(
        got.state(),
        TaskState::Submitted,
        "the refused write left no trace"
    );
    assert_eq!(
        store
            .events_after(&t.key(), 0, 10)
            .await
            .expect("events")
            .len(),
        1,
        "and added no event"
    );
    assert!(
        matches!(
            store
                .append(&TaskKey::new("c-conflict", "nope"), 0, event(&t), t.clone())
                .await,
            Err(StoreError::NotFound(_))
        ),
        "appending to an unknown task is NotFound"
    );
}

/// ListTasks: filters by context, state and update time, most recently updated first, in
/// pages whose tokens continue exactly where the last ended; a foreign token is refused.
pub async fn listing_filters_sorts_and_pages(store: &dyn TaskStore) {
    let tenant = "c-list";
    for (id, context, state, at) in [
        ("a", "ctx-1", TaskState::Working, 100),
        ("b", "ctx-1", TaskState::Completed, 300),
        ("c", "ctx-2", TaskState::Working, 200),
        ("d", "ctx-1", TaskState::Working, 300),
        ("e", "ctx-2", TaskState::InputRequired, 50),
    ] {
        store
            .create(task(tenant, id, context, state, at))
            .await
            .expect("create");
    }
    let ids = |page: &crate::Page| -> Vec<String> {
        page.tasks.iter().map(|t| t.task.id.to_string()).collect()
    };
    let all = store.list(&ListQuery::all(tenant, 10)).await.expect("list");
    assert_eq!(
        ids(&all),
        ["b", "d", "c", "a", "e"],
        "newest first, ties by id"
    );
    assert_eq!(all.total, 5);
    assert_eq!(all.next_page_token, None, "one page: no next token");

    let mut seen = Vec::new();
    let mut query = ListQuery::all(tenant, 2);
    loop {
        let page = store.list(&query).await.expect("page");
        assert!(
            page.tasks.len() <= 2,
            "a page holds at most page_size tasks"
        );
        assert_eq!(page.total, 5, "total counts every match");
        seen.extend(ids(&page));
        match page.next_page_token {
            Some(token) => query.page_token = Some(token),
            None => break,
        }
    }
    assert_eq!(
        seen,
        ["b", "d", "c", "a", "e"],
        "pages continue without gap or repeat"
    );

    let filtered = store
        .list(&ListQuery {
            context_id: Some("ctx-1".into()),
            state: Some(TaskState::Working),
            ..ListQuery::all(tenant, 10)
        })
        .await
        .expect("list");
    assert_eq!(
        ids(&filtered),
        ["d", "a"],
        "context and state filters together"
    );
    let recent = store
        .list(&ListQuery {
            status_since_ms: Some(200),
            ..ListQuery::all(tenant, 10)
        })
        .await
        .expect("list");
    assert_eq!(
        ids(&recent),
        ["b", "d", "c"],
        "updated at or after the time"
    );
    assert_eq!(
        store
            .list(&ListQuery {
                page_token: Some("not a token".into()),
                ..ListQuery::all(tenant, 10)
            })
            .await,
        Err(StoreError::BadPageToken),
        "a token the store did not issue is refused"
    );
}

/// `expire(now)` forgets exactly the tasks due at or before `now`, with their events.
pub async fn expiry_forgets_only_what_is_due(store: &dyn TaskStore) {
    let tenant = "c-expire";
    let mut due = task(tenant, "due", "ctx", TaskState::InputRequired, 10);
    due.expires_ms = Some(1_000);
    let mut later = task(tenant, "later", "ctx", TaskState::Completed, 10);
    later.expires_ms = Some(5_000);
    let kept = task(tenant, "kept", "ctx", TaskState::Working, 10);
    for t in [&due, &later, &kept] {
        store.create(t.clone()).await.expect("create");
    }
    store
        .append(&due.key(), 0, event(&due), due.clone())
        .await
        .expect("append");
    assert_eq!(store.expire(999).await, Ok(vec![]), "nothing is due yet");
    assert_eq!(
        store.expire(1_000).await,
        Ok(vec![due.key()]),
        "due at 1000: gone at 1000"
    );
    assert_eq!(store.get(&due.key()).await, Ok(None));
    assert!(
        store
            .events_after(&due.key(), 0, 10)
            .await
            .expect("events")
            .is_empty(),
        "its events went with it"
    );
    assert!(store.get(&later.key()).await.expect("get").is_some());
    assert!(store.get(&kept.key()).await.expect("get").is_some());
    assert_eq!(
        store.expire(u64::MAX).await,
        Ok(vec![later.key()]),
        "a task without expiry stays"
    );
    assert!(store.get(&kept.key()).await.expect("get").is_some());
}

/// Equal task ids in two tenants are two tasks; a listing shows one tenant's only.
pub async fn tenants_never_meet(store: &dyn TaskStore) {
    let a = task("c-tenant-a", "same", "ctx", TaskState::Working, 10);
    let b = task("c-tenant-b", "same", "ctx", TaskState::Completed, 10);
    store.create(a.clone()).await.expect("create a");
    store.create(b.clone()).await.expect("create b");
    assert_eq!(
        store.get(&a.key()).await.expect("get").map(|t| t.state()),
        Some(TaskState::Working)
    );
    assert_eq!(
        store.get(&b.key()).await.expect("get").map(|t| t.state()),
        Some(TaskState::Completed)
    );
    let page = store
        .list(&ListQuery::all("c-tenant-a", 10))
        .await
        .expect("list");
    assert_eq!(page.total, 1, "a listing shows its tenant's tasks only");
}

/// `task` created by `owner`.
pub fn owned_by(owner: &str, task: StoredTask) -> StoredTask {
    StoredTask {
        owner: Some(owner.into()),
        ..task
    }
}

/// A task keeps the owner it was created with, whatever later writes say; a listing for an
/// owner shows that owner's tasks and the unowned ones (stored before owners were
/// recorded), with totals and pages to match; a listing without one shows every task.
pub async fn owners_are_kept_and_filter_listings(store: &dyn TaskStore) {
    let tenant = "c-owner";
    let ada = |id: &str, ms| owned_by("ada", task(tenant, id, "ctx", TaskState::Working, ms));
    let bob = |id: &str, ms| owned_by("bob", task(tenant, id, "ctx", TaskState::Working, ms));
    let written = [
        ada("a-1", 10),
        bob("b-1", 20),
        ada("a-2", 30),
        task(tenant, "old", "ctx", TaskState::Working, 40),
        bob("b-2", 50),
    ];
    for t in &written {
        store.create(t.clone()).await.expect("create");
    }
    let got = store.get(&written[0].key()).await.expect("get");
    assert_eq!(
        got.and_then(|t| t.owner),
        Some("ada".into()),
        "the owner reads back"
    );
    // A later snapshot that names nobody (or somebody else) leaves the owner as created.
    let mut next = with_state(&written[1], TaskState::Completed);
    next.owner = None;
    next.status_ms = 60;
    store
        .append(&next.key(), 0, event(&next), next.clone())
        .await
        .expect("append");
    let got = store.get(&next.key()).await.expect("get").expect("there");
    assert_eq!(
        got.owner.as_deref(),
        Some("bob"),
        "an append keeps the owner"
    );
    assert_eq!(got.state(), TaskState::Completed);

    let listed = |owner: Option<&str>, page_size, page_token: Option<String>| ListQuery {
        owner: owner.map(str::to_owned),
        page_size,
        page_token,
        ..ListQuery::all(tenant, page_size)
    };
    let ids =
        |page: &Page| -> Vec<String> { page.tasks.iter().map(|t| t.task.id.to_string()).collect() };
    let page = store
        .list(&listed(Some("ada"), 10, None))
        .await
        .expect("list");
    assert_eq!(
        ids(&page),
        ["old", "a-2", "a-1"],
        "ada's and the unowned, newest first"
    );
    assert_eq!(page.total, 3);
    let page = store
        .list(&listed(Some("bob"), 2, None))
        .await
        .expect("list");
    assert_eq!(ids(&page), ["b-1", "b-2"], "bob's first page");
    assert_eq!(page.total, 3);
    let rest = store
        .list(&listed(Some("bob"), 2, page.next_page_token))
        .await
        .expect("list");
    assert_eq!(ids(&rest), ["old"], "bob's second page");
    assert_eq!(rest.next_page_token, None);
    let page = store
        .list(&listed(Some("eve"), 10, None))
        .await
        .expect("list");
    assert_eq!(
        ids(&page),
        ["old"],
        "a caller without tasks sees only the unowned"
    );
    let page = store.list(&listed(None, 10, None)).await.expect("list");
    assert_eq!(page.total, 5, "without an owner, every task");
}

/// `unfinished` names the SUBMITTED and WORKING tasks of every tenant, nothing else.
pub async fn unfinished_tasks_are_found_in_every_tenant(store: &dyn TaskStore) {
    let before: Vec<TaskKey> = store.unfinished().await.expect("unfinished");
    let mut mine = Vec::new();
    for (tenant, id, state) in [
        ("c-unfinished-a", "w", TaskState::Working),
        ("c-unfinished-b", "s", TaskState::Submitted),
        ("c-unfinished-a", "i", TaskState::InputRequired),
        ("c-unfinished-b", "d", TaskState::Completed),
    ] {
        let t = task(tenant, id, "ctx", state, 10);
        if matches!(state, TaskState::Working | TaskState::Submitted) {
            mine.push(t.key());
        }
        store.create(t).await.expect("create");
    }
    let counts = store.count_by_state().await.expect("counts");
    let count = |state| {
        counts
            .iter()
            .find(|(s, _)| *s == state)
            .map_or(0, |(_, n)| *n)
    };
    assert!(
        count(TaskState::InputRequired) >= 1 && count(TaskState::Submitted) >= 1,
        "count_by_state counts every tenant: {counts:?}"
    );
    let mut found: Vec<TaskKey> = store
        .unfinished()
        .await
        .expect("unfinished")
        .into_iter()
        .filter(|k| !before.contains(k))
        .collect();
    found.sort();
    mine.sort();
    assert_eq!(found, mine, "only SUBMITTED and WORKING, of every tenant");
}

/// Writers racing on one task at one sequence number: exactly one wins, the others get a
/// conflict, and the events stay consecutive.
pub async fn concurrent_writers_never_both_win(store: &dyn TaskStore) {
    let t = task("c-race", "t-1", "ctx", TaskState::Working, 10);
    store.create(t.clone()).await.expect("create");
    let writers = (0..8).map(|_| {
        let next = with_state(&t, TaskState::Working);
        let key = t.key();
        async move { store.append(&key, 0, event(&next), next).await }
    });
    let results = futures_util::future::join_all(writers).await;
    let won = results.iter().filter(|r| r.is_ok()).count();
    let conflicts = results
        .iter()
        .filter(|r| matches!(r, Err(StoreError::Conflict { .. })))
        .count();
    assert_eq!((won, conflicts), (1, 7), "one winner: {results:?}");
    let events = store.events_after(&t.key(), 0, 10).await.expect("events");
    assert_eq!(events.len(), 1, "one event written");
}

/// A part of a mebibyte is stored and read back whole, in the snapshot and in the event.
pub async fn large_parts_round_trip(store: &dyn TaskStore) {
    let text: String = (0..(1 << 20))
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let mut t = task("c-large", "t-1", "ctx", TaskState::Submitted, 10);
    store.create(t.clone()).await.expect("create");
    Arc::make_mut(&mut t.task)
        .history
        .push(ferry_proto::Message::user("m", vec![Part::text(text.clone())]).into());
    store
        .append(&t.key(), 0, event(&t), t.clone())
        .await
        .expect("append a large event");
    let got = store.get(&t.key()).await.expect("get").expect("kept");
    assert_eq!(got.task, t.task, "the snapshot reads back whole");
    let events = store.events_after(&t.key(), 0, 1).await.expect("events");
    match events.first().map(|e| &**e.event.value()) {
        Some(StreamResponse::Task(task)) => assert_eq!(
            task.history[0].parts[0],
            Part::text(text),
            "the event reads back whole"
        ),
        other => panic!("expected the task event, got {other:?}"),
    }
}

/// Every check of a [`ProfileStore`], each on owners of its own tenant.
pub async fn run_profile_checks(store: &dyn ProfileStore) {
    saved_profiles_read_back(store).await;
    a_stale_profile_writer_is_refused(store).await;
    owners_never_see_each_others_profiles(store).await;
    deleted_profiles_are_gone(store).await;
    the_profile_limit_holds_under_concurrent_creates(store).await;
}

/// The most profiles one owner may keep, in these checks.
const PROFILE_LIMIT: usize = 8;

fn profile(name: &str, pairs: &[(&str, &str)], cards: bool) -> Profile {
    Profile {
        name: name.to_owned(),
        values: pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        cards,
        version: 0,
        updated_ms: 1_700_000_000_123,
    }
}

/// A saved profile reads back whole (values with any text, the cards flag, the time), at
/// version 1, then 2 after the next save; a listing is sorted by name.
pub async fn saved_profiles_read_back(store: &dyn ProfileStore) {
    let owner = ProfileOwner::new("p-read", "alice");
    let home = profile(
        "home",
        &[
            ("given-name", "Zoë"),
            ("street-address", "12 Rue de l'Église\nBâtiment B"),
            ("Mitgliedsnummer", "M-42 \"quoted\" ✓"),
        ],
        false,
    );
    assert_eq!(
        store
            .save_profile(&owner, home.clone(), 0, PROFILE_LIMIT)
            .await,
        Ok(1),
        "a new profile is saved at version 1"
    );
    let got = store
        .get_profile(&owner, "home")
        .await
        .expect("get")
        .expect("saved");
    assert_eq!(
        got,
        Profile {
            version: 1,
            ..home.clone()
        }
    );
    let mut changed = home.clone();
    changed
        .values
        .insert("email".into(), "zoe@example.com".into());
    changed.cards = true;
    changed.updated_ms += 1;
    assert_eq!(
        store
            .save_profile(&owner, changed.clone(), 1, PROFILE_LIMIT)
            .await,
        Ok(2)
    );
    let got = store.get_profile(&owner, "home").await.expect("get");
    assert_eq!(
        got,
        Some(Profile {
            version: 2,
            ..changed
        })
    );
    store
        .save_profile(
            &owner,
            profile("card", &[("cc-number", "4111111111111111")], true),
            0,
            PROFILE_LIMIT,
        )
        .await
        .expect("second profile");
    let names: Vec<String> = store
        .list_profiles(&owner)
        .await
        .expect("list")
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(names, ["card", "home"], "listed by name");
    assert_eq!(store.get_profile(&owner, "nope").await, Ok(None));
}

/// A writer whose version is stale (or who creates what exists) is refused and nothing
/// changes.
pub async fn a_stale_profile_writer_is_refused(store: &dyn ProfileStore) {
    let owner = ProfileOwner::new("p-stale", "alice");
    store
        .save_profile(
            &owner,
            profile("home", &[("email", "a@example.com")], false),
            0,
            PROFILE_LIMIT,
        )
        .await
        .expect("create");
    let again = store
        .save_profile(
            &owner,
            profile("home", &[("email", "b@example.com")], false),
            0,
            PROFILE_LIMIT,
        )
        .await;
    assert_eq!(
        again,
        Err(StoreError::Changed("home".into())),
        "created twice"
    );
    let stale = store
        .save_profile(
            &owner,
            profile("home", &[("email", "c@example.com")], false),
            7,
            PROFILE_LIMIT,
        )
        .await;
    assert_eq!(
        stale,
        Err(StoreError::Changed("home".into())),
        "stale version"
    );
    let missing = store
        .save_profile(&owner, profile("work", &[], false), 1, PROFILE_LIMIT)
        .await;
    assert_eq!(
        missing,
        Err(StoreError::Changed("work".into())),
        "no such profile"
    );
    let got = store
        .get_profile(&owner, "home")
        .await
        .expect("get")
        .expect("kept");
    assert_eq!(
        (got.version, got.values["email"].as_str()),
        (1, "a@example.com")
    );
    assert_eq!(store.get_profile(&owner, "work").await, Ok(None));
}

/// Two callers of one tenant, and one caller in two tenants, are four separate owners.
pub async fn owners_never_see_each_others_profiles(store: &dyn ProfileStore) {
    let alice = ProfileOwner::new("p-owners", "alice");
    let bob = ProfileOwner::new("p-owners", "bob");
    let alice_elsewhere = ProfileOwner::new("p-owners-2", "alice");
    store
        .save_profile(
            &alice,
            profile("home", &[("email", "alice@example.com")], false),
            0,
            PROFILE_LIMIT,
        )
        .await
        .expect("alice");
    assert_eq!(store.get_profile(&bob, "home").await, Ok(None));
    assert_eq!(store.get_profile(&alice_elsewhere, "home").await, Ok(None));
    assert!(store.list_profiles(&bob).await.expect("list").is_empty());
    assert_eq!(store.delete_profile(&bob, "home").await, Ok(false));
    // Bob's own profile of the same name is his.
    store
        .save_profile(
            &bob,
            profile("home", &[("email", "bob@example.com")], false),
            0,
            PROFILE_LIMIT,
        )
        .await
        .expect("bob");
    let alices = store
        .get_profile(&alice, "home")
        .await
        .expect("get")
        .expect("kept");
    assert_eq!(alices.values["email"], "alice@example.com");
    assert_eq!(alices.version, 1, "bob's save did not touch alice's");
}

/// A deleted profile is gone (and can be created again, at version 1).
pub async fn deleted_profiles_are_gone(store: &dyn ProfileStore) {
    let owner = ProfileOwner::new("p-delete", "alice");
    store
        .save_profile(
            &owner,
            profile("home", &[("email", "a@example.com")], false),
            0,
            PROFILE_LIMIT,
        )
        .await
        .expect("create");
    assert_eq!(store.delete_profile(&owner, "home").await, Ok(true));
    assert_eq!(store.delete_profile(&owner, "home").await, Ok(false));
    assert_eq!(store.get_profile(&owner, "home").await, Ok(None));
    assert!(store.list_profiles(&owner).await.expect("list").is_empty());
    assert_eq!(
        store
            .save_profile(&owner, profile("home", &[], false), 0, PROFILE_LIMIT)
            .await,
        Ok(1)
    );
}

/// Three times [`PROFILE_LIMIT`] profiles created at once by one owner: exactly the limit
/// are saved, the others refused with [`StoreError::ProfileLimit`]. At the limit a saved
/// profile can still change, creating an existing one is [`StoreError::Changed`] (not the
/// limit), another owner is not affected, and after a delete one more can be created.
pub async fn the_profile_limit_holds_under_concurrent_creates(store: &dyn ProfileStore) {
    let owner = ProfileOwner::new("p-limit", "alice");
    let creates = (0..3 * PROFILE_LIMIT).map(|n| {
        let owner = owner.clone();
        async move {
            store
                .save_profile(
                    &owner,
                    profile(&format!("p{n:02}"), &[], false),
                    0,
                    PROFILE_LIMIT,
                )
                .await
        }
    });
    let outcomes = futures_util::future::join_all(creates).await;
    let saved = outcomes.iter().filter(|o| **o == Ok(1)).count();
    let refused = outcomes
        .iter()
        .filter(|o| {
            **o == Err(StoreError::ProfileLimit {
                limit: PROFILE_LIMIT,
            })
        })
        .count();
    assert_eq!(
        (saved, refused),
        (PROFILE_LIMIT, 2 * PROFILE_LIMIT),
        "saved and refused of {} creates at once: {outcomes:?}",
        3 * PROFILE_LIMIT
    );
    let kept = store.list_profiles(&owner).await.expect("list");
    assert_eq!(kept.len(), PROFILE_LIMIT, "{kept:?}");
    let first = kept[0].name.clone();
    assert_eq!(
        store
            .save_profile(
                &owner,
                profile(&first, &[("email", "a@example.com")], false),
                1,
                PROFILE_LIMIT
            )
            .await,
        Ok(2),
        "a saved profile changes at the limit"
    );
    assert_eq!(
        store
            .save_profile(&owner, profile(&first, &[], false), 0, PROFILE_LIMIT)
            .await,
        Err(StoreError::Changed(first.clone())),
        "an existing name is a stale writer, not a new profile"
    );
    let bob = ProfileOwner::new("p-limit", "bob");
    assert_eq!(
        store
            .save_profile(&bob, profile("home", &[], false), 0, PROFILE_LIMIT)
            .await,
        Ok(1),
        "the limit is per owner"
    );
    assert_eq!(store.delete_profile(&owner, &first).await, Ok(true));
    assert_eq!(
        store
            .save_profile(
                &owner,
                profile("after-delete", &[], false),
                0,
                PROFILE_LIMIT
            )
            .await,
        Ok(1),
        "a delete makes room"
    );
}

/// Every push-config check, on a store that keeps tasks and their push configs.
pub async fn run_push_checks<S: TaskStore + PushConfigStore + ?Sized>(store: &S) {
    push_configs_are_kept_per_task(store).await;
    push_configs_go_with_their_task(store).await;
    the_push_config_limit_holds_under_concurrent_puts(store).await;
}

/// The most configs one task may keep, in these checks.
const MAX_PUSH_CONFIGS: usize = 3;

/// A config with `id` for `url`, first stored at `ms`.
pub fn push_config(id: &str, url: &str, ms: u64) -> PushConfig {
    PushConfig {
        id: id.to_owned(),
        config: format!(r#"{{"id":"{id}","url":"{url}","token":"secret-{id}"}}"#).into(),
        created_ms: ms,
    }
}

/// Configs read back whole (credentials included), are listed oldest first, replace by id
/// (keeping their first time), stop at the limit, are deleted one by one, and belong to one
/// task: another task, tenant or a missing task sees none of them.
pub async fn push_configs_are_kept_per_task<S: TaskStore + PushConfigStore + ?Sized>(store: &S) {
    let tenant = "c-push";
    let t = task(tenant, "t-1", "ctx", TaskState::Working, 10);
    let other = task(tenant, "t-2", "ctx", TaskState::Working, 10);
    let elsewhere = task("c-push-other", "t-1", "ctx", TaskState::Working, 10);
    for each in [&t, &other, &elsewhere] {
        store.create(each.clone()).await.expect("create");
    }
    let missing = TaskKey::new(tenant, "nope");
    assert_eq!(
        store
            .put_push_config(&missing, push_config("a", "https://x", 1), MAX_PUSH_CONFIGS)
            .await,
        Err(StoreError::NotFound("nope".into()))
    );
    let key = t.key();
    for (id, ms) in [("b", 20), ("a", 20), ("c", 10)] {
        store
            .put_push_config(
                &key,
                push_config(id, "https://hook.example/1", ms),
                MAX_PUSH_CONFIGS,
            )
            .await
            .expect("put");
    }
    let ids = |all: Vec<PushConfig>| all.into_iter().map(|c| c.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.list_push_configs(&key).await.expect("list")),
        ["c", "a", "b"],
        "oldest first, ties by id"
    );
    let got = store.get_push_config(&key, "a").await.expect("get");
    assert_eq!(got, Some(push_config("a", "https://hook.example/1", 20)));
    assert_eq!(
        store
            .put_push_config(&key, push_config("d", "https://x", 30), MAX_PUSH_CONFIGS)
            .await,
        Err(StoreError::PushConfigLimit {
            limit: MAX_PUSH_CONFIGS
        }),
        "a fourth config is over the limit"
    );
    store
        .put_push_config(
            &key,
            push_config("a", "https://hook.example/2", 99),
            MAX_PUSH_CONFIGS,
        )
        .await
        .expect("a replacement is not a new config");
    let replaced = store
        .get_push_config(&key, "a")
        .await
        .expect("get")
        .expect("kept");
    assert!(replaced.config.contains("/2"), "{}", replaced.config);
    assert_eq!(
        replaced.created_ms, 20,
        "a replacement keeps its first time"
    );
    for unseen in [other.key(), elsewhere.key(), missing.clone()] {
        assert_eq!(store.list_push_configs(&unseen).await, Ok(vec![]));
        assert_eq!(store.get_push_config(&unseen, "a").await, Ok(None));
        assert_eq!(store.delete_push_config(&unseen, "a").await, Ok(false));
    }
    assert_eq!(store.delete_push_config(&key, "a").await, Ok(true));
    assert_eq!(store.delete_push_config(&key, "a").await, Ok(false));
    assert_eq!(
        ids(store.list_push_configs(&key).await.expect("list")),
        ["c", "b"]
    );
}

/// A task's configs are forgotten with it (expiry), and a new task of the same id starts
/// without them.
pub async fn push_configs_go_with_their_task<S: TaskStore + PushConfigStore + ?Sized>(store: &S) {
    let tenant = "c-push-expire";
    let mut t = task(tenant, "t-1", "ctx", TaskState::Completed, 10);
    t.expires_ms = Some(1_000);
    store.create(t.clone()).await.expect("create");
    store
        .put_push_config(&t.key(), push_config("a", "https://x", 1), MAX_PUSH_CONFIGS)
        .await
        .expect("put");
    assert_eq!(store.expire(1_000).await, Ok(vec![t.key()]));
    assert_eq!(store.list_push_configs(&t.key()).await, Ok(vec![]));
    let again = task(tenant, "t-1", "ctx", TaskState::Working, 20);
    store
        .create(again.clone())
        .await
        .expect("a new task of the id");
    assert_eq!(store.get_push_config(&again.key(), "a").await, Ok(None));
}

/// Writers adding configs to one task at once never take it past the limit.
pub async fn the_push_config_limit_holds_under_concurrent_puts<
    S: TaskStore + PushConfigStore + ?Sized,
>(
    store: &S,
) {
    let t = task("c-push-race", "t-1", "ctx", TaskState::Working, 10);
    store.create(t.clone()).await.expect("create");
    let key = t.key();
    let puts = (0..12).map(|n| {
        let key = key.clone();
        async move {
            store
                .put_push_config(
                    &key,
                    push_config(&format!("c{n:02}"), "https://x", n),
                    MAX_PUSH_CONFIGS,
                )
                .await
        }
    });
    let outcomes = futures_util::future::join_all(puts).await;
    let kept = outcomes.iter().filter(|o| o.is_ok()).count();
    assert_eq!(kept, MAX_PUSH_CONFIGS, "{outcomes:?}");
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, Ok(()) | Err(StoreError::PushConfigLimit { .. })))
    );
    assert_eq!(
        store.list_push_configs(&key).await.map(|c| c.len()),
        Ok(MAX_PUSH_CONFIGS)
    );
}

/// Every outbox check, on a store that keeps push configs and their deliveries.
pub async fn run_outbox_checks<S: TaskStore + PushStore + ?Sized>(store: &S) {
    events_get_a_delivery_per_config_in_order(store).await;
    retries_wait_and_dead_rows_let_the_next_go(store).await;
    a_lease_keeps_a_row_from_a_second_claim(store).await;
    inline_configs_get_the_first_event(store).await;
    deliveries_go_with_their_task_and_config(store).await;
}

/// A finished attempt of `id` of `key` under `lease`.
fn finished(key: &TaskKey, id: &str, lease: &str, outcome: DeliveryOutcome) -> FinishedDelivery {
    FinishedDelivery {
        key: key.clone(),
        id: id.to_owned(),
        lease: lease.to_owned(),
        outcome,
    }
}

/// A task of `tenant` with the configs `configs`, then `events` events appended to it.
async fn task_with_deliveries<S: TaskStore + PushStore + ?Sized>(
    store: &S,
    tenant: &str,
    configs: &[&str],
    events: u64,
) -> StoredTask {
    let mut t = task(tenant, "t-1", "ctx", TaskState::Submitted, 10);
    store.create(t.clone()).await.expect("create");
    for (n, id) in configs.iter().enumerate() {
        store
            .put_push_config(&t.key(), push_config(id, "https://x", n as u64), 8)
            .await
            .expect("put");
    }
    for n in 0..events {
        t = with_state(&t, TaskState::Working);
        store
            .append(&t.key(), n, event(&t), t.clone())
            .await
            .expect("append");
    }
    t
}

/// Each event appended after a config gets one pending delivery per config, with its own
/// id; only the oldest pending one per config is claimed; delivering it lets the next go;
/// the claim carries the config and the event's JSON; the attempt is counted.
pub async fn events_get_a_delivery_per_config_in_order<S: TaskStore + PushStore + ?Sized>(
    store: &S,
) {
    let t = task_with_deliveries(store, "o-order", &["a", "b"], 3).await;
    let key = t.key();
    let all = store.list_deliveries(&key).await.expect("list");
    let rows: Vec<(u64, &str)> = all.iter().map(|d| (d.seq, d.config_id.as_str())).collect();
    assert_eq!(
        rows,
        [(1, "a"), (1, "b"), (2, "a"), (2, "b"), (3, "a"), (3, "b")]
    );
    assert!(
        all.iter()
            .all(|d| d.status == DeliveryStatus::Pending && d.attempts == 0)
    );
    let mut ids: Vec<&str> = all.iter().map(|d| d.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 6, "every delivery has its own id");
    for seq in 1..=3 {
        let claimed = store
            .claim_deliveries(1_000, "L", 31_000, 100)
            .await
            .expect("claim");
        let mine: Vec<_> = claimed.iter().filter(|c| c.key == key).collect();
        let got: Vec<(u64, &str)> = mine
            .iter()
            .map(|c| (c.delivery.seq, c.delivery.config_id.as_str()))
            .collect();
        let mut got = got;
        got.sort_unstable();
        assert_eq!(got, [(seq, "a"), (seq, "b")], "only the heads, in order");
        for c in &mine {
            assert_eq!(c.delivery.attempts, 1);
            assert_eq!(c.delivery.first_attempt_ms, Some(1_000));
            assert!(
                c.config
                    .contains(&format!(r#""id":"{}""#, c.delivery.config_id))
            );
            let body: serde_json::Value =
                serde_json::from_slice(&c.event).expect("the event's JSON");
            assert!(body.get("task").is_some(), "{body}");
        }
        let done = mine
            .iter()
            .map(|c| finished(&key, &c.delivery.id, "L", DeliveryOutcome::Delivered))
            .collect();
        store.finish_deliveries(done, 2_000).await.expect("finish");
    }
    let all = store.list_deliveries(&key).await.expect("list");
    assert!(
        all.iter()
            .all(|d| d.status == DeliveryStatus::Delivered && d.done_ms == Some(2_000)),
        "{all:?}"
    );
    let nothing = store
        .claim_deliveries(5_000, "L", 35_000, 100)
        .await
        .expect("claim");
    assert!(nothing.iter().all(|c| c.key != key), "{nothing:?}");
}

/// A retried row is not claimed before its time and holds back the rows after it; a dead
/// row lets them go; a redelivered one is pending again with its attempts counted afresh.
pub async fn retries_wait_and_dead_rows_let_the_next_go<S: TaskStore + PushStore + ?Sized>(
    store: &S,
) {
    let t = task_with_deliveries(store, "o-retry", &["a"], 2).await;
    let key = t.key();
    let claim = |now: u64| async move {
        store
            .claim_deliveries(now, "R", now + 30_000, 100)
            .await
            .expect("claim")
            .into_iter()
            .filter(|c| c.key.tenant == "o-retry")
            .collect::<Vec<_>>()
    };
    let first = claim(1_000).await;
    assert_eq!(first.len(), 1);
    let id = first[0].delivery.id.clone();
    let retry = DeliveryOutcome::Retry {
        due_ms: 9_000,
        error: "503".into(),
    };
    store
        .finish_deliveries(vec![finished(&key, &id, "R", retry)], 1_500)
        .await
        .expect("finish");
    assert!(
        claim(8_999).await.is_empty(),
        "not before its time, nor the next row"
    );
    let again = claim(9_000).await;
    assert_eq!(again.len(), 1);
    assert_eq!(
        (again[0].delivery.id.as_str(), again[0].delivery.attempts),
        (id.as_str(), 2)
    );
    assert_eq!(
        again[0].delivery.first_attempt_ms,
        Some(1_000),
        "its age counts from the first"
    );
    assert_eq!(again[0].delivery.last_error.as_deref(), Some("503"));
    let dead = DeliveryOutcome::Dead {
        error: "gone".into(),
    };
    store
        .finish_deliveries(vec![finished(&key, &id, "R", dead)], 9_500)
        .await
        .expect("finish");
    let next = claim(9_600).await;
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].delivery.seq, 2, "a dead row lets the next go");
    let counts = store.count_deliveries().await.expect("counts");
    assert!(counts.dead >= 1 && counts.pending >= 1, "{counts:?}");
    let rows = store.list_deliveries(&key).await.expect("list");
    assert_eq!(rows[0].status, DeliveryStatus::Dead);
    assert_eq!(rows[0].done_ms, Some(9_500));
    assert_eq!(rows[0].last_error.as_deref(), Some("gone"));
    assert_eq!(store.redeliver(&key, &id).await, Ok(true));
    assert_eq!(store.redeliver(&key, "no-such-delivery").await, Ok(false));
    assert_eq!(
        store
            .redeliver(&TaskKey::new("o-elsewhere", "t-1"), &id)
            .await,
        Ok(false),
        "a delivery is redelivered only through its own task"
    );
    let rows = store.list_deliveries(&key).await.expect("list");
    assert_eq!(
        (rows[0].status, rows[0].attempts, rows[0].due_ms),
        (DeliveryStatus::Pending, 0, 0)
    );
    let back = claim(10_000).await;
    let seqs: Vec<u64> = back.iter().map(|c| c.delivery.seq).collect();
    assert_eq!(seqs, [1], "the redelivered row is claimable again");
}

/// A leased row is not claimed again until its lease runs out; a finish under a lease that
/// ran out (the row claimed again since) changes nothing.
pub async fn a_lease_keeps_a_row_from_a_second_claim<S: TaskStore + PushStore + ?Sized>(store: &S) {
    let t = task_with_deliveries(store, "o-lease", &["a"], 1).await;
    let key = t.key();
    let mine = |claimed: Vec<crate::push::ClaimedDelivery>| {
        claimed
            .into_iter()
            .filter(|c| c.key.tenant == "o-lease")
            .collect::<Vec<_>>()
    };
    let one = mine(
        store
            .claim_deliveries(1_000, "one", 5_000, 100)
            .await
            .expect("claim"),
    );
    assert_eq!(one.len(), 1);
    let two = mine(
        store
            .claim_deliveries(4_999, "two", 9_000, 100)
            .await
            .expect("claim"),
    );
    assert!(two.is_empty(), "leased until 5000");
    let two = mine(
        store
            .claim_deliveries(5_000, "two", 9_000, 100)
            .await
            .expect("claim"),
    );
    assert_eq!(two.len(), 1, "the lease ran out");
    let id = two[0].delivery.id.clone();
    store
        .finish_deliveries(
            vec![finished(&key, &id, "one", DeliveryOutcome::Delivered)],
            5_100,
        )
        .await
        .expect("finish");
    let rows = store.list_deliveries(&key).await.expect("list");
    assert_eq!(
        rows[0].status,
        DeliveryStatus::Pending,
        "not the first lease's any more"
    );
    store
        .finish_deliveries(
            vec![finished(&key, &id, "two", DeliveryOutcome::Delivered)],
            5_200,
        )
        .await
        .expect("finish");
    let rows = store.list_deliveries(&key).await.expect("list");
    assert_eq!(rows[0].status, DeliveryStatus::Delivered);
}

/// A task created with configs (a send's inline config) has a delivery of its first event.
pub async fn inline_configs_get_the_first_event<S: TaskStore + PushStore + ?Sized>(store: &S) {
    let t = task("o-inline", "t-1", "ctx", TaskState::Submitted, 10);
    let queued = store
        .queue_create_with_push(t.clone(), vec![push_config("inline", "https://x", 1)])
        .await
        .expect("queue");
    queued.await.expect("created");
    assert_eq!(
        store.list_push_configs(&t.key()).await.map(|c| c.len()),
        Ok(1)
    );
    let first = with_state(&t, TaskState::Working);
    store
        .append(&t.key(), 0, event(&first), first.clone())
        .await
        .expect("append");
    let rows = store.list_deliveries(&t.key()).await.expect("list");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0].seq, rows[0].config_id.as_str()), (1, "inline"));
}

/// Deleting a config deletes its deliveries; expiry deletes the task's.
pub async fn deliveries_go_with_their_task_and_config<S: TaskStore + PushStore + ?Sized>(
    store: &S,
) {
    let mut t = task_with_deliveries(store, "o-gone", &["a", "b"], 1).await;
    let key = t.key();
    assert_eq!(store.delete_push_config(&key, "a").await, Ok(true));
    let rows = store.list_deliveries(&key).await.expect("list");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].config_id, "b");
    t = with_state(&t, TaskState::Completed);
    t.expires_ms = Some(50);
    store
        .append(&key, 1, event(&t), t.clone())
        .await
        .expect("append");
    assert_eq!(store.list_deliveries(&key).await.map(|d| d.len()), Ok(2));
    let gone = store.expire(50).await.expect("expire");
    assert!(gone.contains(&key));
    assert_eq!(store.list_deliveries(&key).await, Ok(vec![]));
}

/// Two claimers on one outbox (two replicas on one database), claiming at once again and
/// again: no row is ever held by both, every row is claimed once, in order per task.
pub async fn two_claimers_share_the_outbox<S: TaskStore + PushStore + ?Sized>(one: &S, two: &S) {
    let tenant = "o-shared";
    let tasks = 20u64;
    let events = 5u64;
    for n in 0..tasks {
        let mut t = task(tenant, &format!("t-{n}"), "ctx", TaskState::Submitted, 10);
        one.create(t.clone()).await.expect("create");
        one.put_push_config(&t.key(), push_config("a", "https://x", 1), 8)
            .await
            .expect("put");
        for e in 0..events {
            t = with_state(&t, TaskState::Working);
            one.append(&t.key(), e, event(&t), t.clone())
                .await
                .expect("append");
        }
    }
    let mut seen: std::collections::HashMap<TaskKey, Vec<u64>> = Default::default();
    let mut ids = std::collections::HashSet::new();
    let mut round = 0u64;
    loop {
        round += 1;
        let now = 1_000 + round;
        let (a, b) = futures_util::future::join(
            one.claim_deliveries(now, "one", now + 60_000, 7),
            two.claim_deliveries(now, "two", now + 60_000, 7),
        )
        .await;
        let (a, b) = (a.expect("claim"), b.expect("claim"));
        let mine = |c: &crate::push::ClaimedDelivery| c.key.tenant == tenant;
        let claimed: Vec<_> = a
            .iter()
            .filter(|c| mine(c))
            .map(|c| (c, "one"))
            .chain(b.iter().filter(|c| mine(c)).map(|c| (c, "two")))
            .collect();
        if claimed.is_empty() {
            break;
        }
        let mut finishing: (Vec<FinishedDelivery>, Vec<FinishedDelivery>) = Default::default();
        for (c, lease) in claimed {
            assert!(ids.insert(c.delivery.id.clone()), "claimed twice: {c:?}");
            seen.entry(c.key.clone()).or_default().push(c.delivery.seq);
            let done = finished(&c.key, &c.delivery.id, lease, DeliveryOutcome::Delivered);
            if lease == "one" {
                finishing.0.push(done);
            } else {
                finishing.1.push(done);
            }
        }
        one.finish_deliveries(finishing.0, now)
            .await
            .expect("finish");
        two.finish_deliveries(finishing.1, now)
            .await
            .expect("finish");
        assert!(round < 1_000, "the outbox never emptied");
    }
    assert_eq!(ids.len() as u64, tasks * events, "every row claimed once");
    for (key, seqs) in seen {
        assert_eq!(
            seqs,
            (1..=events).collect::<Vec<_>>(),
            "{key:?} out of order"
        );
    }
}
