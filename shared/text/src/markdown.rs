//! Small Markdown helpers shared by the markup scanners (`acl`, `links`, `citation`).
//!
//! * [`code_ranges`] finds the byte ranges of Markdown *code* — inline code spans, fenced code
//!   blocks and indented code blocks — with a real CommonMark parser (pulldown-cmark), so the
//!   ACL scanner can skip `[{ALLOW …}]` examples shown as code, exactly as the reference does
//!   with its bare CommonMark parse (REFERENCE §4.5).
//! * [`strip_frontmatter`] drops a leading YAML frontmatter block
//!   from the body using the reference's framing rule (REFERENCE §4.1): the block starts at
//!   offset 0 with a `---` line and ends at the next line that is exactly `---`.
//! * [`next_link_opener`] finds `[text](` link openers in raw text (the common first step of
//!   the wikilink and `cite://` scanners), and [`url_decode`] decodes `%xx`/`+` escapes.
//!
//! Everything here is total: any `&str` is accepted and nothing panics.

use std::ops::Range;

pub use wikantik_format::markup::{strip_frontmatter, url_decode};
use pulldown_cmark::{Event, Options, Parser, Tag};

/// Byte ranges `[start, end)` of every code span, fenced code block and indented code block
/// in `text`, in document order. Ranges of blocks include their fences; ranges of code spans
/// include their backticks. Nested structure (code inside lists, block quotes, …) is found.
///
/// The text is parsed as plain CommonMark (no extensions), which is what the reference uses to
/// decide whether an ACL directive is "inside code".
pub fn code_ranges(text: &str) -> Vec<Range<usize>> {
    let mut ranges: Vec<Range<usize>> = Vec::new();
    for (event, range) in Parser::new_ext(text, Options::empty()).into_offset_iter() {
        match event {
            Event::Code(_) | Event::Start(Tag::CodeBlock(_)) => ranges.push(range),
            _ => {}
        }
    }
    ranges
}

/// True when byte `offset` lies inside one of `ranges`, which must be sorted and disjoint (as
/// [`code_ranges`] returns them). Logarithmic in the number of ranges, so a scanner that asks
/// about every opener of a long page stays fast.
pub fn is_inside(ranges: &[Range<usize>], offset: usize) -> bool {
    let after = ranges.partition_point(|r| r.start <= offset);
    after > 0 && ranges.get(after - 1).is_some_and(|r| r.contains(&offset))
}

/// Where a Markdown inline link starts: the `[` and `]` of `[text](` (see [`next_link_opener`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkOpener {
    /// Byte offset of the `[` that opens the link text.
    pub open: usize,
    /// Byte offset of the `]` that closes the link text; the destination starts at `close + 2`.
    pub close: usize,
    /// True when the `[` is preceded by `!` (an image, `![alt](src)`).
    pub image: bool,
}

impl LinkOpener {
    /// The link text between the brackets.
    pub fn text<'a>(&self, source: &'a str) -> &'a str {
        source.get(self.open + 1..self.close).unwrap_or("")
    }

    /// Byte offset where the destination (after `](`) starts.
    pub fn destination_start(&self) -> usize {
        self.close + 2
    }
}

/// Finds the next `[text](` at or after byte `from`, scanning the raw text the way the
/// reference's link regex does (no Markdown parse, so code spans are *not* skipped), with
/// these refinements, which follow CommonMark:
///
/// * the innermost bracket wins — in `[a [b](c)` the text is `b`, not `a [b`;
/// * an escaped `\[` does not open a link, and link text may not contain a blank line.
///
/// The text cannot contain `]`. The caller parses the destination; when it rejects it, it
/// continues from `close + 1`.
pub fn next_link_opener(text: &str, from: usize) -> Option<LinkOpener> {
    let bytes = text.as_bytes();
    let mut i = from;
    loop {
        let open = i + bytes.get(i..)?.iter().position(|&b| b == b'[')?;
        // The innermost unescaped `[` before the first `]` opens the candidate text.
        let mut inner = if is_escaped(bytes, open) {
            None
        } else {
            Some(open)
        };
        let mut j = open + 1;
        let close = loop {
            match bytes.get(j)? {
                b']' => break j,
                b'[' if !is_escaped(bytes, j) => inner = Some(j),
                _ => {}
            }
            j += 1;
        };
        if let Some(inner) = inner {
            let body = text.get(inner + 1..close).unwrap_or("");
            if bytes.get(close + 1) == Some(&b'(') && !has_blank_line(body) {
                let image = inner > 0 && bytes.get(inner - 1) == Some(&b'!');
                return Some(LinkOpener {
                    open: inner,
                    close,
                    image,
                });
            }
        }
        i = close + 1;
    }
}

/// True when the byte at `at` is preceded by a backslash.
fn is_escaped(bytes: &[u8], at: usize) -> bool {
    at > 0 && bytes.get(at - 1) == Some(&b'\\')
}

