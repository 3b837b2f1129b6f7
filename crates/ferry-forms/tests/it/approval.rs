//! Human approval through the agent's own API, as the MCP face uses it (no task to report
//! to): the caller's confirmation submits nothing; a person's approval submits once, and the
//! conversation's next confirmation answers with what it did. The review page, the approver
//! token and the A2A task's record are tested end to end in `crates/ferry/tests/approval.rs`.

use crate::agent::{shop_config, with_agent};
use ferry_forms::approval::{ApprovalError, Credential, Decision};
use ferry_forms::request::{FormRequest, RequestedValue};
use ferry_forms::{Approval, ConversationKey, FormsConfig, HumanApproval, TurnState};

fn human(site: &crate::support::site::TestSite) -> FormsConfig {
    FormsConfig {
        approval: Approval::Human(HumanApproval {
            ttl: HumanApproval::DEFAULT_TTL,
            approver_token: None,
        }),
        ..shop_config(site)
    }
}

fn text(value: &str) -> RequestedValue {
    RequestedValue::Text(value.into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_task_the_decision_reaches_the_next_confirmation() {
    with_agent("approval::mcp", human, |site, server| async move {
        let agent = server.agent();
        let key = ConversationKey::context("mcp-session");
        let task = "mcp-task-1";
        let fill = FormRequest {
            url: Some(site.url("shop.test", "/signup.html").parse().expect("url")),
            values: vec![
                ("Full name".into(), text("Ada Lovelace")),
                ("Email".into(), text("ada@example.com")),
                ("Password".into(), text("s3cret-pass")),
                ("I accept the terms".into(), RequestedValue::Bool(true)),
            ],
            submit: Some(true),
            ..FormRequest::default()
        };
        let ready = agent.converse(&key, task, &fill).await.expect("fill");
        assert_eq!(
            ready.state(),
            TurnState::InputRequired,
            "{}",
            ready.message()
        );
        let report = ready.report_json();
        let link = report["approvalUrl"].as_str().expect("a link").to_owned();
        assert!(link.starts_with("/approvals/mcp-task-1/"), "{link}");
        let secret = link.rsplit('/').next().unwrap_or_default().to_owned();

        let confirm = FormRequest {
            confirm: true,
            ..FormRequest::default()
        };
        let refused = agent.converse(&key, task, &confirm).await.expect("confirm");
        assert!(
            refused.message().contains("A person must approve"),
            "{}",
            refused.message()
        );
        assert!(
            site.submissions().is_empty(),
            "the caller's confirmation sent nothing"
        );

        let link = Credential::Link {
            secret: &secret,
            nonce: "",
        };
        let review = agent.review(task, link).expect("the review");
        assert!(
            review
                .fields
                .contains(&("Password".into(), "••••••".into())),
            "{:?}",
            review.fields
        );
        assert!(review.screenshot.is_some(), "the picture is in the review");
        let approve = Credential::Link {
            secret: &secret,
            nonce: &review.nonce,
        };
        let outcome = agent
            .decide(task, approve, Decision::Approve, "a test")
            .await
            .expect("approved");
        assert!(outcome.submitted(), "{}", outcome.message());
        assert_eq!(site.submissions().len(), 1);

        // The next confirmation hears what the decision did; the link is used up.
        let told = agent.converse(&key, task, &confirm).await.expect("confirm");
        assert!(told.submitted(), "{}", told.message());
        assert_eq!(told.approval_decision(), Some("approved"));
        let again = agent
            .decide(task, approve, Decision::Approve, "a test")
            .await;
        assert_eq!(again.err(), Some(ApprovalError::Used("approved")));
        assert_eq!(
            site.submissions().len(),
            1,
            "one POST, whatever is asked after"
        );
        server
    })
    .await;
}
