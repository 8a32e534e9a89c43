//! Milvus boolean expressions built from typed clauses, never by pasting raw values.
//!
//! Pasting a value into an expression, as in Python's `f'user_id == "{user_id}"'`, lets a user id
//! such as `x" or user_id != "` widen a search to every user. Here a string value only ever reaches
//! an expression through [`quote`], which escapes `\` and `"` (the only characters with a meaning
//! inside a Milvus double-quoted literal) and refuses control characters, whose escapes Milvus
//! servers do not all read the same way.

use mnemograph_memory::{Error as MemoryError, Result};

/// A conjunction of clauses over the memory collection's scalar fields.
///
/// ```
/// use mnemograph_memory_milvus::Filter;
///
/// let f = Filter::new().eq_str("user_id", r#"x" or user_id != ""#)?.gte_i64("created_at", 100);
/// assert_eq!(f.to_expr(), r#"user_id == "x\" or user_id != \"" and created_at >= 100"#);
/// # Ok::<(), mnemograph_memory::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Rendered clauses, each already safe; joined with `and`.
    clauses: Vec<String>,
}

impl Filter {
    /// The empty filter (matches everything).
    pub fn new() -> Self {
        Self::default()
    }

    /// `field == "value"`.
    ///
    /// # Errors
    /// [`MemoryError::InvalidInput`] when `value` contains a control character.
    ///
    /// # Panics
    /// When `field` is not a plain identifier: field names are this crate's constants, never input.
    pub fn eq_str(self, field: &'static str, value: &str) -> Result<Self> {
        let value = quote(value)?;
        Ok(self.push(field, "==", &value))
    }

    /// `field != "value"`.
    ///
    /// # Errors
    /// As [`eq_str`](Self::eq_str).
    ///
    /// # Panics
    /// As [`eq_str`](Self::eq_str).
    pub fn ne_str(self, field: &'static str, value: &str) -> Result<Self> {
        let value = quote(value)?;
        Ok(self.push(field, "!=", &value))
    }

    /// `field == true` or `field == false` for a boolean field.
    ///
    /// # Panics
    /// As [`eq_str`](Self::eq_str).
    ///
    /// ```
    /// use mnemograph_memory_milvus::Filter;
    /// assert_eq!(Filter::new().eq_bool("retired", false).to_expr(), "retired == false");
    /// ```
    #[must_use]
    pub fn eq_bool(self, field: &'static str, value: bool) -> Self {
        self.push(field, "==", if value { "true" } else { "false" })
    }

    /// `field >= value` for a float field; `value` is written with enough digits to round-trip.
    ///
    /// # Panics
    /// As [`eq_str`](Self::eq_str).
    #[must_use]
    pub fn gte_f32(self, field: &'static str, value: f32) -> Self {
        // `{:?}` of an f32 is its shortest round-tripping form, always with a `.` or exponent.
        self.push(field, ">=", &format!("{value:?}"))
    }

    /// `field >= value`.
    ///
    /// # Panics
    /// As [`eq_str`](Self::eq_str).
    #[must_use]
    pub fn gte_i64(self, field: &'static str, value: i64) -> Self {
        self.push(field, ">=", &value.to_string())
    }

    /// `field <= value`.
    ///
    /// # Panics
    /// As [`eq_str`](Self::eq_str).
    #[must_use]
    pub fn lte_i64(self, field: &'static str, value: i64) -> Self {
        self.push(field, "<=", &value.to_string())
    }

    /// `field in [a, b, ...]`; an empty list matches nothing.
    ///
    /// # Panics
    /// As [`eq_str`](Self::eq_str).
    #[must_use]
    pub fn in_i64(self, field: &'static str, values: &[i64]) -> Self {
        let list = values.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
        self.push(field, "in", &format!("[{list}]"))
    }

