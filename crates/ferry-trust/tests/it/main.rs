//! Integration tests of ferry-trust against external test vectors (`shared/testvectors/`).

/// Card signing payloads and digests of the SDK-signed card vectors.
mod card;
/// JCS: cyberphone files, RFC 8785 tables, tricky cases, the ES6 number sequence.
mod jcs;
/// JWS: RFC 7515/8037 vectors, SDK-signed cards, the spec §6 EdDSA vector.
mod jws;
/// Reading the shared vectors.
mod support;
