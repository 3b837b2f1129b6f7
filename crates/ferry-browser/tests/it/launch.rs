//! Start-up failures with fake browsers (no Chromium needed): each is a typed error, and
//! nothing is left running.

use crate::support::{Scratch, live_group_members};
use ferry_browser::{BrowserError, Chromium, DevToolsTransport, LaunchOptions};
use std::time::Duration;

fn options(path: std::path::PathBuf, devtools: DevToolsTransport) -> LaunchOptions {
    LaunchOptions {
        chrome_path: Some(path),
        startup_timeout: Duration::from_millis(700),
        devtools,
        ..LaunchOptions::default()
    }
}

#[tokio::test]
async fn a_missing_binary_is_not_found_with_the_path_tried() {
    let path = std::path::PathBuf::from("/nonexistent/chromium");
    let err = Chromium::launch(options(path.clone(), DevToolsTransport::Pipe))
        .await
        .expect_err("no such binary");
    assert!(
        matches!(&err, BrowserError::NotFound { tried } if tried == std::slice::from_ref(&path)),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_browser_that_dies_at_start_reports_its_status_and_stderr() {
    let scratch = Scratch::new("dies");
    let fake = scratch.script("chrome", "echo 'no display here' >&2\nexit 3");
    for devtools in [DevToolsTransport::Pipe, DevToolsTransport::Port] {
        let err = Chromium::launch(options(fake.clone(), devtools))
            .await
            .expect_err("fake browser exits");
        let BrowserError::Exited {
            status,
            stderr_tail,
        } = &err
        else {
            panic!("{devtools:?}: unexpected {err:?}");
        };
        assert!(status.contains('3'), "{devtools:?}: {status}");
        assert_eq!(stderr_tail, &["no display here".to_owned()], "{devtools:?}");
    }
}

#[tokio::test]
async fn a_browser_that_never_answers_times_out_and_is_killed() {
    let scratch = Scratch::new("silent");
    // Writes its pid (= the process group) where the test can find it, then waits forever.
    let pid_file = scratch.dir.join("pid");
    let fake = scratch.script(
        "chrome",
        &format!("echo $$ > {}\nexec sleep 60", pid_file.display()),
    );
    for devtools in [DevToolsTransport::Pipe, DevToolsTransport::Port] {
        let err = Chromium::launch(options(fake.clone(), devtools))
            .await
            .expect_err("fake browser is silent");
        assert!(
            matches!(err, BrowserError::StartupTimeout { after, .. } if after == Duration::from_millis(700)),
            "{devtools:?}: {err:?}"
        );
        let pgid: u32 = std::fs::read_to_string(&pid_file)
            .expect("pid file")
            .trim()
            .parse()
            .expect("pid");
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !live_group_members(pgid).is_empty() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert!(
            live_group_members(pgid).is_empty(),
            "{devtools:?}: group {pgid} still running"
        );
    }
}
