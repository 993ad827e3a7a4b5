//! Page ACLs written in JSPWiki markup (REFERENCE §4.5, CONTRACT §3.5).
//!
//! A page restricts itself with one or more directives `[{ALLOW <action> <principal>,…}]`
//! anywhere in its *raw* text outside code (the corpus writes them as empty links,
//! `[{ALLOW view All}]()`; the trailing `()` is optional). A page without a directive has no
//! ACL and the static policy decides, which at the edge means "everyone may read it".
//! `docs/SECURITY.md` ("ACL markup") states the same rules for wiki authors.
//!
//! # Where directives are looked for
//!
//! * [`scan_markdown`] takes the page file's text as stored — frontmatter included, before any
//!   other transformation (HTML blocks are *not* reduced first: an HTML comment is where an
//!   author hides markup from readers, and a directive there still counts). Every context
//!   counts — paragraphs, HTML comments (one line or several), HTML blocks, block quotes, list
//!   items, table cells, link text, headings — except Markdown code: a directive whose opening
//!   `[{` lies inside a code span, fenced block or indented block of the body (found with
//!   [`crate::markdown::code_ranges`]) is documentation, not a rule, and is skipped. Nothing
//!   in the frontmatter is code, and neither is anything between an HTML comment's `<!--`
//!   (outside code) and its `-->`: the comment hides that text from readers, so a Markdown
//!   parser calling part of it an indented block does not make it an example.
//! * [`scan_html`] takes an exported `.html` page as stored. There, code is the content of
//!   `<code>` and `<pre>` elements (what Markdown code renders to); everything else counts,
//!   comments and attributes included. HTML that cannot be read counts as having no code.
//!
//! # Parsing rules
//!
//! * `ALLOW` is case-sensitive; ASCII whitespace (line breaks included, like the reference's
//!   `\s`) may separate `[{`, `ALLOW`, the action and the principal list; `ALLOW` must be
//!   followed by at least one. The action must be one of
//!   `view|comment|edit|modify|rename|upload|delete` (lower case) and must be a whole word.
//! * The principal list runs to the first `}]` on its line; it is split on commas, names are
//!   trimmed, empty names are dropped, inner spaces are kept (`Jane Doe`).
//!
//! # Malformed directives fail closed
//!
//! An opener outside code that *looks like* a directive — `[{`, optional whitespace, then a
//! word starting with `allow` or `deny` in any letter case — but does not follow the rules
//! above (`[{allow view Alice}]`, `[{ALLOW veiw Alice}]`, `[{ALLOW view}]`,
//! `[{ALLOWview Alice}]`, no `}]` on its line, …) is a [`MalformedDirective`]. `[{DENY …}]`
//! is one too: JSPWiki ACLs only grant, and honouring the grants around a denial would show
//! the page to the principal its author meant to shut out. A page with any malformed
//! directive gets [`Acl::admin_only`] — its well-formed directives are dropped as well — and
//! the build warns (`MALFORMED_ACL`, naming file and line) until the markup is fixed. The
//! reference logs and skips such directives, which leaves a page whose only directive is
//! mistyped public; restricting is the safe reading of what the author wanted.
//!
//! Scanning is linear in the text and total: any `&str` is accepted and nothing panics.
//!
//! # Who is the caller?
//!
//! [`Acl::permits`] takes the principal names the caller holds — for an API key, the
//! principals configured with it (user name, groups, roles). The list is interpreted the way a
//! JSPWiki session is:
//!
//! * every caller implicitly holds the role `All`;
//! * a caller whose list names nothing but the anonymous principals (`All`, `Anonymous`,
//!   `Guest`) — including an empty list — is **anonymous** and holds `All`, `Anonymous` and
//!   `Guest`;
//! * any other caller is **authenticated** and holds its listed names plus `All` and
//!   `Authenticated`, but *not* `Anonymous`/`Guest` (as in JSPWiki, where the `Anonymous` role
//!   means "not logged in") — not even when its list names them;
//! * a caller holding `Admin` has `AllPermission` and bypasses every ACL.
//!
//! Names compare case-sensitively (`alice` is not `Alice`), except the built-in names `All`,
//! `Anonymous`, `Asserted`, `Authenticated`, `Guest` and `Admin`, which compare
//! case-insensitively on both sides.

