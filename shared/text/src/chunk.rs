//! Index-time chunking of a page body into retrievable sections (REFERENCE §2.2).
//!
//! [`chunk_body`] turns the Markdown body of one page (frontmatter already stripped) into
//! an ordered list of [`Chunk`]s. Each chunk carries the heading path it was found under,
//! its text, its size in UTF-16 units and estimated tokens, and a short content hash.
//!
//! # Algorithm (the reference's, in our words)
//!
//! * The body is trimmed; an empty body gives no chunks. It is parsed as CommonMark (with
//!   tables, strikethrough and task lists) and only **top-level** blocks are considered:
//!   a heading inside a list or a block quote is ordinary content of that block.
//! * **Heading path.** A stack of heading titles: on a heading of level `L` (ATX or setext)
//!   entries are popped until fewer than `L` remain, the stack is padded with `""` up to
//!   `L - 1` entries and the title is pushed. The title is the heading's raw inline source
//!   (`*emphasis*` and other markup kept), trimmed. Leading `""` padding is dropped when
//!   the path is read, so a page starting at `##` has paths like `["Intro"]`. The page's
//!   H1 is part of the path.
//! * **Atomic blocks** — code blocks, tables, and lists of at most `4 × max_tokens`
//!   estimated tokens — become a chunk of their own, even when larger than `max_tokens`.
//! * A **non-atomic block larger than `max_tokens`** (including a list above the atomic
//!   limit) is split: on sentence boundaries (`.`, `!` or `?` followed by whitespace and
//!   then a capital letter or a line break), falling back to whitespace for a sentence that
//!   is still too long. Consecutive pieces are packed greedily up to `max_tokens`.
//! * Other blocks accumulate in a **pending buffer**, joined with blank lines; the buffer
//!   becomes a chunk when the next block would push it over `max_tokens`.
//! * At the **end of a section** the buffer becomes a chunk only if it holds at least
//!   `merge_forward_tokens`; otherwise it is held. At the following **heading boundary** a
//!   held buffer of at least `fragment_floor_tokens` becomes a chunk under **its own**
//!   heading path (a short but real section keeps its heading). A buffer below the floor
//!   is a *fragment*: it is carried into the next section and, when that section's content
//!   joins it, adopts that section's heading path (so a two-word preamble never hides the
//!   first real section under the page title). At the end of the page any residue becomes
//!   a chunk.
//! * **Overlap.** When two consecutive chunks share a heading path, a tail of at most
//!   `overlap_tokens × 4` UTF-16 units of the previous chunk's own text (never its
//!   overlap) plus a blank line is prepended to the next one, so a fact straddling the
//!   boundary appears whole in one chunk. `overlap_tokens = 0` disables it.
//! * [`Chunk::content_hash`] is the first 16 hex digits of SHA-256 over the heading path
//!   joined with U+0000, a `\n`, and the chunk text, so equal text under different
//!   headings hashes differently.
//!
//! # Choices where the reference is silent (or where its behaviour is accidental)
//!
//! * **Line endings.** CRLF and lone CR are normalised to LF before anything else, so a
//!   page checked out with Windows line endings yields the same texts and hashes (and
//!   does not force re-embedding every section).
//! * **Reading order is preserved.** Before an atomic or over-long block, pending text is
//!   *flushed*. The reference keeps a short buffer held across such blocks, which moves a
//!   lead-in sentence after the code block it introduces; we never reorder text.
//! * **Lead-ins stay with what they introduce.** Pending text below
//!   `merge_forward_tokens` (which the reference would hold) merges forward into what
//!   follows instead of becoming a chunk of its own: it joins the chunk of the next atomic
//!   block when the two fit in `max_tokens` ("Create the unit file:" + its code block),
//!   and leads the first piece of an over-long block that is being split. A *fragment*
//!   (below `fragment_floor_tokens`, e.g. "Example:" or a carried two-word preamble)
//!   always joins, even if that makes the atomic chunk larger; when a fragment and the
//!   next paragraph do not fit together, the pair is split on sentences rather than
//!   emitting the fragment alone. Anything else pending is emitted on its own first.
//! * **Oversized lists split between items** first (each item is kept whole when it fits),
//!   then on sentences and whitespace inside an item that is itself too long.
//! * **No chunk of prose exceeds `max_tokens`** (before overlap): a single "word" longer
//!   than `max_tokens` (a data URI, a base64 blob) is cut every `max_tokens × 4` UTF-16
//!   units, on character boundaries. Only atomic chunks may be larger. Overlap adds at
//!   most `overlap_tokens + 1` tokens on top.
//! * **Split pieces are exact slices of the source**, whitespace and line breaks included,
//!   rather than sentences re-joined with single spaces.
//! * **Indented code blocks are atomic** like fenced ones (the reference only protects
//!   fenced code); splitting code on "sentences" helps no reader.
//! * **Thematic breaks** (`---`, `***`) carry no content and are dropped.
//! * **Text the parser produces no block for** (link reference definitions such as
//!   `[id]: https://…`) is kept as ordinary prose, so no page text is silently lost.
//! * **Overlap never starts mid-word.** The reference cuts the tail at a character offset,
//!   so sections could begin "t least the strong threshold…". The tail is the longest
//!   suffix within the budget that begins a sentence (the splitter's rule) or a paragraph
//!   if it keeps at least half the budget, else the longest that begins a word (just after
//!   whitespace); when not even the last word fits (a long URL or blob), the chunk gets no
//!   overlap.
//! * `max_tokens = 0` is treated as 1 so that splitting always makes progress.
//! * A page made only of headings yields no chunks.

