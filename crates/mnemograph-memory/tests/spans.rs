//! Memory calls are spans: `memory.save` and `memory.retrieve`, with the backend, the mode, the
//! number of hits and the user id hashed, never in the clear.

use mnemograph_checkpoint::store::HashingEmbeddings;
use mnemograph_memory::{EmbeddedMemory, Memory, NewMemory, RetrieveQuery, SearchMode};
use mnemograph_test::SpanLog;

#[tokio::test(flavor = "current_thread")]
async fn saves_and_retrievals_are_spans_with_the_user_hashed() {
    let (log, _guard) = SpanLog::install();
    let memory = EmbeddedMemory::new(HashingEmbeddings::new(64));
    let user = "ada-lovelace";
    memory.save_turn(NewMemory::turn(user, "monday", "My dog is called Biscuit", "Noted")).await.unwrap();
    memory.save_turn(NewMemory::turn(user, "monday", "I live in Lisbon", "Noted")).await.unwrap();
    let query = RetrieveQuery::new(user, "what is my dog called?").top_k(2).mode(SearchMode::Dense);
    assert_eq!(memory.retrieve(query).await.unwrap().len(), 2);

    assert_eq!(log.closed("memory.save").len(), 2, "{}", log.text());
    let retrieve = log.closed("memory.retrieve");
    assert_eq!(retrieve.len(), 1, "{}", log.text());
    for field in [
        "memory.backend=\"embedded\"",
        "memory.mode=\"dense\"",
        "memory.top_k=2",
        "memory.hits=2",
        "user.hash=",
    ] {
        assert!(retrieve[0].contains(field), "{field} in {}", retrieve[0]);
    }
    assert!(!log.text().contains(user), "the user id is never recorded in the clear: {}", log.text());
}
