//! The bytes of a `delta-msgpack` blob, and the msgpack array framing deltas are cut from.
//!
//! A list value in LangGraph's msgpack is an array header followed by its items, each a complete
//! msgpack value. A list that extends another therefore has the other's item bytes as a prefix
//! of its own, and the delta is simply the remaining bytes: no item needs to be parsed to cut or
//! to splice. A delta blob is itself msgpack, so generic tools can open it:
//!
//! ```text
//! [1, base_version, root_version, depth, [appended items...]]
//! ```
//!
//! `1` is the format, `base_version` the version of the same channel this one extends,
//! `root_version` the full snapshot the chain ends at, and `depth` the number of deltas from that
//! snapshot to this one (1 for a delta on a snapshot).

/// The `type` column of a delta row. Not a LangGraph serializer type: Python's savers refuse it
/// (`NotImplementedError: Unknown serialization type`) instead of misreading it.
pub(crate) const DELTA_TYPE: &str = "delta-msgpack";

/// The only format written so far.
const FORMAT: u8 = 1;

/// A decoded delta blob, borrowing the blob's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Delta<'a> {
    /// The version this delta extends.
    pub(crate) base: &'a str,
    /// The snapshot version at the end of the chain.
    pub(crate) root: &'a str,
    /// Deltas from the snapshot to this one, this one included.
    pub(crate) depth: u32,
    /// Number of appended items.
    pub(crate) count: u64,
    /// The appended items' bytes (without an array header).
    pub(crate) items: &'a [u8],
}

/// A msgpack array's element count and header length, or `None` when `bytes` does not start
/// with an array.
pub(crate) fn array_header(bytes: &[u8]) -> Option<(u64, usize)> {
    match *bytes.first()? {
        b @ 0x90..=0x9f => Some((u64::from(b & 0x0f), 1)),
        0xdc => Some((u64::from(u16::from_be_bytes(fixed(bytes, 1)?)), 3)),
        0xdd => Some((u64::from(u32::from_be_bytes(fixed(bytes, 1)?)), 5)),
        _ => None,
    }
}

/// Appends the shortest array header for `count` items (as `ormsgpack` writes it, so a spliced
/// list is byte for byte the list a plain saver stores). `None` beyond msgpack's 2^32 - 1.
pub(crate) fn push_array_header(out: &mut Vec<u8>, count: u64) -> Option<()> {
    match count {
        0..=15 => out.push(0x90 | count as u8),
        16..=0xffff => {
            out.push(0xdc);
            out.extend_from_slice(&(count as u16).to_be_bytes());
        }
        _ => {
            out.push(0xdd);
            out.extend_from_slice(&u32::try_from(count).ok()?.to_be_bytes());
        }
    }
    Some(())
}

/// A complete list: header for `count` items, then `items`.
pub(crate) fn list(count: u64, items: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(items.len() + 5);
    push_array_header(&mut out, count)?;
    out.extend_from_slice(items);
    Some(out)
}

/// The blob of a delta; `None` when a count exceeds msgpack's limits.
pub(crate) fn encode(base: &str, root: &str, depth: u32, count: u64, items: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(items.len() + base.len() + root.len() + 16);
    out.extend_from_slice(&[0x95, FORMAT]);
    push_str(&mut out, base)?;
    push_str(&mut out, root)?;
    push_u32(&mut out, depth);
    push_array_header(&mut out, count)?;
    out.extend_from_slice(items);
    Some(out)
}

/// Reads a delta blob. Only the framing is checked here: the items are checked as msgpack once
/// spliced into the full list.
pub(crate) fn decode(bytes: &[u8]) -> Result<Delta<'_>, String> {
    let (base, root, depth, rest) = decode_header(bytes)?;
    let (count, header) = array_header(rest).ok_or("the appended items are not an array")?;
    Ok(Delta { base, root, depth, count, items: &rest[header..] })
}

/// The versions and depth of a delta blob, from its first bytes (the items may be cut off), and
/// what follows them.
pub(crate) fn decode_header(bytes: &[u8]) -> Result<(&str, &str, u32, &[u8]), String> {
    let mut pos = 0;
    if bytes.get(..2) != Some(&[0x95, FORMAT][..]) {
        let start: Vec<u8> = bytes.iter().take(2).copied().collect();
        return Err(format!("not a delta blob of format {FORMAT} (starts with {start:02x?})"));
    }
    pos += 2;
    let base = read_str(bytes, &mut pos).ok_or("malformed base version")?;
    let root = read_str(bytes, &mut pos).ok_or("malformed root version")?;
    let depth = read_u32(bytes, &mut pos).ok_or("malformed depth")?;
    Ok((base, root, depth, &bytes[pos..]))
}

