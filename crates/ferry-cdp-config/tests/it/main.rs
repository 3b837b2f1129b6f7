//! ferry-cdp-config's integration tests: the extension served by a real server.

// Registering, listing, replacing, removing; what turns see; infrastructure failures.
mod registry;
