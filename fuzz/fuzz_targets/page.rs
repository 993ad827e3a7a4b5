//! Frontmatter and page parsing: one arbitrary page (Markdown or HTML) compiled next to a
//! fixed one. Errors are fine; panics are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wikantik::compile::{compile, CompileOptions, SourcePage};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest).into_owned();
    let _ = wikantik::page::split_frontmatter(&text);
    let _ = wikantik::acl::parse_acl(&text);
    let file_name = match mode % 4 {
        0 => "Fuzz.md",
        1 => "Fuzz+Page.md",
        2 => "Fuzz.html",
        _ => "Q%26A.md",
    };
    let pages = vec![
        SourcePage { file_name: file_name.into(), text, git_version: None, updated: 0 },
        SourcePage {
            file_name: "Other.md".into(),
            text: "---\ntitle: Other\ncluster: fuzz\ntype: hub\n---\n# Other\n\nSee [Fuzz]().\n".into(),
            git_version: Some(2),
            updated: 1,
        },
    ];
    let _ = compile(pages, &CompileOptions::default(), &mut |_, _, _| {});
});
