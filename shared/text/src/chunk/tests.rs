//! Unit tests of the chunker. The first group ports, in our own words, the behaviours
//! the reference pins in its `ContentChunkerTest`; the rest cover our own choices, the
//! no-panic guarantee and the real corpus.

use super::*;

/// Every section stands alone (floor 0), no overlap: isolates one behaviour at a time.
fn standalone_sections() -> ChunkerConfig {
    ChunkerConfig {
        max_tokens: 512,
        merge_forward_tokens: 8,
        fragment_floor_tokens: 0,
        overlap_tokens: 0,
    }
}

/// Production thresholds without overlap, for the fragment-floor cases.
fn production_without_overlap() -> ChunkerConfig {
    ChunkerConfig {
        overlap_tokens: 0,
        ..ChunkerConfig::default()
    }
}

/// Small chunks so that a short body splits, with or without overlap.
fn tiny_chunks(overlap_tokens: usize) -> ChunkerConfig {
    ChunkerConfig {
        max_tokens: 40,
        merge_forward_tokens: 8,
        fragment_floor_tokens: 0,
        overlap_tokens,
    }
}

fn path(titles: &[&str]) -> Vec<String> {
    titles.iter().map(|title| title.to_string()).collect()
}

fn texts(chunks: &[Chunk]) -> Vec<&str> {
    chunks.iter().map(|chunk| chunk.text.as_str()).collect()
}