use std::ops::Range;

use wikantik_format::acl::{Acl, AclEntry, AclProblem, AclScan, Action, MalformedDirective};

use crate::markdown;

/// The ACL of a Markdown page's raw text: [`scan_markdown`], malformed directives failing
/// closed ([`AclScan::into_acl`]).
pub fn parse_acl(text: &str) -> Acl {
    scan_markdown(text).into_acl()
}

/// Scans a Markdown page's raw text (frontmatter included) for directives outside code. See
/// the module docs for what counts as code.
pub fn scan_markdown(text: &str) -> AclScan {
    let mut code: Option<MarkdownCode> = None;
    scan(text, |at| {
        code.get_or_insert_with(|| MarkdownCode::of_page(text))
            .contains(at)
    })
}

/// Scans an exported HTML page's raw text for directives outside `<code>` and `<pre>`.
pub fn scan_html(html: &str) -> AclScan {
    if !html.contains(OPEN) {
        return AclScan::default();
    }
    match crate::html::blank_code_elements(html) {
        Ok(without_code) => scan(&without_code, |_| false),
        // Unreadable HTML: nothing is known to be code, so every directive counts.
        Err(_) => scan(html, |_| false),
    }
}

const OPEN: &str = "[{";

/// Finds every directive-looking opener of `text` for which `is_code` is false, in order.
/// `is_code` is asked only about such openers, in increasing offsets.
fn scan(text: &str, mut is_code: impl FnMut(usize) -> bool) -> AclScan {
    let mut found = AclScan::default();
    let mut scanner = DirectiveScanner {
        text,
        dead_until: 0,
    };
    let mut lines = LineCounter::default();
    let mut from = 0;
    while let Some(offset) = text.get(from..).and_then(|rest| rest.find(OPEN)) {
        let start = from + offset;
        let after_open = start + OPEN.len();
        from = after_open;
        let Some(keyword) = directive_keyword(text, after_open) else {
            continue;
        };
        if is_code(start) {
            continue;
        }
        match scanner.parse(keyword) {
            Ok((entry, end)) => {
                found.entries.push(entry);
                from = end;
            }
            Err(problem) => found.malformed.push(MalformedDirective {
                line: lines.line_of(text, start),
                problem,
            }),
        }
    }
    found
}

/// Byte offset of the keyword when the text after an opener looks like a directive: ASCII
/// whitespace, then a word starting with `allow` or `deny` in any letter case.
fn directive_keyword(text: &str, after_open: usize) -> Option<usize> {
    let rest = text.get(after_open..)?;
    let keyword = rest.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let starts_with = |word: &str| {
        keyword
            .get(..word.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(word))
    };
    (starts_with("allow") || starts_with("deny")).then(|| text.len() - keyword.len())
}

/// Where a Markdown page has code, for [`scan_markdown`].
struct MarkdownCode {
    /// Code spans and blocks of the body, as offsets into the whole text; sorted, disjoint.
    code: Vec<Range<usize>>,
    /// HTML comments of the body that open outside code; sorted, disjoint.
    comments: Vec<Range<usize>>,
}

impl MarkdownCode {
    fn of_page(text: &str) -> MarkdownCode {
        // The body is a suffix of the text; the frontmatter before it has no code.
        let body = markdown::strip_frontmatter(text);
        let body_start = text.len() - body.len();
        let code: Vec<Range<usize>> = markdown::code_ranges(body)
            .into_iter()
            .map(|r| r.start + body_start..r.end + body_start)
            .collect();
        let comments = comment_ranges(text, body_start, &code);
        MarkdownCode { code, comments }
    }

