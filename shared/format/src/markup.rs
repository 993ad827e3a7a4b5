//! Plain-text helpers both sides agree on: the frontmatter fence split and URL decoding (page
//! slugs, query strings). No Markdown parsing here: that is `wikantik-text`.

/// The frontmatter block split off a page's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontmatterSplit<'a> {
    /// The YAML between the fences, without them (`None` when the page has no block).
    pub yaml: Option<&'a str>,
    /// The page text after the closing fence (the whole text when there is no block).
    pub body: &'a str,
    /// 1-based line of the page on which the YAML starts (the line after `---`).
    pub yaml_first_line: usize,
}

/// Split a page into frontmatter YAML and body.
///
/// The block must start at offset 0 (after an optional byte-order mark) with `---` and a line
/// break, and close with a line that is exactly `---` (trailing spaces and `\r` tolerated).
/// An opening fence that is never closed means "no frontmatter": the whole text is the body.
pub fn split_frontmatter(text: &str) -> FrontmatterSplit<'_> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let no_block = FrontmatterSplit { yaml: None, body: text, yaml_first_line: 1 };
    let after_open = if let Some(rest) = text.strip_prefix("---\n") {
        rest
    } else if let Some(rest) = text.strip_prefix("---\r\n") {
        rest
    } else {
        return no_block;
    };
    let yaml_start = text.len() - after_open.len();
    let mut offset = 0usize;
    for line in after_open.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r', ' ', '\t']);
        if content == "---" {
            let yaml = &after_open[..offset];
            let body = &text[yaml_start + offset + line.len()..];
            return FrontmatterSplit { yaml: Some(yaml), body, yaml_first_line: 2 };
        }
        offset += line.len();
    }
    no_block
}

/// The body of `text` without its frontmatter block (see [`split_frontmatter`]).
pub fn strip_frontmatter(text: &str) -> &str {
    split_frontmatter(text).body
}

/// Decodes URL percent-escapes (`%20` → space); with `plus_as_space`, `+` becomes a space first
/// (HTML form encoding, as Java's `URLDecoder` does). A `%` not followed by two hex digits is
/// kept literally; byte sequences that are not UTF-8 become U+FFFD.
pub fn url_decode(s: &str, plus_as_space: bool) -> String {
    if !(s.contains('%') || (plus_as_space && s.contains('+'))) {
        return s.to_owned();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'+' if plus_as_space => out.push(b' '),
            b'%' => {
                let hi = bytes.get(i + 1).and_then(|c| (*c as char).to_digit(16));
                let lo = bytes.get(i + 2).and_then(|c| (*c as char).to_digit(16));
                if let (Some(hi), Some(lo)) = (hi, lo) {
                    out.push((hi * 16 + lo) as u8);
                    i += 3;
                    continue;
                }
                out.push(b'%');
            }
            _ => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A slug as one URL path segment: unreserved characters kept, everything else percent-encoded
/// (`Runbooks Hub` → `Runbooks%20Hub`, `Q&A` → `Q%26A`).
pub fn path_segment(slug: &str) -> String {
    let mut out = String::with_capacity(slug.len());
    for b in slug.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