/// True when `s` contains an empty or whitespace-only line between two line breaks.
fn has_blank_line(s: &str) -> bool {
    let mut lines = s.split('\n');
    lines.next();
    let mut middle: Vec<&str> = lines.collect();
    middle.pop();
    middle.iter().any(|l| l.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_frontmatter(text: &str) -> (Option<&str>, &str) {
        let s = wikantik_format::markup::split_frontmatter(text);
        (s.yaml, s.body)
    }

    fn covered<'a>(text: &'a str, ranges: &[Range<usize>]) -> Vec<&'a str> {
        ranges.iter().filter_map(|r| text.get(r.clone())).collect()
    }

    #[test]
    fn finds_code_spans_and_blocks() {
        let text = "intro `span` text\n\n```rust\nfenced\n```\n\n    indented\n\npara ``two `ticks` here``\n";
        let ranges = code_ranges(text);
        let got = covered(text, &ranges);
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[0], "`span`");
        assert!(got[1].starts_with("```rust") && got[1].contains("fenced"));
        assert!(got[2].contains("indented"));
        assert_eq!(got[3], "``two `ticks` here``");
    }

    #[test]
    fn code_nested_in_lists_and_quotes() {
        let text = "- item with `code`\n\n> quoted\n>\n> ```\n> block\n> ```\n";
        let ranges = code_ranges(text);
        let got = covered(text, &ranges);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0], "`code`");
        assert!(got[1].contains("block"));
    }

    #[test]
    fn html_blocks_quotes_lists_tables_and_links_are_not_code() {
        for text in [
            "<!-- [{ALLOW view A}]() -->\n",
            "<!--\n    indented inside a comment\n\n    after a blank line\n-->\n",
            "<div>\n    indented inside a div\n</div>\n",
            "<pre>\n    preformatted HTML\n</pre>\n",
            "> quoted [{ALLOW view A}]()\n",
            "- item [{ALLOW view A}]()\n  continued\n",
            "| a | [{ALLOW view A}]() |\n|---|---|\n",
            "[link text [{ALLOW view A}]](Target)\n",
        ] {
            assert_eq!(code_ranges(text), Vec::<Range<usize>>::new(), "{text:?}");
        }
        // A Markdown HTML block ends at a blank line: what follows is Markdown again.
        let text = "<div>\n\n    code after the block\n\n</div>\n";
        assert_eq!(
            covered(text, &code_ranges(text)),
            vec!["code after the block\n"]
        );
    }

    #[test]
    fn inside_uses_sorted_ranges() {
        let ranges = [2..4, 6..7, 10..20];
        let inside: Vec<usize> = (0..22).filter(|&o| is_inside(&ranges, o)).collect();
        let expected: Vec<usize> = [2, 3, 6].into_iter().chain(10..20).collect();
        assert_eq!(inside, expected);
    }

    #[test]
    fn unclosed_backtick_is_not_code() {
        let text = "a ` b [{ALLOW view Admin}]";
        assert!(code_ranges(text).is_empty());
        assert!(!is_inside(&[], 3));
    }

    #[test]
    fn link_openers() {
        let find_all = |text: &str| {
            let mut out = Vec::new();
            let mut from = 0;
            while let Some(o) = next_link_opener(text, from) {
                out.push((o.text(text).to_owned(), o.image));
                from = o.close + 1;
            }
            out
        };
        assert_eq!(
            find_all("[a](b) ![i](x.png)"),
            vec![("a".into(), false), ("i".into(), true)]
        );
        assert_eq!(find_all("[a [b](c)"), vec![("b".into(), false)]);
        assert_eq!(find_all("[[link]()"), vec![("link".into(), false)]);
        assert_eq!(find_all("[x] and [y] (z)"), Vec::<(String, bool)>::new());
        assert_eq!(find_all("\\[not](x) [yes](y)"), vec![("yes".into(), false)]);
        assert_eq!(find_all("[a\n\nb](c)"), Vec::<(String, bool)>::new());
        assert_eq!(find_all("[a\nb](c)"), vec![("a\nb".into(), false)]);
        assert_eq!(find_all("[é](ü)"), vec![("é".into(), false)]);
        for nasty in ["[", "]", "[]", "[](", "]((", "[[[[", "\\[", "![", "!["] {
            let _ = find_all(nasty);
        }
    }

    #[test]
    fn url_decoding() {
        assert_eq!(url_decode("Rollback%20Steps", true), "Rollback Steps");
        assert_eq!(url_decode("a+b", true), "a b");
        assert_eq!(url_decode("a+b", false), "a+b");
        assert_eq!(url_decode("100%", true), "100%");
        assert_eq!(url_decode("%zz%4", true), "%zz%4");
        assert_eq!(url_decode("%C3%A9t%C3%A9", false), "été");
        assert_eq!(url_decode("%FF", false), "\u{FFFD}");
        assert_eq!(url_decode("%2B", true), "+");
    }

    #[test]
    fn frontmatter_split() {
        let (fm, body) = split_frontmatter("---\ntitle: X\n---\n# Body\n");
        assert_eq!(fm, Some("title: X\n"));
        assert_eq!(body, "# Body\n");

        let (fm, body) = split_frontmatter("---\r\na: 1\r\n---\r\nrest");
        assert_eq!(fm, Some("a: 1\r\n"));
        assert_eq!(body, "rest");

        // Closing fence at end of file without a newline.
        assert_eq!(split_frontmatter("---\na: 1\n---"), (Some("a: 1\n"), ""));
        // Empty block.
        assert_eq!(split_frontmatter("---\n---\nbody"), (Some(""), "body"));
        // Not at offset 0, unclosed, or not a fence line: no frontmatter.
        assert_eq!(
            split_frontmatter(" ---\na\n---\n"),
            (None, " ---\na\n---\n")
        );
        assert_eq!(split_frontmatter("---\na: 1\n"), (None, "---\na: 1\n"));
        assert_eq!(
            split_frontmatter("----\na\n---\n"),
            (None, "----\na\n---\n")
        );
        assert_eq!(split_frontmatter("---"), (None, "---"));
        assert_eq!(strip_frontmatter("plain"), "plain");
        assert_eq!(strip_frontmatter(""), "");
    }
}
