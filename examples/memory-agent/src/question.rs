//! Telling a question (or a request) from a statement, offline: the importance scorer, the
//! summarizer, the recall node and the offline model all need to.

/// Words that open an English question.
const QUESTION_WORDS: &[&str] = &[
    "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "do", "does", "did", "is", "are",
    "am", "can", "could", "should", "would", "will", "have", "has",
];

/// Whether `text` asks something: a question mark, a leading question word, or a Chinese
/// question particle.
pub fn is_question(text: &str) -> bool {
    let t = text.trim();
    if t.ends_with('?') || t.ends_with('？') || t.ends_with('吗') || t.contains("什么") {
        return true;
    }
    let first = t.split_whitespace().next().unwrap_or("").to_lowercase();
    let first = first.split('\'').next().unwrap_or("");
    QUESTION_WORDS.contains(&first)
}

/// Words that open a request to the assistant ("recommend a novel", "help me write …").
const REQUEST_WORDS: &[&str] = &[
    "recommend",
    "suggest",
    "give",
    "tell",
    "help",
    "explain",
    "summarise",
    "summarize",
    "write",
    "show",
    "list",
    "describe",
    "translate",
    "find",
    "draft",
    "teach",
    "compare",
    "please",
];

/// Openings of a request in Chinese.
const REQUEST_OPENINGS_ZH: &[&str] =
    &["帮我", "给我", "请", "推荐", "告诉我", "讲", "写", "解释", "总结", "翻译", "列出"];

/// The lowercase words of `text`: runs of letters and digits, an apostrophe kept inside ("i'm").
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Words that make a request carry a fact after all: asking to remember something, or saying
/// something about oneself ("Please note my flight is at 9.").
const TELLING_WORDS: &[&str] = &["remember", "note", "i", "i'm", "i've", "my", "mine"];

/// Chinese words that ask to remember something.
const TELLING_ZH: &[&str] = &["记住", "记得", "记一下", "别忘"];

/// Whether `text` asks the assistant to do something ("Recommend a good novel.", "帮我写一首诗。")
/// and, like a question, tells nothing about the user. A request that asks to remember something
/// or speaks of the user ("Please remember I'm allergic to peanuts.") is not one.
pub fn is_request(text: &str) -> bool {
    let t = text.trim();
    if TELLING_ZH.iter().any(|w| t.contains(w)) {
        return false;
    }
    let words = words(t);
    if words.iter().any(|w| TELLING_WORDS.contains(&w.as_str())) {
        return false;
    }
    REQUEST_OPENINGS_ZH.iter().any(|o| t.starts_with(o))
        || words.first().is_some_and(|first| REQUEST_WORDS.contains(&first.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_told_from_statements() {
        for text in [
            "Recommend a good science fiction novel.",
            "Give me three ideas for a rainy afternoon.",
            "帮我写一首关于秋天的短诗。",
            "Please summarise this.",
        ] {
            assert!(is_request(text), "{text}");
        }
        for text in [
            "I drive a Corolla.",
            "Remind me to call my mom.",
            "Given the rain, I stayed home.",
            "我写代码用Zed。",
        ] {
            assert!(!is_request(text), "{text}");
        }
    }
}
