//! A real headless Chromium: launch, isolated contexts, navigation, evaluation, failure
//! modes, and cleanup of the whole process group.

use crate::support::{
    NAV_TIMEOUT, TEST_TIMEOUT, chromium_or_skip, listening_ports, live_group_members, serve_pages,
};
use ferry_browser::{Browser, BrowserError, CdpError, Chromium, DevToolsTransport, LaunchOptions};
use serde_json::json;
use std::time::{Duration, Instant};

/// Runs `body` under [`TEST_TIMEOUT`].
async fn bounded<F: std::future::Future<Output = ()>>(body: F) {
    tokio::time::timeout(TEST_TIMEOUT, body)
        .await
        .expect("test exceeded its time limit");
}

#[tokio::test]
async fn a_launched_browser_loads_a_page_and_evaluates_in_it() {
    if !chromium_or_skip("a_launched_browser_loads_a_page_and_evaluates_in_it") {
        return;
    }
    bounded(async {
        let site = serve_pages().await;
        let started = Instant::now();
        let browser = Browser::launch(LaunchOptions::default()).await.expect("launch");
        let process = browser.process().expect("launched");
        eprintln!(
            "chromium: devtools after {:?}, connected after {:?}",
            process.startup_time(),
            started.elapsed()
        );
        // The default transport is the pipe: no DevTools port for other local processes.
        assert_eq!(process.ws_url(), None);
        let ports = listening_ports(process.pid());
        assert!(ports.is_empty(), "browser listens on tcp ports {ports:?}");
        let profile = process.profile_dir().to_path_buf();
        assert!(profile.is_dir());

        let context = browser.new_context().await.expect("context");
        let page = context.new_page().await.expect("page");
        let loaded = Instant::now();
        page.navigate(&format!("http://{site}/form"), NAV_TIMEOUT)
            .await
            .expect("navigate");
        eprintln!("first navigation through load: {:?}", loaded.elapsed());

        assert_eq!(page.evaluate("document.title").await.expect("title"), json!("Signup"));
        let email = page
            .evaluate("document.querySelector('#email').value")
            .await
            .expect("field");
        assert_eq!(email, json!("ada@example.com"));
        let awaited = page
            .evaluate("new Promise(r => setTimeout(() => r({n: 1 + 1}), 10))")
            .await
            .expect("promise");
        assert_eq!(awaited, json!({"n": 2}));

        let thrown = page.evaluate("(() => { throw new Error('boom') })()").await;
        assert!(
            matches!(&thrown, Err(BrowserError::Script { description }) if description.contains("boom")),
            "{thrown:?}"
        );

        context.dispose().await.expect("dispose");
        browser.shutdown().await;
        assert!(!profile.exists(), "profile directory left behind");
    })
    .await;
}

