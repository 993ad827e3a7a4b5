//! The token estimate shared by the chunker, the briefing budget and the bundle budget.
//!
//! `ceil(len / 4)` where `len` counts UTF-16 code units, exactly as the reference's
//! `String.length()`; empty text is 0 tokens.

/// Estimated tokens of `text`: `ceil(utf16_len / 4)`.
pub fn estimate_tokens(text: &str) -> usize {
    text.encode_utf16().count().div_ceil(4)
}

/// Length of `text` in UTF-16 code units (the reference's character count).
pub fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_zero() {
        assert_eq!(estimate_tokens(""), 0);
    }

    #[test]
    fn rounds_up_per_four_code_units() {
        assert_eq!(estimate_tokens("a"), 1);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens(&"x".repeat(400)), 100);
    }

    #[test]
    fn counts_utf16_units_not_bytes_or_chars() {
        // "é" is 2 UTF-8 bytes but 1 UTF-16 unit; "𝄞" is 4 bytes, 1 char, 2 UTF-16 units.
        assert_eq!(utf16_len("é"), 1);
        assert_eq!(utf16_len("𝄞"), 2);
        assert_eq!(estimate_tokens("éééé"), 1);
        assert_eq!(estimate_tokens("𝄞𝄞𝄞"), 2);
    }
}
