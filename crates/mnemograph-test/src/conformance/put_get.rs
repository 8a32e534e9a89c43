//! Saving and reading back one checkpoint: addresses, parents, every field, and which values a checkpoint carries.

// The suite's shared helpers (`Ctx`, `cp`, `ver`, ...) and imports.
use super::*;

/// `put` returns the thread, namespace and new id; the checkpoint reads back at that address.
pub async fn put_returns_config_with_new_id(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let first = cp(-1).set("a", 1, one("x"));
    let first_id = first.id();
    let saved = s.put(&config, first).await;
    assert_eq!(saved, config.clone().with_checkpoint_id(&first_id));
    let tuple = s.get(&saved).await;
    assert_eq!((&tuple.config, tuple.checkpoint.id), (&saved, first_id));
    // With a parent in the config, the returned id is still the new checkpoint's.
    let second = cp(0).keep("a", 1);
    let expected = config.with_checkpoint_id(second.id());
    assert_eq!(s.put(&saved, second).await, expected);
}

/// `get_tuple` without an id returns the checkpoint with the greatest id, whatever the put order.
pub async fn get_tuple_without_id_returns_newest(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let (a, b, c) = (cp(0), cp(1), cp(2));
    let newest = c.id();
    s.put(&config, b.set("x", 2, int(2))).await;
    s.put(&config, c.set("x", 3, int(3))).await;
    s.put(&config, a.set("x", 1, int(1))).await;
    let tuple = s.get(&config).await;
    assert_eq!(tuple.config, config.with_checkpoint_id(newest));
    assert_eq!(decoded!(tuple, "x", i64), 3);
}

/// An unknown id, thread or namespace yields `None`.
pub async fn get_tuple_unknown_is_none(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let saved = s.put(&config, cp(0).set("a", 1, int(1))).await;
    assert!(s.find(&saved).await.is_some());
    let unknown_id = config.with_checkpoint_id(checkpoint_id(0));
    assert!(s.find(&unknown_id).await.is_none(), "unknown id");
    assert!(s.find(&s.thread("other")).await.is_none(), "unknown thread");
    let other_ns = saved.with_ns("child:1");
    assert!(s.find(&other_ns).await.is_none(), "unknown namespace");
}

/// `parent_config` is the `checkpoint_id` of the config given to `put`, in the same namespace.
pub async fn get_tuple_returns_parent_config(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    for config in [s.thread("t"), s.thread("t").with_ns("child:1")] {
        let first = s.put(&config, cp(-1).set("a", 1, int(1))).await;
        let second = s.put(&first, cp(0).keep("a", 1)).await;
        assert_eq!(s.get(&first).await.parent_config, None);
        assert_eq!(s.get(&second).await.parent_config, Some(first.clone()));
        assert_eq!(s.get(&config).await.parent_config, Some(first));
    }
}

/// Every field of a checkpoint survives a round trip.
pub async fn checkpoint_fields_round_trip(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let mut c = cp(3).set("a", 4, one("v")).keep("b", 2);
    let seen: [(Arc<str>, _); 2] = [("a".into(), ver(3)), ("b".into(), ver(2))];
    let input = ("__input__".into(), ChannelVersions::new());
    let node = ("node".into(), ChannelVersions::from(seen));
    c.checkpoint.versions_seen = BTreeMap::from([input, node]);
    c.checkpoint.updated_channels = Some(vec!["a".into()]);
    let expected = c.checkpoint.clone();
    let saved = s.put(&s.thread("t"), c).await;
    let got = s.get(&saved).await.checkpoint;
    assert_eq!((got.v, &got.id, &got.ts), (4, &expected.id, &expected.ts));
    assert_eq!(got.channel_versions, expected.channel_versions);
    assert_eq!(got.versions_seen, expected.versions_seen);
    assert_eq!(got.updated_channels, expected.updated_channels);
    // `b` has a version but no value was ever saved for it.
    assert_eq!(got.channel_values.keys().map(|k| &**k).collect::<Vec<_>>(), ["a"]);
    let next = s.put(&saved, cp(4).keep("a", 4)).await;
    assert_eq!(s.get(&next).await.checkpoint.updated_channels, None);
}

/// Only channels in `new_versions` get a new value; the others are read from the value saved
/// with their version by an older checkpoint, which itself keeps its own values.
pub async fn incremental_channel_update(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let first = cp(0).set("a", 1, one("a1")).set("b", 1, one("b1"));
    let c1 = s.put(&s.thread("t"), first).await;
    let c2 = s.put(&c1, cp(1).set("a", 2, one("a2")).keep("b", 1)).await;
    let c3 = s.put(&c2, cp(2).same("a", 2, one("a2")).set("b", 2, one("b2"))).await;
    for (config, a, b) in [(c1, "a1", "b1"), (c2, "a2", "b1"), (c3, "a2", "b2")] {
        let t = s.get(&config).await;
        assert_eq!([item(&t, "a"), item(&t, "b")], [a, b], "{config:?}");
    }
}

/// A channel dropped from `channel_versions` has no value in the new checkpoint only.
pub async fn channel_removed_from_versions_disappears(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let first = cp(0).set("a", 1, one("a1")).set("b", 1, one("b1"));
    let c1 = s.put(&s.thread("t"), first).await;
    let c2 = s.put(&c1, cp(1).set("a", 2, one("a2"))).await;
    let t2 = s.get(&c2).await;
    assert_eq!(channels(&t2), ["a"]);
    assert!(!t2.checkpoint.channel_versions.contains_key("b"));
    assert_eq!(item(&s.get(&c1).await, "b"), "b1");
}

/// A `Null` value (Python's `None`, carried by edge channels) reads back as null; a channel in
/// `new_versions` without a value (LangGraph's `"empty"` blob) reads back as absent.
pub async fn null_value_kept_and_missing_value_omitted(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let mut c = cp(0).set("branch:to:x", 1, ChannelValue::Null);
    c.checkpoint.channel_versions.insert("empty".into(), ver(1));
    c.new_versions.insert("empty".into(), ver(1));
    let saved = s.put(&s.thread("t"), c.set("a", 1, int(1))).await;
    let tuple = s.get(&saved).await;
    assert_eq!(channels(&tuple), ["a", "branch:to:x"]);
    assert!(value(&tuple, "branch:to:x").is_null());
    assert_eq!(tuple.checkpoint.channel_versions.len(), 3);
}
