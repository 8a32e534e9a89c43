//! Statements as values: a SQL text with `?` placeholders and the values that go in them.
//!
//! A statement runs either prepared ([`Statement::query`]: the values travel in binary, one round
//! trip per statement) or written out into a script of several statements that the server runs
//! in one round trip ([`Statement::render_into`], used by [`crate::commit::tx::Tx`]). In a script every
//! value is a hexadecimal literal (`X'…'`, text as `_utf8mb4 X'…'`): no byte of a value is ever
//! read as SQL, whatever it holds and whatever the session's `sql_mode` (`NO_BACKSLASH_ESCAPES`,
//! `ANSI_QUOTES`) says about quoting, so nothing needs escaping.

use std::borrow::Cow;

use sqlx::mysql::{MySql, MySqlArguments};
use sqlx::query::Query;

/// A value for one placeholder.
#[derive(Debug, Clone)]
pub(crate) enum Bind<'a> {
    /// Text, borrowed.
    Text(&'a str),
    /// Text, owned.
    Owned(String),
    /// Text or SQL `NULL`.
    OptText(Option<&'a str>),
    /// Bytes (a blob).
    Bytes(&'a [u8]),
    /// A namespace hash.
    Hash([u8; 16]),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer (a `LIMIT`).
    Count(u64),
}

impl Bind<'_> {
    /// Bytes of data the value carries (what a script spends on it is about twice that).
    fn payload(&self) -> usize {
        match self {
            Bind::Text(s) | Bind::OptText(Some(s)) => s.len(),
            Bind::Owned(s) => s.len(),
            Bind::Bytes(b) => b.len(),
            Bind::Hash(h) => h.len(),
            Bind::OptText(None) | Bind::Int(_) | Bind::Count(_) => 8,
        }
    }

    /// Appends the value as a literal.
    fn render(&self, out: &mut String) {
        match self {
            Bind::Text(s) | Bind::OptText(Some(s)) => text_literal(s, out),
            Bind::Owned(s) => text_literal(s, out),
            Bind::OptText(None) => out.push_str("NULL"),
            Bind::Bytes(b) => hex_literal(b, out),
            Bind::Hash(h) => hex_literal(h, out),
            Bind::Int(n) => out.push_str(&n.to_string()),
            Bind::Count(n) => out.push_str(&n.to_string()),
        }
    }
}

/// A statement and the values for its placeholders, in order.
#[derive(Debug)]
pub(crate) struct Statement<'a> {
    /// The SQL text.
    pub(crate) sql: Cow<'a, str>,
    /// One value per `?` of `sql`.
    pub(crate) binds: Vec<Bind<'a>>,
}

impl<'a> Statement<'a> {
    /// `sql` with no values yet.
    #[cfg(test)]
    pub(crate) fn new(sql: impl Into<Cow<'a, str>>) -> Self {
        Self { sql: sql.into(), binds: Vec::new() }
    }

    /// `sql` with room for `binds` values.
    pub(crate) fn with_capacity(sql: impl Into<Cow<'a, str>>, binds: usize) -> Self {
        Self { sql: sql.into(), binds: Vec::with_capacity(binds) }
    }

    /// `sql`, whose first placeholders are those of `same!("thread_id")` (the id twice, see
    /// [`crate::exact`]) and then the namespace hash, with those three values bound; room for
    /// three more.
    pub(crate) fn by_thread(sql: impl Into<Cow<'a, str>>, thread_id: &'a str, hash: [u8; 16]) -> Self {
        let mut statement = Self::with_capacity(sql, 6);
        statement.push(Bind::Text(thread_id)).push(Bind::Text(thread_id)).push(Bind::Hash(hash));
        statement
    }

    /// Adds the value of the next placeholder.
    pub(crate) fn push(&mut self, bind: Bind<'a>) -> &mut Self {
        self.binds.push(bind);
        self
    }

