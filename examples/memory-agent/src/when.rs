//! Time expressions in a question ("what did I tell you yesterday?", "我上周说了什么？"): the
//! window of creation times `retrieve` narrows long-term recall to.
//!
//! Calendar days run from midnight to midnight UTC: the agent's [`Clock`](crate::Clock) counts
//! seconds since the epoch and knows no time zone. Weeks start on Monday.

use mnemograph_core::checkpoint::backend::{civil_from_days, days_from_civil};
use serde::{Deserialize, Serialize};

/// Seconds in a day.
const DAY: i64 = 86_400;

/// A span of creation times named by a phrase of the question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeWindow {
    /// The phrase as the question wrote it, e.g. `yesterday` or `上周`.
    pub phrase: String,
    /// The first second of the window (seconds since the epoch).
    pub since: i64,
    /// The last second of the window, inclusive.
    pub until: i64,
}

impl TimeWindow {
    /// The phrase and the dates it covers, e.g. `yesterday (2026-12-05)` or
    /// `last week (2026-11-23 to 2026-11-29)`.
    pub fn describe(&self) -> String {
        let (first, last) = (date(self.since.div_euclid(DAY)), date(self.until.div_euclid(DAY)));
        if first == last {
            format!("{} ({first})", self.phrase)
        } else {
            format!("{} ({first} to {last})", self.phrase)
        }
    }
}

/// The window of the first time expression in `text`, relative to `now` (seconds since the
/// epoch); `None` when it names no time.
///
/// English: `today`, `yesterday`, `the day before yesterday`, `N days ago` (digits, `a`, or
/// `one` to `ten`), `this week`, `last week`, `this month`, `last month`, and a month after `in`,
/// `during` or `last` (`in March`, `in Sept`). Chinese: `今天`, `昨天`, `前天`, `大前天`,
/// `N天前`, `本周` / `这周` / `这个星期` (and `礼拜`), `上周` / `上个星期`, `本月` / `这个月`,
/// `上个月` / `上月`, and `N月` (`三月`, `3月`, `十二月`). A month alone means the most recent
/// such month that is not in the future: in February, `in March` is last year's.
///
/// ```
/// use memory_agent::time_window;
/// let now = 1_765_000_000; // 2025-12-06
/// let w = time_window("What did I tell you yesterday?", now).unwrap();
/// assert_eq!(w.describe(), "yesterday (2025-12-05)");
/// assert_eq!(time_window("我昨天跟你说了什么？", now).unwrap().since, w.since);
/// assert_eq!(time_window("What is my dog called?", now), None);
/// ```
pub fn time_window(text: &str, now: i64) -> Option<TimeWindow> {
    let today = now.div_euclid(DAY);
    let mut found: Vec<(usize, usize, Span)> = english(text, today);
    found.extend(chinese(text, today));
    // The earliest phrase wins; at one position the longer ("大前天" over a shorter reading).
    let (start, end, span) =
        found.into_iter().min_by_key(|&(start, end, _)| (start, std::cmp::Reverse(end)))?;
    let (first_day, days) = span;
    Some(TimeWindow {
        phrase: text[start..end].to_owned(),
        since: first_day * DAY,
        until: (first_day + days) * DAY - 1,
    })
}

/// A run of whole days: the first (days since the epoch) and how many.
type Span = (i64, i64);

/// The day `n` days before `today`.
fn day(today: i64, n: i64) -> Span {
    (today - n, 1)
}

/// The week (Monday to Sunday) `n` weeks before the one holding `today`.
fn week(today: i64, n: i64) -> Span {
    // 1970-01-01 was a Thursday: three days after a Monday.
    let monday = today - (today + 3).rem_euclid(7);
    (monday - 7 * n, 7)
}

/// The calendar month `n` months before the one holding `today`.
fn month_back(today: i64, n: i64) -> Span {
    let (y, m, _) = civil_from_days(today);
    let index = y * 12 + i64::from(m) - 1 - n;
    month(index.div_euclid(12), (index.rem_euclid(12) + 1) as u32)
}

/// The most recent month `m` (1 to 12) not after the one holding `today`; with `strictly`,
/// before it.
fn named_month(today: i64, m: u32, strictly: bool) -> Span {
    let (y, current, _) = civil_from_days(today);
    let this_year = if strictly { m < current } else { m <= current };
    month(if this_year { y } else { y - 1 }, m)
}

