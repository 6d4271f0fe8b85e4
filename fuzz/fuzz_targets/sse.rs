//! Response bytes → SSE events → `ModelReply`: never panics on arbitrary bytes read in arbitrary
//! pieces, and how the body is split into reads changes nothing (the reply, the error, the
//! deltas). The first input byte seeds where the second reading splits the rest; the first
//! reading takes the body whole.

#![no_main]

use libfuzzer_sys::fuzz_target;
use opsai::llm::{ModelDelta, ModelReply, assemble_sse_for_fuzzing};
use tokio::runtime::{Builder, Runtime};

thread_local! {
    static RUNTIME: Runtime = Builder::new_current_thread().enable_time().build().expect("a tokio runtime");
}

type Outcome = (Result<ModelReply, String>, Vec<ModelDelta>);

fn assemble(chunks: Vec<Vec<u8>>) -> Outcome {
    let mut deltas = Vec::new();
    let mut sink = |delta: ModelDelta| deltas.push(delta);
    let reply = RUNTIME.with(|runtime| runtime.block_on(assemble_sse_for_fuzzing(chunks, &mut sink)));
    (reply, deltas)
}

/// `body` cut into reads of 0..=`seed % 32` bytes each (empty reads included), chosen by a
/// small generator seeded from `seed`.
fn split(body: &[u8], seed: u8) -> Vec<Vec<u8>> {
    let widest = usize::from(seed % 32) + 1;
    let mut state = u32::from(seed).wrapping_mul(2_654_435_761).wrapping_add(1);
    let mut chunks = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let take = (state as usize % (widest + 1)).min(rest.len());
        let (chunk, tail) = rest.split_at(take);
        chunks.push(chunk.to_vec());
        rest = tail;
    }
    chunks
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, body)) = data.split_first() else {
        return;
    };
    let (whole, whole_deltas) = assemble(vec![body.to_vec()]);
    let (pieces, pieces_deltas) = assemble(split(body, seed));
    assert_eq!(whole, pieces, "the split changed the result");
    assert_eq!(whole_deltas, pieces_deltas, "the split changed the deltas");
    if let Ok(reply) = &whole {
        let text = |pick: fn(&ModelDelta) -> Option<&str>| whole_deltas.iter().filter_map(pick).collect::<String>();
        let content = text(|d| if let ModelDelta::Content(t) = d { Some(t) } else { None });
        let reasoning = text(|d| if let ModelDelta::Reasoning(t) = d { Some(t) } else { None });
        assert_eq!(content, reply.content, "content deltas do not add up to the content");
        assert_eq!(reasoning, reply.reasoning, "reasoning deltas do not add up to the reasoning");
        assert!(reply.tool_calls.iter().all(|call| !call.id.is_empty()), "a call without an id");
    }
});
