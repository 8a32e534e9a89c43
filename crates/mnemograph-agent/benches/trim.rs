//! Trimming a 1,000-message mixed Chinese/English history: the trimmer runs before every model
//! call, so it must stay cheap next to the call itself.

use criterion::{black_box, criterion_main, Criterion};
use mnemograph_agent::{trim_messages, TrimOptions, TrimmingMiddleware};
use mnemograph_core::messages::{Message, MessageType, ToolCall};
use mnemograph_models::ApproxTokenCounter;

/// 1,000 messages: a system prompt, then turns of question, tool call, tool result (some over
/// 2,000 characters) and answer, mixing Chinese and English, plus the odd empty AI message.
fn history() -> Vec<Message> {
    let mut out =
        vec![Message::system("你是黑白梦博客助手。Answer in the user's language and cite sources.")];
    let mut turn = 0;
    while out.len() < 1000 {
        out.push(Message::human(format!(
            "第 {turn} 个问题：LangGraph 的 checkpoint 和 Redis TTL 怎么配合？"
        )));
        let args = serde_json::json!({"query": format!("redis ttl {turn}"), "top_k": 5});
        out.push(Message::ai("").with_tool_calls(vec![ToolCall::new(
            "search_blog",
            args,
            format!("c{turn}"),
        )]));
        let body = if turn % 10 == 0 {
            "文章全文 full article text. ".repeat(150)
        } else {
            "3 results: 《Redis 快照》…".to_owned()
        };
        out.push(Message::tool(body, format!("c{turn}")));
        if turn % 7 == 0 {
            out.push(Message::ai(""));
        }
        out.push(Message::ai(format!("根据第 {turn} 篇文章，checkpoint 写入 Redis 并设置 7 天 TTL。")));
        turn += 1;
    }
    out.truncate(1000);
    out
}

/// Every bench (what `criterion_group!` would generate, written out so it can carry a doc comment
/// for the workspace's `missing_docs` lint).
fn benches() {
    let mut c = Criterion::default().configure_from_args();
    let history = history();
    let counter = ApproxTokenCounter::new();
    let options = TrimOptions::new(8000).include_system().start_on(MessageType::Human);
    c.bench_function("trim_messages_1000_mixed_last_8k", |b| {
        b.iter(|| trim_messages(black_box(&history), &counter, &options));
    });
    // The whole middleware pass: scan for empty AI messages, truncate long tool results
    // (counting characters), then trim.
    let middleware = TrimmingMiddleware::new(8000);
    c.bench_function("trimming_middleware_compact_1000_mixed", |b| {
        b.iter(|| middleware.compact(black_box(&history)));
    });
    let everything = TrimOptions::new(usize::MAX);
    c.bench_function("trim_messages_1000_mixed_count_all", |b| {
        b.iter(|| trim_messages(black_box(&history), &counter, &everything));
    });
}

criterion_main!(benches);
