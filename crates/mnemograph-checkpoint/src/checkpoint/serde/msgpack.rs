//! MessagePack bytes ↔ [`rmpv::Value`], written byte for byte the way Python's `ormsgpack` writes
//! them for LangGraph.
//!
//! rmp-serde's output differs from `ormsgpack` only in keeping `f32` (Python has no 32-bit float,
//! so `ormsgpack` always writes `float64`); writing the markers here keeps every form under our
//! control. Extension values follow `ormsgpack` too: `fixext` for payloads of exactly 1, 2, 4, 8
//! or 16 bytes (verified: `{1}` is `d8 00 …`), `ext8/16/32` otherwise. LangChain messages and
//! `Overwrite` payloads are always longer than 16 bytes, so they are always `ext8/16/32`.

use rmpv::Value;

use super::error::SerdeError;

/// Deepest nesting accepted when reading (arrays, maps and ext payloads each count a level), so
/// hostile input cannot exhaust the stack: the reader, normalisation and rmp-serde all recurse
/// once per level, and a stack overflow aborts the process.
///
/// 128 is serde_json's own recursion limit, and far above real LangGraph state: a list of
/// messages with tool calls nests about 7 levels plus the depth of the tool arguments. A deeper
/// value written by Python (whose writers allow more) is refused with a typed error, not read.
/// The limit also bounds the stack a decode takes, which must leave room on the 2 MiB of a tokio
/// worker or test thread for the graph run around it:
/// `tests::the_deepest_accepted_value_decodes_on_a_small_stack` decodes a value this deep on a
/// 1 MiB stack, in a debug build too (`docs/reliability.md` has the stack each path needs).
pub(crate) const MAX_DEPTH: usize = 128;

/// Parses one complete msgpack value; trailing bytes are an error.
pub(crate) fn read(bytes: &[u8]) -> Result<Value, SerdeError> {
    read_with_depth(bytes, MAX_DEPTH)
}

/// Like [`read`] with an explicit nesting budget (ext payloads get what their parent left).
///
/// The reader is strict like `ormsgpack.unpackb`: the reserved marker `0xc1`, invalid UTF-8 in
/// strings, truncation and trailing bytes are errors (rmpv's reader would turn `0xc1` into nil).
pub(crate) fn read_with_depth(bytes: &[u8], depth: usize) -> Result<Value, SerdeError> {
    let mut reader = Reader { bytes, pos: 0 };
    let value = reader.value(depth)?;
    match bytes.len() - reader.pos {
        0 => Ok(value),
        extra => Err(SerdeError::Msgpack(format!("{extra} trailing bytes after the value"))),
    }
}

