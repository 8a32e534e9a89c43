//! The blog the assistant answers from: a few Markdown articles compiled into the binary, and a
//! small keyword search over them.
//!
//! Each file in `corpus/` starts with a front matter block (`id`, `title`, `url`, `tags`)
//! between `---` lines. The search scores Latin words and Chinese character pairs (bigrams), so
//! it works on mixed Chinese/English questions without a tokenizer.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The shipped articles, as `(file name, text)`.
const FILES: [(&str, &str); 6] = [
    ("redis-checkpoint.md", include_str!("../corpus/redis-checkpoint.md")),
    ("context-trimming.md", include_str!("../corpus/context-trimming.md")),
    ("mysql-archive.md", include_str!("../corpus/mysql-archive.md")),
    ("cold-start.md", include_str!("../corpus/cold-start.md")),
    ("stream-safety.md", include_str!("../corpus/stream-safety.md")),
    ("rust-static-blog.md", include_str!("../corpus/rust-static-blog.md")),
];

/// A source an answer cites: what the `citations` event and the archive's `citations` column
/// hold.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Citation {
    /// The article's title.
    pub title: String,
    /// Its address.
    pub url: String,
}

/// One blog article.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Article {
    /// Stable id, what `get_article_content` takes.
    pub id: String,
    /// Title.
    pub title: String,
    /// Address.
    pub url: String,
    /// Keywords, weighted above the body by the search.
    pub tags: Vec<String>,
    /// The Markdown body.
    pub body: String,
}

impl Article {
    /// The citation of this article.
    pub fn citation(&self) -> Citation {
        Citation { title: self.title.clone(), url: self.url.clone() }
    }

    /// The first `chars` characters of the body with whitespace collapsed, for search results.
    pub fn snippet(&self, chars: usize) -> String {
        let flat: String = self.body.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut out: String = flat.chars().take(chars).collect();
        if flat.chars().count() > chars {
            out.push('…');
        }
        out
    }

    /// Parses a file: front matter between `---` lines, then the body.
    fn parse(file: &'static str, text: &str) -> Result<Self> {
        let bad = |reason| Error::Corpus { file, reason };
        let rest = text.strip_prefix("---\n").ok_or_else(|| bad("does not start with `---`"))?;
        let (head, body) = rest.split_once("\n---\n").ok_or_else(|| bad("front matter is not closed"))?;
        let field = |name: &str| {
            head.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(':')).map(|v| v.trim().to_owned())
        };
        let required = |name: &'static str, reason| field(name).filter(|v| !v.is_empty()).ok_or(bad(reason));
        Ok(Self {
            id: required("id", "no `id`")?,
            title: required("title", "no `title`")?,
            url: required("url", "no `url`")?,
            tags: field("tags")
                .unwrap_or_default()
                .split(',')
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty())
                .collect(),
            body: body.trim().to_owned(),
        })
    }
}

/// A search hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    /// The article's id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its address.
    pub url: String,
    /// The start of its body.
    pub snippet: String,
    /// How well it matched (higher is better).
    pub score: u32,
}

/// The articles, searchable.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// In file order.
    articles: Vec<Article>,
}

impl Corpus {
    /// The articles shipped in `corpus/`.
    ///
    /// # Errors
    /// [`Error::Corpus`] when a file is malformed (a build mistake, caught by the unit tests).
    pub fn builtin() -> Result<Self> {
        let articles = FILES.iter().map(|(file, text)| Article::parse(file, text)).collect::<Result<_>>()?;
        Ok(Self { articles })
    }

    /// Every article.
    pub fn articles(&self) -> &[Article] {
        &self.articles
    }

    /// The article with this id.
    pub fn get(&self, id: &str) -> Option<&Article> {
        self.articles.iter().find(|a| a.id == id)
    }