/// Strips the same indentation from every line, like Java text blocks do.
fn dedent(text: &str) -> String {
    let indent = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    text.lines()
        .map(|line| line.get(indent..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

// ---------------------------------------------------------------------------------------
// Behaviours of the reference's ContentChunkerTest
// ---------------------------------------------------------------------------------------

#[test]
fn empty_body_gives_no_chunks() {
    assert!(chunk_body("", &standalone_sections()).is_empty());
    assert!(chunk_body(" \n\t\n ", &ChunkerConfig::default()).is_empty());
}

#[test]
fn single_short_paragraph_gives_one_chunk() {
    let body =
        "This is a single short paragraph of prose intended to exercise the simplest happy path.";
    let chunks = chunk_body(body, &standalone_sections());
    assert_eq!(chunks.len(), 1);
    let chunk = &chunks[0];
    assert_eq!(chunk.index, 0);
    assert!(chunk.heading_path.is_empty());
    assert_eq!(chunk.text, body);
    assert_eq!(chunk.char_count, body.len());
    assert_eq!(chunk.token_estimate, body.len().div_ceil(4));
    assert_eq!(chunk.content_hash.len(), 16);
    assert!(chunk
        .content_hash
        .chars()
        .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
}

#[test]
fn three_short_sections_give_three_chunks_under_the_h1() {
    let body = dedent(
        "
        # Top Title

        ## First Section

        Alpha paragraph with enough words to count as a real chunk of prose.

        ## Second Section

        Bravo paragraph, also substantive enough to be emitted on its own.

        ## Third Section

        Charlie paragraph — again, long enough to warrant emission.
        ",
    );
    let chunks = chunk_body(&body, &standalone_sections());
    let paths: Vec<_> = chunks.iter().map(|c| c.heading_path.clone()).collect();
    assert_eq!(
        paths,
        vec![
            path(&["Top Title", "First Section"]),
            path(&["Top Title", "Second Section"]),
            path(&["Top Title", "Third Section"]),
        ]
    );
    assert_eq!(
        chunks.iter().map(|c| c.index).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
}

#[test]
fn heading_stack_pops_on_a_shallower_heading() {
    let body = dedent(
        "
        # One

        ## Two

        ### Three

        Leaf text sufficient to be emitted.

        ## TwoPrime

        Sibling text also long enough to warrant emission.
        ",
    );
    let chunks = chunk_body(&body, &standalone_sections());
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[0].heading_path, path(&["One", "Two", "Three"]));
    assert_eq!(chunks[1].heading_path, path(&["One", "TwoPrime"]));
}

#[test]
fn heading_with_inline_markup_keeps_its_raw_source() {
    let body = dedent(
        "
        # Top

        ## First *emphasized* Section

        Body paragraph under the emphasized-title section, long enough to be emitted as its own chunk.
        ",
    );
    let chunks = chunk_body(&body, &standalone_sections());
    assert_eq!(chunks.len(), 1);
    assert_eq!(
        chunks[0].heading_path,
        path(&["Top", "First *emphasized* Section"])
    );
}

#[test]
fn oversized_paragraph_splits_on_sentence_boundaries() {
    let body: String = (0..80)
        .map(|i| format!("Sentence number {i} filler text. "))
        .collect();
    let chunks = chunk_body(&body, &standalone_sections());
    assert!(
        chunks.len() > 1,
        "expected several chunks, got {}",
        chunks.len()
    );
    for chunk in &chunks {
        assert!(
            chunk.token_estimate <= 512,
            "chunk {} has {} tokens",
            chunk.index,
            chunk.token_estimate
        );
        assert!(
            chunk.text.starts_with("Sentence number "),
            "{:?}",
            chunk.text
        );
        assert!(chunk.text.ends_with("filler text."), "{:?}", chunk.text);
    }
    // Nothing lost, nothing reordered: the pieces are consecutive slices of the paragraph.
    assert_eq!(texts(&chunks).join(" "), body.trim());
}

#[test]
fn fenced_code_block_is_atomic_even_when_oversized() {
    let mut body = String::from("# Title\n\n```\n");
    for i in 0..200 {
        body.push_str(&format!("public int x{i} = {i};\n"));
    }
    body.push_str("```\n");
    let chunks = chunk_body(&body, &standalone_sections());
    assert_eq!(chunks.len(), 1);
    assert!(chunks[0].token_estimate > 512);
    assert!(chunks[0].text.contains("public int x0 = 0;"));
    assert!(chunks[0].text.contains("public int x199 = 199;"));
    assert_eq!(chunks[0].heading_path, path(&["Title"]));
}

#[test]
fn sub_floor_fragment_merges_forward_and_adopts_the_next_heading() {
    let body = dedent(
        "
        ## Stub

        Tiny.

        ## Real

        This paragraph has plenty of real content to ensure we cross the min
        threshold on merge and emit a single well-formed chunk.
        ",
    );
    let chunks = chunk_body(&body, &production_without_overlap());
    assert_eq!(chunks.len(), 1, "{chunks:#?}");
    assert_eq!(chunks[0].heading_path, path(&["Real"]));
    assert!(
        chunks[0].text.starts_with("Tiny.\n\n"),
        "fragment kept, in reading order"
    );
    assert!(chunks[0].text.contains("plenty of real content"));
}

#[test]
fn first_h2_after_a_short_preamble_stays_findable_under_its_own_heading() {
    let body = dedent(
        "
        # Deploying Ollama

        Ollama runs models locally.

        ## Hardware Sizing

        A 7B model needs roughly 8GB of vRAM; quantization lowers that. Plan
        capacity around the largest model you intend to keep resident.
        ",
    );
    let chunks = chunk_body(&body, &production_without_overlap());
    let sizing = path(&["Deploying Ollama", "Hardware Sizing"]);
    assert!(chunks
        .iter()
        .any(|c| c.heading_path == sizing && c.text.contains("vRAM")));
    assert!(!chunks
        .iter()
        .any(|c| c.heading_path == path(&["Deploying Ollama"]) && c.text.contains("vRAM")));
}

#[test]
fn short_section_at_or_above_the_floor_stays_standalone() {
    let body = dedent(
        "
        ## Alpha

        Alpha holds a genuinely real short section whose body comfortably clears
        the fragment floor on its own merits here.

        ## Beta

        Beta likewise carries its own substantive body text that clears the floor
        and therefore stands as its own independent chunk.
        ",
    );
    let chunks = chunk_body(&body, &production_without_overlap());
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[0].heading_path, path(&["Alpha"]));
    assert_eq!(chunks[1].heading_path, path(&["Beta"]));
}

#[test]
fn plugin_markup_is_preserved_verbatim() {
    let body = "[{Plugin}] then some prose of reasonable length to be emitted.";
    let chunks = chunk_body(body, &standalone_sections());
    assert_eq!(texts(&chunks), vec![body]);
}

#[test]
fn bullet_list_within_budget_is_one_chunk() {
    let body = dedent(
        "
        # Options

        - `--force` bypasses the safety check
        - `--dry-run` prints actions without executing
        - `--verbose` emits debug-level logging
        - `--output` sets the output path
        - `--help` shows this usage message
        ",
    );
    let chunks = chunk_body(&body, &standalone_sections());
    assert_eq!(chunks.len(), 1);
    assert!(chunks[0].text.starts_with("- `--force`"));
    assert!(chunks[0].text.ends_with("shows this usage message"));
}

#[test]
fn ordered_list_within_budget_is_one_chunk() {
    let body = dedent(
        "
        ## Steps

        1. Create the database schema.
        2. Build the WAR file with maven.
        3. Copy it into the tomcat webapps directory.
        4. Start tomcat and wait for the deploy to finish.
        5. Verify the admin panel loads at port 8080.
        ",
    );
    let chunks = chunk_body(&body, &standalone_sections());
    assert_eq!(chunks.len(), 1);
    assert!(chunks[0].text.starts_with("1. Create"));
    assert!(chunks[0].text.contains("5. Verify"));
}

#[test]
fn list_above_four_times_max_is_split_between_items() {
    let mut body = String::from("## Long\n\n");
    for i in 0..160 {
        body.push_str(&format!(
            "- item {i} with enough filler prose on the line to push the bytes.\n"
        ));
    }
    let chunks = chunk_body(&body, &standalone_sections());
    assert!(
        chunks.len() > 1,
        "oversized list should split, got {}",
        chunks.len()
    );
    for chunk in &chunks {
        assert!(
            chunk.token_estimate <= 512,
            "chunk {} has {} tokens",
            chunk.index,
            chunk.token_estimate
        );
        assert!(
            chunk.text.starts_with("- item "),
            "pieces start at an item: {:?}",
            chunk.text
        );
        assert!(
            chunk.text.ends_with("push the bytes."),
            "pieces end with an item: {:?}",
            chunk.text
        );
        assert_eq!(chunk.heading_path, path(&["Long"]));
    }
    let total_items: usize = chunks.iter().map(|c| c.text.lines().count()).sum();
    assert_eq!(total_items, 160);
}

#[test]
fn content_hash_is_deterministic_and_depends_on_the_heading_path() {
    let body = "## A\n\nSame body text repeated across two sections.\n\n\
                ## B\n\nSame body text repeated across two sections.\n";
    let chunks = chunk_body(body, &standalone_sections());
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[0].text, chunks[1].text);
    assert_ne!(chunks[0].content_hash, chunks[1].content_hash);
    assert_eq!(chunks, chunk_body(body, &standalone_sections()));
}

#[test]
fn overlap_prepends_the_previous_chunks_tail_within_a_section() {
    let body = format!(
        "# H\n\n{}",
        "Alpha sentence number here is present. ".repeat(20)
    );
    let overlapped = chunk_body(&body, &tiny_chunks(10));
    let plain = chunk_body(&body, &tiny_chunks(0));
    assert!(
        plain.len() >= 2,
        "expected the long section to split, got {}",
        plain.len()
    );
    assert_eq!(overlapped.len(), plain.len());
    assert_eq!(
        overlapped[0], plain[0],
        "the first chunk is unchanged by overlap"
    );
    for (previous, (current, current_plain)) in
        plain.iter().zip(overlapped.iter().zip(&plain).skip(1))
    {
        // The last whole sentence fits the 40-unit budget.
        let tail = overlap_tail(&previous.text, 40);
        assert_eq!(tail, "Alpha sentence number here is present.");
        assert_eq!(current.text, format!("{tail}\n\n{}", current_plain.text));
        assert_eq!(current.char_count, utf16_len(&current.text));
        assert_eq!(current.token_estimate, estimate_tokens(&current.text));
        assert_eq!(
            current.content_hash,
            content_hash(&current.heading_path, &current.text)
        );
    }
}

#[test]
fn overlap_zero_is_an_exact_no_op() {
    let body = format!(
        "# H\n\n{}",
        "Alpha sentence number here is present. ".repeat(20)
    );
    let chunks = chunk_body(&body, &tiny_chunks(0));
    let drafts = draft_chunks(&body, &tiny_chunks(0));
    assert!(chunks.len() >= 2);
    assert_eq!(
        texts(&chunks),
        drafts.iter().map(|d| d.text.as_str()).collect::<Vec<_>>()
    );
}

/// The tail the issue showed, cut at a character offset, began "t least the strong…".
const COVERAGE_RULE: &str = "Coverage is reported per bundle. The bundle is strong when the top similarity reaches at least the strong threshold and three or more sections survive.";

/// Is `tail` a suffix of `text` that begins at offset 0 or just after whitespace?
fn starts_on_a_word(text: &str, tail: &str) -> bool {
    let Some(before) = text.strip_suffix(tail) else {
        return false;
    };
    before.is_empty() || before.ends_with(char::is_whitespace)
}

#[test]
fn sections_never_start_mid_word() {
    // The last sentence is longer than the budget: the tail starts at the first whole word.
    let tail = overlap_tail(COVERAGE_RULE, 64);
    assert_eq!(utf16_tail(COVERAGE_RULE, 64), "t least the strong threshold and three or more sections survive.", "the character-offset tail");
    assert_eq!(tail, "least the strong threshold and three or more sections survive.");
    assert!(starts_on_a_word(COVERAGE_RULE, tail));
    // The budget holds the last sentence: the tail is that sentence.
    assert_eq!(
        overlap_tail(COVERAGE_RULE, 130),
        "The bundle is strong when the top similarity reaches at least the strong threshold and three or more sections survive."
    );
    // The whole text fits: all of it.
    assert_eq!(overlap_tail(COVERAGE_RULE, 1_000), COVERAGE_RULE);

    // Through the chunker with the production overlap (40 tokens = 160 UTF-16 units).
    let config = ChunkerConfig { max_tokens: 60, merge_forward_tokens: 8, fragment_floor_tokens: 0, overlap_tokens: 40 };
    let body = format!("# Coverage\n\n{}", format!("{COVERAGE_RULE} ").repeat(12));
    let chunks = chunk_body(&body, &config);
    let drafts = draft_chunks(&body, &config);
    assert!(chunks.len() >= 3);
    for (i, chunk) in chunks.iter().enumerate().skip(1) {
        let tail = chunk.text.strip_suffix(drafts[i].text.as_str()).and_then(|t| t.strip_suffix("\n\n"));
        let Some(tail) = tail else { panic!("chunk {i} carries an overlap: {:?}", chunk.text) };
        assert!(starts_on_a_word(&drafts[i - 1].text, tail), "chunk {i} begins mid-word: {tail:?}");
        assert!(tail.starts_with(char::is_uppercase), "a whole sentence fits the budget: {tail:?}");
    }
}

#[test]
fn a_short_last_sentence_gives_way_to_a_longer_word_tail() {
    // "Done." keeps less than half the 80-unit budget: the tail begins at a word instead.
    let text = "The publish step uploads every shard and then writes the pointer file last of all. Done.";
    let tail = overlap_tail(text, 80);
    assert!(tail.len() > "Done.".len() && utf16_len(tail) <= 80, "{tail:?}");
    assert!(starts_on_a_word(text, tail), "{tail:?}");
    assert_eq!(tail, "step uploads every shard and then writes the pointer file last of all. Done.");
}

#[test]
fn a_paragraph_start_is_a_sentence_start() {
    let text = "First paragraph without a final stop\n\nsecond paragraph, lower case, no stop";
    assert_eq!(overlap_tail(text, 40), "second paragraph, lower case, no stop");
}

#[test]
fn a_tail_with_no_word_start_in_the_budget_is_no_overlap() {
    let blob = format!("see {}", "x".repeat(300));
    assert_eq!(overlap_tail(&blob, 160), "");
    assert_eq!(overlap_tail("", 160), "");
    assert_eq!(overlap_tail("word", 0), "");
    let config = ChunkerConfig { max_tokens: 10, merge_forward_tokens: 0, fragment_floor_tokens: 0, overlap_tokens: 5 };
    let body = "y".repeat(400);
    let chunks = chunk_body(&body, &config);
    let drafts = draft_chunks(&body, &config);
    assert!(chunks.len() > 1);
    assert_eq!(texts(&chunks), drafts.iter().map(|d| d.text.as_str()).collect::<Vec<_>>(), "a cut blob carries no overlap");
}

// ---------------------------------------------------------------------------------------
// Our own choices and finer points
// ---------------------------------------------------------------------------------------

#[test]
fn default_config_is_the_reference_production_config() {
    assert_eq!(
        ChunkerConfig::default(),
        ChunkerConfig {
            max_tokens: 512,
            merge_forward_tokens: 150,
            fragment_floor_tokens: 24,
            overlap_tokens: 40
        }
    );
    let json = serde_json::to_string(&ChunkerConfig::default()).unwrap_or_default();
    assert_eq!(
        serde_json::from_str::<ChunkerConfig>(&json).ok(),
        Some(ChunkerConfig::default())
    );
}

#[test]
fn content_hash_follows_the_reference_formula() {
    let chunks = chunk_body("# Top\n\n## Sub\n\nSome text.", &standalone_sections());
    assert_eq!(chunks.len(), 1);
    let expected = wikantik_format::hashing::sha256_hex("Top\u{0}Sub\nSome text.".as_bytes());
    assert_eq!(Some(chunks[0].content_hash.as_str()), expected.get(..16));
    let top_level = chunk_body("Some text.", &standalone_sections());
    let expected = wikantik_format::hashing::sha256_hex("\nSome text.".as_bytes());
    assert_eq!(Some(top_level[0].content_hash.as_str()), expected.get(..16));
}

#[test]
fn skipped_heading_levels_pad_and_leading_padding_is_dropped() {
    let body = "### Deep first\n\nText under a level-3 heading.\n\n# Top\n\n### Skipped two\n\nMore text here.";
    let chunks = chunk_body(body, &standalone_sections());
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[0].heading_path, path(&["Deep first"]));
    // Interior padding is kept: only the *leading* empty entries are stripped.
    assert_eq!(chunks[1].heading_path, path(&["Top", "", "Skipped two"]));
}

#[test]
fn setext_and_closed_atx_headings_give_plain_titles() {
    let body =
        "Main title\n==========\n\nIntro text for the page.\n\nSub *title*\n---\n\nBody text.\n\n\
                ## Closed heading ##\n\nClosed text.\n\n## C# tips\n\nSharp text.";
    let chunks = chunk_body(body, &standalone_sections());
    let paths: Vec<_> = chunks.iter().map(|c| c.heading_path.clone()).collect();
    assert_eq!(
        paths,
        vec![
            path(&["Main title"]),
            path(&["Main title", "Sub *title*"]),
            path(&["Main title", "Closed heading"]),
            path(&["Main title", "C# tips"]),
        ]
    );
}

#[test]
fn held_buffer_at_or_above_the_floor_keeps_its_own_heading() {
    // 30 tokens: below merge-forward (150) so it is held at the end of its section, but
    // at/above the floor (24) so the heading boundary emits it under its own path.
    let short_section = "x".repeat(120);
    assert_eq!(estimate_tokens(&short_section), 30);
    let body = format!("## First\n\n{short_section}\n\n## Second\n\nSecond section text.");
    let chunks = chunk_body(&body, &production_without_overlap());
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[0].heading_path, path(&["First"]));
    assert_eq!(chunks[0].text, short_section);
    assert_eq!(chunks[1].heading_path, path(&["Second"]));
}

