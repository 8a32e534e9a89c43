//! Telling, without building a tree, whether msgpack bytes are already written the way
//! [`msgpack::write`](super::msgpack::write) would write them.
//!
//! Encoding a live value goes through rmp-serde, whose output differs from `ormsgpack`'s only in
//! rare forms (`f32`, and `fixext` for a few payload sizes rmp-serde never hands an ext value
//! anyway). Reading those bytes into an [`rmpv::Value`] tree and writing the tree out again fixes
//! them, but costs an allocation per string, map and message: for a conversation of a few hundred
//! messages, more than encoding it did. [`is_canonical`] scans the bytes once instead, skipping
//! every string, blob and extension payload whole (a LangChain message is one ext value), and says
//! whether the rewrite would give back exactly the same bytes; only when it would not, or the
//! bytes are malformed, is the tree built (and the error reported as before).

use super::msgpack::MAX_DEPTH;

/// Whether `write(read(bytes))` would return `bytes` unchanged: one complete value, nested at
/// most [`MAX_DEPTH`] levels, every string valid UTF-8, every integer, length and extension in its
/// smallest form, and no `float32`. `false` also for malformed bytes.
pub(crate) fn is_canonical(bytes: &[u8]) -> bool {
    let mut scan = Scan { bytes, pos: 0 };
    scan.value(MAX_DEPTH).is_some() && scan.pos == bytes.len()
}

