//! A SentencePiece unigram model: the `.model` file's pieces and normaliser, and the Viterbi
//! segmentation of a text into piece ids.

use std::collections::HashMap;

use super::charsmap::Normalizer;

/// Id of `<unk>`, `<s>` and `</s>` in the model (SentencePiece's defaults, which the model keeps).
pub(crate) const UNK: u32 = 0;
pub(crate) const BOS: u32 = 1;
pub(crate) const EOS: u32 = 2;

/// Piece types of SentencePiece's `ModelProto.SentencePiece.Type` that text can match.
const NORMAL: u64 = 1;
const USER_DEFINED: u64 = 4;

/// Why a `.model` file cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadModel(pub(crate) &'static str);

/// The vocabulary and normaliser of a unigram model.
#[derive(Debug, Clone)]
pub(crate) struct Unigram {
    /// Matchable piece → (id, score).
    pieces: HashMap<String, (u32, f32)>,
    /// The longest matchable piece, in characters: no longer substring needs a lookup.
    max_chars: usize,
    /// The score of an unknown character: the lowest piece score minus 10, as in SentencePiece.
    unk_score: f32,
    normalizer: Normalizer,
}

/// A protobuf field: its number and its value (varint, fixed 32-bit, or bytes).
enum Field<'a> {
    Varint(u64),
    Fixed32([u8; 4]),
    Bytes(&'a [u8]),
}

/// Reads the fields of one protobuf message (only the wire types SentencePiece uses).
fn fields(mut data: &[u8]) -> Result<Vec<(u64, Field<'_>)>, BadModel> {
    fn varint(data: &mut &[u8]) -> Result<u64, BadModel> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = data.split_first().ok_or(BadModel("truncated varint"))?;
            *data = rest;
            value |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(BadModel("varint longer than 64 bits"))
    }
    let mut out = Vec::new();
    while !data.is_empty() {
        let key = varint(&mut data)?;
        let field = match key & 7 {
            0 => Field::Varint(varint(&mut data)?),
            1 => {
                data = data.get(8..).ok_or(BadModel("truncated fixed64"))?;
                continue;
            }
            2 => {
                let len = usize::try_from(varint(&mut data)?).map_err(|_| BadModel("length overflow"))?;
                let bytes = data.get(..len).ok_or(BadModel("truncated bytes field"))?;
                data = &data[len..];
                Field::Bytes(bytes)
            }
            5 => {
                let bytes = data.get(..4).ok_or(BadModel("truncated fixed32"))?;
                data = &data[4..];
                Field::Fixed32([bytes[0], bytes[1], bytes[2], bytes[3]])
            }
            _ => return Err(BadModel("unsupported protobuf wire type")),
        };
        out.push((key >> 3, field));
    }
    Ok(out)
}

impl Unigram {
    /// Parses a SentencePiece `.model` file (a `ModelProto`: field 1 the pieces, field 3 the
    /// normaliser spec with its precompiled character map).
    pub(crate) fn parse(model: &[u8]) -> Result<Self, BadModel> {
        let mut pieces = HashMap::new();
        let mut normalizer = Normalizer::plain();
        let (mut min_score, mut max_chars, mut id) = (f32::INFINITY, 1usize, 0u32);
        for (number, field) in fields(model)? {
            match (number, field) {
                (1, Field::Bytes(piece)) => {
                    let (mut text, mut score, mut kind) = (None, 0.0f32, NORMAL);
                    for (n, f) in fields(piece)? {
                        match (n, f) {
                            (1, Field::Bytes(b)) => {
                                text =
                                    Some(std::str::from_utf8(b).map_err(|_| BadModel("piece is not UTF-8"))?);
                            }
                            (2, Field::Fixed32(b)) => score = f32::from_le_bytes(b),
                            (3, Field::Varint(v)) => kind = v,
                            _ => {}
                        }
                    }
                    let text = text.ok_or(BadModel("piece without text"))?;
                    // Control, unknown and unused pieces (`<s>`, `<unk>`, ...) are never matched
                    // against text; they keep their ids.
                    if (kind == NORMAL || kind == USER_DEFINED) && !text.is_empty() {
                        min_score = min_score.min(score);
                        max_chars = max_chars.max(text.chars().count());
                        pieces.insert(text.to_owned(), (id, score));
                    }
                    id += 1;
                }
                (3, Field::Bytes(spec)) => {
                    let mut map: &[u8] = &[];
                    let (mut dummy, mut strip) = (true, true);
                    for (n, f) in fields(spec)? {
                        match (n, f) {
                            (2, Field::Bytes(b)) => map = b,
                            (3, Field::Varint(v)) => dummy = v != 0,
                            (4, Field::Varint(v)) => strip = v != 0,
                            _ => {}
                        }
                    }
                    normalizer = Normalizer::new(map).map_err(|_| BadModel("malformed character map"))?;
                    normalizer.add_dummy_prefix = dummy;
                    normalizer.remove_extra_whitespaces = strip;
                }
                _ => {}
            }
        }
        if pieces.is_empty() || id <= EOS {
            return Err(BadModel("no pieces"));
        }
        Ok(Self { pieces, max_chars, unk_score: min_score - 10.0, normalizer })
    }

