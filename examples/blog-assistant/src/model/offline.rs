//! [`OfflineModel`]: a deterministic stand-in for an LLM, so the example runs (and is tested)
//! without network or keys while still exercising everything the service does with a real one:
//! streamed tokens, tool calls, citations and answers that depend on the conversation.
//!
//! It decides from the last message it is shown:
//! - a question about the conversation itself ("我之前问了什么？") is answered from the earlier
//!   human messages of the request, which is how cold-start recovery becomes visible;
//! - any other question: a short preface, then a `search_blog` call;
//! - a `search_blog` result: a preface, then `get_article_content` of the best hit (or an
//!   answer saying nothing matched);
//! - a `get_article_content` result: the answer, quoting the article's opening and its link,
//!   and referring to the previous question when there is one.

use std::time::Duration;

use futures_util::StreamExt;
use mnemograph_core::messages::{Message, MessageType, ToolCall, ToolStatus};
use mnemograph_models::{ChatChunk, ChatModel, ChatRequest, ChunkStream, Result, ToolCallChunk};
use serde_json::{json, Map, Value};

use crate::tools::{GET_ARTICLE_CONTENT, SEARCH_BLOG};

/// Characters per streamed token.
const TOKEN_CHARS: usize = 3;
/// Characters of the article quoted in an answer.
const EXCERPT_CHARS: usize = 120;

/// The offline model; see the [module docs](self).
#[derive(Debug, Clone)]
pub struct OfflineModel {
    /// Pause before each streamed token.
    token_delay: Duration,
}

impl OfflineModel {
    /// A model streaming one token per `token_delay`.
    pub fn new(token_delay: Duration) -> Self {
        Self { token_delay }
    }
}

