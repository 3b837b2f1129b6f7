//! Integration tests of ferry-trust: external test vectors (`shared/testvectors/`) and card
//! fetching from a local HTTPS server.

/// Card signing payloads and digests of the SDK-signed card vectors.
mod card;
/// Card fetching over TLS on 127.0.0.1: address refusals and every fetch error.
mod fetch;
/// JCS: cyberphone files, RFC 8785 tables, tricky cases, the ES6 number sequence.
mod jcs;
/// JWS: RFC 7515/8037 vectors, SDK-signed cards, the spec §6 EdDSA vector.
mod jws;
/// An OpenID provider on 127.0.0.1: keys fetched, rotated, refetched at most so often.
mod oidc;
/// Reading the shared vectors.
mod support;