#[test]
fn sub_merge_forward_blocks_of_one_section_stay_together() {
    let body = "## Notes\n\nFirst short paragraph.\n\nSecond short paragraph.\n\nThird one.";
    let chunks = chunk_body(body, &production_without_overlap());
    assert_eq!(
        texts(&chunks),
        vec!["First short paragraph.\n\nSecond short paragraph.\n\nThird one."]
    );
}

#[test]
fn residue_at_end_of_page_is_emitted_under_its_own_heading() {
    // The fragment never meets content of a later section, so it keeps its own path.
    let body = "## Only\n\nTiny.\n\n## Empty heading at the end";
    let chunks = chunk_body(body, &production_without_overlap());
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].heading_path, path(&["Only"]));
    assert_eq!(chunks[0].text, "Tiny.");
}

#[test]
fn pending_text_becomes_a_chunk_when_the_next_block_would_exceed_max() {
    let config = ChunkerConfig {
        max_tokens: 50,
        merge_forward_tokens: 10,
        fragment_floor_tokens: 5,
        overlap_tokens: 0,
    };
    let paragraph = |word: &str| format!("{} end.", word.repeat(30)); // 30×4+5 = 125 units = 32 tokens
    let body = format!(
        "{}\n\n{}\n\n{}",
        paragraph("aaa "),
        paragraph("bbb "),
        paragraph("ccc ")
    );
    let chunks = chunk_body(&body, &config);
    assert_eq!(chunks.len(), 3);
    for chunk in &chunks {
        assert!(chunk.token_estimate <= 50);
    }
}