/// What the model says next: text, then at most one tool call.
#[derive(Debug, Clone, PartialEq)]
struct Reply {
    /// The text.
    text: String,
    /// `(tool name, arguments)`.
    call: Option<(&'static str, Value)>,
}

impl Reply {
    fn say(text: impl Into<String>) -> Self {
        Self { text: text.into(), call: None }
    }
    fn call(text: impl Into<String>, tool: &'static str, args: Value) -> Self {
        Self { text: text.into(), call: Some((tool, args)) }
    }
    /// The response metadata every reply ends with.
    fn metadata(&self) -> Map<String, Value> {
        let reason = if self.call.is_some() { "tool_calls" } else { "stop" };
        let mut m = Map::new();
        m.insert("finish_reason".to_owned(), reason.into());
        m.insert("model_name".to_owned(), MODEL_NAME.into());
        m
    }
}

/// The name this model reports.
const MODEL_NAME: &str = "offline-blog-assistant";

impl ChatModel for OfflineModel {
    async fn invoke(&self, request: ChatRequest) -> Result<Message> {
        let reply = reply(&request.messages);
        let mut message = Message::ai(reply.text.as_str()).with_response_metadata(reply.metadata());
        if let Some((name, args)) = reply.call {
            message = message.with_tool_calls(vec![ToolCall::new(name, args, call_id())]);
        }
        Ok(message)
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChunkStream> {
        let reply = reply(&request.messages);
        let chars: Vec<char> = reply.text.chars().collect();
        let mut chunks: Vec<(bool, ChatChunk)> = chars
            .chunks(TOKEN_CHARS)
            .map(|c| (true, ChatChunk::text(c.iter().collect::<String>())))
            .collect();
        let mut last = ChatChunk::text("");
        if let Some((name, args)) = &reply.call {
            let call = ToolCallChunk::new(0).with_id(call_id()).with_name(*name).with_args(args.to_string());
            last.tool_calls.push(call);
        }
        last.response_metadata = reply.metadata();
        chunks.push((false, last));
        let delay = self.token_delay;
        // Only text pauses: that is what a user watches arrive.
        let stream = futures_util::stream::iter(chunks).then(move |(pause, chunk)| async move {
            if pause && !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            Ok(chunk)
        });
        Ok(Box::pin(stream) as ChunkStream)
    }

    fn model_name(&self) -> &str {
        MODEL_NAME
    }
}

/// A fresh tool-call id; unique, so a call is never confused with one of an earlier turn.
fn call_id() -> String {
    format!("call_{}", uuid::Uuid::new_v4().simple())
}

/// Whether `question` asks about the conversation itself rather than the blog.
pub fn is_history_question(question: &str) -> bool {
    let q = question.to_lowercase();
    ["之前问", "问过什么", "问了什么", "上一个问题", "刚才问", "what did i ask", "previous question"]
        .iter()
        .any(|k| q.contains(k))
}

/// The next reply to `messages` (see the module docs).
fn reply(messages: &[Message]) -> Reply {
    let asked = messages.iter().rposition(|m| m.kind() == MessageType::Human);
    let question = asked.map(|i| messages[i].text()).unwrap_or_default();
    let earlier: Vec<String> = messages[..asked.unwrap_or(0)]
        .iter()
        .filter(|m| m.kind() == MessageType::Human)
        .map(Message::text)
        .collect();
    let Some(last) = messages.last() else {
        return Reply::say("你好，我是博客助手，想了解哪方面的文章？");
    };
    match last.kind() {
        MessageType::Human if is_history_question(&question) => Reply::say(recall(&earlier)),
        MessageType::Human => {
            Reply::call("我先在博客里搜索一下相关文章。", SEARCH_BLOG, json!({ "query": question }))
        }
        MessageType::Tool if last.status() == Some(ToolStatus::Error) => {
            Reply::say(format!("查资料时出了点问题：{}", last.text()))
        }
        MessageType::Tool if last.name() == Some(SEARCH_BLOG) => after_search(&question, &last.text()),
        MessageType::Tool if last.name() == Some(GET_ARTICLE_CONTENT) => {
            Reply::say(answer(&last.text(), earlier.last().map(String::as_str)))
        }
        _ => Reply::say("我没有理解，可以换个说法再问一次吗？"),
    }
}

/// The answer to "what did I ask before?".
fn recall(earlier: &[String]) -> String {
    match earlier {
        [] => "这是你在这个会话里的第一个问题，之前还没有问过别的。".to_owned(),
        [.., latest] => {
            let list: Vec<String> =
                earlier.iter().enumerate().map(|(i, q)| format!("{}. 「{q}」", i + 1)).collect();
            format!("你之前问过 {} 个问题：\n{}\n最近的一个是「{latest}」。", earlier.len(), list.join("\n"))
        }
    }
}

/// The step after a search: read the best hit, or say nothing matched.
fn after_search(question: &str, result: &str) -> Reply {
    let best = serde_json::from_str::<Value>(result).ok().and_then(|v| {
        let hits = v.get("results")?.as_array()?.clone();
        let first = hits.first()?;
        Some((hits.len(), first.get("id")?.as_str()?.to_owned(), first.get("title")?.as_str()?.to_owned()))
    });
    match best {
        Some((n, id, title)) => Reply::call(
            format!("找到 {n} 篇相关文章，先读一下《{title}》。"),
            GET_ARTICLE_CONTENT,
            json!({ "id": id }),
        ),
        None => Reply::say(format!("博客里暂时没有找到和「{question}」相关的文章，换个说法再问问看？")),
    }
}

/// The final answer from an article's text (`# title`, `链接：url`, body).
fn answer(article: &str, previous: Option<&str>) -> String {
    let mut lines = article.lines();
    let title = lines.next().and_then(|l| l.strip_prefix("# ")).unwrap_or("这篇文章").trim();
    let url = lines.next().and_then(|l| l.strip_prefix("链接：")).unwrap_or_default().trim();
    let body: Vec<&str> = lines
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("...["))
        .collect();
    let flat = body.join(" ");
    let mut excerpt: String = flat.chars().take(EXCERPT_CHARS).collect();
    if flat.chars().count() > EXCERPT_CHARS {
        excerpt.push('…');
    }
    let mut out = String::new();
    if let Some(previous) = previous {
        out.push_str(&format!("接着你上一个问题「{previous}」，再补充一点。"));
    }
    out.push_str(&format!("根据博客文章《{title}》：{excerpt}\n\n原文链接：{url}"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Corpus;
    use crate::tools::{article_output, search_output};

    fn tool(name: &str, text: &str) -> Message {
        Message::tool(text, "c1").with_name(name)
    }

    #[test]
    fn a_question_leads_to_search_then_read_then_a_cited_answer() {
        let corpus = Corpus::builtin().unwrap();
        let q = "上下文剪裁是怎么做的？";
        let mut history = vec![Message::system("sys"), Message::human(q)];
        let r = reply(&history);
        assert_eq!(r.call, Some((SEARCH_BLOG, json!({ "query": q }))));

        let found = search_output(&corpus, q).content.text();
        history.push(tool(SEARCH_BLOG, &found));
        let r = reply(&history);
        assert_eq!(r.call, Some((GET_ARTICLE_CONTENT, json!({ "id": "context-trimming" }))));
        assert!(r.text.contains("《上下文剪裁"));

        let text = article_output(&corpus, "context-trimming").unwrap().content.text();
        history.push(tool(GET_ARTICLE_CONTENT, &text));
        let r = reply(&history);
        assert!(r.call.is_none());
        assert!(r.text.starts_with("根据博客文章《上下文剪裁"), "{}", r.text);
        assert!(r.text.ends_with("https://blog.heibaimeng.example/posts/context-trimming"));
    }

    #[test]
    fn answers_use_the_conversation() {
        let history =
            [Message::human("Redis 快照保存多久？"), Message::ai("7 天"), Message::human("我之前问了什么？")];
        let r = reply(&history);
        assert!(r.call.is_none());
        assert!(r.text.contains("「Redis 快照保存多久？」"), "{}", r.text);
        assert!(reply(&[Message::human("我刚才问了什么")]).text.contains("第一个问题"));

        let article = "# T\n链接：https://x\n\n正文";
        let r = answer(article, Some("上一个"));
        assert!(r.starts_with("接着你上一个问题「上一个」"));
        assert!(r.contains("《T》：正文"));
    }

    #[test]
    fn no_hit_and_tool_errors_end_the_turn() {
        let empty = json!({"query": "x", "results": []}).to_string();
        let r = reply(&[Message::human("天气预报"), tool(SEARCH_BLOG, &empty)]);
        assert!(r.call.is_none() && r.text.contains("没有找到"));
        let failed = tool(GET_ARTICLE_CONTENT, "no article").with_status(ToolStatus::Error);
        assert!(reply(&[Message::human("q"), failed]).text.contains("出了点问题"));
    }

    #[tokio::test]
    async fn stream_and_invoke_agree() {
        let model = OfflineModel::new(Duration::ZERO);
        let request = ChatRequest::new(vec![Message::human("Redis TTL")]);
        let streamed =
            mnemograph_models::collect_stream(model.stream(request.clone()).await.unwrap(), |_, _| {})
                .await
                .unwrap();
        let invoked = model.invoke(request).await.unwrap();
        assert_eq!(streamed.text(), invoked.text());
        assert_eq!(streamed.tool_calls()[0].name, invoked.tool_calls()[0].name);
        assert_eq!(streamed.tool_calls()[0].args, invoked.tool_calls()[0].args);
    }
}
