//! The picture of what will be sent: every turn that fills a form carries a `screenshot`
//! artifact, a PNG of the form as filled, with its secrets blanked in the image.

use crate::agent::{shop_config, with_agent};
use crate::support::agent::state;
use ferry_forms::FormsConfig;
use ferry_forms::screenshot::{BLANK, MAX_BYTES, MAX_WIDTH};
use serde_json::{Value, json};

/// A decoded picture.
struct Picture {
    width: u32,
    height: u32,
    /// RGB, row by row.
    rows: Vec<Vec<[u8; 3]>>,
    /// The PNG's size.
    bytes: usize,
}

/// The decoded `screenshot` artifact of a turn's answer; `None` when the turn has none.
fn picture(answer: &Value) -> Option<Picture> {
    use base64::Engine as _;
    let artifact = answer["task"]["artifacts"]
        .as_array()?
        .iter()
        .find(|a| a["artifactId"] == "screenshot")?;
    assert_eq!(artifact["metadata"]["untrusted"], true, "{artifact}");
    let part = &artifact["parts"][0];
    assert_eq!(part["mediaType"], "image/png", "{part}");
    let png_bytes = base64::engine::general_purpose::STANDARD
        .decode(part["raw"].as_str().expect("raw bytes"))
        .expect("base64");
    let size = png_bytes.len();
    let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes))
        .read_info()
        .expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut pixels).expect("a frame");
    let channels = info.color_type.samples();
    let rows = (0..info.height as usize)
        .map(|y| {
            (0..info.width as usize)
                .map(|x| {
                    let at = y * info.line_size + x * channels;
                    [pixels[at], pixels[at + 1], pixels[at + 2]]
                })
                .collect()
        })
        .collect();
    Some(Picture {
        width: info.width,
        height: info.height,
        rows,
        bytes: size,
    })
}

/// The longest run of blanked pixels in one row.
fn longest_blank_run(rows: &[Vec<[u8; 3]>]) -> usize {
    rows.iter()
        .map(|row| {
            row.iter()
                .fold((0, 0), |(best, run), p| {
                    let run = if *p == BLANK { run + 1 } else { 0 };
                    (best.max(run), run)
                })
                .0
        })
        .max()
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filled_form_comes_with_its_picture_and_the_password_is_blanked() {
    with_agent("screenshots::blanked", shop_config, |site, server| async move {
        let url = site.url("shop.test", "/signup.html");
        let named = server
            .send("s1", None, json!({"url": url, "values": {"Full name": "Ada Lovelace"}}))
            .await;
        assert_eq!(state(&named), "TASK_STATE_INPUT_REQUIRED", "{named}");
        let Picture {
            width,
            height,
            rows,
            bytes: size,
        } = picture(&named).expect("a screenshot");
        assert!(f64::from(width) <= MAX_WIDTH && size <= MAX_BYTES, "{width}×{height}, {size} B");
        assert!(width > 100 && height > 100, "{width}×{height}");
        let colours: std::collections::HashSet<[u8; 3]> = rows.iter().flatten().copied().collect();
        assert!(colours.len() > 10, "a picture of a form has more than {} colours", colours.len());
        // The password control is blanked, filled or not, and nothing else is.
        let run = longest_blank_run(&rows);
        assert!(run >= 100 && run < width as usize, "blank run of {run} in {width} pixels");

        let secret = server
            .send(
                "s2",
                None,
                json!({"url": url, "values": {"Full name": "Ada Lovelace", "Password": "correct horse"}}),
            )
            .await;
        assert_eq!(state(&secret), "TASK_STATE_INPUT_REQUIRED", "{secret}");
        let rows = picture(&secret).expect("a screenshot").rows;
        // The password field's box is one flat colour, as wide as the field, with a value in it.
        assert!(longest_blank_run(&rows) >= 100, "the password was not blanked");
        let blanked: usize = rows.iter().flatten().filter(|p| **p == BLANK).count();
        assert!(blanked >= 100 * 15, "only {blanked} blanked pixels");
        // An inspection alone fills nothing and has no picture.
        let look = server.send("s3", None, json!({"url": url})).await;
        assert!(picture(&look).is_none(), "{look}");
        server
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screenshots_off_sends_no_picture() {
    let config = |site: &_| FormsConfig {
        screenshots: false,
        ..shop_config(site)
    };
    with_agent("screenshots::off", config, |site, server| async move {
        let url = site.url("shop.test", "/signup.html");
        let filled = server
            .send(
                "s4",
                None,
                json!({"url": url, "values": {"Full name": "Ada Lovelace"}}),
            )
            .await;
        assert_eq!(state(&filled), "TASK_STATE_INPUT_REQUIRED", "{filled}");
        assert!(picture(&filled).is_none(), "{filled}");
        server
    })
    .await;
}