use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag};
use serde::{Deserialize, Serialize};

use wikantik_format::hashing::{sha256, to_hex};
use wikantik_format::tokens::{estimate_tokens, utf16_len};
pub use wikantik_format::manifest::ChunkerConfig;

/// One retrievable section of a page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// Position in the page's chunk list, from 0, in emission order.
    pub index: u32,
    /// Titles of the enclosing headings, outermost first (the H1 included).
    pub heading_path: Vec<String>,
    /// The chunk text (with the overlap tail, if any, at its start).
    pub text: String,
    /// Length of `text` in UTF-16 code units.
    pub char_count: usize,
    /// Estimated tokens of `text` (`ceil(char_count / 4)`).
    pub token_estimate: usize,
    /// First 16 lowercase hex digits of SHA-256 over
    /// `heading_path.join("\u{0}") + "\n" + text`.
    pub content_hash: String,
}

/// Splits a page body (frontmatter already stripped) into chunks. Never fails, never
/// panics; an empty or heading-only body gives an empty list.
pub fn chunk_body(body: &str, config: &ChunkerConfig) -> Vec<Chunk> {
    let drafts = draft_chunks(body, config);
    apply_overlap_and_finish(&drafts, config.overlap_tokens)
}

/// A chunk before overlap, hashing and numbering.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DraftChunk {
    heading_path: Vec<String>,
    /// Trimmed, never empty.
    text: String,
    /// Came from an atomic block, so it may exceed `max_tokens`.
    atomic: bool,
}

/// Runs the whole chunking pass except overlap.
fn draft_chunks(body: &str, config: &ChunkerConfig) -> Vec<DraftChunk> {
    let normalized = normalize_line_endings(body);
    let source = normalized.trim();
    if source.is_empty() {
        return Vec::new();
    }
    let mut builder = ChunkBuilder::new(config);
    for block in top_level_blocks(source) {
        let Some(block_text) = source.get(block.range.clone()) else {
            continue;
        };
        match block.kind {
            BlockKind::Heading(level) => builder.on_heading(level, heading_title(block_text)),
            BlockKind::ThematicBreak => {}
            BlockKind::Code | BlockKind::Table => builder.on_atomic_block(block_text),
            BlockKind::List => {
                if estimate_tokens(block_text) <= builder.atomic_list_limit() {
                    builder.on_atomic_block(block_text);
                } else {
                    let items = relative_ranges(&block.item_ranges, block.range.start);
                    builder.on_splittable_block(block_text, Some(items));
                }
            }
            BlockKind::Prose => builder.on_splittable_block(block_text, None),
        }
    }
    builder.finish()
}

