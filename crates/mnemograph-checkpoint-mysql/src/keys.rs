//! The key of a namespace in every table: `checkpoint_ns_hash`.

use md5::{Digest, Md5};

/// `UNHEX(MD5(checkpoint_ns))`, computed here rather than by the server: the same 16 bytes, one
/// function call fewer per row, and the value can be bound as it is.
pub(crate) fn ns_hash(checkpoint_ns: &str) -> [u8; 16] {
    Md5::digest(checkpoint_ns.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns_hash_is_mysql_unhex_md5() {
        let hex: String = ns_hash("").iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "d41d8cd98f00b204e9800998ecf8427e");
    }
}
