//! Recovering a tool call that a small model printed as text never panics, on any UTF-8 input;
//! a recovered call names a known tool, and the prose left over is shorter than the input.

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use opsai::llm::text_calls::recover;
use opsai::tools::Registry;

/// Every tool name the model is ever offered (the agent's tools and the widget's).
static KNOWN: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut names = Registry::agent().names();
    names.extend(Registry::widget().names());
    names.sort_unstable();
    names.dedup();
    names
});

fuzz_target!(|content: &str| {
    let Some((call, prose)) = recover(content, &KNOWN) else {
        return;
    };
    assert!(!call.name.is_empty(), "empty tool name");
    assert!(KNOWN.contains(&call.name.as_str()), "unknown tool {:?}", call.name);
    assert_eq!(call.id, "call_1");
    assert_eq!(prose, prose.trim(), "prose not trimmed");
    assert!(prose.len() < content.len(), "prose {prose:?} not shorter than the input");
    assert!(recover(content, &[]).is_none(), "a call recovered with no known tools");
});