/// A cursor over the input.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], SerdeError> {
        let end = self.pos.checked_add(n).filter(|end| *end <= self.bytes.len()).ok_or_else(|| {
            SerdeError::Msgpack(format!("unexpected end of input: {n} bytes needed at offset {}", self.pos))
        })?;
        let slice = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], SerdeError> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    /// A big-endian length of `N` bytes.
    fn len<const N: usize>(&mut self) -> Result<usize, SerdeError> {
        let bytes = self.array::<N>()?;
        let n = bytes.iter().fold(0_u64, |n, b| (n << 8) | u64::from(*b));
        usize::try_from(n).map_err(|_| SerdeError::Msgpack(format!("length {n} does not fit in memory")))
    }

    /// One value. Only containers recurse, and this frame holds nothing but the dispatch: the
    /// scalar arms have a frame of their own (`scalar`, never inlined), since in a debug build
    /// their locals would otherwise be on the stack once per level of nesting.
    fn value(&mut self, depth: usize) -> Result<Value, SerdeError> {
        let depth = depth
            .checked_sub(1)
            .ok_or_else(|| SerdeError::Msgpack(format!("value nested deeper than {MAX_DEPTH} levels")))?;
        let [marker] = self.array::<1>()?;
        match marker {
            0x80..=0x8f => self.map(usize::from(marker & 0x0f), depth),
            0x90..=0x9f => self.items(usize::from(marker & 0x0f), depth),
            0xdc => self.len::<2>().and_then(|n| self.items(n, depth)),
            0xdd => self.len::<4>().and_then(|n| self.items(n, depth)),
            0xde => self.len::<2>().and_then(|n| self.map(n, depth)),
            0xdf => self.len::<4>().and_then(|n| self.map(n, depth)),
            _ => self.scalar(marker),
        }
    }

    /// A value that is not an array or a map, after its marker.
    #[inline(never)]
    fn scalar(&mut self, marker: u8) -> Result<Value, SerdeError> {
        Ok(match marker {
            0x00..=0x7f => Value::from(marker),
            0xa0..=0xbf => self.string(usize::from(marker & 0x1f))?,
            0xc0 => Value::Nil,
            0xc2 => Value::Boolean(false),
            0xc3 => Value::Boolean(true),
            0xc4 => Value::Binary(self.sized::<1>()?.to_vec()),
            0xc5 => Value::Binary(self.sized::<2>()?.to_vec()),
            0xc6 => Value::Binary(self.sized::<4>()?.to_vec()),
            0xc7 => self.ext_sized::<1>()?,
            0xc8 => self.ext_sized::<2>()?,
            0xc9 => self.ext_sized::<4>()?,
            0xca => Value::F32(f32::from_be_bytes(self.array()?)),
            0xcb => Value::F64(f64::from_be_bytes(self.array()?)),
            0xcc => Value::from(u8::from_be_bytes(self.array()?)),
            0xcd => Value::from(u16::from_be_bytes(self.array()?)),
            0xce => Value::from(u32::from_be_bytes(self.array()?)),
            0xcf => Value::from(u64::from_be_bytes(self.array()?)),
            0xd0 => Value::from(i8::from_be_bytes(self.array()?)),
            0xd1 => Value::from(i16::from_be_bytes(self.array()?)),
            0xd2 => Value::from(i32::from_be_bytes(self.array()?)),
            0xd3 => Value::from(i64::from_be_bytes(self.array()?)),
            0xd4 => self.ext(1)?,
            0xd5 => self.ext(2)?,
            0xd6 => self.ext(4)?,
            0xd7 => self.ext(8)?,
            0xd8 => self.ext(16)?,
            0xd9 => {
                let n = self.len::<1>()?;
                self.string(n)?
            }
            0xda => {
                let n = self.len::<2>()?;
                self.string(n)?
            }
            0xdb => {
                let n = self.len::<4>()?;
                self.string(n)?
            }
            0xe0..=0xff => Value::from(i8::from_be_bytes([marker])),
            // 0xc1 is reserved; every container marker was handled by `value`.
            _ => {
                return Err(SerdeError::Msgpack(format!(
                    "reserved marker {marker:#04x} at offset {}",
                    self.pos - 1
                )))
            }
        })
    }

    /// Bytes preceded by an `N`-byte length.
    fn sized<const N: usize>(&mut self) -> Result<&'a [u8], SerdeError> {
        let n = self.len::<N>()?;
        self.take(n)
    }

    fn string(&mut self, n: usize) -> Result<Value, SerdeError> {
        let at = self.pos;
        let text = std::str::from_utf8(self.take(n)?)
            .map_err(|e| SerdeError::Msgpack(format!("invalid UTF-8 in the string at offset {at}: {e}")))?;
        Ok(Value::from(text))
    }

    fn ext(&mut self, n: usize) -> Result<Value, SerdeError> {
        let [code] = self.array::<1>()?;
        Ok(Value::Ext(i8::from_be_bytes([code]), self.take(n)?.to_vec()))
    }

    fn ext_sized<const N: usize>(&mut self) -> Result<Value, SerdeError> {
        let n = self.len::<N>()?;
        self.ext(n)
    }

    /// `n` values. The capacity is capped by the remaining input (every value takes at least one
    /// byte), so a forged length cannot allocate more than the input justifies.
    fn items(&mut self, n: usize, depth: usize) -> Result<Value, SerdeError> {
        let mut items = Vec::with_capacity(n.min(self.bytes.len() - self.pos));
        for _ in 0..n {
            items.push(self.value(depth)?);
        }
        Ok(Value::Array(items))
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<Value, SerdeError> {
        let mut entries = Vec::with_capacity(n.min((self.bytes.len() - self.pos) / 2));
        for _ in 0..n {
            let key = self.value(depth)?;
            entries.push((key, self.value(depth)?));
        }
        Ok(Value::Map(entries))
    }
}

