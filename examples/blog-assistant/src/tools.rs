//! The agent's tools, `search_blog` and `get_article_content`, over the [`Corpus`].
//!
//! Both put the articles they return in the ToolMessage's artifact as
//! `{"citations": [{"title", "url"}, ...]}`: the artifact is kept for the application and never
//! sent to the model, so the service reads the citations from there instead of parsing
//! whatever text the model was shown.

use std::sync::Arc;

use mnemograph_models::{tool, SharedTool, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::corpus::{Citation, Corpus};

/// Name of the search tool.
pub const SEARCH_BLOG: &str = "search_blog";
/// Name of the full-text tool.
pub const GET_ARTICLE_CONTENT: &str = "get_article_content";
/// How many hits `search_blog` returns; small, so its output never needs truncating.
pub const SEARCH_LIMIT: usize = 3;

/// Arguments of `search_blog`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// Keywords or the user's question, Chinese or English.
    pub query: String,
}

/// Arguments of `get_article_content`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ArticleArgs {
    /// The article id, as returned by search_blog.
    pub id: String,
}

/// Both tools, sharing one corpus.
pub fn blog_tools(corpus: &Arc<Corpus>) -> [SharedTool; 2] {
    let for_search = Arc::clone(corpus);
    let search = tool(
        SEARCH_BLOG,
        "Searches the blog. Returns JSON {query, results: [{id, title, url, snippet}]}, best first.",
        move |args: SearchArgs| {
            let corpus = Arc::clone(&for_search);
            async move { Ok::<_, std::convert::Infallible>(search_output(&corpus, &args.query)) }
        },
    );
    let for_read = Arc::clone(corpus);
    let read = tool(
        GET_ARTICLE_CONTENT,
        "Returns the full Markdown text of one blog article: a `# title` line, a `链接：url` line, the body.",
        move |args: ArticleArgs| {
            let corpus = Arc::clone(&for_read);
            async move { article_output(&corpus, &args.id) }
        },
    );
    [search.into(), read.into()]
}

/// What `search_blog` returns for `query`.
pub fn search_output(corpus: &Corpus, query: &str) -> ToolOutput {
    let hits = corpus.search(query, SEARCH_LIMIT);
    let citations: Vec<Citation> =
        hits.iter().map(|h| Citation { title: h.title.clone(), url: h.url.clone() }).collect();
    ToolOutput::new(json!({ "query": query, "results": hits }).to_string())
        .with_artifact(json!({ "citations": citations }))
}

/// What `get_article_content` returns for `id`.
///
/// # Errors
/// An unknown id; the model is shown the message and can search again.
pub fn article_output(corpus: &Corpus, id: &str) -> Result<ToolOutput, String> {
    let article =
        corpus.get(id).ok_or_else(|| format!("no article with id `{id}`; use an id from search_blog"))?;
    let text = format!("# {}\n链接：{}\n\n{}", article.title, article.url, article.body);
    Ok(ToolOutput::new(text).with_artifact(json!({ "citations": [article.citation()] })))
}

/// The citations in a ToolMessage artifact, if it has any.
pub fn citations_of(artifact: &Value) -> Vec<Citation> {
    artifact
        .get("citations")
        .and_then(|c| serde_json::from_value::<Vec<Citation>>(c.clone()).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_carry_citations_in_the_artifact() {
        let corpus = Corpus::builtin().unwrap();
        let out = search_output(&corpus, "Redis TTL");
        let parsed: Value = serde_json::from_str(out.content.as_str().unwrap()).unwrap();
        assert_eq!(parsed["results"][0]["id"], "redis-checkpoint");
        let cited = citations_of(out.artifact.as_ref().unwrap());
        assert_eq!(cited[0].url, "https://blog.heibaimeng.example/posts/redis-checkpoint");

        let out = article_output(&corpus, "context-trimming").unwrap();
        let text = out.content.as_str().unwrap();
        assert!(text.starts_with("# 上下文剪裁"));
        assert!(text.chars().count() > 2000);
        assert_eq!(citations_of(out.artifact.as_ref().unwrap()).len(), 1);

        let err = article_output(&corpus, "nope").unwrap_err();
        assert!(err.contains("search_blog"));
        assert!(citations_of(&json!({"other": 1})).is_empty());
    }
}