fn normalize_line_endings(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

// ---------------------------------------------------------------------------------------
// Top-level blocks
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Heading(usize),
    Code,
    Table,
    List,
    ThematicBreak,
    Prose,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct TopLevelBlock {
    kind: BlockKind,
    /// Byte range in the source, trimmed of surrounding whitespace.
    range: Range<usize>,
    /// For lists: byte ranges (in the source) of the list's own items.
    item_ranges: Vec<Range<usize>>,
}

fn markdown_options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// The top-level blocks of `source`, in order, plus any non-blank text between them that
/// the parser reported no block for (link reference definitions), as prose.
fn top_level_blocks(source: &str) -> Vec<TopLevelBlock> {
    let mut parsed: Vec<TopLevelBlock> = Vec::new();
    let mut depth: usize = 0;
    for (event, range) in Parser::new_ext(source, markdown_options()).into_offset_iter() {
        match event {
            Event::Start(tag) => {
                if depth == 0 {
                    parsed.push(TopLevelBlock {
                        kind: block_kind(&tag),
                        range,
                        item_ranges: Vec::new(),
                    });
                } else if depth == 1 && matches!(tag, Tag::Item) {
                    if let Some(list) = parsed.last_mut() {
                        if list.kind == BlockKind::List {
                            list.item_ranges.push(range);
                        }
                    }
                }
                depth = depth.saturating_add(1);
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Rule if depth == 0 => parsed.push(TopLevelBlock {
                kind: BlockKind::ThematicBreak,
                range,
                item_ranges: Vec::new(),
            }),
            _ if depth == 0 => parsed.push(TopLevelBlock {
                kind: BlockKind::Prose,
                range,
                item_ranges: Vec::new(),
            }),
            _ => {}
        }
    }

    let mut blocks = Vec::with_capacity(parsed.len());
    let mut covered_until = 0;
    for block in parsed {
        if block.range.start > covered_until {
            push_gap_as_prose(source, covered_until..block.range.start, &mut blocks);
        }
        covered_until = covered_until.max(block.range.end);
        if let Some(trimmed) = trimmed_range(source, block.range.clone()) {
            blocks.push(TopLevelBlock {
                range: trimmed,
                ..block
            });
        }
    }
    push_gap_as_prose(source, covered_until..source.len(), &mut blocks);
    blocks
}

fn block_kind(tag: &Tag<'_>) -> BlockKind {
    match tag {
        Tag::Heading { level, .. } => BlockKind::Heading(*level as usize),
        Tag::CodeBlock(_) => BlockKind::Code,
        Tag::Table(_) => BlockKind::Table,
        Tag::List(_) => BlockKind::List,
        _ => BlockKind::Prose,
    }
}

fn push_gap_as_prose(source: &str, gap: Range<usize>, blocks: &mut Vec<TopLevelBlock>) {
    if let Some(trimmed) = trimmed_range(source, gap) {
        blocks.push(TopLevelBlock {
            kind: BlockKind::Prose,
            range: trimmed,
            item_ranges: Vec::new(),
        });
    }
}

/// `range` narrowed to exclude leading and trailing whitespace; `None` when the slice is
/// blank or `range` is not a valid slice of `text`.
fn trimmed_range(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    let slice = text.get(range.clone())?;
    let without_leading = slice.trim_start();
    let start = range.start + (slice.len() - without_leading.len());
    let trimmed = without_leading.trim_end();
    (!trimmed.is_empty()).then(|| start..start + trimmed.len())
}

/// `ranges` re-based so that `origin` becomes 0 (ranges before `origin` are clamped).
fn relative_ranges(ranges: &[Range<usize>], origin: usize) -> Vec<Range<usize>> {
    ranges
        .iter()
        .map(|r| r.start.saturating_sub(origin)..r.end.saturating_sub(origin))
        .collect()
}

// ---------------------------------------------------------------------------------------
// Heading titles
// ---------------------------------------------------------------------------------------

/// The raw inline source of a heading block (markup kept), trimmed.
fn heading_title(heading_source: &str) -> String {
    atx_heading_title(heading_source).unwrap_or_else(|| setext_heading_title(heading_source))
}

/// `## Title ##` → `Title`; `None` if the block is not an ATX heading.
fn atx_heading_title(heading_source: &str) -> Option<String> {
    let first_line = heading_source.lines().next()?;
    let unindented = first_line.trim_start_matches(' ');
    let after_marks = unindented.trim_start_matches('#');
    let mark_count = unindented.len() - after_marks.len();
    let opens_heading = (1..=6).contains(&mark_count)
        && (after_marks.is_empty() || after_marks.starts_with([' ', '\t']));
    if !opens_heading {
        return None;
    }
    let content = after_marks.trim_end();
    // An optional closing run of `#` counts only when preceded by a space or a tab (or
    // when it is all there is).
    let before_closing = content.trim_end_matches('#');
    let title = if before_closing.is_empty() || before_closing.ends_with([' ', '\t']) {
        before_closing
    } else {
        content
    };
    Some(title.trim().to_string())
}

/// `Title\n=====` → `Title` (lines of a multi-line title are trimmed and joined with `\n`).
fn setext_heading_title(heading_source: &str) -> String {
    let mut lines: Vec<&str> = heading_source.lines().collect();
    let is_underline = |line: &str| {
        let line = line.trim();
        !line.is_empty() && (line.chars().all(|c| c == '=') || line.chars().all(|c| c == '-'))
    };
    if lines.len() > 1 && lines.last().is_some_and(|line| is_underline(line)) {
        lines.pop();
    }
    let joined: Vec<&str> = lines.iter().map(|line| line.trim()).collect();
    joined.join("\n").trim().to_string()
}

/// The stack of enclosing heading titles.
#[derive(Debug, Default)]
struct HeadingStack {
    titles: Vec<String>,
}

impl HeadingStack {
    fn enter(&mut self, level: usize, title: String) {
        let parent_depth = level.saturating_sub(1);
        self.titles.truncate(parent_depth);
        while self.titles.len() < parent_depth {
            self.titles.push(String::new());
        }
        self.titles.push(title);
    }

    /// The current path without the leading `""` padding.
    fn path(&self) -> Vec<String> {
        self.titles
            .iter()
            .skip_while(|title| title.is_empty())
            .cloned()
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// Accumulation across blocks and sections
// ---------------------------------------------------------------------------------------

/// Prose waiting to become a chunk.
#[derive(Debug, Default)]
struct PendingText {
    /// Blocks joined with blank lines; empty when nothing is pending.
    text: String,
    /// Heading path of the section whose content the buffer holds (the last section that
    /// added to it, so a carried fragment adopts its destination's path).
    heading_path: Vec<String>,
}

impl PendingText {
    fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    fn tokens(&self) -> usize {
        estimate_tokens(&self.text)
    }

    fn take(&mut self) -> PendingText {
        std::mem::take(self)
    }
}

/// The chunker's state machine: fed top-level blocks in order, emits draft chunks.
struct ChunkBuilder {
    max_tokens: usize,
    merge_forward_tokens: usize,
    fragment_floor_tokens: usize,
    headings: HeadingStack,
    pending: PendingText,
    drafts: Vec<DraftChunk>,
}

const BLOCK_SEPARATOR: &str = "\n\n";

impl ChunkBuilder {
    fn new(config: &ChunkerConfig) -> Self {
        Self {
            max_tokens: config.max_tokens.max(1),
            merge_forward_tokens: config.merge_forward_tokens,
            fragment_floor_tokens: config.fragment_floor_tokens,
            headings: HeadingStack::default(),
            pending: PendingText::default(),
            drafts: Vec::new(),
        }
    }

    fn atomic_list_limit(&self) -> usize {
        self.max_tokens.saturating_mul(4)
    }

    fn pending_is_fragment(&self) -> bool {
        !self.pending.is_empty() && self.pending.tokens() < self.fragment_floor_tokens
    }

    fn on_heading(&mut self, level: usize, title: String) {
        self.end_section();
        self.at_heading_boundary();
        self.headings.enter(level, title);
    }

    /// Pending text below `merge_forward_tokens`: it would be held at the end of the
    /// section, so it merges forward into whatever comes next.
    fn pending_is_short(&self) -> bool {
        !self.pending.is_empty() && self.pending.tokens() < self.merge_forward_tokens
    }

    /// A code block, table or small list: its own chunk, whatever its size. Short pending
    /// text in front of it (typically the sentence introducing it) joins that chunk when
    /// the two fit in `max_tokens`, and always when it is a fragment.
    fn on_atomic_block(&mut self, block: &str) {
        let joined = format!("{}{BLOCK_SEPARATOR}{block}", self.pending.text);
        let lead_in_joins = self.pending_is_fragment()
            || (self.pending_is_short() && estimate_tokens(&joined) <= self.max_tokens);
        let text = if lead_in_joins {
            self.pending = PendingText::default();
            joined
        } else {
            self.flush_pending();
            block.to_string()
        };
        let heading_path = self.headings.path();
        self.emit(heading_path, &text, true);
    }

    /// Prose-like content: accumulated, or split when too long. `item_ranges` (relative
    /// to `block`) are the preferred split points of an oversized list.
    fn on_splittable_block(&mut self, block: &str, item_ranges: Option<Vec<Range<usize>>>) {
        let block_tokens = estimate_tokens(block);
        if block_tokens > self.max_tokens {
            self.split_block(block, item_ranges);
            return;
        }
        if !self.pending.is_empty() {
            let joined = format!("{}{BLOCK_SEPARATOR}{block}", self.pending.text);
            if estimate_tokens(&joined) > self.max_tokens {
                if self.pending_is_fragment() {
                    // Keep the fragment with what follows it: split the pair on sentences.
                    self.split_block(block, None);
                    return;
                }
                self.flush_pending();
            } else {
                self.pending.text = joined;
                self.pending.heading_path = self.headings.path();
                return;
            }
        }
        self.pending = PendingText {
            text: block.to_string(),
            heading_path: self.headings.path(),
        };
    }

    /// Splits an over-long block into pieces of at most `max_tokens`, each a chunk of the
    /// current section. Short pending text leads the first piece instead of standing alone.
    fn split_block(&mut self, block: &str, item_ranges: Option<Vec<Range<usize>>>) {
        let block_segments = item_ranges
            .filter(|items| segments_cover_text(block, items))
            .unwrap_or_else(|| sentence_segments(block, 0..block.len()));
        let (text, seeds) = if self.pending_is_fragment() || self.pending_is_short() {
            let lead_in = self.pending.take().text;
            let offset = lead_in.len() + BLOCK_SEPARATOR.len();
            let mut seeds = Vec::with_capacity(block_segments.len() + 1);
            seeds.push(0..lead_in.len());
            seeds.extend(
                block_segments
                    .into_iter()
                    .map(|r| r.start + offset..r.end + offset),
            );
            (format!("{lead_in}{BLOCK_SEPARATOR}{block}"), seeds)
        } else {
            self.flush_pending();
            (block.to_string(), block_segments)
        };
        let heading_path = self.headings.path();
        for piece in split_into_pieces(&text, &seeds, self.max_tokens) {
            self.emit(heading_path.clone(), piece, false);
        }
    }

    /// End of a section's blocks: emit the buffer only if it is big enough to stand alone.
    fn end_section(&mut self) {
        if !self.pending.is_empty() && self.pending.tokens() >= self.merge_forward_tokens {
            self.flush_pending();
        }
    }

    /// A held buffer at or above the fragment floor keeps its own heading; a smaller one
    /// is carried into the next section.
    fn at_heading_boundary(&mut self) {
        if !self.pending.is_empty() && !self.pending_is_fragment() {
            self.flush_pending();
        }
    }

    fn flush_pending(&mut self) {
        let pending = self.pending.take();
        self.emit(pending.heading_path, &pending.text, false);
    }

    fn emit(&mut self, heading_path: Vec<String>, text: &str, atomic: bool) {
        let text = text.trim();
        if !text.is_empty() {
            self.drafts.push(DraftChunk {
                heading_path,
                text: text.to_string(),
                atomic,
            });
        }
    }

    fn finish(mut self) -> Vec<DraftChunk> {
        self.end_section();
        self.flush_pending();
        self.drafts
    }
}

// ---------------------------------------------------------------------------------------
// Splitting over-long text
// ---------------------------------------------------------------------------------------

/// True when `segments` are ordered, disjoint, valid slices of `text` and everything
/// outside them is whitespace — i.e. splitting on them loses nothing.
fn segments_cover_text(text: &str, segments: &[Range<usize>]) -> bool {
    if segments.is_empty() {
        return false;
    }
    let mut covered_until = 0;
    for segment in segments {
        if segment.start < covered_until || segment.end < segment.start {
            return false;
        }
        let (Some(gap), Some(_)) = (
            text.get(covered_until..segment.start),
            text.get(segment.clone()),
        ) else {
            return false;
        };
        if !gap.trim().is_empty() {
            return false;
        }
        covered_until = segment.end;
    }
    text.get(covered_until..)
        .is_some_and(|rest| rest.trim().is_empty())
}

/// The sentences of `text[range]`, as trimmed byte ranges of `text`. A boundary is a run
/// of whitespace after `.`, `!` or `?` that is followed by an upper-case letter or that
/// contains a line break after its first character.
fn sentence_segments(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let Some(slice) = text.get(range.clone()) else {
        return Vec::new();
    };
    let mut sentences = Vec::new();
    let mut sentence_start = 0;
    let mut chars = slice.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        if !matches!(c, '.' | '!' | '?') {
            continue;
        }
        let sentence_end = index + c.len_utf8();
        let mut whitespace_chars = 0usize;
        let mut has_inner_line_break = false;
        let mut after_whitespace = None;
        while let Some(&(next_index, next)) = chars.peek() {
            if !next.is_ascii_whitespace() {
                after_whitespace = Some((next_index, next));
                break;
            }
            if next == '\n' && whitespace_chars > 0 {
                has_inner_line_break = true;
            }
            whitespace_chars += 1;
            chars.next();
        }
        let followed_by_capital = after_whitespace.is_some_and(|(_, next)| next.is_uppercase());
        if whitespace_chars > 0 && (followed_by_capital || has_inner_line_break) {
            push_trimmed(
                text,
                range.start + sentence_start..range.start + sentence_end,
                &mut sentences,
            );
            sentence_start = after_whitespace.map_or(slice.len(), |(next_index, _)| next_index);
        }
    }
    push_trimmed(
        text,
        range.start + sentence_start..range.end,
        &mut sentences,
    );
    sentences
}

/// The whitespace-separated words of `text[range]`, as byte ranges of `text`.
fn word_segments(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let Some(slice) = text.get(range.clone()) else {
        return Vec::new();
    };
    let mut words = Vec::new();
    let mut word_start: Option<usize> = None;
    for (index, c) in slice.char_indices() {
        match (c.is_ascii_whitespace(), word_start) {
            (true, Some(start)) => {
                words.push(range.start + start..range.start + index);
                word_start = None;
            }
            (false, None) => word_start = Some(index),
            _ => {}
        }
    }
    if let Some(start) = word_start {
        words.push(range.start + start..range.end);
    }
    words
}

/// `text[range]` cut into consecutive pieces of at most `max_units` UTF-16 units, on
/// character boundaries (every piece holds at least one character).
fn hard_segments(text: &str, range: Range<usize>, max_units: usize) -> Vec<Range<usize>> {
    let Some(slice) = text.get(range.clone()) else {
        return Vec::new();
    };
    let mut pieces = Vec::new();
    let mut piece_start = 0;
    let mut piece_units = 0;
    for (index, c) in slice.char_indices() {
        let units = c.len_utf16();
        if piece_units > 0 && piece_units + units > max_units {
            pieces.push(range.start + piece_start..range.start + index);
            piece_start = index;
            piece_units = 0;
        }
        piece_units += units;
    }
    if piece_start < slice.len() {
        pieces.push(range.start + piece_start..range.end);
    }
    pieces
}

fn push_trimmed(text: &str, range: Range<usize>, out: &mut Vec<Range<usize>>) {
    if let Some(trimmed) = trimmed_range(text, range) {
        out.push(trimmed);
    }
}

fn fits(text: &str, range: &Range<usize>, max_tokens: usize) -> bool {
    text.get(range.clone())
        .is_some_and(|slice| estimate_tokens(slice) <= max_tokens)
}

/// Refines `seeds` until every segment fits `max_tokens` (sentences, then words, then
/// fixed-size cuts), then packs consecutive segments greedily into pieces that fit. Each
/// piece is the exact slice of `text` from its first segment to its last, trimmed.
fn split_into_pieces<'t>(text: &'t str, seeds: &[Range<usize>], max_tokens: usize) -> Vec<&'t str> {
    let mut segments = Vec::with_capacity(seeds.len());
    for seed in seeds {
        if fits(text, seed, max_tokens) {
            segments.push(seed.clone());
            continue;
        }
        let sentences = sentence_segments(text, seed.clone());
        for sentence in sentences {
            if fits(text, &sentence, max_tokens) {
                segments.push(sentence);
                continue;
            }
            for word in word_segments(text, sentence) {
                if fits(text, &word, max_tokens) {
                    segments.push(word);
                } else {
                    let max_units = max_tokens.saturating_mul(4);
                    segments.extend(hard_segments(text, word, max_units));
                }
            }
        }
    }
    pack_segments(text, &segments, max_tokens)
}

fn pack_segments<'t>(text: &'t str, segments: &[Range<usize>], max_tokens: usize) -> Vec<&'t str> {
    let max_units = max_tokens.saturating_mul(4);
    let mut pieces = Vec::new();
    let mut current: Option<(Range<usize>, usize)> = None; // (span, UTF-16 units)
    for segment in segments {
        let Some(segment_text) = text.get(segment.clone()) else {
            continue;
        };
        current = match current {
            Some((span, units)) => {
                let extension = text.get(span.end..segment.end).map(utf16_len);
                match extension {
                    Some(extra) if units + extra <= max_units => {
                        Some((span.start..segment.end, units + extra))
                    }
                    _ => {
                        push_piece(text, span, &mut pieces);
                        Some((segment.clone(), utf16_len(segment_text)))
                    }
                }
            }
            None => Some((segment.clone(), utf16_len(segment_text))),
        };
    }
    if let Some((span, _)) = current {
        push_piece(text, span, &mut pieces);
    }
    pieces
}

