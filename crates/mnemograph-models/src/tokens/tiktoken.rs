//! [`TiktokenCounter`]: exact counts with OpenAI's BPE vocabularies, via `tiktoken-rs`.

use std::fmt;
use std::str::FromStr;

use tiktoken_rs::CoreBPE;

use super::TokenCounter;
use crate::error::Error;

/// A tiktoken vocabulary.
#[cfg_attr(docsrs, doc(cfg(feature = "tiktoken")))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Encoding {
    /// `cl100k_base`: GPT-4, GPT-3.5-turbo, text-embedding-3.
    Cl100kBase,
    /// `o200k_base`: GPT-4o, GPT-4.1, o-series.
    O200kBase,
}

impl Encoding {
    /// The encoding's tiktoken name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Cl100kBase => "cl100k_base",
            Self::O200kBase => "o200k_base",
        }
    }

    /// The encoding OpenAI uses for `model`: `o200k_base` for the GPT-4o/4.1/5 and o-series
    /// families, `cl100k_base` otherwise (also the better guess for most non-OpenAI models).
    pub fn for_model(model: &str) -> Self {
        let m = model.rsplit('/').next().unwrap_or(model);
        let o200k = ["gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "chatgpt-4o", "o1", "o3", "o4"];
        if o200k.iter().any(|p| m.starts_with(p)) {
            Self::O200kBase
        } else {
            Self::Cl100kBase
        }
    }
}

impl FromStr for Encoding {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "cl100k_base" => Ok(Self::Cl100kBase),
            "o200k_base" => Ok(Self::O200kBase),
            other => Err(Error::UnknownEncoding(other.to_owned())),
        }
    }
}

/// Exact token counts with a tiktoken vocabulary.
///
/// The vocabulary is parsed once per process (parsing is slow) and shared by every counter, so
/// construct counters freely.
///
/// ```
/// use mnemograph_models::{Encoding, TiktokenCounter, TokenCounter};
///
/// let counter = TiktokenCounter::new(Encoding::Cl100kBase);
/// assert_eq!(counter.count_text("hello world"), 2);
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tiktoken")))]
#[derive(Clone, Copy)]
pub struct TiktokenCounter {
    /// Which vocabulary.
    encoding: Encoding,
    /// The process-wide tokenizer for it.
    bpe: &'static CoreBPE,
}

impl TiktokenCounter {
    /// A counter for `encoding`.
    pub fn new(encoding: Encoding) -> Self {
        let bpe = match encoding {
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        };
        Self { encoding, bpe }
    }

    /// A counter for the encoding `model` uses; see [`Encoding::for_model`].
    pub fn for_model(model: &str) -> Self {
        Self::new(Encoding::for_model(model))
    }

    /// The vocabulary.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

impl fmt::Debug for TiktokenCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TiktokenCounter").field(&self.encoding.name()).finish()
    }
}

impl TokenCounter for TiktokenCounter {
    fn count_text(&self, text: &str) -> usize {
        // Ordinary encoding: text that looks like `<|endoftext|>` is user data, not a control
        // token, and must be counted as the characters it is.
        self.bpe.count_ordinary(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_counts() {
        let cl = TiktokenCounter::new(Encoding::Cl100kBase);
        let o2 = TiktokenCounter::new(Encoding::O200kBase);
        assert_eq!(cl.count_text("hello world"), 2);
        assert_eq!(o2.count_text("hello world"), 2);
        assert_eq!(cl.count_text("<|endoftext|>"), 7);
        assert!(cl.count_text("你好，世界") >= o2.count_text("你好，世界"));
    }

    #[test]
    fn encoding_names_and_models() {
        assert_eq!("o200k_base".parse::<Encoding>().unwrap(), Encoding::O200kBase);
        assert!(matches!("gpt2".parse::<Encoding>(), Err(Error::UnknownEncoding(_))));
        assert_eq!(Encoding::for_model("gpt-4o-mini"), Encoding::O200kBase);
        assert_eq!(Encoding::for_model("openai/o3-mini"), Encoding::O200kBase);
        assert_eq!(Encoding::for_model("gpt-4-turbo"), Encoding::Cl100kBase);
        assert_eq!(Encoding::for_model("deepseek-chat"), Encoding::Cl100kBase);
    }
}