    fn contains(&self, offset: usize) -> bool {
        markdown::is_inside(&self.code, offset) && !markdown::is_inside(&self.comments, offset)
    }
}

/// HTML comments from `<!--` (at or after `from`, outside `code`) to the next `-->`, or to the
/// end of the text when none closes it.
fn comment_ranges(text: &str, from: usize, code: &[Range<usize>]) -> Vec<Range<usize>> {
    const COMMENT_OPEN: &str = "<!--";
    const COMMENT_CLOSE: &str = "-->";
    let mut comments = Vec::new();
    let mut from = from;
    while let Some(offset) = text.get(from..).and_then(|rest| rest.find(COMMENT_OPEN)) {
        let start = from + offset;
        let after_open = start + COMMENT_OPEN.len();
        if markdown::is_inside(code, start) {
            from = after_open;
            continue;
        }
        let end = text
            .get(after_open..)
            .and_then(|rest| rest.find(COMMENT_CLOSE))
            .map_or(text.len(), |close| after_open + close + COMMENT_CLOSE.len());
        comments.push(start..end);
        from = end;
    }
    comments
}

/// 1-based line numbers for increasing offsets, counting each byte once over all calls.
#[derive(Default)]
struct LineCounter {
    counted_to: usize,
    newlines: usize,
}

impl LineCounter {
    fn line_of(&mut self, text: &str, offset: usize) -> usize {
        if let Some(skipped) = text.as_bytes().get(self.counted_to..offset) {
            self.newlines += skipped.iter().filter(|&&b| b == b'\n').count();
            self.counted_to = offset;
        }
        self.newlines + 1
    }
}

/// Parses single directives, remembering where a search for `}]` already hit a line end so
/// that a long line full of unterminated `[{ALLOW view …` openers is scanned once, not once
/// per opener.
struct DirectiveScanner<'a> {
    text: &'a str,
    /// A principal list starting before this offset has no `}]` before its line ends.
    dead_until: usize,
}

impl DirectiveScanner<'_> {
    /// Parses `ALLOW\s+<action>\s*<principals>}]` starting at byte `at` (the keyword found by
    /// [`directive_keyword`]). Returns the entry and the byte offset just past `}]`, or what is
    /// wrong with it.
    fn parse(&mut self, at: usize) -> Result<(AclEntry, usize), AclProblem> {
        let text = self.text;
        let offset = |s: &str| text.len() - s.len();
        let rest = text.get(at..).unwrap_or("");
        let Some(after_allow) = rest.strip_prefix("ALLOW") else {
            let is_allow = rest
                .get(.."allow".len())
                .is_some_and(|w| w.eq_ignore_ascii_case("allow"));
            return Err(if is_allow {
                AclProblem::KeywordCase
            } else {
                AclProblem::Deny
            });
        };
        let at_action = after_allow.trim_start_matches(|c: char| c.is_ascii_whitespace());
        if at_action.len() == after_allow.len() {
            return Err(if after_allow.is_empty() || after_allow.starts_with('}') {
                AclProblem::MissingAction
            } else {
                AclProblem::NoSpaceAfterAllow
            });
        }
        let word_end = at_action
            .find(|c: char| c.is_whitespace() || c == ',' || c == '}')
            .unwrap_or(at_action.len());
        let word = at_action.get(..word_end).unwrap_or("");
        if word.is_empty() {
            return Err(AclProblem::MissingAction);
        }
        let action = Action::from_markup(word)
            .ok_or_else(|| AclProblem::UnknownAction(word.chars().take(40).collect()))?;
        let list = at_action
            .get(word_end..)
            .unwrap_or("")
            .trim_start_matches(|c: char| c.is_ascii_whitespace());
        let list_start = offset(list);
        if list_start < self.dead_until {
            return Err(AclProblem::Unterminated);
        }
        // The principal list ends at the first `}]` on its line.
        let close = match find_close_on_line(list) {
            Ok(close) => close,
            Err(line_end) => {
                self.dead_until = list_start + line_end;
                return Err(AclProblem::Unterminated);
            }
        };
        let principals: Vec<String> = list
            .get(..close)
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect();
        if principals.is_empty() {
            return Err(AclProblem::NoPrincipals);
        }
        Ok((
            AclEntry { action, principals },
            list_start + close + "}]".len(),
        ))
    }
}

