//! SentencePiece's text normaliser: the precompiled character map (`nmt_nfkc`) and the whitespace
//! rules (dummy prefix, `▁` for spaces, no repeated or edge spaces).
//!
//! The character map is a darts-clone double-array trie over UTF-8 bytes whose leaves point into a
//! table of NUL-terminated replacements. At each position the longest key that matches wins, as in
//! SentencePiece's `Normalizer::NormalizePrefix`.

/// The `▁` (U+2581) SentencePiece writes for a space.
pub(crate) const SPACE: &str = "\u{2581}";

/// The normaliser of one SentencePiece model.
#[derive(Debug, Clone, Default)]
pub(crate) struct Normalizer {
    /// The double-array units; empty when the model has no character map.
    units: Vec<u32>,
    /// NUL-terminated replacement strings, addressed by the trie's leaf values.
    replacements: Vec<u8>,
    /// Whether a `▁` is put before the text (so a word's first piece looks the same everywhere).
    pub(crate) add_dummy_prefix: bool,
    /// Whether leading, trailing and repeated spaces are dropped.
    pub(crate) remove_extra_whitespaces: bool,
}

/// Why a character map cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BadCharsmap;

impl Normalizer {
    /// A normaliser with no character map and SentencePiece's default whitespace rules.
    pub(crate) fn plain() -> Self {
        Self { add_dummy_prefix: true, remove_extra_whitespaces: true, ..Self::default() }
    }

    /// Reads a precompiled character map: a little-endian `u32` trie size in bytes, the trie's
    /// units, then the replacement strings. An empty map normalises nothing.
    pub(crate) fn new(charsmap: &[u8]) -> Result<Self, BadCharsmap> {
        let mut this = Self::plain();
        if charsmap.is_empty() {
            return Ok(this);
        }
        let size = charsmap.get(..4).ok_or(BadCharsmap)?;
        let size = u32::from_le_bytes([size[0], size[1], size[2], size[3]]) as usize;
        let trie = charsmap.get(4..4 + size).ok_or(BadCharsmap)?;
        if !size.is_multiple_of(4) || size == 0 {
            return Err(BadCharsmap);
        }
        this.units = trie.chunks_exact(4).map(|u| u32::from_le_bytes([u[0], u[1], u[2], u[3]])).collect();
        this.replacements = charsmap[4 + size..].to_vec();
        Ok(this)
    }

    /// Where a unit's children start, relative to the unit's own position.
    fn offset(unit: u32) -> usize {
        ((unit >> 10) << ((unit & 0x200) >> 6)) as usize
    }

    /// What the start of `text` normalises to, and how many bytes of `text` that consumed.
    /// `text` is never empty.
    fn prefix<'a>(&'a self, text: &'a str) -> (&'a str, usize) {
        let bytes = text.as_bytes();
        let mut longest: Option<(usize, usize)> = None; // (bytes consumed, replacement offset)
        if let Some(&root) = self.units.first() {
            let mut node = Self::offset(root);
            for (i, &c) in bytes.iter().enumerate() {
                node ^= usize::from(c);
                let Some(&unit) = self.units.get(node) else { break };
                if unit & 0x8000_00FF != u32::from(c) {
                    break;
                }
                node ^= Self::offset(unit);
                if unit & 0x100 != 0 {
                    let Some(&leaf) = self.units.get(node) else { break };
                    longest = Some((i + 1, (leaf & 0x7FFF_FFFF) as usize));
                }
            }
        }
        if let Some((consumed, at)) = longest {
            // A key may end inside a character; only a whole-character match is used.
            if text.is_char_boundary(consumed) {
                if let Some(replacement) = self.replacement(at) {
                    return (replacement, consumed);
                }
            }
        }
        let width = text.chars().next().map_or(1, char::len_utf8);
        (&text[..width], width)
    }

    /// The NUL-terminated replacement at `at`, when it is valid UTF-8.
    fn replacement(&self, at: usize) -> Option<&str> {
        let rest = self.replacements.get(at..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        std::str::from_utf8(&rest[..end]).ok()
    }

    /// Normalises `text` the way SentencePiece does before segmentation: mapped characters,
    /// spaces as `▁`, a leading `▁`, no leading, trailing or repeated spaces.
    pub(crate) fn normalize(&self, text: &str) -> String {
        let strip = self.remove_extra_whitespaces;
        let mut rest = text;
        if strip {
            while !rest.is_empty() {
                let (piece, consumed) = self.prefix(rest);
                if piece != " " {
                    break;
                }
                rest = &rest[consumed..];
            }
        }
        if rest.is_empty() {
            return String::new();
        }
        let mut out = String::with_capacity(rest.len() + SPACE.len());
        if self.add_dummy_prefix {
            out.push_str(SPACE);
        }
        let mut after_space = strip;
        while !rest.is_empty() {
            let (mut piece, consumed) = self.prefix(rest);
            rest = &rest[consumed..];
            if strip && after_space {
                piece = piece.trim_start_matches(' ');
            }
            if piece.is_empty() {
                continue;
            }
            for c in piece.chars() {
                if c == ' ' {
                    out.push_str(SPACE);
                } else {
                    out.push(c);
                }
            }
            after_space = piece.ends_with(' ');
        }
        if strip {
            while out.ends_with(SPACE) {
                out.truncate(out.len() - SPACE.len());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_is_escaped_and_squeezed_without_a_charsmap() {
        let n = Normalizer::new(&[]).unwrap();
        assert_eq!(n.normalize("  hello   world  "), "▁hello▁world");
        assert_eq!(n.normalize("你好"), "▁你好");
        assert_eq!(n.normalize("   "), "");
        assert_eq!(n.normalize(""), "");
    }

    #[test]
    fn truncated_charsmap_is_rejected() {
        assert_eq!(Normalizer::new(&[8, 0, 0, 0, 1]).unwrap_err(), BadCharsmap);
        assert_eq!(Normalizer::new(&[1, 0]).unwrap_err(), BadCharsmap);
    }
}