/// A cursor over the bytes; every step returns `None` at the first non-canonical or malformed
/// form.
struct Scan<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Scan<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|end| *end <= self.bytes.len())?;
        let slice = &self.bytes[self.pos..end];
        self.pos = end;
        Some(slice)
    }

    /// A big-endian unsigned number of `n` bytes (at most 8).
    fn number(&mut self, n: usize) -> Option<u64> {
        Some(self.take(n)?.iter().fold(0, |acc, b| (acc << 8) | u64::from(*b)))
    }

    /// A length written in `n` bytes, which must not fit a smaller form: the writer uses the
    /// `n`-byte form only from `floor` up.
    fn length(&mut self, n: usize, floor: u64) -> Option<usize> {
        let len = self.number(n)?;
        if len < floor {
            return None;
        }
        usize::try_from(len).ok()
    }

    /// One value, and everything nested in it.
    fn value(&mut self, depth: usize) -> Option<()> {
        let depth = depth.checked_sub(1)?;
        let [marker] = *self.take(1)? else { return None };
        match marker {
            // Positive and negative fixint, nil, booleans: one byte, always the smallest form.
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => Some(()),
            0x80..=0x8f => self.entries(usize::from(marker & 0x0f), depth),
            0x90..=0x9f => self.items(usize::from(marker & 0x0f), depth),
            0xa0..=0xbf => self.text(usize::from(marker & 0x1f)),
            // Arrays and maps: 16 bits from 16 entries on, 32 bits past 65 535.
            0xdc => self.length(2, 16).and_then(|n| self.items(n, depth)),
            0xdd => self.length(4, 1 << 16).and_then(|n| self.items(n, depth)),
            0xde => self.length(2, 16).and_then(|n| self.entries(n, depth)),
            0xdf => self.length(4, 1 << 16).and_then(|n| self.entries(n, depth)),
            // Strings: 8 bits from 32 bytes on.
            0xd9 => self.length(1, 32).and_then(|n| self.text(n)),
            0xda => self.length(2, 1 << 8).and_then(|n| self.text(n)),
            0xdb => self.length(4, 1 << 16).and_then(|n| self.text(n)),
            // Binary: no fix form, so 8 bits from 0.
            0xc4 => self.length(1, 0).and_then(|n| self.take(n)).map(drop),
            0xc5 => self.length(2, 1 << 8).and_then(|n| self.take(n)).map(drop),
            0xc6 => self.length(4, 1 << 16).and_then(|n| self.take(n)).map(drop),
            // Extensions: fixext exactly for payloads of 1, 2, 4, 8 and 16 bytes, ext8/16/32 for
            // every other size.
            0xd4 => self.take(2).map(drop),
            0xd5 => self.take(3).map(drop),
            0xd6 => self.take(5).map(drop),
            0xd7 => self.take(9).map(drop),
            0xd8 => self.take(17).map(drop),
            0xc7 => {
                let n = self.length(1, 0)?;
                (!matches!(n, 1 | 2 | 4 | 8 | 16)).then_some(())?;
                self.take(n + 1).map(drop)
            }
            0xc8 => self.length(2, 1 << 8).and_then(|n| self.take(n + 1)).map(drop),
            0xc9 => self.length(4, 1 << 16).and_then(|n| self.take(n + 1)).map(drop),
            // Every float is written as float64.
            0xca => None,
            0xcb => self.take(8).map(drop),
            // Unsigned integers: each width only for values the narrower ones cannot hold.
            0xcc => (self.number(1)? >= 0x80).then_some(()),
            0xcd => (self.number(2)? > u64::from(u8::MAX)).then_some(()),
            0xce => (self.number(4)? > u64::from(u16::MAX)).then_some(()),
            0xcf => (self.number(8)? > u64::from(u32::MAX)).then_some(()),
            // Signed integers: only negative values (the writer writes the others unsigned), each
            // width only below what the narrower ones hold.
            0xd0 => self.signed(1, -32),
            0xd1 => self.signed(2, i64::from(i8::MIN)),
            0xd2 => self.signed(4, i64::from(i16::MIN)),
            0xd3 => self.signed(8, i64::from(i32::MIN)),
            // 0xc1: reserved.
            _ => None,
        }
    }

    /// A signed integer of `n` bytes, canonical when it is below `below`.
    fn signed(&mut self, n: usize, below: i64) -> Option<()> {
        let raw = self.number(n)?;
        // Sign-extend the `n`-byte two's complement value.
        let shift = 64 - 8 * n as u32;
        let value = ((raw << shift) as i64) >> shift;
        (value < below).then_some(())
    }

    fn text(&mut self, n: usize) -> Option<()> {
        std::str::from_utf8(self.take(n)?).ok().map(drop)
    }

    fn items(&mut self, n: usize, depth: usize) -> Option<()> {
        for _ in 0..n {
            self.value(depth)?;
        }
        Some(())
    }

    fn entries(&mut self, n: usize, depth: usize) -> Option<()> {
        for _ in 0..n {
            self.value(depth)?;
            self.value(depth)?;
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rmpv::Value;

    use super::super::msgpack::{read, write};
    use super::*;

    /// What the scan must agree with: the bytes come back unchanged from a read and a write.
    fn rewrite_keeps(bytes: &[u8]) -> bool {
        read(bytes).and_then(|tree| write(&tree)).is_ok_and(|out| out == bytes)
    }

    #[test]
    fn smallest_forms_are_canonical_and_wider_ones_are_not() {
        let canonical: [&[u8]; 12] = [
            &[0x7f],
            &[0xcc, 0x80],
            &[0xcd, 0x01, 0x00],
            &[0xe0],
            &[0xd0, 0xdf],
            &[0xd1, 0xff, 0x7f],
            &[0xcb, 0, 0, 0, 0, 0, 0, 0, 0],
            &[0xa1, b'x'],
            &[0xc4, 0x00],
            &[0xd4, 0x09, 0x78],
            &[0xc7, 0x03, 0x09, 0x78, 0x78, 0x78],
            &[0x92, 0xc0, 0x81, 0xa1, b'k', 0xc3],
        ];
        for bytes in canonical {
            assert!(is_canonical(bytes), "{bytes:02x?}");
            assert!(rewrite_keeps(bytes), "{bytes:02x?}");
        }
        let wider: [&[u8]; 11] = [
            &[0xcc, 0x7f],                   // fits a positive fixint
            &[0xd0, 0x05],                   // non-negative, written unsigned
            &[0xd0, 0xe0],                   // -32 is a negative fixint
            &[0xd1, 0xff, 0x80],             // -128 fits int8
            &[0xca, 0x3f, 0x80, 0, 0],       // float32
            &[0xd9, 0x01, b'x'],             // str8 for one byte
            &[0xdc, 0x00, 0x01, 0xc0],       // array16 of one
            &[0xc7, 0x04, 0x09, 1, 2, 3, 4], // ext8 where fixext4 is written
            &[0xc5, 0x00, 0x01, 0x00],       // bin16 for one byte
            &[0xa1, 0xff],                   // invalid UTF-8
            &[0x92, 0xc0],                   // truncated
        ];
        for bytes in wider {
            assert!(!is_canonical(bytes), "{bytes:02x?}");
            assert!(!rewrite_keeps(bytes), "{bytes:02x?}");
        }
        assert!(!is_canonical(&[0xc0, 0xc0]), "trailing bytes");
        assert!(!is_canonical(&[0xc1]), "reserved marker");
        assert!(!is_canonical(&[0x91; MAX_DEPTH + 1]), "too deep");
    }

    /// Any msgpack value, written in any form the format allows (not only the smallest), so both
    /// answers of the scan are exercised.
    fn any_form() -> impl Strategy<Value = Vec<u8>> {
        let leaf = prop_oneof![
            any::<i64>().prop_map(|n| write(&Value::from(n)).unwrap()),
            any::<u64>().prop_map(|n| write(&Value::from(n)).unwrap()),
            // An integer in a width of its own choosing, canonical or not.
            (any::<i64>(), 0..8usize).prop_map(|(n, form)| {
                let markers = [0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3];
                let width = [1, 2, 4, 8][form % 4];
                let mut out = vec![markers[form]];
                out.extend_from_slice(&n.to_be_bytes()[8 - width..]);
                out
            }),
            any::<f32>().prop_map(|f| [&[0xca][..], &f.to_be_bytes()].concat()),
            any::<f64>().prop_map(|f| write(&Value::F64(f)).unwrap()),
            ".{0,40}".prop_map(|s| write(&Value::from(s)).unwrap()),
            (".{0,40}", 0..3usize).prop_map(|(s, form)| sized([0xd9, 0xda, 0xdb][form], form, s.as_bytes())),
            (prop::collection::vec(any::<u8>(), 0..20), 0..3usize).prop_map(|(b, form)| sized(
                [0xc4, 0xc5, 0xc6][form],
                form,
                &b
            )),
            (any::<i8>(), prop::collection::vec(any::<u8>(), 0..20))
                .prop_map(|(code, data)| { write(&Value::Ext(code, data)).unwrap() }),
            (any::<i8>(), prop::collection::vec(any::<u8>(), 0..20)).prop_map(|(code, data)| {
                let mut out = sized(0xc7, 0, &data);
                out.insert(2, code as u8);
                out
            }),
            prop::collection::vec(any::<u8>(), 0..6),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                (prop::collection::vec(inner.clone(), 0..20), any::<bool>()).prop_map(|(items, wide)| {
                    let mut out = container(0x90, 0xdc, items.len(), wide);
                    items.iter().for_each(|i| out.extend_from_slice(i));
                    out
                }),
                (prop::collection::vec((inner.clone(), inner), 0..18), any::<bool>()).prop_map(
                    |(entries, wide)| {
                        let mut out = container(0x80, 0xde, entries.len(), wide);
                        entries.iter().for_each(|(k, v)| {
                            out.extend_from_slice(k);
                            out.extend_from_slice(v);
                        });
                        out
                    }
                ),
            ]
        })
    }

    /// `data` after `marker` and its length in 1, 2 or 4 bytes (`form` 0, 1, 2), truncated to
    /// what the width holds.
    fn sized(marker: u8, form: usize, data: &[u8]) -> Vec<u8> {
        let width = [1, 2, 4][form];
        let data = &data[..data.len().min(255)];
        let mut out = vec![marker];
        out.extend_from_slice(&(data.len() as u32).to_be_bytes()[4 - width..]);
        out.extend_from_slice(data);
        out
    }

    /// An array or map header: the fix form when it fits and `wide` is false, else 16 bits.
    fn container(fix: u8, marker16: u8, len: usize, wide: bool) -> Vec<u8> {
        if len < 16 && !wide {
            vec![fix | len as u8]
        } else {
            [&[marker16][..], &(len as u16).to_be_bytes()].concat()
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn the_scan_agrees_with_a_read_and_a_write(bytes in any_form()) {
            prop_assert_eq!(is_canonical(&bytes), rewrite_keeps(&bytes), "{:02x?}", bytes);
        }

        #[test]
        fn the_scan_agrees_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(is_canonical(&bytes), rewrite_keeps(&bytes), "{:02x?}", bytes);
        }
    }
}
