//! Whether the Milvus server can do the partial upsert that retirement needs.
//!
//! Retire and restore rewrite only the `metadata` field with `partial_update`, which Milvus
//! supports from 2.6.2 ("merge mode"); Milvus Lite 3.x supports it too. An older server does not
//! know the flag: protobuf drops unknown fields, so it reads the request as a *full* upsert of a
//! row carrying only `id`, `user_id` and `metadata`, and its proxy refuses it before writing
//! anything (`fieldSchema(embedding) has no corresponding fieldData pass in`), because the
//! vector and the text fields of this crate's schema are neither nullable nor defaulted. So an old server never loses data here; this
//! module turns the situation into [`Error::Unsupported`] instead of that opaque refusal, and
//! spares the request when the server's version already says it will fail.
//!
//! A full upsert is no fallback: on an auto-id collection, Milvus before 2.6 gives
//! the replacement row a new primary key on some versions (milvus-io/milvus#40816) and keeps it on
//! others (#43257), and a new id would break every `superseded_by` pointing at the memory.

use mnemograph_memory::Error as MemoryError;

use crate::error::Error;

/// The feature, as [`Error::Unsupported`] names it.
pub(crate) const FEATURE: &str = "retire/restore (partial upsert of `metadata`)";
/// The first Milvus release with partial upsert.
pub(crate) const NEEDS: &str = "Milvus 2.6.2";
/// [`NEEDS`] as numbers.
const NEEDS_VERSION: (u64, u64, u64) = (2, 6, 2);

/// What a server's version string says about partial upsert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Support {
    /// A Milvus 2.6.2+ or a Milvus Lite 3+.
    Yes,
    /// A Milvus (or Milvus Lite) release known to lack it.
    No,
    /// A string this crate cannot read (a managed service's, say): try, and read the answer.
    Unknown,
}

/// Reads `major.minor.patch` from the start of `s`, ignoring a `-suffix` or `+build`.
fn triple(s: &str) -> Option<(u64, u64, u64)> {
    let core = s.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(str::parse::<u64>);
    let major = parts.next()?.ok()?;
    let minor = parts.next()?.ok()?;
    // "2.6" alone is read as 2.6.0, which is older than 2.6.2: unsure means not assumed new.
    let patch = parts.next().transpose().ok()?.unwrap_or(0);
    Some((major, minor, patch))
}

/// Classifies a `GetVersion` answer: `v2.6.4` or `2.5.14` from Milvus, `milvus_lite-3.2.2` from
/// Milvus Lite (whose 3.x line has partial upsert; its C++ 2.x line does not).
pub(crate) fn support(version: &str) -> Support {
    let v = version.trim();
    if let Some(lite) = v.strip_prefix("milvus_lite-") {
        return match triple(lite) {
            Some((major, ..)) if major >= 3 => Support::Yes,
            Some(_) => Support::No,
            None => Support::Unknown,
        };
    }
    match triple(v.strip_prefix(['v', 'V']).unwrap_or(v)) {
        Some(t) if t >= NEEDS_VERSION => Support::Yes,
        Some(_) => Support::No,
        None => Support::Unknown,
    }
}

/// The error for a server that reported `version`.
pub(crate) fn unsupported(version: &str) -> Error {
    MemoryError::Unsupported { feature: FEATURE, needs: NEEDS, server: version.to_owned() }.into()
}

/// Whether a server refusal is the one an old server gives a partial upsert it read as a full one:
/// a required field (the vector, the content) missing from the request.
pub(crate) fn is_full_upsert_refusal(reason: &str) -> bool {
    reason.contains("has no corresponding fieldData pass in")
}

/// Turns the opaque refusal of a server of unknown version into [`Error::Unsupported`]; other
/// errors pass through.
pub(crate) fn map_refusal(error: milvus::v2::prelude::Error, version: &str) -> Error {
    use milvus::v2::prelude::Error as Sdk;
    let reason = match &error {
        Sdk::Server(e) => Some(e.reason()),
        Sdk::RetryExhausted { source, .. } => match source.as_ref() {
            Sdk::Server(e) => Some(e.reason()),
            _ => None,
        },
        _ => None,
    };
    match reason {
        Some(r) if is_full_upsert_refusal(r) => unsupported(version),
        _ => error.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_before_2_6_2_are_refused_and_unknown_ones_tried() {
        for v in ["v2.6.2", "2.6.4", "v2.6.10-gpu", "v3.0.0", "milvus_lite-3.2.2", "milvus_lite-3.0"] {
            assert_eq!(support(v), Support::Yes, "{v}");
        }
        for v in ["v2.5.14", "2.4.0", "v2.6.1", "v2.6", "milvus_lite-2.5.1"] {
            assert_eq!(support(v), Support::No, "{v}");
        }
        for v in ["", "Zilliz Cloud Vector Database", "latest", "v2.x"] {
            assert_eq!(support(v), Support::Unknown, "{v:?}");
        }
    }

    #[test]
    fn the_old_servers_refusal_becomes_a_typed_error_naming_the_version() {
        // The proxy's answer to a partial upsert that a pre-2.6.2 Milvus read as a full one.
        let reason = "fieldSchema(embedding) has no corresponding fieldData pass in: invalid parameter";
        assert!(is_full_upsert_refusal(reason));
        assert!(!is_full_upsert_refusal("collection not found[collection=x]"));
        let err = unsupported("v2.5.14");
        assert!(
            matches!(&err, Error::Memory(MemoryError::Unsupported { needs: "Milvus 2.6.2", server, .. }) if server == "v2.5.14"),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "retire/restore (partial upsert of `metadata`) needs Milvus 2.6.2 or newer; the server reports v2.5.14"
        );
        // The SDK's error for that status, as the server sends it (code 1100: invalid parameter).
        let status = |reason: &str| milvus::proto::common::Status {
            code: 1100,
            reason: reason.to_owned(),
            ..Default::default()
        };
        let mapped = map_refusal(status(reason).into(), "Zilliz Cloud");
        assert!(
            matches!(&mapped, Error::Memory(MemoryError::Unsupported { server, .. }) if server == "Zilliz Cloud"),
            "{mapped:?}"
        );
        // Errors that are not that refusal keep their kind.
        let other = map_refusal(status("collection not found").into(), "x");
        assert!(matches!(other, Error::Milvus(_)), "{other:?}");
        let timeout = map_refusal(milvus::v2::prelude::Error::Timeout("slow".into()), "x");
        assert!(matches!(timeout, Error::Milvus(_)), "{timeout:?}");
    }
}