fn push_piece<'t>(text: &'t str, span: Range<usize>, pieces: &mut Vec<&'t str>) {
    if let Some(piece) = text.get(span).map(str::trim) {
        if !piece.is_empty() {
            pieces.push(piece);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Overlap, numbering, hashing
// ---------------------------------------------------------------------------------------

fn apply_overlap_and_finish(drafts: &[DraftChunk], overlap_tokens: usize) -> Vec<Chunk> {
    let overlap_units = overlap_tokens.saturating_mul(4);
    let mut previous: Option<&DraftChunk> = None;
    let mut chunks = Vec::with_capacity(drafts.len());
    for (position, draft) in drafts.iter().enumerate() {
        let tail = match previous {
            Some(prev) if overlap_units > 0 && prev.heading_path == draft.heading_path => {
                overlap_tail(&prev.text, overlap_units)
            }
            _ => "",
        };
        let text = if tail.is_empty() {
            draft.text.clone()
        } else {
            format!("{tail}{BLOCK_SEPARATOR}{}", draft.text)
        };
        let index = u32::try_from(position).unwrap_or(u32::MAX);
        chunks.push(build_chunk(index, draft.heading_path.clone(), text));
        previous = Some(draft);
    }
    chunks
}

/// The overlap carried from a chunk's own text into the next chunk: a suffix of `text` of at
/// most `max_units` UTF-16 units that never begins inside a word. The longest such suffix
/// that begins a sentence (by the splitter's rule, [`sentence_segments`]) or a paragraph
/// when it keeps at least half the budget; else the longest that begins a word (offset 0,
/// or just after whitespace); empty when not even the last word fits (a long URL, a blob,
/// unspaced script).
fn overlap_tail(text: &str, max_units: usize) -> &str {
    let window = utf16_tail(text, max_units);
    let earliest = text.len() - window.len();
    if earliest == 0 {
        return text;
    }
    let sentence_start = sentence_segments(text, 0..text.len())
        .into_iter()
        .map(|sentence| sentence.start)
        .find(|&start| start >= earliest);
    let start = match (sentence_start, paragraph_start_from(text, earliest)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    if let Some(tail) = start.and_then(|start| text.get(start..)) {
        if utf16_len(tail).saturating_mul(2) >= max_units {
            return tail;
        }
    }
    let after_whitespace = text
        .get(..earliest)
        .and_then(|before| before.chars().next_back())
        .is_some_and(char::is_whitespace);
    let mut word_start = None;
    let mut in_whitespace = after_whitespace;
    for (index, c) in window.char_indices() {
        if c.is_whitespace() {
            in_whitespace = true;
        } else if in_whitespace {
            word_start = Some(index);
            break;
        }
    }
    word_start
        .and_then(|start| window.get(start..))
        .unwrap_or_default()
}

/// The first offset at or after `from` where a paragraph begins (the first character after a
/// blank line).
fn paragraph_start_from(text: &str, from: usize) -> Option<usize> {
    let mut line_breaks = 0;
    for (index, c) in text.char_indices() {
        if c == '\n' {
            line_breaks += 1;
        } else if !c.is_whitespace() {
            if line_breaks >= 2 && index >= from {
                return Some(index);
            }
            line_breaks = 0;
        }
    }
    None
}

/// The longest suffix of `text` of at most `max_units` UTF-16 units that starts on a
/// character boundary (so no surrogate pair or UTF-8 sequence is cut).
fn utf16_tail(text: &str, max_units: usize) -> &str {
    let mut units = 0;
    let mut start = text.len();
    for (index, c) in text.char_indices().rev() {
        units += c.len_utf16();
        if units > max_units {
            break;
        }
        start = index;
    }
    text.get(start..).unwrap_or_default()
}

fn build_chunk(index: u32, heading_path: Vec<String>, text: String) -> Chunk {
    let content_hash = content_hash(&heading_path, &text);
    Chunk {
        index,
        char_count: utf16_len(&text),
        token_estimate: estimate_tokens(&text),
        heading_path,
        text,
        content_hash,
    }
}

/// First 16 hex digits of SHA-256 over `heading_path.join("\u{0}") + "\n" + text`.
fn content_hash(heading_path: &[String], text: &str) -> String {
    let hashed = format!("{}\n{text}", heading_path.join("\u{0}"));
    let digest = sha256(hashed.as_bytes());
    digest
        .first_chunk::<8>()
        .map(|prefix| to_hex(prefix))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
