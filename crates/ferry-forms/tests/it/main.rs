//! Integration tests of the forms agent against a real headless Chromium and pages served by
//! the tests on 127.0.0.1 (fake host names mapped to 127.0.0.1 with the proxy's resolver).
//! Without Chromium they skip loudly, or fail under `CI=true`.

/// The A2A contract: turns, artifacts, forms of every kind, uploads, refusals.
mod agent;
/// Human approval through the agent's API (the MCP face's path).
mod approval;
/// `"auto": true` and saved profiles: tokens, four languages, secrets, cards, notes, callers.
mod auto;
/// Bring your own browser: a registered CDP endpoint instead of a launched Chromium.
mod byob;
/// A confirmation approves only a submit shown ready; nothing is clicked on an incomplete form.
mod confirm;
/// The page script alone: inspect / fill / submit on every kind of form.
mod inspect_js;
/// The leak matrix through the whole agent, in both isolation modes.
mod leaks;
/// Pages as they are published: what a submit really did, errors where the page shows
/// them, group questions, dates in parts, unsent fields, follow-ups, whose session it is.
mod real_pages;
/// The picture of what will be sent: a screenshot per fill, its secrets blanked.
mod screenshots;
/// Isolation, the session cap, idle close, slow pages, crashes.
mod sessions;
/// Multi-step forms: steps passed without a confirm, later values waiting, one final submit.
mod steps;
/// Shared helpers: the test site, the agent behind a server, the Chromium check.
mod support;
/// Pages nobody here wrote: npm demo pages of form libraries and design systems.
mod third_party;
/// The widgets sites use, on each library's own demo page: date pickers, custom selects,
/// split inputs.
mod widgets;