/// Encodes a value the way `ormsgpack` does: smallest int/str/bin/array/map/ext forms and
/// `float64` for every float.
pub(crate) fn write(value: &Value) -> Result<Vec<u8>, SerdeError> {
    let mut out = Vec::new();
    write_into(&mut out, value)?;
    Ok(out)
}

fn write_into(out: &mut Vec<u8>, value: &Value) -> Result<(), SerdeError> {
    match value {
        Value::Nil => out.push(0xc0),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(i) => match (i.as_u64(), i.as_i64()) {
            (Some(u), _) => write_uint(out, u),
            (None, Some(n)) => write_negative(out, n),
            // rmpv integers are always one of the two; keep the match total anyway.
            (None, None) => return Err(SerdeError::Encode(format!("unrepresentable integer {i}"))),
        },
        Value::F32(f) => write_f64(out, f64::from(*f)),
        Value::F64(f) => write_f64(out, *f),
        Value::String(s) => {
            let bytes = s.as_bytes();
            header(out, bytes.len(), Some((0xa0, 32)), Some(0xd9), 0xda, 0xdb)?;
            out.extend_from_slice(bytes);
        }
        Value::Binary(bytes) => {
            header(out, bytes.len(), None, Some(0xc4), 0xc5, 0xc6)?;
            out.extend_from_slice(bytes);
        }
        Value::Array(items) => {
            header(out, items.len(), Some((0x90, 16)), None, 0xdc, 0xdd)?;
            for item in items {
                write_into(out, item)?;
            }
        }
        Value::Map(entries) => {
            header(out, entries.len(), Some((0x80, 16)), None, 0xde, 0xdf)?;
            for (key, value) in entries {
                write_into(out, key)?;
                write_into(out, value)?;
            }
        }
        Value::Ext(code, data) => write_ext(out, *code, data)?,
    }
    Ok(())
}

/// Writes an extension value in the smallest form, as `ormsgpack` does.
fn write_ext(out: &mut Vec<u8>, code: i8, data: &[u8]) -> Result<(), SerdeError> {
    match data.len() {
        1 => out.push(0xd4),
        2 => out.push(0xd5),
        4 => out.push(0xd6),
        8 => out.push(0xd7),
        16 => out.push(0xd8),
        len => header(out, len, None, Some(0xc7), 0xc8, 0xc9)?,
    }
    out.extend_from_slice(&code.to_be_bytes());
    out.extend_from_slice(data);
    Ok(())
}

/// Writes a length-prefixed header: the fix form `(base, limit)` when `len < limit`, else the
/// 8-bit form when there is one and it fits, else the 16- or 32-bit form.
fn header(
    out: &mut Vec<u8>,
    len: usize,
    fix: Option<(u8, usize)>,
    marker8: Option<u8>,
    marker16: u8,
    marker32: u8,
) -> Result<(), SerdeError> {
    if let Some((base, limit)) = fix {
        if len < limit {
            // `len < limit <= 32`, so the cast cannot truncate.
            out.push(base | len as u8);
            return Ok(());
        }
    }
    if let (Some(marker), Ok(n)) = (marker8, u8::try_from(len)) {
        out.extend_from_slice(&[marker, n]);
    } else if let Ok(n) = u16::try_from(len) {
        out.push(marker16);
        out.extend_from_slice(&n.to_be_bytes());
    } else {
        let n = u32::try_from(len)
            .map_err(|_| SerdeError::Encode(format!("length {len} exceeds msgpack's 32-bit limit")))?;
        out.push(marker32);
        out.extend_from_slice(&n.to_be_bytes());
    }
    Ok(())
}

