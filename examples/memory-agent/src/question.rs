//! Telling a question from a statement, offline: the importance scorer, the summarizer, the
//! recall node and the offline model all need to.

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