/// Month `m` of year `y`.
fn month(y: i64, m: u32) -> Span {
    let first = days_from_civil(y, m, 1);
    let next = if m == 12 { days_from_civil(y + 1, 1, 1) } else { days_from_civil(y, m + 1, 1) };
    (first, next - first)
}

/// English month names and their common short forms.
const MONTHS: &[(&str, u32)] = &[
    ("january", 1),
    ("jan", 1),
    ("february", 2),
    ("feb", 2),
    ("march", 3),
    ("mar", 3),
    ("april", 4),
    ("apr", 4),
    ("may", 5),
    ("june", 6),
    ("jun", 6),
    ("july", 7),
    ("jul", 7),
    ("august", 8),
    ("aug", 8),
    ("september", 9),
    ("sept", 9),
    ("sep", 9),
    ("october", 10),
    ("oct", 10),
    ("november", 11),
    ("nov", 11),
    ("december", 12),
    ("dec", 12),
];

/// Small numbers written out, for `two days ago`.
const NUMBER_WORDS: &[&str] =
    &["a", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];

/// The English phrases of `text`: (start byte, end byte, span).
fn english(text: &str, today: i64) -> Vec<(usize, usize, Span)> {
    let lower = text.to_ascii_lowercase();
    // Words are runs of ASCII letters and digits; byte offsets are those of `text`.
    let mut words: Vec<(usize, &str)> = Vec::new();
    let mut start = None;
    for (i, c) in lower.char_indices().chain(std::iter::once((lower.len(), ' '))) {
        match (c.is_ascii_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                words.push((s, &lower[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    let word = |i: usize| words.get(i).map_or("", |w| w.1);
    let end = |i: usize| words[i].0 + words[i].1.len();
    let mut found = Vec::new();
    for i in 0..words.len() {
        let at = words[i].0;
        let (span, last) = match (word(i), word(i + 1), word(i + 2)) {
            ("today", ..) => (day(today, 0), i),
            ("yesterday", ..) => (day(today, 1), i),
            ("day", "before", "yesterday") => {
                let first = if i > 0 && word(i - 1) == "the" { i - 1 } else { i };
                found.push((words[first].0, end(i + 2), day(today, 2)));
                continue;
            }
            ("this", "week", _) => (week(today, 0), i + 1),
            ("last", "week", _) => (week(today, 1), i + 1),
            ("this", "month", _) => (month_back(today, 0), i + 1),
            ("last", "month", _) => (month_back(today, 1), i + 1),
            (first @ ("in" | "during" | "last"), name, _) => {
                let Some(&(_, m)) = MONTHS.iter().find(|(n, _)| *n == name) else { continue };
                (named_month(today, m, first == "last"), i + 1)
            }
            (n, "day" | "days", "ago") => {
                let Some(n) = english_number(n) else { continue };
                (day(today, n), i + 2)
            }
            _ => continue,
        };
        found.push((at, end(last), span));
    }
    found
}

/// `n` as digits or a word from [`NUMBER_WORDS`].
fn english_number(n: &str) -> Option<i64> {
    if let Some(i) = NUMBER_WORDS.iter().position(|w| *w == n) {
        return Some(i.max(1) as i64);
    }
    n.parse().ok().filter(|n| (0..=366).contains(n))
}

/// The span a phrase names, given today.
type Relative = fn(i64) -> Span;

/// Fixed Chinese phrases and the span each names, given today.
const CHINESE: &[(&str, Relative)] = &[
    ("今天", |t| day(t, 0)),
    ("昨天", |t| day(t, 1)),
    ("前天", |t| day(t, 2)),
    ("大前天", |t| day(t, 3)),
    ("本周", |t| week(t, 0)),
    ("这周", |t| week(t, 0)),
    ("这个星期", |t| week(t, 0)),
    ("这星期", |t| week(t, 0)),
    ("本星期", |t| week(t, 0)),
    ("这个礼拜", |t| week(t, 0)),
    ("这礼拜", |t| week(t, 0)),
    ("上周", |t| week(t, 1)),
    ("上个星期", |t| week(t, 1)),
    ("上星期", |t| week(t, 1)),
    ("上个礼拜", |t| week(t, 1)),
    ("上礼拜", |t| week(t, 1)),
    ("本月", |t| month_back(t, 0)),
    ("这个月", |t| month_back(t, 0)),
    ("上个月", |t| month_back(t, 1)),
    ("上月", |t| month_back(t, 1)),
];

/// The Chinese phrases of `text`: (start byte, end byte, span).
fn chinese(text: &str, today: i64) -> Vec<(usize, usize, Span)> {
    let mut found = Vec::new();
    for (phrase, span) in CHINESE {
        for (at, _) in text.match_indices(phrase) {
            found.push((at, at + phrase.len(), span(today)));
        }
    }
    // A number right before `月` (a month) or `天前` / `日前` (days ago).
    for (suffix, days_ago) in [("天前", true), ("日前", true), ("月", false)] {
        for (at, _) in text.match_indices(suffix) {
            let start = numeral_start(text, at);
            let Some(n) = chinese_number(&text[start..at]) else { continue };
            let span = match (days_ago, u32::try_from(n)) {
                (true, _) => day(today, n),
                (false, Ok(m @ 1..=12)) => named_month(today, m, false),
                _ => continue,
            };
            found.push((start, at + suffix.len(), span));
        }
    }
    found
}

/// Where the run of numeral characters ending at byte `end` of `text` starts.
fn numeral_start(text: &str, end: usize) -> usize {
    text[..end]
        .char_indices()
        .rev()
        .take_while(|&(_, c)| c.is_ascii_digit() || "零一二两三四五六七八九十".contains(c))
        .last()
        .map_or(end, |(i, _)| i)
}

/// A number from 1 to 99 in digits or Chinese numerals (`三`, `两`, `十二`, `二十三`).
fn chinese_number(s: &str) -> Option<i64> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().ok().filter(|n| (1..=366).contains(n));
    }
    let digit = |c: char| "零一二三四五六七八九".chars().position(|d| d == c).or((c == '两').then_some(2));
    let chars: Vec<char> = s.chars().collect();
    let n = match chars.iter().position(|&c| c == '十') {
        None if chars.len() == 1 => digit(chars[0])?,
        None => return None,
        Some(at) => {
            let tens = match &chars[..at] {
                [] => 1,
                [c] => digit(*c)?,
                _ => return None,
            };
            let units = match &chars[at + 1..] {
                [] => 0,
                [c] => digit(*c)?,
                _ => return None,
            };
            tens * 10 + units
        }
    };
    (n > 0).then_some(n as i64)
}

/// `YYYY-MM-DD` of a day since the epoch.
fn date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Noon UTC of a date, as the clock would read it.
    fn noon(y: i64, m: u32, d: u32) -> i64 {
        days_from_civil(y, m, d) * DAY + 12 * 3600
    }

    /// The dates the window of `text` covers at `now`, first and last.
    fn dates(text: &str, now: i64) -> Option<(String, String)> {
        let w = time_window(text, now)?;
        assert!(w.since < w.until, "{w:?}");
        assert_eq!(w.since.rem_euclid(DAY), 0, "starts at midnight: {w:?}");
        assert_eq!(w.until.rem_euclid(DAY), DAY - 1, "ends before midnight: {w:?}");
        Some((date(w.since / DAY), date(w.until / DAY)))
    }

    fn span(first: &str, last: &str) -> Option<(String, String)> {
        Some((first.to_owned(), last.to_owned()))
    }

    // Sunday 2026-12-06, noon.
    const NOW: (i64, u32, u32) = (2026, 12, 6);

    fn now() -> i64 {
        noon(NOW.0, NOW.1, NOW.2)
    }

    #[test]
    fn days() {
        for text in ["What did I say today?", "今天我说了什么"] {
            assert_eq!(dates(text, now()), span("2026-12-06", "2026-12-06"), "{text}");
        }
        for text in ["What did I tell you yesterday?", "Yesterday, what did I say?", "我昨天跟你说了什么？"]
        {
            assert_eq!(dates(text, now()), span("2026-12-05", "2026-12-05"), "{text}");
        }
        for text in [
            "What did I say the day before yesterday?",
            "2 days ago",
            "two days ago",
            "前天呢",
            "两天前",
            "2天前",
        ] {
            assert_eq!(dates(text, now()), span("2026-12-04", "2026-12-04"), "{text}");
        }
        for text in ["What did I say 3 days ago?", "three days ago", "我三天前说了什么", "大前天", "3日前"]
        {
            assert_eq!(dates(text, now()), span("2026-12-03", "2026-12-03"), "{text}");
        }
        assert_eq!(dates("a day ago", now()), span("2026-12-05", "2026-12-05"));
        assert_eq!(dates("十天前", now()), span("2026-11-26", "2026-11-26"));
        assert_eq!(dates("twelve days ago", now()), None, "only small numbers are written out");
    }

    #[test]
    fn weeks_run_monday_to_sunday() {
        // Today is a Sunday: this week began on Monday the 30th.
        for text in ["What did I say this week?", "我本周说了什么", "这周呢", "这个星期", "这礼拜"]
        {
            assert_eq!(dates(text, now()), span("2026-11-30", "2026-12-06"), "{text}");
        }
        for text in ["What did I tell you last week?", "我上周说了什么？", "上个星期", "上星期", "上礼拜"]
        {
            assert_eq!(dates(text, now()), span("2026-11-23", "2026-11-29"), "{text}");
        }
        // On a Monday, last week is the seven days before today.
        assert_eq!(dates("last week", noon(2026, 11, 30)), span("2026-11-23", "2026-11-29"));
        assert_eq!(dates("this week", noon(2026, 11, 30)), span("2026-11-30", "2026-12-06"));
    }

    #[test]
    fn months() {
        for text in ["What did I say this month?", "本月", "这个月我说了什么"] {
            assert_eq!(dates(text, now()), span("2026-12-01", "2026-12-31"), "{text}");
        }
        for text in ["What did I say last month?", "我上个月说了什么", "上月"] {
            assert_eq!(dates(text, now()), span("2026-11-01", "2026-11-30"), "{text}");
        }
        // Across a year: last month of January is December.
        assert_eq!(dates("last month", noon(2027, 1, 15)), span("2026-12-01", "2026-12-31"));
        assert_eq!(dates("上个月", noon(2024, 3, 10)), span("2024-02-01", "2024-02-29"));
    }

    #[test]
    fn a_named_month_is_the_latest_one_not_in_the_future() {
        for text in ["What did I tell you in March?", "in march", "during Mar", "我三月说了什么", "3月份呢"]
        {
            assert_eq!(dates(text, now()), span("2026-03-01", "2026-03-31"), "{text}");
        }
        // The current month is not in the future.
        assert_eq!(dates("in December", now()), span("2026-12-01", "2026-12-31"));
        assert_eq!(dates("十二月", now()), span("2026-12-01", "2026-12-31"));
        // In February, March is last year's.
        assert_eq!(dates("in March", noon(2027, 2, 10)), span("2026-03-01", "2026-03-31"));
        assert_eq!(dates("三月", noon(2027, 2, 10)), span("2026-03-01", "2026-03-31"));
        assert_eq!(dates("3月", noon(2027, 3, 2)), span("2027-03-01", "2027-03-31"));
        // "last" March is never the current one.
        assert_eq!(dates("last March", noon(2027, 3, 2)), span("2026-03-01", "2026-03-31"));
        assert_eq!(dates("in Feb", noon(2028, 3, 1)), span("2028-02-01", "2028-02-29"));
        for (text, first) in [
            ("in January", "2026-01-01"),
            ("in Sept", "2026-09-01"),
            ("一月", "2026-01-01"),
            ("十一月", "2026-11-01"),
            ("11月", "2026-11-01"),
            ("五月", "2026-05-01"),
        ] {
            assert_eq!(dates(text, now()).map(|d| d.0), Some(first.to_owned()), "{text}");
        }
    }

    #[test]
    fn no_time_expression_means_no_window() {
        for text in [
            "What is my dog called?",
            "May I ask where I live?",
            "I marched in the parade.",
            "我的狗叫什么？",
            "我三个月没见他了",
            "十三月",
            "a week ago", // weeks ago are not read
            "What happened last time?",
        ] {
            assert_eq!(time_window(text, now()), None, "{text}");
        }
    }

    #[test]
    fn the_first_expression_wins_and_the_phrase_is_kept() {
        let w = time_window("Yesterday or last week?", now()).unwrap();
        assert_eq!(w.phrase, "Yesterday");
        let w = time_window("上周还是昨天？", now()).unwrap();
        assert_eq!((w.phrase.as_str(), date(w.since / DAY)), ("上周", "2026-11-23".to_owned()));
        assert_eq!(time_window("我大前天说的", now()).unwrap().phrase, "大前天");
        assert_eq!(
            time_window("What did I say the day before yesterday?", now()).unwrap().phrase,
            "the day before yesterday"
        );
        assert_eq!(
            time_window("In March, I said", now()).unwrap().describe(),
            "In March (2026-03-01 to 2026-03-31)"
        );
        assert_eq!(time_window("yesterday", now()).unwrap().describe(), "yesterday (2026-12-05)");
    }
}