#[test]
fn lead_in_below_the_floor_stays_with_the_atomic_block_it_introduces() {
    let body = "## Usage\n\nExample:\n\n```sh\nwikantik build --out shards/\n```\n\nThe command writes one file per shard.";
    let chunks = chunk_body(body, &production_without_overlap());
    assert_eq!(
        texts(&chunks),
        vec![
            "Example:\n\n```sh\nwikantik build --out shards/\n```",
            "The command writes one file per shard."
        ]
    );
}

#[test]
fn short_intro_joins_the_atomic_block_when_they_fit_together() {
    // 25 tokens: above the floor, below merge-forward.
    let intro = "Create the unit file below with the following content, save it, and then reload the systemd daemon:";
    assert!((24..150).contains(&estimate_tokens(intro)));
    let body =
        format!("## Service\n\n{intro}\n\n```ini\n[Unit]\nDescription=demo\n```\n\nThen start it.");
    let chunks = chunk_body(&body, &production_without_overlap());
    assert_eq!(
        texts(&chunks),
        vec![
            format!("{intro}\n\n```ini\n[Unit]\nDescription=demo\n```").as_str(),
            "Then start it."
        ]
    );
}

#[test]
fn intro_too_big_to_join_is_flushed_before_the_atomic_block_in_reading_order() {
    let config = ChunkerConfig {
        max_tokens: 40,
        ..production_without_overlap()
    };
    let intro = "This introduction is deliberately long enough to clear the fragment floor of twenty-four tokens.";
    let table = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n| 5 | 6 |\n| 7 | 8 |\n| 9 | 0 |";
    assert!(estimate_tokens(intro) >= 24 && estimate_tokens(&format!("{intro}\n\n{table}")) > 40);
    let body = format!("## Usage\n\n{intro}\n\n{table}\n\nAfter the table.");
    let chunks = chunk_body(&body, &config);
    assert_eq!(texts(&chunks), vec![intro, table, "After the table."]);
    assert!(draft_chunks(&body, &config)
        .get(1)
        .is_some_and(|draft| draft.atomic));

    // At or above merge-forward, pending text never joins an atomic block.
    let long_intro = format!("{intro} ").repeat(7);
    let body = format!("## Usage\n\n{long_intro}\n\n{table}");
    let chunks = chunk_body(&body, &production_without_overlap());
    assert_eq!(texts(&chunks), vec![long_intro.trim(), table]);
}