fn fixed<const N: usize>(bytes: &[u8], at: usize) -> Option<[u8; N]> {
    bytes.get(at..at + N)?.try_into().ok()
}

fn push_str(out: &mut Vec<u8>, s: &str) -> Option<()> {
    let len = s.len();
    match len {
        0..=31 => out.push(0xa0 | len as u8),
        32..=0xff => out.extend_from_slice(&[0xd9, len as u8]),
        0x100..=0xffff => {
            out.push(0xda);
            out.extend_from_slice(&(len as u16).to_be_bytes());
        }
        _ => {
            out.push(0xdb);
            out.extend_from_slice(&u32::try_from(len).ok()?.to_be_bytes());
        }
    }
    out.extend_from_slice(s.as_bytes());
    Some(())
}

fn push_u32(out: &mut Vec<u8>, n: u32) {
    match n {
        0..=0x7f => out.push(n as u8),
        0x80..=0xff => out.extend_from_slice(&[0xcc, n as u8]),
        0x100..=0xffff => {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        _ => {
            out.push(0xce);
            out.extend_from_slice(&n.to_be_bytes());
        }
    }
}

fn read_str<'a>(bytes: &'a [u8], pos: &mut usize) -> Option<&'a str> {
    let marker = *bytes.get(*pos)?;
    let (len, header) = match marker {
        0xa0..=0xbf => (usize::from(marker & 0x1f), 1),
        0xd9 => (usize::from(*bytes.get(*pos + 1)?), 2),
        0xda => (usize::from(u16::from_be_bytes(fixed(bytes, *pos + 1)?)), 3),
        0xdb => (usize::try_from(u32::from_be_bytes(fixed(bytes, *pos + 1)?)).ok()?, 5),
        _ => return None,
    };
    let start = *pos + header;
    let text = std::str::from_utf8(bytes.get(start..start.checked_add(len)?)?).ok()?;
    *pos = start + len;
    Some(text)
}

fn read_u32(bytes: &[u8], pos: &mut usize) -> Option<u32> {
    let marker = *bytes.get(*pos)?;
    let (n, len) = match marker {
        0x00..=0x7f => (u32::from(marker), 1),
        0xcc => (u32::from(*bytes.get(*pos + 1)?), 2),
        0xcd => (u32::from(u16::from_be_bytes(fixed(bytes, *pos + 1)?)), 3),
        0xce => (u32::from_be_bytes(fixed(bytes, *pos + 1)?), 5),
        _ => return None,
    };
    *pos += len;
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_in_their_shortest_form() {
        for (count, len) in [(0, 1), (15, 1), (16, 3), (65_535, 3), (65_536, 5)] {
            let mut out = Vec::new();
            push_array_header(&mut out, count).unwrap();
            assert_eq!(out.len(), len, "{count}");
            assert_eq!(array_header(&out), Some((count, len)));
        }
        assert_eq!(array_header(&[0x80]), None, "a map is not a list");
        assert_eq!(array_header(&[0xdc, 0x01]), None, "truncated");
        assert_eq!(array_header(&[]), None);
    }

    #[test]
    fn deltas_round_trip_and_bad_bytes_are_errors() {
        let long = "9".repeat(300);
        for (base, root, depth) in [("a", "b", 1), (&*long, "", 300), ("v2", "v1", 70_000)] {
            let blob = encode(base, root, depth, 2, &[0xc0, 0x01]).unwrap();
            let d = decode(&blob).unwrap();
            assert_eq!(
                (d.base, d.root, d.depth, d.count, d.items),
                (base, root, depth, 2, &[0xc0, 0x01][..])
            );
            // Every truncation is an error, never a panic.
            for cut in 0..blob.len() - 2 {
                assert!(decode(&blob[..cut]).is_err(), "cut at {cut}");
            }
        }
        assert!(decode(&[0x95, 0x02]).unwrap_err().contains("format 1"));
        assert!(decode(&[0x91, 0x01]).is_err());
    }

    #[test]
    fn a_spliced_list_is_the_list_itself() {
        let whole: Vec<u8> = [0x93, 0x01, 0xa1, b'x', 0xc0].to_vec();
        let (count, header) = array_header(&whole).unwrap();
        assert_eq!(list(count, &whole[header..]).unwrap(), whole);
    }
}
