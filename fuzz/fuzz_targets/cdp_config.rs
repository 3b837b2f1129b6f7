//! `cdp-config/v1` bodies as the extension reads them: registrations and removals.

#![no_main]

use ferry_cdp_config::{parse_registration, parse_removal};
use ferry_server::decode::BodyLimits;
use libfuzzer_sys::fuzz_target;

const LIMITS: BodyLimits = BodyLimits {
    max_bytes: 64 * 1024,
    max_depth: 64,
};

fuzz_target!(|body: &[u8]| {
    if let Ok(endpoint) = parse_registration(body, LIMITS) {
        assert!(!endpoint.name.is_empty());
        // Schemes are case-insensitive (`wS://` is a WebSocket URL).
        assert!(endpoint.ws_url.to_ascii_lowercase().starts_with("ws"));
    }
    let _ = parse_removal(body, LIMITS);
});