#[test]
fn short_pending_text_leads_the_split_of_an_over_long_block() {
    let config = tiny_chunks(0); // max 40 tokens
    let body = format!(
        "## S\n\nShort intro.\n\n{}",
        "Alpha sentence number here is present. ".repeat(8)
    );
    let chunks = chunk_body(&body, &config);
    assert!(chunks.len() > 1);
    assert!(
        chunks[0].text.starts_with("Short intro.\n\nAlpha sentence"),
        "{:?}",
        chunks[0].text
    );
    assert!(chunks.iter().all(|c| c.token_estimate <= 40));
}

#[test]
fn crlf_and_lf_bodies_give_identical_chunks() {
    let lf = "# Title\n\nFirst paragraph.\nSecond line.\n\n## Sub\n\n- a\n- b\n";
    let crlf = lf.replace('\n', "\r\n");
    assert_eq!(
        chunk_body(lf, &ChunkerConfig::default()),
        chunk_body(&crlf, &ChunkerConfig::default())
    );
    assert!(chunk_body(&crlf, &ChunkerConfig::default())
        .iter()
        .all(|c| !c.text.contains('\r')));
}

#[test]
fn link_reference_definitions_are_not_lost() {
    let body = "See [the docs][docs] for more.\n\n[docs]: https://example.com/docs";
    let chunks = chunk_body(body, &standalone_sections());
    assert_eq!(texts(&chunks), vec![body]);
}

