//! Interop with the official A2A Python SDK: `a2a-sdk` 1.3.0 fills a web form through the
//! forms agent of a real `ferry serve`, in a three-turn streaming conversation.
//!
//! The test starts the `ferry` binary built by cargo with the forms agent (the default agent):
//! `serve --agent forms --bind 127.0.0.1:0 --allow-domain shop.test --allow-private-networks
//! --resolve shop.test=127.0.0.1 --chrome-path <chromium>`, waits for its
//! `agent card: URL` line, then runs `interop/python/forms_conversation.py` against it. The
//! script serves its own sign-up page (stdlib HTTP server on 127.0.0.1, addressed as
//! `shop.test:PORT`) and, with the SDK's streaming client over JSON-RPC, runs:
//!
//! | turn | request                                              | expected                                     |
//! |------|------------------------------------------------------|----------------------------------------------|
//! | 1    | `url` + Full name, Email + `submit`                  | INPUT_REQUIRED after `working` updates; `missing` = Password, I accept the terms |
//! | 2    | Password, I accept the terms + `submit` (same task)  | INPUT_REQUIRED; `missing` = [], `pendingSubmit` = true; nothing posted |
//! | 3    | `{"confirm": true}` (same task)                      | COMPLETED; `submitted`, `outcome.title` = "Welcome"; the POST holds every field |
//!
//! Both artifacts (`result`, `data`) must carry `metadata.untrusted: true`. The script prints
//! one JSON summary line last; this test checks it too.
//!
//! Prerequisites, each failing the test when `CI=true` and skipping it with a loud `SKIPPED:`
//! message on stderr otherwise:
//! - the Python interpreter: `$FERRY_PYTHON` if set, else `<workspace>/.venv/bin/python`
//!   (`scripts/test.sh` creates that venv from `interop/python/requirements.txt`);
//! - Chromium (`ferry_browser::find_chromium`: `FERRY_CHROME`, else the standard paths). Its
//!   path is passed to the server with `--chrome-path`, because the test helpers start
//!   `ferry` without the developer's `FERRY_*` variables.

mod support;

use serde_json::Value;
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use support::browser::{ServerTmp, chromium_or_skip, shop_flags, summary};
use support::{Server, ferry, output_with_timeout, python_or_skip, scratch_dir, workspace_root};

/// What the interpreter must be able to import for this test.
const PYTHON_IMPORTS: &str = "a2a.client, a2a.types.a2a_pb2";
/// Hard limit for one run of the Python script (which has its own 55 s limit).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(60);
/// The script, relative to the workspace root.
const SCRIPT: &str = "interop/python/forms_conversation.py";
/// The task states of the three turns, as the summary line names them.
const TURN_STATES: [&str; 3] = [
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_COMPLETED",
];

#[test]
fn sdk_fills_a_form_in_three_streaming_turns() {
    let test = "interop_forms sdk_fills_a_form_in_three_streaming_turns";
    let Some(python) = python_or_skip(test, PYTHON_IMPORTS) else {
        return;
    };
    let Some(chromium) = chromium_or_skip(test) else {
        return;
    };
    let root = workspace_root();
    let script = Path::new(SCRIPT);
    assert!(
        root.join(script).is_file(),
        "{test}: missing {}",
        root.join(script).display()
    );

    let mut args: Vec<OsString> = ["--agent", "forms", "--bind", "127.0.0.1:0"]
        .into_iter()
        .map(OsString::from)
        .collect();
    args.extend(shop_flags(&chromium));
    // Chromium's profile (and singleton) directories go to the server's TMPDIR, and the
    // server is killed with SIGKILL when dropped, so it cannot remove them itself: give it a
    // scratch TMPDIR. Declared before the server, so it is dropped (waited for, removed)
    // after the server is killed, on success and on panic alike.
    let tmp = ServerTmp(scratch_dir("interop-forms-tmp"));
    let mut cmd = ferry();
    cmd.arg("serve").args(&args).env("TMPDIR", &tmp.0);
    let server = Server::spawn(cmd);
    let (out, timed_out) = output_with_timeout(
        Command::new(&python)
            .arg(script)
            .arg(&server.base_url)
            .env("PYTHONUNBUFFERED", "1")
            .current_dir(&root),
        None,
        SCRIPT_TIMEOUT,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report = |why: &str| -> String {
        format!(
            "{test} failed ({why}) against {}\n\
             ---- python stdout ----\n{stdout}\n\
             ---- python stderr ----\n{stderr}\n\
             ---- ferry serve (forms agent) output ----\n{}",
            server.base_url,
            server.output(),
        )
    };
    if timed_out {
        panic!("{}", report(&format!("killed after {SCRIPT_TIMEOUT:?}")));
    }
    if !out.status.success() {
        panic!("{}", report(&out.status.to_string()));
    }

    let Some(summary) = summary(&stdout) else {
        panic!("{}", report("no JSON summary line on stdout"));
    };
    let turns: Vec<&str> = summary["turns"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let posted: Vec<&str> = summary["posted"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let problems: Vec<String> = [
        (summary["ok"] != Value::Bool(true)).then(|| "summary.ok is not true".to_owned()),
        (turns != TURN_STATES).then(|| format!("summary.turns is {turns:?}, want {TURN_STATES:?}")),
        (summary["outcomeTitle"] != "Welcome")
            .then(|| format!("summary.outcomeTitle is {}", summary["outcomeTitle"])),
        ["name", "email", "password", "terms"]
            .iter()
            .find(|field| !posted.contains(field))
            .map(|field| format!("summary.posted {posted:?} lacks {field:?}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !problems.is_empty() {
        panic!("{}", report(&problems.join("; ")));
    }
    // Visible with `cargo test -- --nocapture`.
    println!("{stdout}");
    // Killing the server closes the DevTools pipe, and Chromium exits with it; then `tmp`
    // goes.
    drop(server);
}
