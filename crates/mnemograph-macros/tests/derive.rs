//! `#[derive(State)]` against the real `mnemograph_core::State` contract.

use mnemograph_core::messages::Message;
use mnemograph_core::state::{FieldKind, InvalidUpdate, StateWrite};
use mnemograph_core::value::ChannelValue;
use mnemograph_core::{IntoNodeOutput, NodeOutput, State as _};
use serde::{Deserialize, Serialize};

/// A reducer returning nothing.
fn sum(total: &mut i64, n: i64) {
    *total += n;
}

/// A reducer that can fail.
fn checked_max(slot: &mut u32, value: u32) -> Result<(), String> {
    if value == u32::MAX {
        return Err(format!("{value} is reserved"));
    }
    *slot = (*slot).max(value);
    Ok(())
}

mod reducers {
    use super::Point;

    /// A reducer reached through a module path, named like a local of the generated code.
    pub(crate) fn written(left: &mut Vec<Point>, right: Vec<Point>) {
        left.extend(right.into_iter().rev());
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Point {
    x: i32,
    y: i32,
}

#[derive(mnemograph_macros::State, Debug, Clone, Default, PartialEq)]
struct AgentState {
    #[reducer(add_messages)]
    messages: Vec<Message>,
    #[reducer(append)]
    log: Vec<String>,
    #[reducer(sum)]
    total: i64,
    #[reducer(crate::checked_max)]
    peak: u32,
    #[reducer(reducers::written)]
    points: Vec<Point>,
    user_id: String,
}

fn write(update: AgentStateUpdate) -> StateWrite<AgentStateUpdate> {
    StateWrite::new(update)
}

fn overwrite(update: AgentStateUpdate) -> StateWrite<AgentStateUpdate> {
    StateWrite { update, overwrite: true }
}

#[test]
fn fields_are_listed_in_declaration_order() {
    let fields: Vec<_> = AgentState::FIELDS.iter().map(|f| (f.name, f.kind)).collect();
    assert_eq!(
        fields,
        [
            ("messages", FieldKind::Reducer),
            ("log", FieldKind::Reducer),
            ("total", FieldKind::Reducer),
            ("peak", FieldKind::Reducer),
            ("points", FieldKind::Reducer),
            ("user_id", FieldKind::LastValue),
        ]
    );
    assert_eq!(AgentState::field_index("user_id"), Some(5));
}

#[test]
fn one_write_sets_the_field_and_reports_it() {
    let mut state = AgentState::default();
    let written = state.apply(vec![write(AgentStateUpdate::user_id("u1"))]).unwrap();
    assert_eq!(state.user_id, "u1");
    assert_eq!(written.iter().collect::<Vec<_>>(), [5]);
    assert!(state.apply(vec![]).unwrap().is_empty());
    assert!(state.apply(vec![write(AgentStateUpdate::default())]).unwrap().is_empty());
}

#[test]
fn two_writes_to_a_last_value_field_are_rejected() {
    let mut state = AgentState::default();
    let err = state
        .apply(vec![
            write(AgentStateUpdate::user_id("a")),
            write(AgentStateUpdate::total(1)),
            write(AgentStateUpdate::user_id("b")),
        ])
        .unwrap_err();
    assert_eq!(err, InvalidUpdate::ConcurrentWrites { field: "user_id" });
}

#[test]
fn reducers_fold_writes_in_order() {
    let mut state = AgentState { log: vec!["start".into()], total: 10, ..AgentState::default() };
    let written = state
        .apply(vec![
            write(AgentStateUpdate::log(vec!["a".to_owned()]).with_total(1)),
            write(AgentStateUpdate::log(vec!["b".to_owned(), "c".to_owned()])),
            write(AgentStateUpdate::total(5).with_peak(7_u32)),
            write(AgentStateUpdate::peak(3_u32)),
        ])
        .unwrap();
    assert_eq!(state.log, ["start", "a", "b", "c"]);
    assert_eq!(state.total, 16);
    assert_eq!(state.peak, 7);
    assert_eq!(written.iter().collect::<Vec<_>>(), [1, 2, 3]);
}

#[test]
fn module_path_reducers_and_add_messages_are_called() {
    let mut state = AgentState::default();
    let points = vec![Point { x: 1, y: 1 }, Point { x: 2, y: 2 }];
    state
        .apply(vec![
            write(AgentStateUpdate::points(points.clone())),
            write(AgentStateUpdate::messages(vec![Message::human("hi")])),
            write(AgentStateUpdate::messages(vec![Message::ai("hello")])),
        ])
        .unwrap();
    assert_eq!(state.points, points.into_iter().rev().collect::<Vec<_>>());
    assert_eq!(state.messages.len(), 2);
    assert!(state.messages.iter().all(|m| m.id().is_some()), "add_messages assigns ids");
}

#[test]
fn reducer_errors_name_the_field() {
    let mut state = AgentState::default();
    let err = state.apply(vec![write(AgentStateUpdate::peak(u32::MAX))]).unwrap_err();
    assert_eq!(err, InvalidUpdate::Reducer { field: "peak", reason: format!("{} is reserved", u32::MAX) });
}

#[test]
fn overwrite_replaces_reducer_fields_and_is_a_plain_write_for_last_value() {
    let mut state = AgentState { log: vec!["old".into()], ..AgentState::default() };
    state
        .apply(vec![
            write(AgentStateUpdate::log(vec!["before".to_owned()])),
            overwrite(AgentStateUpdate::log(vec!["new".to_owned()]).with_user_id("u")),
            write(AgentStateUpdate::log(vec!["ignored".to_owned()])),
        ])
        .unwrap();
    assert_eq!(state.log, ["new"]);
    assert_eq!(state.user_id, "u");

    let err = state
        .apply(vec![overwrite(AgentStateUpdate::total(1)), overwrite(AgentStateUpdate::total(2))])
        .unwrap_err();
    assert_eq!(err, InvalidUpdate::ConcurrentOverwrites { field: "total" });
    let err = state
        .apply(vec![overwrite(AgentStateUpdate::user_id("a")), write(AgentStateUpdate::user_id("b"))])
        .unwrap_err();
    assert_eq!(err, InvalidUpdate::ConcurrentWrites { field: "user_id" });
}

#[test]
fn fields_round_trip_through_channel_values() {
    let source = AgentState {
        log: vec!["x".into()],
        total: 42,
        points: vec![Point { x: 3, y: 4 }],
        user_id: "u9".into(),
        ..AgentState::default()
    };
    let mut copy = AgentState::default();
    for index in 0..AgentState::FIELDS.len() {
        let value = source.get_field(index);
        copy.set_field(index, &value).unwrap();
    }
    assert_eq!(copy, source);

    assert_eq!(source.get_field(2).decode::<i64>().unwrap(), 42);
    assert!(source.get_field(AgentState::FIELDS.len()).is_null());
    copy.set_field(99, &ChannelValue::new(1_u8)).unwrap();
    assert_eq!(copy, source);

    copy.set_field(5, &ChannelValue::new("u10".to_owned())).unwrap();
    assert_eq!(copy.user_id, "u10");
    copy.set_field(4, &ChannelValue::encoded("json", br#"[{"x":7,"y":8}]"#.to_vec())).unwrap();
    assert_eq!(copy.points, [Point { x: 7, y: 8 }]);
    assert!(copy.set_field(2, &ChannelValue::new("not a number")).is_err());
}

#[test]
fn update_values_round_trip_through_update_from_value() {
    let update = AgentStateUpdate::default().with_user_id("u").with_total(3).with_log(vec![]);
    let values = AgentState::update_values(&update);
    assert_eq!(values.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [1, 2, 5]);
    assert_eq!(
        AgentState::written(&update).iter().collect::<Vec<_>>(),
        values.iter().map(|(i, _)| *i).collect::<Vec<_>>()
    );

    let mut rebuilt = AgentStateUpdate::default();
    for (index, value) in &values {
        let one = AgentState::update_from_value(*index, value).unwrap();
        assert_eq!(AgentState::written(&one).iter().collect::<Vec<_>>(), [*index]);
        rebuilt = merge(rebuilt, one);
    }
    assert_eq!(format!("{rebuilt:?}"), format!("{update:?}"));
    assert!(AgentState::update_from_value(2, &ChannelValue::new("x")).is_err());
    assert!(AgentState::written(&AgentState::update_from_value(64, &ChannelValue::Null).unwrap()).is_empty());
}

#[test]
fn update_from_values_rebuilds_a_several_field_update_in_one_call() {
    let update = AgentStateUpdate::default().with_user_id("u").with_total(3).with_log(vec![]);
    let values = AgentState::update_from_values(&AgentState::update_values(&update)).unwrap();
    assert_eq!(format!("{values:?}"), format!("{update:?}"));
    let later_wins = [(2, ChannelValue::new(1_i64)), (2, ChannelValue::new(5_i64))];
    assert_eq!(AgentState::update_from_values(&later_wins).unwrap().total, Some(5));
    assert!(AgentState::update_from_values(&[(2, ChannelValue::new("x"))]).is_err());
    assert!(AgentState::written(&AgentState::update_from_values(&[]).unwrap()).is_empty());
}

#[test]
fn the_provided_update_from_values_takes_one_field_and_refuses_more() {
    use mnemograph_core::messages::{MessagesState, MessagesStateUpdate};
    let one =
        MessagesState::update_from_values(&[(0, ChannelValue::new(vec![Message::human("hi")]))]).unwrap();
    assert_eq!(one.messages.map(|m| m.len()), Some(1));
    let two = [(0, ChannelValue::new(Vec::<Message>::new())), (0, ChannelValue::new(Vec::<Message>::new()))];
    assert!(MessagesState::update_from_values(&two).is_err());
    let none: MessagesStateUpdate = MessagesState::update_from_values(&[]).unwrap();
    assert!(none.messages.is_none());
}

/// Combines two updates field by field, the later one winning.
fn merge(a: AgentStateUpdate, b: AgentStateUpdate) -> AgentStateUpdate {
    AgentStateUpdate {
        messages: b.messages.or(a.messages),
        log: b.log.or(a.log),
        total: b.total.or(a.total),
        peak: b.peak.or(a.peak),
        points: b.points.or(a.points),
        user_id: b.user_id.or(a.user_id),
    }
}

#[test]
fn builders_write_only_their_field() {
    let update = AgentStateUpdate::total(1);
    assert_eq!(update.total, Some(1));
    assert!(update.log.is_none() && update.user_id.is_none());

    let update = update.with_total(2).with_user_id("me").with_log(vec!["l".to_owned()]);
    assert_eq!(update.total, Some(2));
    assert_eq!(update.user_id.as_deref(), Some("me"));
    assert_eq!(update.log, Some(vec!["l".to_owned()]));
    assert_eq!(AgentState::written(&update).iter().collect::<Vec<_>>(), [1, 2, 5]);
}

#[test]
fn updates_are_node_outputs() {
    let _: NodeOutput<AgentState> = AgentStateUpdate::total(1).into_node_output();
    let _: NodeOutput<AgentState> = Some(AgentStateUpdate::total(1)).into_node_output();
    let _: NodeOutput<AgentState> = None::<AgentStateUpdate>.into_node_output();
}