#[test]
fn a_single_huge_word_is_cut_into_pieces_that_fit() {
    let config = tiny_chunks(0);
    let word = "é𝄞abc".repeat(100); // 600 UTF-16 units, no whitespace
    let chunks = chunk_body(&word, &config);
    assert!(chunks.len() > 1);
    assert!(chunks.iter().all(|c| c.token_estimate <= config.max_tokens));
    assert_eq!(
        chunks.iter().map(|c| c.text.as_str()).collect::<String>(),
        word
    );
}

#[test]
fn overlap_tail_never_splits_a_character() {
    let config = ChunkerConfig {
        max_tokens: 10,
        merge_forward_tokens: 0,
        fragment_floor_tokens: 0,
        overlap_tokens: 1,
    };
    // Every char is a surrogate pair (2 UTF-16 units); the 4-unit tail holds the last
    // two-character word.
    let body = "𝄞𝄞 ".repeat(30);
    let chunks = chunk_body(&body, &config);
    assert!(chunks.len() > 1);
    for chunk in chunks.iter().skip(1) {
        assert!(chunk.text.starts_with("𝄞𝄞\n\n"), "{:?}", chunk.text);
    }
    assert_eq!(overlap_tail("a 𝄞", 1), "");
    assert_eq!(overlap_tail("a 𝄞", 2), "𝄞");
    assert_eq!(overlap_tail("a𝄞", 2), "", "never the end of a word");
    assert_eq!(utf16_tail("a𝄞", 1), "");
    assert_eq!(utf16_tail("a𝄞", 2), "𝄞");
    assert_eq!(utf16_tail("a𝄞", 3), "a𝄞");
    assert_eq!(utf16_tail("a𝄞", 99), "a𝄞");
}

#[test]
fn sentence_boundaries_follow_the_reference_rule() {
    let text = "One. Two? three! Four.\n\nfive. six.\nseven";
    let sentences: Vec<_> = sentence_segments(text, 0..text.len())
        .into_iter()
        .filter_map(|r| text.get(r))
        .collect();
    // "? t" (lower case) and ". s" / ".\ns" (single line break, lower case) are not boundaries;
    // a blank line is.
    assert_eq!(
        sentences,
        vec!["One.", "Two? three!", "Four.", "five. six.\nseven"]
    );
}

// ---------------------------------------------------------------------------------------
// Robustness
// ---------------------------------------------------------------------------------------

/// Invariants every chunk list must satisfy, whatever the input.
fn assert_invariants(body: &str, config: &ChunkerConfig) -> Vec<Chunk> {
    let chunks = chunk_body(body, config);
    let drafts = draft_chunks(body, config);
    assert_eq!(chunks.len(), drafts.len());
    let max_tokens = config.max_tokens.max(1);
    for (position, (chunk, draft)) in chunks.iter().zip(&drafts).enumerate() {
        assert_eq!(chunk.index as usize, position, "indexes are sequential");
        assert!(!chunk.text.trim().is_empty(), "empty chunk in {body:?}");
        assert_eq!(draft.text.trim(), draft.text);
        assert!(chunk.text.ends_with(&draft.text));
        if chunk.text != draft.text {
            // An overlap: a tail of the previous draft, within the budget, on a word start.
            let tail = chunk.text.strip_suffix(draft.text.as_str()).and_then(|t| t.strip_suffix(BLOCK_SEPARATOR));
            let previous = position.checked_sub(1).and_then(|p| drafts.get(p));
            let (Some(tail), Some(previous)) = (tail, previous) else {
                panic!("chunk {position} is neither its draft nor tail + draft in {body:?}")
            };
            assert!(utf16_len(tail) <= config.overlap_tokens.saturating_mul(4), "overlap over budget in {body:?}");
            assert!(starts_on_a_word(&previous.text, tail), "overlap {tail:?} begins mid-word in {body:?}");
        }
        assert!(
            draft.atomic || estimate_tokens(&draft.text) <= max_tokens,
            "prose chunk over max ({} > {max_tokens}) in {body:?}",
            estimate_tokens(&draft.text)
        );
        assert_eq!(chunk.char_count, utf16_len(&chunk.text));
        assert_eq!(chunk.token_estimate, estimate_tokens(&chunk.text));
        assert_eq!(
            chunk.content_hash,
            content_hash(&chunk.heading_path, &chunk.text)
        );
        assert!(chunk
            .heading_path
            .first()
            .is_none_or(|first| !first.is_empty()));
    }
    chunks
}

fn nasty_configs() -> Vec<ChunkerConfig> {
    vec![
        ChunkerConfig::default(),
        ChunkerConfig {
            max_tokens: 0,
            merge_forward_tokens: 0,
            fragment_floor_tokens: 0,
            overlap_tokens: 0,
        },
        ChunkerConfig {
            max_tokens: 1,
            merge_forward_tokens: 1,
            fragment_floor_tokens: 1000,
            overlap_tokens: 1,
        },
        ChunkerConfig {
            max_tokens: usize::MAX,
            merge_forward_tokens: usize::MAX,
            fragment_floor_tokens: usize::MAX,
            overlap_tokens: usize::MAX,
        },
        tiny_chunks(3),
    ]
}