#[tokio::test]
async fn contexts_do_not_share_cookies_and_dispose_closes_their_pages() {
    if !chromium_or_skip("contexts_do_not_share_cookies_and_dispose_closes_their_pages") {
        return;
    }
    bounded(async {
        let site = serve_pages().await;
        let url = format!("http://{site}/");
        let browser = Browser::launch(LaunchOptions::default())
            .await
            .expect("launch");
        let first = browser.new_context().await.expect("first context");
        let second = browser.new_context().await.expect("second context");
        assert_ne!(first.id(), second.id());
        let page_a = first.new_page().await.expect("page a");
        let page_b = second.new_page().await.expect("page b");
        page_a
            .navigate(&url, NAV_TIMEOUT)
            .await
            .expect("navigate a");
        page_b
            .navigate(&url, NAV_TIMEOUT)
            .await
            .expect("navigate b");

        page_a
            .evaluate("document.cookie = 'flavour=oat; path=/'")
            .await
            .expect("set cookie");
        assert_eq!(
            page_a.evaluate("document.cookie").await.expect("a"),
            json!("flavour=oat")
        );
        assert_eq!(
            page_b.evaluate("document.cookie").await.expect("b"),
            json!("")
        );

        // Same-context pages do share it (the check above is not vacuous).
        let page_a2 = first.new_page().await.expect("page a2");
        page_a2
            .navigate(&url, NAV_TIMEOUT)
            .await
            .expect("navigate a2");
        assert_eq!(
            page_a2.evaluate("document.cookie").await.expect("a2"),
            json!("flavour=oat")
        );

        first.dispose().await.expect("dispose");
        let gone = page_a.evaluate("1").await;
        assert!(
            matches!(gone, Err(BrowserError::Cdp(CdpError::Protocol { .. }))),
            "page of a disposed context still answers: {gone:?}"
        );
        assert_eq!(
            page_b.evaluate("1 + 1").await.expect("b survives"),
            json!(2)
        );
        page_b.close().await.expect("close page");
        second.dispose().await.expect("dispose second");
        browser.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn navigation_failures_and_hanging_pages_are_typed_errors() {
    if !chromium_or_skip("navigation_failures_and_hanging_pages_are_typed_errors") {
        return;
    }
    bounded(async {
        let site = serve_pages().await;
        // A port that was just free: nothing listens there.
        let closed = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            listener.local_addr().expect("addr")
        };
        let browser = Browser::launch(LaunchOptions::default()).await.expect("launch");
        let context = browser.new_context().await.expect("context");
        let page = context.new_page().await.expect("page");

        let refused = page.navigate(&format!("http://{closed}/"), NAV_TIMEOUT).await;
        assert!(
            matches!(&refused, Err(BrowserError::NavigationFailed { error_text, .. }) if error_text.contains("ERR_CONNECTION_REFUSED")),
            "{refused:?}"
        );

        let limit = Duration::from_millis(1500);
        let started = Instant::now();
        let hung = page.navigate(&format!("http://{site}/hang"), limit).await;
        assert!(
            matches!(hung, Err(BrowserError::LoadTimeout { after, .. }) if after == limit),
            "{hung:?}"
        );
        assert!(started.elapsed() < limit + Duration::from_secs(2));

        // The page is still usable after a timed-out navigation.
        page.navigate(&format!("http://{site}/form"), NAV_TIMEOUT)
            .await
            .expect("navigate after timeout");
        assert_eq!(page.evaluate("document.title").await.expect("title"), json!("Signup"));
        browser.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn connecting_over_http_finds_the_websocket_and_closed_connections_fail_fast() {
    if !chromium_or_skip(
        "connecting_over_http_finds_the_websocket_and_closed_connections_fail_fast",
    ) {
        return;
    }
    bounded(async {
        let options = LaunchOptions {
            devtools: DevToolsTransport::Port,
            ..LaunchOptions::default()
        };
        let chromium = Chromium::launch(options).await.expect("launch");
        let ws_url = chromium.ws_url().expect("port transport has a url").to_owned();
        eprintln!("chromium (port): devtools after {:?}", chromium.startup_time());
        assert!(ws_url.starts_with("ws://127.0.0.1:"), "{ws_url}");
        assert!(!listening_ports(chromium.pid()).is_empty(), "the port probe sees nothing");
        // ws://127.0.0.1:PORT/devtools/browser/ID → http://127.0.0.1:PORT
        let authority = ws_url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .expect("authority")
            .to_owned();
        let browser = Browser::connect(&format!("http://{authority}"))
            .await
            .expect("connect over http");
        let version = browser
            .cdp()
            .call("Browser.getVersion", json!({}), None)
            .await
            .expect("version");
        assert!(version["product"].as_str().is_some_and(|p| p.contains("Chrome")), "{version}");
        let context = browser.new_context().await.expect("context");
        let page = context.new_page().await.expect("page");
        assert_eq!(page.evaluate("6 * 7").await.expect("eval"), json!(42));

        let unknown = browser.cdp().call("No.such", json!({}), None).await;
        assert!(
            matches!(&unknown, Err(CdpError::Protocol { method, code: -32601, .. }) if method == "No.such"),
            "{unknown:?}"
        );

        // The browser goes away: calls fail with Closed, not a timeout.
        chromium.shutdown().await;
        let cdp = browser.cdp().clone().with_timeout(Duration::from_secs(5));
        let mut closed = cdp.call("Browser.getVersion", json!({}), None).await;
        let deadline = Instant::now() + Duration::from_secs(5);
        while closed.is_ok() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
            closed = cdp.call("Browser.getVersion", json!({}), None).await;
        }
        assert!(matches!(closed, Err(CdpError::Closed)), "{closed:?}");
        assert!(matches!(page.evaluate("1").await, Err(BrowserError::Cdp(CdpError::Closed))));
    })
    .await;
}

#[tokio::test]
async fn dropping_the_browser_kills_its_whole_process_group() {
    if !chromium_or_skip("dropping_the_browser_kills_its_whole_process_group") {
        return;
    }
    bounded(async {
        let site = serve_pages().await;
        let browser = Browser::launch(LaunchOptions::default())
            .await
            .expect("launch");
        let context = browser.new_context().await.expect("context");
        let page = context.new_page().await.expect("page");
        page.navigate(&format!("http://{site}/form"), NAV_TIMEOUT)
            .await
            .expect("navigate");
        let process = browser.process().expect("launched");
        let pgid = process.pid();
        let profile = process.profile_dir().to_path_buf();
        let members = live_group_members(pgid);
        assert!(
            members.contains(&pgid),
            "browser {pgid} not in its own group: {members:?}"
        );
        assert!(
            members.len() > 1,
            "expected zygotes/renderers in the group: {members:?}"
        );
        let memory = process.memory();
        eprintln!(
            "one page loaded: {} processes, PSS {} MiB, RSS {} MiB",
            memory.processes,
            memory.pss_kib / 1024,
            memory.rss_kib / 1024
        );
        assert!(memory.processes > 1 && memory.pss_kib > 0, "{memory:?}");

        drop(page);
        drop(context);
        drop(browser);

        let deadline = Instant::now() + Duration::from_secs(5);
        let mut left = live_group_members(pgid);
        while !left.is_empty() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(25)).await;
            left = live_group_members(pgid);
        }
        assert!(left.is_empty(), "processes left in group {pgid}: {left:?}");
        assert!(!profile.exists(), "profile directory left behind");
        // The browser itself is reaped, not a zombie.
        let proc_entry = std::path::PathBuf::from(format!("/proc/{pgid}"));
        while proc_entry.exists() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert!(!proc_entry.exists(), "browser pid {pgid} still exists");
    })
    .await;
}

#[tokio::test]
async fn cross_site_frames_are_attached_and_isolated_worlds_hide_page_globals() {
    if !chromium_or_skip("cross_site_frames_are_attached_and_isolated_worlds_hide_page_globals") {
        return;
    }
    bounded(async {
        let site = serve_pages().await;
        // The belt would refuse `localhost`; this test is about frames, not containment.
        let browser = Browser::launch(LaunchOptions {
            resolver_belt: false,
            ..LaunchOptions::default()
        })
        .await
        .expect("launch");
        let context = browser.new_context().await.expect("context");
        let page = context.new_page().await.expect("page");
        page.navigate(
            &format!("http://127.0.0.1:{}/framed", site.port()),
            NAV_TIMEOUT,
        )
        .await
        .expect("navigate");
        // The frame attaches paused, is resumed by the dispatcher, and loads.
        let deadline = Instant::now() + Duration::from_secs(10);
        let frames = loop {
            let frames = page.frames().await.expect("frames");
            let loaded = frames.iter().any(|f| f.url().contains("localhost"));
            if loaded && frames.len() == 2 {
                break frames;
            }
            assert!(
                Instant::now() < deadline,
                "the cross-site frame never showed up"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let main = &frames[0];
        assert!(main.is_main());
        assert_eq!(
            page.evaluate("typeof secret").await.expect("main world"),
            "number"
        );
        assert_eq!(
            main.evaluate("typeof secret", false)
                .await
                .expect("isolated world"),
            "undefined",
            "page globals are invisible to ferry's world"
        );
        let inner = &frames[1];
        assert!(
            inner.is_out_of_process(page.session_id()),
            "a cross-site frame has its own session"
        );
        let email = inner
            .evaluate("document.querySelector('#email').value", false)
            .await
            .expect("evaluate in the frame");
        assert_eq!(email, "ada@example.com");
        let host = inner.evaluate("location.host", false).await.expect("host");
        assert_eq!(host, format!("localhost:{}", site.port()));
        browser.shutdown().await;
    })
    .await;
}

/// The pixel at (`x`, `y`) of a decoded RGB(A) image, as RGB.
fn pixel(image: &[u8], info: &png::OutputInfo, x: u32, y: u32) -> [u8; 3] {
    let channels = info.color_type.samples();
    let at = (y as usize * info.line_size) + x as usize * channels;
    [image[at], image[at + 1], image[at + 2]]
}

#[tokio::test]
async fn a_screenshot_is_a_png_of_the_region_asked_for_even_below_the_fold() {
    if !chromium_or_skip("a_screenshot_is_a_png_of_the_region_asked_for_even_below_the_fold") {
        return;
    }
    bounded(async {
        let browser = Browser::launch(LaunchOptions::default()).await.expect("launch");
        let context = browser.new_context().await.expect("context");
        let page = context.new_page().await.expect("page");
        let html = "<body style='margin:0'>\
            <div style='position:absolute;left:0;top:0;width:100px;height:50px;background:rgb(255,0,0)'></div>\
            <div style='position:absolute;left:0;top:3000px;width:80px;height:40px;background:rgb(0,0,255)'></div>\
            </body>";
        page.navigate(&format!("data:text/html,{html}"), NAV_TIMEOUT)
            .await
            .expect("navigate");
        let below = ferry_browser::Clip {
            x: 0.0,
            y: 3000.0,
            width: 80.0,
            height: 40.0,
            scale: 1.0,
        };
        let png_bytes = page.screenshot(below).await.expect("screenshot");
        let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
        let mut reader = decoder.read_info().expect("a PNG");
        let mut image = vec![0; reader.output_buffer_size().expect("a size")];
        let info = reader.next_frame(&mut image).expect("a frame");
        assert_eq!((info.width, info.height), (80, 40));
        for (x, y) in [(0, 0), (40, 20), (79, 39)] {
            assert_eq!(pixel(&image, &info, x, y), [0, 0, 255], "({x}, {y}) is the blue box");
        }
        // At scale 0.5 the image is half as wide and high: the red box at the top.
        let top = ferry_browser::Clip {
            x: 0.0,
            y: 0.0,
            width: 100.0,
            height: 50.0,
            scale: 0.5,
        };
        let png_bytes = page.screenshot(top).await.expect("screenshot");
        let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes))
            .read_info()
            .expect("a PNG");
        let mut image = vec![0; reader.output_buffer_size().expect("a size")];
        let info = reader.next_frame(&mut image).expect("a frame");
        assert_eq!((info.width, info.height), (50, 25));
        assert_eq!(pixel(&image, &info, 25, 12), [255, 0, 0]);
        browser.shutdown().await;
    })
    .await;
}