fn write_uint(out: &mut Vec<u8>, u: u64) {
    if u < 0x80 {
        out.push(u as u8);
    } else if let Ok(n) = u8::try_from(u) {
        out.extend_from_slice(&[0xcc, n]);
    } else if let Ok(n) = u16::try_from(u) {
        out.push(0xcd);
        out.extend_from_slice(&n.to_be_bytes());
    } else if let Ok(n) = u32::try_from(u) {
        out.push(0xce);
        out.extend_from_slice(&n.to_be_bytes());
    } else {
        out.push(0xcf);
        out.extend_from_slice(&u.to_be_bytes());
    }
}

/// Writes a negative integer in its smallest signed form (negative fixint down to -32).
fn write_negative(out: &mut Vec<u8>, n: i64) {
    if n >= -32 {
        out.extend_from_slice(&(n as i8).to_be_bytes());
    } else if let Ok(v) = i8::try_from(n) {
        out.push(0xd0);
        out.extend_from_slice(&v.to_be_bytes());
    } else if let Ok(v) = i16::try_from(n) {
        out.push(0xd1);
        out.extend_from_slice(&v.to_be_bytes());
    } else if let Ok(v) = i32::try_from(n) {
        out.push(0xd2);
        out.extend_from_slice(&v.to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn write_f64(out: &mut Vec<u8>, f: f64) {
    out.push(0xcb);
    out.extend_from_slice(&f.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(value: &Value) -> String {
        write(value).unwrap().iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn integers_use_ormsgpack_forms() {
        // Expected bytes were produced by Python's JsonPlusSerializer.
        let cases: [(i64, &str); 12] = [
            (127, "7f"),
            (128, "cc80"),
            (256, "cd0100"),
            (65536, "ce00010000"),
            (1 << 40, "cf0000010000000000"),
            (-1, "ff"),
            (-32, "e0"),
            (-33, "d0df"),
            (-129, "d1ff7f"),
            (-32769, "d2ffff7fff"),
            (-(1 << 40), "d3ffffff0000000000"),
            (0, "00"),
        ];
        for (n, expected) in cases {
            assert_eq!(hex(&Value::from(n)), expected, "{n}");
        }
        assert_eq!(hex(&Value::from(u64::MAX)), "cfffffffffffffffff");
    }

    #[test]
    fn floats_are_always_float64() {
        assert_eq!(hex(&Value::F64(1.0)), "cb3ff0000000000000");
        assert_eq!(hex(&Value::F32(1.0)), "cb3ff0000000000000");
    }

    #[test]
    fn strings_bins_and_containers_pick_the_smallest_header() {
        assert_eq!(hex(&Value::from("x".repeat(31)))[..2], *"bf");
        assert_eq!(hex(&Value::from("x".repeat(32)))[..4], *"d920");
        assert_eq!(hex(&Value::from("x".repeat(256)))[..6], *"da0100");
        assert_eq!(hex(&Value::Binary(vec![1, 2])), "c4020102");
        assert_eq!(hex(&Value::Array(vec![Value::Nil; 15]))[..2], *"9f");
        assert_eq!(hex(&Value::Array(vec![Value::Nil; 16]))[..6], *"dc0010");
        assert_eq!(hex(&Value::Map(vec![(Value::from(1), Value::from(2))])), "810102");
    }

    #[test]
    fn ext_forms_match_ormsgpack() {
        // Python: ormsgpack.packb(ormsgpack.Ext(9, b"x" * n)) for each n.
        let cases = [
            (0, "c70009"),
            (1, "d40978"),
            (2, "d5097878"),
            (3, "c7030978"),
            (4, "d6097878"),
            (8, "d7097878"),
            (16, "d8097878"),
            (17, "c7110978"),
            (255, "c7ff0978"),
            (256, "c8010009"),
        ];
        for (n, expected) in cases {
            assert_eq!(hex(&Value::Ext(9, vec![b'x'; n]))[..expected.len()], *expected, "{n}");
        }
    }

    #[test]
    fn reading_rejects_truncated_and_trailing_bytes() {
        assert!(matches!(read(&[0x92, 0x01]), Err(SerdeError::Msgpack(_))));
        assert!(matches!(read(&[0x01, 0x02]), Err(SerdeError::Msgpack(_))));
        assert!(matches!(read(&[]), Err(SerdeError::Msgpack(_))));
        assert!(matches!(read(&[0xc1]), Err(SerdeError::Msgpack(_))));
        let deep = vec![0x91; 5000];
        assert!(matches!(read(&deep), Err(SerdeError::Msgpack(_))));
        assert!(matches!(read(&[0xa1, 0xff]), Err(SerdeError::Msgpack(_))), "invalid UTF-8");
        assert!(matches!(read(&[0xdd, 0xff, 0xff, 0xff, 0xff]), Err(SerdeError::Msgpack(_))));
    }

    /// The deepest value accepted, as nested arrays, maps and ext 7 payloads.
    fn deepest(kind: u8) -> Vec<u8> {
        let levels = MAX_DEPTH - 1;
        match kind {
            0 => [vec![0x91; levels], vec![0xc0]].concat(),
            1 => [[0x81, 0xa1, b'k'].repeat(levels), vec![0xc0]].concat(),
            _ => (0..levels).fold(vec![0xc0], |inner, _| ext7(&inner)),
        }
    }

    /// `inner` wrapped in an ext 7 (delta snapshot) value, whose payload is decoded in turn.
    fn ext7(inner: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        write_ext(&mut out, 7, inner).unwrap();
        out
    }

    #[test]
    fn the_deepest_accepted_value_decodes_on_a_small_stack() {
        // The reader, normalisation and rmp-serde each recurse once per level. A stack overflow
        // aborts the process, so their frames together must fit well inside a 2 MiB thread
        // stack; 1 MiB here leaves room for whatever the caller has on the stack already.
        let decoded = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(|| {
                (0..3)
                    .map(|kind| {
                        let value = crate::value::ChannelValue::encoded("msgpack", deepest(kind));
                        let loaded = super::super::loads_typed("msgpack", &deepest(kind)).map(drop);
                        (
                            kind,
                            loaded.is_ok(),
                            value.decode::<serde_json::Value>().is_ok(),
                            value.to_json().is_ok(),
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .expect("spawn")
            .join()
            .expect("no panic");
        assert!(decoded.iter().all(|(_, a, b, c)| *a && *b && *c), "{decoded:?}");
        // One level more is refused.
        for kind in 0..2 {
            let deeper = [vec![0x91], deepest(kind)].concat();
            assert!(matches!(read(&deeper), Err(SerdeError::Msgpack(_))), "{kind}");
        }
        let deeper = ext7(&deepest(2));
        assert!(matches!(super::super::loads_typed("msgpack", &deeper), Err(SerdeError::Msgpack(_))));
    }

    #[test]
    fn reading_and_writing_round_trip_every_form() {
        let value = Value::Array(vec![
            Value::Nil,
            Value::Boolean(true),
            Value::from(-5),
            Value::from(-40000),
            Value::from(u64::MAX),
            Value::from(i64::MIN),
            Value::F64(2.5),
            Value::from("é".repeat(40)),
            Value::Binary(vec![0; 70000]),
            Value::Map((0..20).map(|i| (Value::from(i), Value::Nil)).collect()),
            Value::Ext(-3, vec![1, 2, 3, 4]),
            Value::Ext(5, vec![0; 300]),
        ]);
        let bytes = write(&value).unwrap();
        assert_eq!(read(&bytes).unwrap(), value);
        assert_eq!(write(&read(&bytes).unwrap()).unwrap(), bytes);
    }
}