#[test]
fn never_panics_on_nasty_inputs() {
    let deep_list: String = (0..2_000)
        .map(|depth| format!("{}- level {depth}\n", "  ".repeat(depth)))
        .collect();
    let deep_quote = format!("{} quoted", ">".repeat(5_000));
    let deep_ordered: String = (0..500)
        .map(|depth| format!("{}1. x\n", "   ".repeat(depth)))
        .collect();
    let inputs: Vec<String> = vec![
        String::new(),
        "   \n\n\t  ".into(),
        "#".into(),
        "# ".into(),
        "######".into(),
        "####### seven hashes is not a heading".into(),
        "# Only\n## Headings\n### Here\n#### And\n##### Nothing\n###### Else".into(),
        "Setext\n===".into(),
        "===\n---\n***\n___".into(),
        "```".into(),
        "```rust\nfn main() {\n    let unclosed = \"fence\";\n".into(),
        "~~~\n~~~~\n```\n".into(),
        "    indented code\n    more".into(),
        "x".repeat(100_000),
        "𝄞".repeat(10_001),
        format!("{}. {}", "é".repeat(5_000), "Ü".repeat(3_000)),
        "line one\r\nline two\r\n\r\n# Title\r\n\r\nbody\r".into(),
        "\r\r\r".into(),
        "\u{0}\u{feff}\u{200b}\u{2028}\u{2029}".into(),
        "日本語の文章です。次の文です！\n\n## 見出し\n\n本文。".into(),
        "🦀🦀🦀 crab. Crab! CRAB? 🦀".repeat(500),
        deep_list,
        deep_quote,
        deep_ordered,
        "| a | b |\n|---|---|\n| 1 |".into(),
        "|\n|-\n|".into(),
        "- [ ] task\n- [x] done".into(),
        "<div>\n\nhtml *block*\n\n</div>".into(),
        "[x]: http://a\n[y]: http://b".into(),
        "[^1]: footnote without the footnote option".into(),
        "---\ntitle: not frontmatter\n---\nBody".into(),
        "Para.\n\n\n\n\n\nPara.".into(),
        "a.\nB".repeat(3_000),
        "*".repeat(10_000),
        "[".repeat(10_000),
        "`".repeat(10_000),
        "\\".repeat(1_001),
    ];
    for input in &inputs {
        for config in nasty_configs() {
            assert_invariants(input, &config);
        }
    }
}

/// A tiny deterministic generator (no dependency) for pseudo-random Markdown.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as usize
    }

    fn pick<'a>(&mut self, options: &[&'a str]) -> &'a str {
        let index = self.next() % options.len().max(1);
        options.get(index).copied().unwrap_or("")
    }
}

const FRAGMENTS: &[&str] = &[
    "Plain sentence. ",
    "Another one! ",
    "lower case? ",
    "word ",
    "é𝄞 ",
    "*em* ",
    "`code` ",
    "\n",
    "\n\n",
    "- item ",
    "1. step ",
    "> quote ",
    "```\ncode\n",
    "```\n",
    "| a | b |\n|---|---|\n",
    "[ref]: http://x\n",
    "    indented\n",
    "\r\n",
    "\t",
];

const HEADINGS: &[&str] = &["\n# H1\n", "\n## H2\n", "\n### *H3*\n", "\nSetext\n===\n"];

fn random_body(rng: &mut Lcg, with_headings: bool) -> String {
    let length = rng.next() % 200;
    let mut body = String::new();
    for _ in 0..length {
        if with_headings && rng.next().is_multiple_of(10) {
            body.push_str(rng.pick(HEADINGS));
        } else {
            body.push_str(rng.pick(FRAGMENTS));
        }
    }
    body
}

