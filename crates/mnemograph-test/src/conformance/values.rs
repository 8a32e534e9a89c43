//! Deleting threads, and what survives a round trip: metadata, values of several types, large and Unicode values, versions.

// The suite's shared helpers (`Ctx`, `cp`, `ver`, ...) and imports.
use super::*;

/// `delete_thread` removes the checkpoints, values and writes of every namespace of the thread.
pub async fn delete_thread_removes_all_namespaces_and_writes(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let root = s.thread("t");
    let child = root.clone().with_ns("child:1");
    let old = cp(0);
    let old_id = old.id();
    let r1 = s.put(&root, old.set("a", 1, one("old"))).await;
    s.write(&r1, "task", &[("a", json!("w"))]).await;
    let r2 = s.put(&r1, cp(1).keep("a", 1)).await;
    let c1 = s.put(&child, cp(0).set("b", 1, one("old"))).await;
    s.write(&c1, "task", &[("b", json!("w"))]).await;

    s.delete(&root).await;
    for config in [&root, &child, &r1, &r2, &c1] {
        assert!(s.find(config).await.is_none(), "{config:?} survived");
    }
    assert_eq!(s.count(&root, all()).await, 0);
    assert_eq!(s.count(&child, all()).await, 0);
    // Saved again under the old id and version, it must find neither the old value nor writes.
    let again = s.put(&root, cp(0).with_id(&old_id).keep("a", 1)).await;
    let tuple = s.get(&again).await;
    assert_eq!(channels(&tuple), Vec::<&str>::new(), "values survived");
    assert_eq!(writes(&tuple), [], "writes survived");
}

/// `delete_thread` leaves other threads untouched.
pub async fn delete_thread_leaves_other_threads(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let (doomed, kept) = (s.thread("doomed"), s.thread("kept"));
    s.put(&doomed, cp(0).set("a", 1, one("doomed"))).await;
    let k1 = s.put(&kept, cp(0).set("a", 1, one("kept"))).await;
    s.write(&k1, "task", &[("a", json!("w"))]).await;
    let kept_child = kept.clone().with_ns("child:1");
    let k2 = s.put(&kept_child, cp(1).set("a", 1, one("kept child"))).await;

    s.delete(&doomed).await;
    let tuple = s.get(&kept).await;
    assert_eq!(tuple.config, k1);
    assert_eq!(item(&tuple, "a"), "kept");
    assert_eq!(writes(&tuple), [w("task", "a", json!("w"))]);
    assert_eq!(item(&s.get(&k2).await, "a"), "kept child");
    let listed = s.list_at(None, all()).await;
    let threads: Vec<&str> = listed.iter().map(|t| t.config.thread_id.as_str()).collect();
    assert!(!threads.contains(&doomed.thread_id.as_str()), "{threads:?}");
    let kept_count = threads.iter().filter(|t| **t == kept.thread_id).count();
    assert_eq!(kept_count, 2, "{threads:?}");
}

/// Metadata round-trips: every source, step, parents and user keys (unicode included).
pub async fn metadata_round_trip(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let mut parent = s.thread("t");
    let extra = json!({"run_id": "r-42", "用户": "张三", "score": 0.5, "ok": true, "n": -7});
    let Value::Object(extra) = extra else { unreachable!() };
    for (step, source) in (-1..).zip([Input, Loop, Update, Fork]) {
        let mut m = CheckpointMetadata::new(source, step);
        m.parents.insert(String::new(), checkpoint_id(0));
        m.parents.insert("node:abc".into(), checkpoint_id(1));
        m.extra.clone_from(&extra);
        let c = cp(step).set("a", 1, int(1));
        parent = s.put_meta(&parent, c, m.clone()).await;
        assert_eq!(s.get(&parent).await.metadata, m);
    }
    let plain = CheckpointMetadata::new(Loop, 9);
    let saved = s.put_meta(&parent, cp(9).keep("a", 1), plain.clone()).await;
    assert_eq!(s.get(&saved).await.metadata, plain);
}