    /// The largest id [`encode`](Self::encode) can return.
    pub(crate) fn largest_id(&self) -> u32 {
        self.pieces.values().map(|&(id, _)| id).max().unwrap_or(EOS).max(EOS)
    }

    /// The piece ids of `text`, between `<s>` and `</s>`.
    pub(crate) fn encode(&self, text: &str) -> Vec<u32> {
        let normalized = self.normalizer.normalize(text);
        let mut ids = Vec::with_capacity(normalized.len() / 3 + 3);
        ids.push(BOS);
        if normalized.is_empty() {
            ids.push(UNK);
        } else {
            ids.extend(self.viterbi(&normalized));
        }
        ids.push(EOS);
        ids
    }

    /// The best-scoring segmentation of a normalised text, as SentencePiece finds it: every
    /// position keeps the best path ending there (the earliest start on ties), and a character no
    /// single-character piece covers becomes `<unk>`.
    fn viterbi(&self, text: &str) -> Vec<u32> {
        let starts: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
        let n = starts.len() - 1;
        let mut best = vec![f32::NEG_INFINITY; n + 1];
        let mut from = vec![0usize; n + 1];
        let mut piece = vec![UNK; n + 1];
        best[0] = 0.0;
        for i in 0..n {
            let base = best[i];
            let mut single = false;
            for j in i + 1..=n.min(i + self.max_chars) {
                if let Some(&(id, score)) = self.pieces.get(&text[starts[i]..starts[j]]) {
                    let total = base + score;
                    if total > best[j] {
                        best[j] = total;
                        from[j] = i;
                        piece[j] = id;
                    }
                    single |= j == i + 1;
                }
            }
            if !single && base + self.unk_score > best[i + 1] {
                best[i + 1] = base + self.unk_score;
                from[i + 1] = i;
                piece[i + 1] = UNK;
            }
        }
        let mut ids = Vec::new();
        let mut at = n;
        while at > 0 {
            ids.push(piece[at]);
            at = from[at];
        }
        ids.reverse();
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `ModelProto` with the given (piece, score) pairs after `<unk>`, `<s>`, `</s>`.
    fn model(pieces: &[(&str, f32)]) -> Vec<u8> {
        fn piece(text: &str, score: f32, kind: u8) -> Vec<u8> {
            let mut p = vec![0x0A, text.len() as u8];
            p.extend_from_slice(text.as_bytes());
            p.push(0x15);
            p.extend_from_slice(&score.to_le_bytes());
            p.extend_from_slice(&[0x18, kind]);
            let mut out = vec![0x0A, p.len() as u8];
            out.extend(p);
            out
        }
        let mut out = piece("<unk>", 0.0, 2);
        out.extend(piece("<s>", 0.0, 3));
        out.extend(piece("</s>", 0.0, 3));
        for (text, score) in pieces {
            out.extend(piece(text, *score, 1));
        }
        out
    }

    #[test]
    fn viterbi_prefers_the_best_total_score() {
        let m = Unigram::parse(&model(&[("▁", -1.0), ("a", -5.0), ("b", -5.0), ("▁ab", -3.0), ("▁a", -1.0)]))
            .unwrap();
        // "▁ab" (-3) beats "▁a" + "b" (-6).
        assert_eq!(m.encode("ab"), vec![BOS, 6, EOS]);
        // Two words: "▁a" then "▁ab".
        assert_eq!(m.encode("a  ab"), vec![BOS, 7, 6, EOS]);
    }

    #[test]
    fn uncovered_characters_become_unk() {
        let m = Unigram::parse(&model(&[("▁", -1.0), ("a", -2.0)])).unwrap();
        assert_eq!(m.encode("a猫a"), vec![BOS, 3, 4, UNK, 4, EOS]);
        assert_eq!(m.encode("   "), vec![BOS, UNK, EOS]);
    }

    #[test]
    fn control_pieces_never_match_text() {
        let m = Unigram::parse(&model(&[("▁", -1.0), ("<", -2.0), ("s", -2.0), (">", -2.0)])).unwrap();
        assert_eq!(m.encode("<s>"), vec![BOS, 3, 4, 5, 6, EOS]);
    }

    #[test]
    fn malformed_models_are_rejected() {
        assert!(Unigram::parse(&[0x0A, 0x05, 0x0A]).is_err());
        assert!(Unigram::parse(&[]).is_err());
    }
}
