use super::*;
use crate::report::{FieldSummary, FormSummary};
use crate::snapshot::FieldValue;

const TTL: Duration = Duration::from_secs(600);

fn report() -> FormReport {
    let field = |label: &str, value: &str, secret: bool| FieldSummary {
        label: label.into(),
        name: None,
        kind: if secret { "password" } else { "text" }.into(),
        required: true,
        value: FieldValue::Text(value.into()),
        options: Vec::new(),
        valid: true,
        error: None,
        form: Some(0),
        disabled: false,
        secret,
        shown: value.into(),
    };
    FormReport {
        url: "http://shop.test/signup".into(),
        forms: vec![FormSummary {
            action: "http://shop.test/submit".into(),
            method: "post".into(),
            ..FormSummary::default()
        }],
        fields: vec![
            field("Name", "Ada", false),
            field("Password", "hunter2", true),
        ],
        ..FormReport::default()
    }
}

fn offer<'a>(
    ledger: &Ledger,
    key: &'a ConversationKey,
    task_id: &'a str,
    ticket: u64,
    report: &'a FormReport,
) -> String {
    ledger.offer(Offer {
        key,
        task_id,
        ticket,
        form: 0,
        report,
        sink: None,
        ttl: TTL,
    })
}

#[tokio::test(start_paused = true)]
async fn a_link_opens_its_own_task_once_and_only_before_its_deadline() {
    let ledger = Ledger::default();
    let (one, two) = (
        ConversationKey::context("c-1"),
        ConversationKey::context("c-2"),
    );
    let report = report();
    let a = offer(&ledger, &one, "task-a", 1, &report);
    let b = offer(&ledger, &two, "task-b", 2, &report);
    assert_eq!(a.len(), 64);
    assert_ne!(a, b);

    // The review shows every field, the secret masked, and the nonce the page sends back.
    let review = ledger.review("task-a", Some(&a)).expect("review");
    assert_eq!(
        review.fields,
        [
            ("Name".into(), "Ada".into()),
            ("Password".into(), "••••••".into())
        ]
    );
    assert_eq!(review.action, "http://shop.test/submit");
    assert_eq!(review.nonce.len(), 64);

    // Another task's link, a wrong secret, a forged request: refused, nothing used up.
    assert_eq!(
        ledger.review("task-b", Some(&a)).err(),
        Some(ApprovalError::Unknown)
    );
    assert_eq!(
        ledger.review("task-a", Some("0")).err(),
        Some(ApprovalError::Unknown)
    );
    let forged = ledger.take("task-a", Some(&a), Some("not the nonce"), "approved");
    assert_eq!(forged.err(), Some(ApprovalError::Forged));
    let forged = ledger.take("task-a", Some(&a), Some(""), "approved");
    assert_eq!(forged.err(), Some(ApprovalError::Forged));

    // Used once; a second use is told so.
    let taken = ledger
        .take("task-a", Some(&a), Some(&review.nonce), "approved")
        .expect("the first use");
    assert_eq!(taken.ticket, 1);
    let again = ledger.take("task-a", Some(&a), Some(&review.nonce), "approved");
    assert_eq!(again.err(), Some(ApprovalError::Used("approved")));

    // Past its deadline the other link approves nothing.
    tokio::time::advance(TTL).await;
    assert_eq!(
        ledger.review("task-b", Some(&b)).err(),
        Some(ApprovalError::Expired)
    );
    let nonce = "x";
    let late = ledger.take("task-b", Some(&b), Some(nonce), "approved");
    assert_eq!(late.err(), Some(ApprovalError::Expired));
}

#[tokio::test(start_paused = true)]
async fn a_new_showing_gets_a_new_link_and_the_old_one_approves_nothing() {
    let ledger = Ledger::default();
    let key = ConversationKey::context("c-1");
    let report = report();
    let first = offer(&ledger, &key, "task-a", 1, &report);
    assert_eq!(
        offer(&ledger, &key, "task-a", 1, &report),
        first,
        "same showing, same link"
    );
    let second = offer(&ledger, &key, "task-a", 2, &report);
    assert_ne!(first, second);
    assert_eq!(
        ledger.review("task-a", Some(&first)).err(),
        Some(ApprovalError::Unknown)
    );
    assert!(ledger.review("task-a", Some(&second)).is_ok());

    // Another task of the conversation takes the submit over: the first task's link goes.
    let other = offer(&ledger, &key, "task-b", 3, &report);
    assert_eq!(
        ledger.review("task-a", Some(&second)).err(),
        Some(ApprovalError::Unknown)
    );
    ledger.withdraw(&key);
    assert_eq!(
        ledger.review("task-b", Some(&other)).err(),
        Some(ApprovalError::Unknown)
    );

    // The approver (secret unchecked here: the caller checked its token) sees any task.
    let third = offer(&ledger, &key, "task-c", 4, &report);
    assert!(ledger.review("task-c", None).is_ok());
    ledger.withdraw_task("task-c");
    assert_eq!(
        ledger.review("task-c", Some(&third)).err(),
        Some(ApprovalError::Unknown)
    );
}
