//! Comparing secrets without leaking where they differ: one rule for every token ferry
//! checks (the server's bearer tokens, the forms agent's approval links and approver token).

/// Compares two byte strings in time that depends only on their lengths, not on where they
/// differ, so that a network client cannot find a token byte by byte by timing answers.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    // The length of the expected token is not secret enough to protect; its content is.
    let mut diff = u8::from(a.len() != b.len());
    for (i, x) in a.iter().enumerate() {
        let y = b.get(i % b.len().max(1)).copied().unwrap_or(0);
        diff |= x ^ y;
    }
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::constant_time_eq;

    #[test]
    fn equal_only_when_equal() {
        assert!(constant_time_eq(b"s3cret", b"s3cret"));
        assert!(!constant_time_eq(b"s3cret", b"s3creT"));
        assert!(!constant_time_eq(b"s3cret", b"s3cre"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(!constant_time_eq(b"x", b""));
        assert!(constant_time_eq(b"", b""));
    }
}