fn without_whitespace(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

#[test]
fn random_markdown_never_panics_and_loses_or_reorders_nothing() {
    let mut rng = Lcg(0x5eed);
    for round in 0..400 {
        let config = match round % 3 {
            0 => ChunkerConfig::default(),
            1 => tiny_chunks(0),
            _ => ChunkerConfig {
                max_tokens: 7,
                merge_forward_tokens: 12,
                fragment_floor_tokens: 3,
                overlap_tokens: 2,
            },
        };
        assert_invariants(&random_body(&mut rng, true), &config);

        // Without headings every non-blank character must come out once, in order.
        let body = random_body(&mut rng, false);
        assert_invariants(&body, &config);
        let drafts = draft_chunks(&body, &config);
        let emitted: String = drafts.iter().map(|d| without_whitespace(&d.text)).collect();
        assert_eq!(
            emitted,
            without_whitespace(&body),
            "text lost or reordered for {body:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The real corpus
// ---------------------------------------------------------------------------------------

/// The body of a page file: everything after a frontmatter block that starts at offset 0
/// with `---\n` and ends at a line `---`.
#[cfg(not(target_arch = "wasm32"))]
fn strip_frontmatter(file: &str) -> &str {
    let Some(after_open) = file
        .strip_prefix("---\n")
        .or_else(|| file.strip_prefix("---\r\n"))
    else {
        return file;
    };
    let mut offset = 0;
    for line in after_open.split_inclusive('\n') {
        offset += line.len();
        if line.trim_end_matches(['\n', '\r']) == "---" {
            return after_open.get(offset..).unwrap_or("");
        }
    }
    file
}

/// The corpus directory (`WIKANTIK_CORPUS`, else beside the repository) and its `.md` files,
/// sorted; `None`, after saying so, when it is not on this machine.
#[cfg(not(target_arch = "wasm32"))]
fn corpus_files(test: &str) -> Option<(std::path::PathBuf, Vec<std::path::PathBuf>)> {
    let directory = std::env::var_os("WIKANTIK_CORPUS").map(std::path::PathBuf::from).unwrap_or_else(|| {
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/corpus/wikantik-pages")).to_path_buf()
    });
    let Ok(entries) = std::fs::read_dir(&directory) else {
        println!(
            "SKIPPED {test}: corpus directory {} not found (set WIKANTIK_CORPUS)",
            directory.display()
        );
        return None;
    };
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    files.sort();
    Some((directory, files))
}

#[cfg(not(target_arch = "wasm32"))]
#[test]
fn real_corpus_chunks_within_the_reference_ballpark() {
    let Some((directory, files)) = corpus_files("real_corpus_chunks_within_the_reference_ballpark") else {
        return;
    };

    let config = ChunkerConfig::default();
    let (mut pages, mut total, mut atomic, mut oversized_atomic, mut tokens) =
        (0usize, 0usize, 0usize, 0usize, 0usize);
    for file in &files {
        let Ok(content) = std::fs::read_to_string(file) else {
            continue;
        };
        let body = strip_frontmatter(&content);
        let chunks = assert_invariants(body, &config);
        let drafts = draft_chunks(body, &config);
        pages += 1;
        total += chunks.len();
        atomic += drafts.iter().filter(|d| d.atomic).count();
        oversized_atomic += drafts
            .iter()
            .filter(|d| d.atomic && estimate_tokens(&d.text) > config.max_tokens)
            .count();
        tokens += chunks.iter().map(|c| c.token_estimate).sum::<usize>();
    }
    println!(
        "corpus: {pages} pages -> {total} chunks ({atomic} atomic, {oversized_atomic} atomic over max), \
         mean {} tokens/chunk",
        tokens.checked_div(total).unwrap_or(0)
    );
    assert!(pages > 0, "no pages read from {}", directory.display());
    assert!(
        (12_000..=25_000).contains(&total),
        "{total} chunks is outside the reference ballpark (~18.4k)"
    );
}

/// Every section of every corpus page, chunked with the production configuration: a chunk
/// that carries an overlap begins with a tail of the previous chunk's own text that starts at
/// its offset 0 or just after whitespace — never inside a word.
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn real_corpus_sections_never_start_mid_word() {
    let Some((directory, files)) = corpus_files("real_corpus_sections_never_start_mid_word") else {
        return;
    };
    let config = ChunkerConfig::default();
    let budget = config.overlap_tokens * 4;
    let (mut chunks_total, mut overlapped, mut changed, mut dropped, mut sentence_tails) = (0, 0, 0, 0, 0);
    let mut mid_word_before = 0;
    for file in &files {
        let Ok(content) = std::fs::read_to_string(file) else {
            continue;
        };
        let body = strip_frontmatter(&content);
        let chunks = chunk_body(body, &config);
        let drafts = draft_chunks(body, &config);
        chunks_total += chunks.len();
        for (i, (chunk, draft)) in chunks.iter().zip(&drafts).enumerate().skip(1) {
            let previous = &drafts[i - 1];
            if previous.heading_path != draft.heading_path {
                continue;
            }
            // What the character-offset tail gave.
            let cut = utf16_tail(&previous.text, budget);
            let before = format!("{cut}{BLOCK_SEPARATOR}{}", draft.text);
            if !starts_on_a_word(&previous.text, cut) {
                mid_word_before += 1;
            }
            if chunk.text != before {
                changed += 1;
            }
            if chunk.text == draft.text {
                dropped += 1;
                continue;
            }
            overlapped += 1;
            let tail = chunk.text.strip_suffix(draft.text.as_str()).and_then(|t| t.strip_suffix(BLOCK_SEPARATOR));
            let Some(tail) = tail else {
                panic!("{}: chunk {i} is neither its draft nor tail + draft", file.display())
            };
            assert!(
                starts_on_a_word(&previous.text, tail),
                "{}: chunk {i} begins mid-word: {:?}",
                file.display(),
                tail.chars().take(60).collect::<String>()
            );
            if tail.starts_with(char::is_uppercase) {
                sentence_tails += 1;
            }
        }
    }
    println!(
        "corpus {}: {chunks_total} chunks; {mid_word_before} overlaps used to begin mid-word; now {overlapped} \
         overlaps on a word ({sentence_tails} beginning with a capital), {dropped} without overlap \
         (no word start in the budget); {changed} chunk texts changed",
        directory.display()
    );
    assert!(mid_word_before > 0 && changed > 0, "the corpus exercises the fix");
}