/// Values of common types read back equal after decoding.
pub async fn values_of_several_types_round_trip(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let map = Map::from([("k".into(), vec!["v1".into()]), ("e".into(), vec![])]);
    let object = json!({"name": "x", "nested": {"list": [1, 2.5, null, "s"], "ok": false}});
    let c = cp(0)
        .set("int", 1, int(-42))
        .set("big", 1, int(i64::MAX))
        .set("float", 1, ChannelValue::new(0.1_f64))
        .set("bool", 1, ChannelValue::new(true))
        .set("text", 1, ChannelValue::new("hello".to_owned()))
        .set("empty_text", 1, ChannelValue::new(String::new()))
        .set("ints", 1, ChannelValue::new(vec![1_i64, -2, 3]))
        .set("map", 1, ChannelValue::new(map.clone()))
        .set("object", 1, ChannelValue::new(object.clone()))
        .set("some", 1, ChannelValue::new(Some(5_i64)))
        .set("none", 1, ChannelValue::new(None::<i64>));
    let t = s.get(&s.put(&s.thread("t"), c).await).await;
    assert_eq!(decoded!(t, "int", i64), -42);
    assert_eq!(decoded!(t, "big", i64), i64::MAX);
    assert_eq!(decoded!(t, "float", f64), 0.1);
    assert!(decoded!(t, "bool", bool));
    assert_eq!(decoded!(t, "text", String), "hello");
    assert_eq!(decoded!(t, "empty_text", String), "");
    assert_eq!(decoded!(t, "ints", Vec<i64>), [1, -2, 3]);
    assert_eq!(decoded!(t, "map", Map), map);
    assert_eq!(decoded!(t, "object", Value), object);
    assert_eq!(decoded!(t, "some", Option<i64>), Some(5));
    // A saver may store `None` as a null value or as no value; either reads back as `None`.
    let none = t.checkpoint.channel_values.get("none");
    let none = none.map(|v| v.decode::<Option<i64>>().expect("decode"));
    assert_eq!(none.flatten(), None);
}

/// A 10 KB value round-trips intact, as a channel value and as a write.
pub async fn large_value_round_trip(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let letter = |i: u32| char::from(b'a' + (i % 26) as u8);
    let text: String = (0..10_240).map(letter).collect();
    let line = |i: u32| format!("line {i:04} {}", "x".repeat(20));
    let lines: Vec<String> = (0..400).map(line).collect();
    let c = cp(0).set("text", 1, ChannelValue::new(text.clone()));
    let c = c.set("lines", 1, ChannelValue::new(lines.clone()));
    let saved = s.put(&s.thread("t"), c).await;
    s.write(&saved, "task", &[("text", json!(text))]).await;
    let tuple = s.get(&saved).await;
    assert_eq!(decoded!(tuple, "text", String), text);
    assert_eq!(decoded!(tuple, "lines", Vec<String>), lines);
    assert_eq!(writes(&tuple), [w("task", "text", json!(text))]);
}

/// Chinese (and other non-ASCII) text round-trips in thread ids, values and writes.
pub async fn unicode_values_and_thread_ids(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("线程-中文");
    let text = "你好，世界！🌏 Grüße";
    let map = Map::from([("问题".into(), vec!["答案".into(), "第二".into()])]);
    let c = cp(0).set("text", 1, ChannelValue::new(text.to_owned()));
    let saved = s.put(&config, c.set("map", 1, ChannelValue::new(map.clone()))).await;
    s.write(&saved, "任务", &[("text", json!("写入"))]).await;
    let tuple = s.get(&config).await;
    assert_eq!(tuple.config, saved);
    assert!(tuple.config.thread_id.ends_with("-线程-中文"));
    assert_eq!(decoded!(tuple, "text", String), text);
    assert_eq!(decoded!(tuple, "map", Map), map);
    assert_eq!(writes(&tuple), [w("任务", "text", json!("写入"))]);
    assert_eq!(s.listed(&config, all()).await, [saved]);
    s.delete(&config).await;
    assert!(s.find(&config).await.is_none());
}

/// `get_next_version` counts up from 1 and its versions sort as strings.
pub async fn next_version_increments(saver: &dyn DynCheckpointer) {
    let counter = |v: &str| v.split_once('.').map(|(n, _)| n.parse::<u64>());
    let v1 = saver.get_next_version(None);
    assert_eq!(counter(&v1), Some(Ok(1)), "{v1}");
    let v2 = saver.get_next_version(Some(&v1));
    assert_eq!(counter(&v2), Some(Ok(2)), "{v2}");
    assert!(v2 > v1);
    let v10 = saver.get_next_version(Some(&ver(9)));
    assert_eq!(counter(&v10), Some(Ok(10)), "{v10}");
    assert!(*v10 > *ver(9) && v10.starts_with(&format!("{:032}.", 10)));
}
