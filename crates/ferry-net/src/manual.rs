//! The threats ferry-net answers, and the test that guards each one.
//!
//! # DNS rebinding
//! A name may resolve to a public address when checked and to `127.0.0.1` when dialed.
//! [`crate::resolve::PolicyResolver`] is the resolver hyper dials from, so the checked
//! address is the dialed address; and one refused address refuses the whole answer, since
//! hyper falls back to later addresses when the first fails. Guarded by
//! `resolve::tests::one_refused_address_refuses_the_whole_answer` and
//! `tests/it/client.rs::a_name_resolving_to_loopback_is_refused`.
//!
//! # IP literals and their spellings
//! hyper never asks the resolver about `https://127.0.0.1/`. The `url` crate normalises
//! `2130706433`, `0x7f.1` and `127.1` to `127.0.0.1` (WHATWG host parsing), so
//! [`crate::SafeClient::check_url`] checks the parsed host. Guarded by
//! `tests/it/client.rs::every_loopback_spelling_is_refused`.
//!
//! # IPv4-mapped IPv6 and NAT64
//! A dual-stack socket dialing `::ffff:127.0.0.1` reaches IPv4 loopback, so mapped
//! addresses are classified as IPv4; `64:ff9b::/96` reaches its embedded address through a
//! NAT64 gateway, so a special embedded address keeps its range and a public one needs
//! [`crate::IpPolicy::allow_nat64`]. Guarded by `policy::tests::classifier_table`.
//!
//! # Redirects
//! A public server may redirect to `http://169.254.169.254/`. [`crate::SafeClient`]
//! follows no redirect; callers check each `Location` with
//! [`crate::SafeClient::check_url`] before requesting it.
//!
//! # Proxy environment variables
//! reqwest reads `HTTPS_PROXY` by default, and a proxy resolves and dials on our behalf.
//! The client is built with `no_proxy()`. Guarded by
//! `tests/it/client.rs::proxy_environment_is_ignored`.
//!
//! # The peer after connecting
//! Defence in depth: [`crate::SafeClient::execute`] re-checks
//! `reqwest::Response::remote_addr`, and refuses a response without one.
