//! The configuration reference (`docs/src/reference/configuration.md`) between its
//! `generated` markers is what the binary prints of itself: every key of the configuration
//! file with its default (`ferry serve --print-config`), and the help of every command and
//! subcommand (every flag, its environment variable and its default). So it cannot drift:
//! when the binary changes, this test fails until the page is made again with
//! `FERRY_UPDATE_DOCS=1 cargo test -p ferry --test docs reference`.

use crate::support::{ferry, workspace_root};

const PAGE: &str = "docs/src/reference/configuration.md";
const BEGIN: &str = "<!-- generated:begin (crates/ferry/tests/docs/reference.rs) -->";
const END: &str = "<!-- generated:end -->";

/// `ferry ARGS` run with a fixed terminal width, in a directory of its own; its stdout.
fn ferry_says(args: &[&str]) -> String {
    let dir = crate::support::scratch_dir("docs-reference");
    let out = ferry()
        .args(args)
        .current_dir(&dir)
        .env("COLUMNS", "100")
        .env_remove("RUST_LOG")
        .output()
        .expect("ferry");
    assert!(out.status.success(), "ferry {args:?}: {out:?}");
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The subcommands a help text lists (not `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// The help of `path` and of every subcommand below it, depth first.
fn helps(path: &mut Vec<String>, out: &mut String) {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let help = ferry_says(&args);
    let shown = if path.is_empty() {
        "ferry".to_owned()
    } else {
        format!("ferry {}", path.join(" "))
    };
    out.push_str(&format!(
        "\n### `{shown}`\n\n```text\n{}\n```\n",
        help.trim_end()
    ));
    for sub in subcommands(&help) {
        path.push(sub);
        helps(path, out);
        path.pop();
    }
}

/// What the markers hold.
fn generated() -> String {
    let mut out = String::from(
        "\n## Every key of the configuration file, with its default\n\n`ferry serve --print-config` with no flag, file or variable:\n\n```toml\n",
    );
    out.push_str(ferry_says(&["serve", "--print-config"]).trim_end());
    out.push_str("\n```\n\n## Every command and flag\n");
    helps(&mut Vec::new(), &mut out);
    out.push('\n');
    out
}

#[test]
fn the_configuration_reference_is_what_the_binary_says() {
    let path = workspace_root().join(PAGE);
    let page = std::fs::read_to_string(&path).expect("the reference page");
    let (Some(begin), Some(end)) = (page.find(BEGIN), page.find(END)) else {
        panic!("{PAGE} lacks its generated markers");
    };
    let kept = &page[begin + BEGIN.len()..end];
    let now = generated();
    if kept == now {
        return;
    }
    if std::env::var_os("FERRY_UPDATE_DOCS").is_some() {
        let updated = format!("{}{BEGIN}{now}{}", &page[..begin], &page[end..]);
        std::fs::write(&path, updated).expect("write the page");
        return;
    }
    let first = kept
        .lines()
        .zip(now.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(0);
    panic!(
        "{PAGE} is not what the binary says (first difference at generated line {}); run FERRY_UPDATE_DOCS=1 cargo test -p ferry --test docs reference\n---- page ----\n{}\n---- binary ----\n{}",
        first + 1,
        kept.lines().nth(first).unwrap_or_default(),
        now.lines().nth(first).unwrap_or_default()
    );
}