/// `Ok(index of the first "}]")` when it comes before any line break, else `Err(index of the
/// line break or end of text)`.
fn find_close_on_line(s: &str) -> Result<usize, usize> {
    let bytes = s.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\n' | b'\r' => return Err(i),
            b'}' if bytes.get(i + 1) == Some(&b']') => return Ok(i),
            _ => {}
        }
    }
    Err(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn implication_table() {
        use Action::*;
        let expected: &[(Action, &[Action])] = &[
            (View, &[View]),
            (Comment, &[Comment, View]),
            (Upload, &[Upload, View]),
            (Edit, &[Edit, Comment, View]),
            (Modify, &[Modify, Edit, Upload, Comment, View]),
            (Rename, &[Rename, Edit, Comment, View]),
            (Delete, &[Delete, Modify, Edit, Upload, Comment, View]),
        ];
        for (held, granted) in expected {
            for other in Action::ALL {
                assert_eq!(
                    held.implies(other),
                    granted.contains(&other),
                    "{held} implies {other}?"
                );
            }
        }
    }

    #[test]
    fn corpus_theme_page_pattern() {
        let acl = parse_acl("# Theme\n\n[{ALLOW edit Admin}]()[{ALLOW view All}]()\n\nbody");
        assert_eq!(
            acl.entries,
            vec![
                AclEntry {
                    action: Action::Edit,
                    principals: names(&["Admin"])
                },
                AclEntry {
                    action: Action::View,
                    principals: names(&["All"])
                },
            ]
        );
        assert!(acl.is_public());
        assert!(!acl.permits(&[], Action::Edit));
        assert!(!acl.permits(&names(&["Bob"]), Action::Edit));
        assert!(acl.permits(&names(&["Bob"]), Action::View));
        assert!(
            acl.permits(&names(&["admin"]), Action::Delete),
            "Admin bypasses"
        );
    }

    #[test]
    fn restricted_page() {
        let acl = parse_acl("[{ALLOW view Alice,Engineering}]()\nSecret.");
        assert_eq!(acl.entries.len(), 1);
        assert_eq!(acl.entries[0].principals, names(&["Alice", "Engineering"]));
        assert!(!acl.is_empty());
        assert!(!acl.is_public());
        assert!(acl.permits(&names(&["Alice"]), Action::View));
        assert!(acl.permits(&names(&["Carol", "Engineering"]), Action::View));
        assert!(
            !acl.permits(&names(&["alice"]), Action::View),
            "user names are case-sensitive"
        );
        assert!(
            !acl.permits(&names(&["Alice"]), Action::Edit),
            "view does not imply edit"
        );
        assert!(!acl.permits(&names(&["Anonymous"]), Action::View));
        assert!(!acl.permits(&names(&["Authenticated"]), Action::View));
    }

    #[test]
    fn principals_with_spaces_and_odd_commas() {
        let acl = parse_acl("[{ALLOW   edit  Jane Doe , ,Editors,}]");
        assert_eq!(acl.entries.len(), 1);
        assert_eq!(acl.entries[0].action, Action::Edit);
        assert_eq!(acl.entries[0].principals, names(&["Jane Doe", "Editors"]));
        assert!(
            acl.permits(&names(&["Jane Doe"]), Action::Comment),
            "edit implies comment"
        );
        assert!(acl.permits(&names(&["Jane Doe"]), Action::View));
        assert!(!acl.permits(&names(&["Jane"]), Action::View));
    }

    #[test]
    fn built_in_roles() {
        let anon = parse_acl("[{ALLOW view anonymous}]");
        assert!(anon.is_public(), "built-in names match case-insensitively");
        assert!(anon.permits(&names(&["Guest"]), Action::View));
        assert!(
            !anon.permits(&names(&["Alice"]), Action::View),
            "logged-in callers are not Anonymous"
        );

        let auth = parse_acl("[{ALLOW upload Authenticated}]");
        assert!(!auth.is_public());
        assert!(auth.permits(&names(&["Alice"]), Action::View));
        assert!(auth.permits(&names(&["Alice"]), Action::Upload));
        assert!(!auth.permits(&names(&["Alice"]), Action::Edit));

        let guest = parse_acl("[{ALLOW comment Guest}]");
        assert!(guest.is_public());
        assert!(guest.permits(&names(&["All", "Guest"]), Action::Comment));
    }

    #[test]
    fn no_acl_permits_everything() {
        let acl = parse_acl("# Plain page\n\nNo directives. ALLOW is just a word.");
        assert!(acl.is_empty());
        assert!(acl.is_public());
        assert!(acl.permits(&[], Action::Edit));
        assert_eq!(parse_acl(""), Acl::default());
    }

    #[test]
    fn acl_in_code_is_ignored() {
        let span = "Write `[{ALLOW view Admin}]` to restrict a page.";
        assert!(parse_acl(span).is_empty());
        let double = "Or ``[{ALLOW view Admin}]()`` in double ticks.";
        assert!(parse_acl(double).is_empty());
        let fenced = "Example:\n\n```markdown\n[{ALLOW view Admin}]()\n```\n";
        assert!(parse_acl(fenced).is_empty());
        let tilde = "~~~\n[{ALLOW edit Admin}]\n~~~\n";
        assert!(parse_acl(tilde).is_empty());
        let indented = "Example:\n\n    [{ALLOW view Admin}]()\n\nafter";
        assert!(parse_acl(indented).is_empty());
        let in_list = "- item\n\n  ```\n  [{ALLOW view Admin}]\n  ```\n";
        assert!(parse_acl(in_list).is_empty());
        // A table cell written as code (the corpus's TextFormattingRules does this).
        let table = "| **ACLs** | `[{ALLOW view All}]` | perms |\n|---|---|---|\n";
        assert!(parse_acl(table).is_empty());
        // Code elsewhere does not hide a real directive.
        let mixed = "`[{ALLOW view Admin}]`\n\n[{ALLOW view Alice}]()";
        let acl = parse_acl(mixed);
        assert_eq!(acl.entries.len(), 1);
        assert_eq!(acl.entries[0].principals, names(&["Alice"]));
    }

    /// The problems of `text`'s malformed directives (a well-formed scan gives none).
    fn problems(text: &str) -> Vec<AclProblem> {
        scan_markdown(text)
            .malformed
            .into_iter()
            .map(|m| m.problem)
            .collect()
    }

    #[test]
    fn malformed_directives_restrict_the_page_to_admin() {
        use AclProblem::*;
        for (text, problem) in [
            ("[{ALLOW}]", MissingAction),
            ("[{ALLOW }]", MissingAction),
            ("[{ALLOW ,Alice}]", MissingAction),
            ("[{ ALLOW", MissingAction),
            ("[{ALLOW view}]", NoPrincipals),
            ("[{ALLOW view }]", NoPrincipals),
            ("[{ALLOW view ,, }]", NoPrincipals),
            ("[{ALLOW view\n}]", NoPrincipals),
            ("[{ALLOW fly Alice}]", UnknownAction("fly".into())),
            ("[{ALLOW View Alice}]", UnknownAction("View".into())),
            ("[{ALLOW viewer Alice}]", UnknownAction("viewer".into())),
            ("[{allow view Alice}]", KeywordCase),
            ("[{Allow view Alice}]()", KeywordCase),
            ("[{ALLOWview Alice}]", NoSpaceAfterAllow),
            ("[{ALLOW view Alice", Unterminated),
            ("[{ALLOW view Alice}\n]", Unterminated),
            ("[{ALLOW view Alice\n}]", Unterminated),
            ("[{DENY view Alice}]", Deny),
            ("[{deny view Alice}]()", Deny),
        ] {
            assert_eq!(problems(text), vec![problem], "{text:?}");
            let acl = parse_acl(text);
            assert_eq!(acl, Acl::admin_only(), "{text:?}");
            assert!(!acl.is_public(), "{text:?}");
            assert!(!acl.permits(&names(&["Alice"]), Action::View), "{text:?}");
            assert!(acl.permits(&names(&["Admin"]), Action::View), "{text:?}");
        }
        // Openers that do not look like a directive are plain text.
        for text in [
            "[{",
            "[{ ",
            "[{$message}]",
            "[{TableOfContents}]",
            "[{SET a=b}]",
            "[{ALL}]",
        ] {
            assert_eq!(scan_markdown(text), AclScan::default(), "{text:?}");
        }
        // A malformed directive next to good ones restricts the whole page: the good ones are
        // still recognised, but the page gets Admin only.
        let scan = scan_markdown("[{ALLOW view All}]()\n\n[{ALLOW fly Alice}] [{ALLOW view Bob}]");
        assert_eq!(scan.entries.len(), 2);
        assert_eq!(
            scan.malformed,
            vec![MalformedDirective {
                line: 3,
                problem: AclProblem::UnknownAction("fly".into())
            }]
        );
        assert_eq!(scan.into_acl(), Acl::admin_only());
        // DENY beside a grant to All does not leave the page public.
        assert!(!parse_acl("[{ALLOW view All}]()\n[{DENY view Bob}]()").is_public());
        // Long unknown action words are cut in the report.
        let long = format!("[{{ALLOW {} Alice}}]", "x".repeat(500));
        assert_eq!(problems(&long), vec![UnknownAction("x".repeat(40))]);
    }

    #[test]
    fn malformed_directives_in_code_are_documentation() {
        for text in [
            "`[{allow view Alice}]`",
            "```\n[{ALLOW veiw Alice}]\n[{DENY view Bob}]\n```\n",
            "Example:\n\n    [{ALLOW view\n",
        ] {
            assert_eq!(scan_markdown(text), AclScan::default(), "{text:?}");
            assert!(parse_acl(text).is_public(), "{text:?}");
        }
    }

    #[test]
    fn malformed_directives_report_their_lines() {
        let text = "---\ntitle: T\n---\n# T\n\n[{ALLOW view}]()\n\n```\n[{ALLOW x}]\n```\n\n\
                    > quote [{ALLOW fly A}]()\n";
        let lines: Vec<usize> = scan_markdown(text)
            .malformed
            .iter()
            .map(|m| m.line)
            .collect();
        assert_eq!(lines, vec![6, 12]);
    }

    /// The principal lists of `acl`'s entries.
    fn granted(acl: &Acl) -> Vec<Vec<String>> {
        acl.entries.iter().map(|e| e.principals.clone()).collect()
    }

    #[test]
    fn acl_inside_html_comment_restricts_the_page() {
        for text in [
            "# Page\n\n<!-- [{ALLOW view Alice}]() -->\n\nSecret.",
            "# Page\n\nIntro <!-- [{ALLOW view Alice}] --> more.",
            "<!--\n[{ALLOW view Alice}]()\n-->\n\nSecret.",
            // A comment block runs to its `-->`, blank lines and indented lines included.
            "<!--\n\n    [{ALLOW view Alice}]()\n\n-->\n\nSecret.",
            "<!--\n```\n[{ALLOW view Alice}]\n```\n-->\n",
            // A comment opened inside a paragraph: CommonMark ends the paragraph at the blank
            // line and calls the indented line code, but it is still inside the comment.
            "Text <!-- note\n\n    [{ALLOW view Alice}]()\n\n-->\n",
            // An unclosed comment hides the rest of the page, directive included.
            "<!-- draft\n\n    [{ALLOW view Alice}]()\n",
        ] {
            let acl = parse_acl(text);
            assert_eq!(granted(&acl), vec![names(&["Alice"])], "{text:?}");
            assert!(!acl.is_public(), "{text:?}");
        }
        // `<!--` shown as code opens no comment.
        let text = "Write `<!--` to start a comment.\n\n    [{ALLOW view Admin}]()\n\n-->\n";
        assert!(parse_acl(text).is_public());
        // A malformed directive in a comment fails closed too.
        assert_eq!(
            parse_acl("<!-- [{ALLOW veiw Alice}]() -->"),
            Acl::admin_only()
        );
    }

    #[test]
    fn every_context_outside_code_counts() {
        for text in [
            "<div>\n[{ALLOW view Alice}]()\n</div>\n",
            "<div>\n    [{ALLOW view Alice}]()\n</div>\n",
            "<div class=\"acl\">[{ALLOW view Alice}]</div>\n",
            "<pre>\n[{ALLOW view Alice}]\n</pre>\n",
            "Inline <code>[{ALLOW view Alice}]</code> HTML is not Markdown code.",
            "> [{ALLOW view Alice}]()\n",
            "> > nested\n> > [{ALLOW view Alice}]()\n",
            "- item\n- [{ALLOW view Alice}]()\n",
            "1. one\n   [{ALLOW view Alice}]()\n",
            "| a | b |\n|---|---|\n| x | [{ALLOW view Alice}]() |\n",
            "See [the page [{ALLOW view Alice}]](Other).",
            "# Heading [{ALLOW view Alice}]()\n",
            "[{ALLOW view Alice}]",
            "Trailing text[{ALLOW view Alice}]() and more.",
            // Frontmatter counts, and a fence in it cannot hide the body's directive.
            "---\ntitle: T\nnote: |\n  ```\n---\n\n[{ALLOW view Alice}]()\n",
            "---\ntitle: \"`[{ALLOW view Alice}]`\"\n---\nBody.\n",
        ] {
            let acl = parse_acl(text);
            assert_eq!(granted(&acl), vec![names(&["Alice"])], "{text:?}");
        }
        let two_lines = parse_acl("[{ALLOW view Alice}]()\n[{ALLOW view Bob}]()\n");
        assert_eq!(
            granted(&two_lines),
            vec![names(&["Alice"]), names(&["Bob"])]
        );
        for action in Action::ALL {
            let acl = parse_acl(&format!("<!-- [{{ALLOW {action} Alice}}]() -->"));
            assert!(acl.permits(&names(&["Alice"]), Action::View), "{action}");
            assert!(!acl.is_public(), "{action}");
        }
        // In a Markdown body an HTML block ends at a blank line, so an indented line after one
        // is a CommonMark code block, shown as code: documentation.
        assert!(parse_acl("<div>\n\n    [{ALLOW view Admin}]()\n\n</div>\n").is_public());
    }

    #[test]
    fn html_pages_skip_only_code_and_pre() {
        let scan = |html: &str| scan_html(html).into_acl();
        for html in [
            "<html><body><!-- [{ALLOW view Alice}]() --><p>Secret</p></body></html>",
            "<p>[{ALLOW view Alice}]</p>",
            "<!--\n\n    [{ALLOW view Alice}]\n\n-->",
            "<div title=\"[{ALLOW view Alice}]\">x</div>",
            "<p><code>x</code> [{ALLOW view Alice}]</p>",
            "<!-- <code> -->[{ALLOW view Alice}]<!-- </code> -->",
            // Indentation means nothing in HTML.
            "<p>\n\n    [{ALLOW view Alice}]\n\n</p>",
        ] {
            assert_eq!(granted(&scan(html)), vec![names(&["Alice"])], "{html:?}");
        }
        for html in [
            "<p>Write <code>[{ALLOW view Admin}]</code>.</p>",
            "<pre>[{ALLOW view Admin}]\n[{allow fly}]</pre>",
            "<pre><code class=\"md\">[{ALLOW view Admin}]()</code></pre>",
            "<p>no directive</p>",
        ] {
            assert!(scan(html).is_public(), "{html:?}");
        }
        let malformed = scan_html("<h1>T</h1>\n<p>x</p>\n<!-- [{ALLOW view} -->");
        assert_eq!(malformed.malformed.len(), 1);
        assert_eq!(malformed.malformed[0].line, 3);
        assert_eq!(malformed.into_acl(), Acl::admin_only());
    }

    #[test]
    fn whitespace_variants() {
        // Like the reference's `\s`, line breaks may separate `[{`, `ALLOW`, the action and
        // the principals; the principal list itself must end on its line.
        let acl = parse_acl("[{\nALLOW\nview\nAll}]");
        assert_eq!(acl.entries.len(), 1);
        assert_eq!(acl.entries[0].principals, names(&["All"]));
        let acl = parse_acl("[{ALLOW view,Alice}]");
        assert_eq!(acl.entries[0].principals, names(&["Alice"]));
        let acl = parse_acl("[{ ALLOW\tview\tAll }]");
        assert_eq!(acl.entries.len(), 1);
        assert_eq!(acl.entries[0].principals, names(&["All"]));
        let acl = parse_acl("[{ALLOW delete Ops}][{ALLOW rename Ops,  Jane Doe}]");
        assert_eq!(acl.entries.len(), 2);
        assert!(
            acl.permits(&names(&["Ops"]), Action::Upload),
            "delete→modify→upload"
        );
        assert!(
            !acl.permits(&names(&["Jane Doe"]), Action::Upload),
            "rename does not imply upload"
        );
    }

    #[test]
    fn serde_round_trip() {
        let acl = parse_acl("[{ALLOW modify Alice}]");
        let json = serde_json::to_string(&acl).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"entries":[{"action":"modify","principals":["Alice"]}]}"#
        );
        let back: Acl = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(back, acl);
    }

    #[test]
    fn nasty_inputs_do_not_panic() {
        for text in [
            "",
            "[",
            "[{",
            "[{ALLOW",
            "[{ALLOW view",
            "[{ALLOW view é}]",
            "[{ALLOW view 名前}]",
            "[{ALLOW view 👩‍💻,ü}]",
            "[[[[[[[[[[{{{{{{ALLOW view x}]]]]]]]",
            "`[{ALLOW view x}]",
            "```\n[{ALLOW view x}]",
            "    ",
            "\u{0}[{ALLOW\u{0}view\u{0}x}]",
            "é[{ALLOW view x}]é",
            "<!--",
            "<!-- [{ALLOW",
            "`<!--` [{ALLOW view x}]",
            "---\n[{ALLOW view x}]",
            "\u{feff}---\n[{allow view x}]\n---\n",
        ] {
            let _ = parse_acl(text).is_public();
            let _ = scan_html(text).into_acl().is_public();
        }
        // Many unterminated openers on one long line: must stay fast (linear scan), and each
        // is malformed.
        let long_line = "[{ALLOW view x ".repeat(50_000);
        let scan = scan_markdown(&long_line);
        assert!(scan.entries.is_empty());
        assert_eq!(scan.malformed.len(), 50_000);
        assert!(scan.malformed.iter().all(|m| m.line == 1));
        assert_eq!(scan.into_acl(), Acl::admin_only());
        // Many openers, code spans and comments: the code lookups stay logarithmic.
        let crowded = "`c` <!-- [{ALLOW view A}] --> ".repeat(20_000);
        assert_eq!(scan_markdown(&crowded).entries.len(), 20_000);
        let crowded_html = "<code>[{ALLOW view A}]</code><!--[{ALLOW view B}]-->".repeat(20_000);
        assert_eq!(scan_html(&crowded_html).entries.len(), 20_000);
        let deep = "[".repeat(5000) + "{ALLOW view X}]" + &"]".repeat(5000);
        assert_eq!(parse_acl(&deep).entries.len(), 1);
        let unicode = parse_acl("[{ALLOW view 名前}]");
        assert_eq!(unicode.entries[0].principals, names(&["名前"]));
    }
}