    /// The prepared query, every value bound.
    pub(crate) fn query(&self) -> Query<'_, MySql, MySqlArguments> {
        self.binds.iter().fold(sqlx::query(&self.sql), |q, bind| match bind {
            Bind::Text(s) => q.bind(*s),
            Bind::Owned(s) => q.bind(s.as_str()),
            Bind::OptText(s) => q.bind(*s),
            Bind::Bytes(b) => q.bind(*b),
            Bind::Hash(h) => q.bind(&h[..]),
            Bind::Int(n) => q.bind(*n),
            Bind::Count(n) => q.bind(*n),
        })
    }

    /// Bytes of data the values carry.
    pub(crate) fn payload(&self) -> usize {
        self.binds.iter().map(Bind::payload).sum()
    }

    /// Appends the statement to `out` with every placeholder replaced by its value as a literal.
    ///
    /// Returns `false`, and leaves `out` as it was, when the placeholders and the values do not
    /// pair up; the caller then runs the statement prepared, where the driver reports the
    /// mismatch, rather than sending a statement with a value missing or misplaced.
    pub(crate) fn render_into(&self, out: &mut String) -> bool {
        let start = out.len();
        out.reserve(self.sql.len() + 2 * self.payload() + 16 * self.binds.len());
        let mut values = self.binds.iter();
        let mut quote: Option<char> = None;
        let mut escaped = false;
        for c in self.sql.chars() {
            match quote {
                // Inside a quoted string or identifier a `?` is text, not a placeholder.
                Some(q) => {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' && q != '`' {
                        escaped = true;
                    } else if c == q {
                        quote = None;
                    }
                    out.push(c);
                }
                None if c == '?' => match values.next() {
                    Some(value) => value.render(out),
                    None => {
                        out.truncate(start);
                        return false;
                    }
                },
                None => {
                    if matches!(c, '\'' | '"' | '`') {
                        quote = Some(c);
                    }
                    out.push(c);
                }
            }
        }
        if values.next().is_some() || quote.is_some() {
            out.truncate(start);
            return false;
        }
        true
    }
}

/// Hexadecimal digits, lower case.
const HEX: &[u8; 16] = b"0123456789abcdef";

/// `X'…'`: `bytes` as a binary string literal.
fn hex_literal(bytes: &[u8], out: &mut String) {
    out.reserve(bytes.len() * 2 + 3);
    out.push_str("X'");
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 0x0f)] as char);
    }
    out.push('\'');
}

/// `_utf8mb4 X'…'`: `text` as a `utf8mb4` string literal, compared and stored as a bound text
/// parameter is (the connection's character set is `utf8mb4`), and valid in a `JSON` column.
fn text_literal(text: &str, out: &mut String) {
    out.push_str("_utf8mb4 ");
    hex_literal(text.as_bytes(), out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(statement: &Statement<'_>) -> Option<String> {
        let mut out = String::from("BEGIN;");
        if statement.render_into(&mut out) {
            Some(out)
        } else {
            assert_eq!(out, "BEGIN;", "a failed render leaves the script as it was");
            None
        }
    }

    #[test]
    fn every_kind_of_value_becomes_a_hex_literal() {
        let mut s = Statement::new("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)");
        s.push(Bind::Text("a'b\\c"))
            .push(Bind::OptText(None))
            .push(Bind::Bytes(&[0, 0xff, b'\'']))
            .push(Bind::Int(-3))
            .push(Bind::Count(7))
            .push(Bind::Owned("线".to_owned()))
            .push(Bind::Text(""));
        assert_eq!(
            rendered(&s).unwrap(),
            "BEGIN;INSERT INTO t VALUES (_utf8mb4 X'6127625c63', NULL, X'00ff27', -3, 7, \
             _utf8mb4 X'e7babf', _utf8mb4 X'')"
        );
    }

    #[test]
    fn question_marks_inside_quotes_are_not_placeholders() {
        let mut s = Statement::new("SELECT '?', `a?`, \"?\\\"?\", 'it''s ?' FROM t WHERE a = ?");
        s.push(Bind::Int(1));
        assert_eq!(rendered(&s).unwrap(), "BEGIN;SELECT '?', `a?`, \"?\\\"?\", 'it''s ?' FROM t WHERE a = 1");
    }

    #[test]
    fn a_mismatch_is_not_rendered() {
        let mut too_few = Statement::new("SELECT ?, ?");
        too_few.push(Bind::Int(1));
        assert_eq!(rendered(&too_few), None);
        let mut too_many = Statement::new("SELECT ?");
        too_many.push(Bind::Int(1)).push(Bind::Int(2));
        assert_eq!(rendered(&too_many), None);
        assert_eq!(rendered(&Statement::new("SELECT 'x")), None);
    }

    #[test]
    fn payload_counts_the_values_bytes() {
        let mut s = Statement::new("SELECT ?, ?");
        s.push(Bind::Bytes(&[1; 10])).push(Bind::Text("abc"));
        assert_eq!(s.payload(), 13);
    }
}
