use mnemograph_core::prelude::*;
use mnemograph_core::state::InvalidUpdate;

use crate::support::*;

/// Two parallel nodes writing one LastValue key in the same superstep is an error naming the key.
#[tokio::test]
async fn test_invoke_two_processes_two_in_two_out_invalid() {
    let g = StateGraph::<S>::new()
        .add_node("a", |_s: S| async { Ok::<_, Error>(SUpdate::hello("from a")) })
        .add_node("b", |_s: S| async { Ok::<_, Error>(SUpdate::hello("from b")) })
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
        .unwrap();
    let err = g.invoke(SUpdate::default(), &RunConfig::new()).await.unwrap_err();
    match &err {
        Error::InvalidUpdate { nodes, source } => {
            assert_eq!(source, &InvalidUpdate::ConcurrentWrites { field: "hello" });
            assert_eq!(nodes, "\"a\" and \"b\"");
        }
        other => panic!("unexpected {other:?}"),
    }
    let chain = format!("{err}: {}", std::error::Error::source(&err).unwrap());
    assert!(chain.contains("at key `hello`"), "{chain}");
}

/// A single Overwrite replaces a reducer value; two Overwrites in one step are an error.
#[tokio::test]
async fn test_overwrite_parallel_error() {
    let single = StateGraph::<S>::new()
        .add_node("a", |_s: S| async {
            Ok::<_, Error>(Command::new().overwrite(SUpdate::log(vec!["only".to_owned()])))
        })
        .add_node("b", logger("b"))
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
        .unwrap();
    let out = single.invoke(SUpdate::log(vec!["input".to_owned()]), &RunConfig::new()).await.unwrap();
    // In task-path order b's append follows a's Overwrite, and LangGraph ignores writes that follow
    // an Overwrite in the same superstep.
    assert_eq!(out.log, ["only"]);

    let double = StateGraph::<S>::new()
        .add_node("a", |_s: S| async {
            Ok::<_, Error>(Command::new().overwrite(SUpdate::log(vec!["a".to_owned()])))
        })
        .add_node("b", |_s: S| async {
            Ok::<_, Error>(Command::new().overwrite(SUpdate::log(vec!["b".to_owned()])))
        })
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
        .unwrap();
    let err = double.invoke(SUpdate::default(), &RunConfig::new()).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidUpdate { source: InvalidUpdate::ConcurrentOverwrites { field: "log" }, .. }
        ),
        "{err:?}"
    );
}

/// Several writes to one reducer key from one node apply in order.
#[tokio::test]
async fn test_multiple_writes_same_channel_from_same_node() {
    let g = StateGraph::<S>::new()
        .add_node("one", |_s: S| async {
            Ok::<_, Error>(
                Command::new()
                    .update(SUpdate::log(vec!["one.0".to_owned()]))
                    .update(SUpdate::log(vec!["one.1".to_owned()])),
            )
        })
        .add_edge(START, "one")
        .compile()
        .unwrap();
    let out = g.invoke(SUpdate::default(), &RunConfig::new()).await.unwrap();
    assert_eq!(out.log, ["one.0", "one.1"]);
    let mut stream = g.stream(Some(SUpdate::default()), &RunConfig::new()).modes(StreamMode::Updates);
    let mut seen = Vec::new();
    while let Some(ev) = stream.next().await {
        if let StreamEvent::Updates { node, updates } = ev.unwrap() {
            seen.push((node, updates.len()));
        }
    }
    assert_eq!(seen, [("one".to_owned(), 2)]);
}

/// A custom reducer folds writes of parallel nodes in task-path order, whatever order they finish in.
#[tokio::test]
async fn test_writes_applied_in_task_path_order_not_completion_order() {
    let g = StateGraph::<S>::new()
        .add_node("slow", |_s: S| async {
            tokio::time::sleep(std::time::Duration::from_millis(30)).await;
            Ok::<_, Error>(SUpdate::log(vec!["slow".to_owned()]).with_total(1))
        })
        .add_node("fast", |_s: S| async {
            Ok::<_, Error>(SUpdate::log(vec!["fast".to_owned()]).with_total(2))
        })
        .add_edge(START, "slow")
        .add_edge(START, "fast")
        .compile()
        .unwrap();
    for _ in 0..3 {
        let out = g.invoke(SUpdate::default(), &RunConfig::new()).await.unwrap();
        // "~__pregel_pull, fast" < "~__pregel_pull, slow": fast's write always comes first.
        assert_eq!(out.log, ["fast", "slow"]);
        assert_eq!(out.total, 3);
    }
}

/// The graph input goes through the reducers before the first node (`test_reducer_before_first_node`).
#[tokio::test]
async fn test_reducer_before_first_node() {
    #[derive(State, Clone, Default, Debug)]
    struct M {
        #[reducer(add_messages)]
        messages: Vec<Message>,
    }
    let g = StateGraph::<M>::new()
        .add_node("check", |s: M| async move {
            assert!(s.messages.iter().all(|m| m.id().is_some()), "ids are assigned before the first node");
            Ok::<_, Error>(MUpdate::messages(vec![Message::ai("ok")]))
        })
        .add_edge(START, "check")
        .compile()
        .unwrap();
    let out = g.invoke(MUpdate::messages(vec![Message::human("hi")]), &RunConfig::new()).await.unwrap();
    assert_eq!(out.messages.len(), 2);
    assert_eq!(out.messages[0].text(), "hi");
}

/// A reducer that rejects a write (removing a message id that does not exist) fails the run with
/// the field named.
#[tokio::test]
async fn test_remove_nonexistent_message_fails_the_step() {
    #[derive(State, Clone, Default, Debug)]
    struct M {
        #[reducer(add_messages)]
        messages: Vec<Message>,
    }
    let g = StateGraph::<M>::new()
        .add_node("rm", |_s: M| async { Ok::<_, Error>(MUpdate::messages(vec![Message::remove("zz")])) })
        .add_edge(START, "rm")
        .compile()
        .unwrap();
    let err = g.invoke(MUpdate::messages(vec![Message::human("hi")]), &RunConfig::new()).await.unwrap_err();
    assert!(
        matches!(&err, Error::InvalidUpdate { source: InvalidUpdate::Reducer { field: "messages", .. }, .. }),
        "{err:?}"
    );
}