    /// The best `limit` articles for `query`, best first; articles matching nothing are left out.
    /// Title matches weigh 3, tag matches 2, body matches 1 per occurrence (capped, so one long
    /// article cannot win on length alone).
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let terms = terms(query);
        let mut hits: Vec<Hit> = self
            .articles
            .iter()
            .filter_map(|a| {
                let title = a.title.to_lowercase();
                let tags = a.tags.join(" ").to_lowercase();
                let body = a.body.to_lowercase();
                let score: usize = terms
                    .iter()
                    .map(|t| {
                        3 * title.matches(t.as_str()).count()
                            + 2 * tags.matches(t.as_str()).count()
                            + body.matches(t.as_str()).count().min(5)
                    })
                    .sum();
                (score > 0).then(|| Hit {
                    id: a.id.clone(),
                    title: a.title.clone(),
                    url: a.url.clone(),
                    snippet: a.snippet(80),
                    score: u32::try_from(score).unwrap_or(u32::MAX),
                })
            })
            .collect();
        // Stable order for equal scores (file order), so answers are deterministic.
        hits.sort_by_key(|h| std::cmp::Reverse(h.score));
        hits.truncate(limit);
        hits
    }
}

/// Search terms of a query: lowercase Latin/digit words of 2+ characters, and every pair of
/// adjacent CJK characters (a single CJK character matches too much to be useful).
fn terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    let mut push = |t: String| {
        if seen.insert(t.clone()) {
            out.push(t);
        }
    };
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    for c in query.chars().chain([' ']) {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c.to_ascii_lowercase());
        } else if word.chars().count() >= 2 {
            push(std::mem::take(&mut word));
        } else {
            word.clear();
        }
        if is_cjk(c) {
            cjk.push(c);
        } else {
            for pair in cjk.windows(2) {
                push(pair.iter().collect());
            }
            cjk.clear();
        }
    }
    out
}

/// Whether `c` is a CJK ideograph.
fn is_cjk(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}' | '\u{F900}'..='\u{FAFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_article_parses_and_one_is_long() {
        let corpus = Corpus::builtin().unwrap();
        assert_eq!(corpus.articles().len(), FILES.len());
        for a in corpus.articles() {
            assert!(a.url.starts_with("https://"), "{}", a.id);
            assert!(!a.tags.is_empty(), "{}", a.id);
        }
        // Truncation of tool output (2000 characters) must matter for at least one article.
        assert!(corpus.articles().iter().any(|a| a.body.chars().count() > 2000));
    }

    #[test]
    fn terms_mix_words_and_bigrams() {
        assert_eq!(terms("Redis 快照TTL?"), ["redis", "快照", "ttl"]);
        assert_eq!(terms("上下文剪裁"), ["上下", "下文", "文剪", "剪裁"]);
        assert!(terms("a 我").is_empty());
    }

    #[test]
    fn search_ranks_the_matching_article_first() {
        let corpus = Corpus::builtin().unwrap();
        let top = |q: &str| corpus.search(q, 3).first().map(|h| h.id.clone());
        assert_eq!(top("上下文剪裁是怎么做的？").as_deref(), Some("context-trimming"));
        assert_eq!(top("Redis 快照的 TTL 设多久？").as_deref(), Some("redis-checkpoint"));
        assert_eq!(top("冷启动怎么恢复对话").as_deref(), Some("cold-start"));
        assert_eq!(top("SSE 断开了会怎样").as_deref(), Some("stream-safety"));
        assert!(corpus.search("明天的天气预报", 3).is_empty());
        assert!(corpus.search("Redis", 2).len() <= 2);
    }

    #[test]
    fn malformed_front_matter_is_reported() {
        let e = Article::parse("x.md", "no front matter").unwrap_err();
        assert_eq!(e.to_string(), "corpus article x.md is malformed: does not start with `---`");
        let e = Article::parse("x.md", "---\nid: a\ntitle: t\n---\nbody").unwrap_err();
        assert!(e.to_string().contains("no `url`"));
    }
}