    /// `not exists field["key"]`: rows whose JSON `field` has no `key` (rows where the key was
    /// never written included).
    ///
    /// # Errors
    /// [`MemoryError::InvalidInput`] when `key` contains a control character.
    ///
    /// # Panics
    /// As [`eq_str`](Self::eq_str).
    ///
    /// ```
    /// use mnemograph_memory_milvus::Filter;
    /// let f = Filter::new().lacks_json_key("metadata", "superseded_by")?;
    /// assert_eq!(f.to_expr(), r#"not exists metadata["superseded_by"]"#);
    /// # Ok::<(), mnemograph_memory::Error>(())
    /// ```
    pub fn lacks_json_key(mut self, field: &'static str, key: &str) -> Result<Self> {
        let key = quote(key)?;
        check_field(field);
        self.clauses.push(format!("not exists {field}[{key}]"));
        Ok(self)
    }

    /// The expression to send, `""` for the empty filter.
    pub fn to_expr(&self) -> String {
        self.clauses.join(" and ")
    }

    fn push(mut self, field: &'static str, op: &str, rendered: &str) -> Self {
        check_field(field);
        self.clauses.push(format!("{field} {op} {rendered}"));
        self
    }
}

/// Field names are this crate's constants; anything else is a bug, so it panics.
fn check_field(field: &str) {
    assert!(
        !field.is_empty()
            && field.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !field.starts_with(|c: char| c.is_ascii_digit()),
        "filter field `{field}` is not an identifier"
    );
}

/// A Milvus double-quoted string literal whose value is exactly `value`.
///
/// # Errors
/// [`MemoryError::InvalidInput`] when `value` contains a control character (U+0000–U+001F, U+007F).
///
/// ```
/// use mnemograph_memory_milvus::quote;
/// assert_eq!(quote(r#"a"b\c"#)?, r#""a\"b\\c""#);
/// assert!(quote("line\nbreak").is_err());
/// # Ok::<(), mnemograph_memory::Error>(())
/// ```
pub fn quote(value: &str) -> Result<String> {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '\\' | '"' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() && (c as u32) < 0x80 => {
                return Err(MemoryError::InvalidInput {
                    what: "filter value",
                    reason: "contains a control character",
                })
            }
            c => out.push(c),
        }
    }
    out.push('"');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads a literal back the way Milvus's parser does, to prove the round trip.
    fn unquote(lit: &str) -> Option<String> {
        let inner = lit.strip_prefix('"')?.strip_suffix('"')?;
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.push(chars.next()?),
                // An unescaped quote would end the literal early: the injection this module prevents.
                '"' => return None,
                c => out.push(c),
            }
        }
        Some(out)
    }

    #[test]
    fn quoting_round_trips_adversarial_ids() {
        let long = "é\"\\".repeat(2000);
        for id in
            ["plain", "", "a\"b", "back\\slash", "\\\"", "x\" or user_id != \"", "\"\"\"", "tail\\", &long]
        {
            let lit = quote(id).unwrap();
            assert_eq!(unquote(&lit).as_deref(), Some(id), "{lit}");
        }
    }

    #[test]
    fn control_characters_are_refused() {
        for id in ["a\nb", "\r", "\0", "\t", "\u{7f}"] {
            assert!(matches!(quote(id), Err(MemoryError::InvalidInput { .. })), "{id:?}");
        }
        assert!(quote("emoji 🦀 and 中文").is_ok());
    }

    #[test]
    fn clauses_join_with_and() {
        let f = Filter::new()
            .eq_str("user_id", "u\"1")
            .unwrap()
            .ne_str("session_id", "s")
            .unwrap()
            .gte_i64("created_at", -5)
            .lte_i64("created_at", 9)
            .in_i64("id", &[1, 2])
            .eq_bool("retired", true);
        assert_eq!(
            f.to_expr(),
            r#"user_id == "u\"1" and session_id != "s" and created_at >= -5 and created_at <= 9 and id in [1, 2] and retired == true"#
        );
        assert_eq!(Filter::new().to_expr(), "");
        assert_eq!(Filter::new().in_i64("id", &[]).to_expr(), "id in []");
        let absent = Filter::new().lacks_json_key("metadata", r#"k"x"#).unwrap();
        assert_eq!(absent.to_expr(), r#"not exists metadata["k\"x"]"#);
        assert!(Filter::new().lacks_json_key("metadata", "a\nb").is_err());
    }

    #[test]
    #[should_panic(expected = "not an identifier")]
    fn field_names_must_be_identifiers() {
        let _ = Filter::new().gte_i64("a or 1", 1);
    }
}
