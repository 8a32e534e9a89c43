//! The `add_messages` reducer, LangGraph's `langgraph.graph.message.add_messages`.

use std::collections::{HashMap, HashSet};

use super::kind::MessageType;
use super::message::Message;

/// Why [`add_messages`] refused an update.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MessagesError {
    /// A [`Message::remove`] named an id that is neither in the state nor earlier in
    /// the same update. LangGraph raises `ValueError` here.
    #[error("attempting to delete a message with an id that doesn't exist ('{id}')")]
    RemoveMissing {
        /// The id the remove message asked for.
        id: String,
    },
}

/// What to do with one message of `right`, decided before anything is mutated.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Overwrite the message at this position of the merged list.
    Replace(usize),
    /// Push it at the end.
    Append,
    /// A remove message: it only marks its id and is not itself kept.
    Drop,
}

/// Merges `right` into `left` exactly like LangGraph's `add_messages` reducer.
///
/// 1. Every message without an id, in `left` and in `right`, gets a fresh UUID v4.
/// 2. If `right` contains [`Message::remove_all`], the state becomes everything after
///    the **last** such marker, verbatim: `left` and the earlier part of `right` are
///    dropped, and the tail is neither de-duplicated nor checked for removals (a
///    [`Message::remove`] after the marker ends up in the state as is).
/// 3. Otherwise, in order, each message of `right`:
///    * with an id already present (in `left` or appended earlier from `right`) replaces
///      that message in place, or, if it is a remove message, marks the id for removal;
///      a later normal message with a marked id un-marks it;
///    * with a new id is appended, unless it is a remove message, which is an error.
///
///    Finally every marked id is filtered out.
///
/// Runs in O(`left.len()` + `right.len()`) using a map from id to position.
///
/// # Errors
///
/// [`MessagesError::RemoveMissing`] when a remove message names an id that exists
/// neither in `left` nor earlier in `right`. `left` is then left unchanged.
///
/// # Example
///
/// ```
/// # use mnemograph_checkpoint::messages::{add_messages, Message};
/// let mut state = vec![Message::human("hi").with_id("1"), Message::ai("hello").with_id("2")];
/// add_messages(
///     &mut state,
///     vec![Message::human("hi!").with_id("1"), Message::remove("2"), Message::ai("yo")],
/// )?;
/// let texts: Vec<String> = state.iter().map(Message::text).collect();
/// assert_eq!(texts, ["hi!", "yo"]);
/// assert!(state[1].id().is_some());
///
/// // `[remove_all, kept..]` replaces the whole history.
/// add_messages(&mut state, vec![Message::remove_all(), Message::system("summary")])?;
/// assert_eq!(state.len(), 1);
/// # Ok::<(), mnemograph_checkpoint::messages::MessagesError>(())
/// ```
pub fn add_messages(left: &mut Vec<Message>, mut right: Vec<Message>) -> Result<(), MessagesError> {
    // Fast path, the common chat turn: new messages without ids (and no removals). A fresh uuid4
    // cannot match anything, so they are appended without indexing `left` — which keeps a turn
    // O(new messages) instead of O(history).
    if right.iter().all(|m| m.id().is_none() && m.kind() != super::MessageType::Remove)
        && left.iter().all(|m| m.id().is_some())
    {
        for mut msg in right {
            ensure_id(&mut msg);
            left.push(msg);
        }
        return Ok(());
    }
    let mut remove_all = None;
    for (idx, msg) in right.iter_mut().enumerate() {
        ensure_id(msg);
        if msg.is_remove_all() {
            remove_all = Some(idx);
        }
    }
    if let Some(idx) = remove_all {
        // LangGraph returns `right[idx + 1:]` untouched (PR langchain-ai/langgraph#4117):
        // no dedup and no removal processing. `left` would get ids too, but it is dropped.
        right.drain(..=idx);
        *left = right;
        return Ok(());
    }

    // Decide everything first: the only failure is a remove of an unknown id, and
    // finding it before writing keeps `left` unchanged on error.
    let (steps, removed) = plan(left, &right)?;
    for (msg, step) in right.into_iter().zip(steps) {
        match step {
            Step::Replace(pos) => left[pos] = msg,
            Step::Append => left.push(msg),
            Step::Drop => {}
        }
    }
    // Id-less messages from `left` can never match an id in `right` (their ids would be
    // fresh), so assigning them here, after the merge, gives LangGraph's result.
    left.iter_mut().for_each(ensure_id);
    if !removed.is_empty() {
        // By id, not by position: LangGraph drops every message carrying a marked id,
        // including duplicates that were already in `left`.
        left.retain(|msg| msg.id().is_none_or(|id| !removed.contains(id)));
    }
    Ok(())
}

/// Computes one [`Step`] per message of `right` and the ids marked for removal at the
/// end, without mutating anything.
fn plan(left: &[Message], right: &[Message]) -> Result<(Vec<Step>, HashSet<String>), MessagesError> {
    // Like Python's `{m.id: i for i, m in enumerate(left)}`, a duplicate id in `left`
    // maps to its last position.
    let mut positions: HashMap<&str, usize> = HashMap::with_capacity(left.len() + right.len());
    for (pos, msg) in left.iter().enumerate() {
        if let Some(id) = msg.id() {
            positions.insert(id, pos);
        }
    }
    let mut marked: HashSet<&str> = HashSet::new();
    let mut steps = Vec::with_capacity(right.len());
    let mut len = left.len();
    for msg in right {
        let id = msg.id().expect("add_messages assigns ids to `right` before planning");
        let is_remove = msg.kind() == MessageType::Remove;
        let step = match (positions.get(id), is_remove) {
            (Some(_), true) => {
                marked.insert(id);
                Step::Drop
            }
            (Some(&pos), false) => {
                marked.remove(id);
                Step::Replace(pos)
            }
            (None, true) => return Err(MessagesError::RemoveMissing { id: id.to_owned() }),
            (None, false) => {
                positions.insert(id, len);
                len += 1;
                Step::Append
            }
        };
        steps.push(step);
    }
    let removed = marked.into_iter().map(str::to_owned).collect();
    Ok((steps, removed))
}

/// Gives a message without an id a fresh UUID v4, as LangGraph does with
/// `str(uuid.uuid4())`.
fn ensure_id(msg: &mut Message) {
    if msg.id().is_none() {
        msg.set_id(uuid::Uuid::new_v4().to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::REMOVE_ALL_MESSAGES;
    use proptest::prelude::*;

    fn human(content: &str, id: &str) -> Message {
        Message::human(content).with_id(id)
    }

    fn ai(content: &str, id: &str) -> Message {
        Message::ai(content).with_id(id)
    }

    fn merged(mut left: Vec<Message>, right: Vec<Message>) -> Vec<Message> {
        add_messages(&mut left, right).unwrap();
        left
    }

    fn texts(messages: &[Message]) -> Vec<String> {
        messages.iter().map(Message::text).collect()
    }

    fn ids(messages: &[Message]) -> Vec<&str> {
        messages.iter().map(|m| m.id().unwrap()).collect()
    }

    fn is_uuid4(id: &str) -> bool {
        uuid::Uuid::parse_str(id).is_ok_and(|u| u.get_version_num() == 4)
            && id == uuid::Uuid::parse_str(id).unwrap().to_string()
    }

    #[test]
    fn test_add_single_message() {
        let result = merged(vec![human("Hello", "1")], vec![ai("Hi there!", "2")]);
        assert_eq!(result, [human("Hello", "1"), ai("Hi there!", "2")]);
    }

    #[test]
    fn test_add_multiple_messages() {
        let right = vec![ai("Hi there!", "2"), Message::system("System message").with_id("3")];
        let result = merged(vec![human("Hello", "1")], right);
        let expected =
            [human("Hello", "1"), ai("Hi there!", "2"), Message::system("System message").with_id("3")];
        assert_eq!(result, expected);
    }

    #[test]
    fn test_update_existing_message() {
        let result = merged(vec![human("Hello", "1")], vec![human("Hello again", "1")]);
        assert_eq!(result, [human("Hello again", "1")]);
    }

    #[test]
    fn replace_in_place_keeps_position() {
        let left = vec![human("a", "1"), ai("b", "2"), human("c", "3")];
        let result = merged(left, vec![ai("B", "2"), human("d", "4")]);
        assert_eq!(ids(&result), ["1", "2", "3", "4"]);
        assert_eq!(texts(&result), ["a", "B", "c", "d"]);
    }

    #[test]
    fn test_missing_ids() {
        let result = merged(vec![Message::human("Hello")], vec![Message::ai("Hi there!")]);
        assert_eq!(result.len(), 2);
        assert!(result.iter().all(|m| m.id().is_some_and(is_uuid4)), "{result:?}");
        assert_ne!(result[0].id(), result[1].id());
    }

    #[test]
    fn test_duplicates_in_input() {
        let result = merged(vec![], vec![ai("Hi there!", "1"), ai("Hi there again!", "1")]);
        assert_eq!(result, [ai("Hi there again!", "1")]);
    }

    #[test]
    fn test_duplicates_in_input_with_remove() {
        let right = vec![Message::remove("1"), ai("Hi there!", "1"), ai("Hi there again!", "1")];
        let result = merged(vec![ai("Hello!", "1")], right);
        assert_eq!(result, [ai("Hi there again!", "1")]);
    }

    #[test]
    fn remove_then_same_id_re_adds() {
        let result = merged(vec![human("a", "1")], vec![Message::remove("1"), human("again", "1")]);
        assert_eq!(result, [human("again", "1")]);
    }

    #[test]
    fn test_remove_message() {
        let left = vec![human("Hello", "1"), ai("Hi there!", "2")];
        assert_eq!(merged(left, vec![Message::remove("2")]), [human("Hello", "1")]);
    }

    #[test]
    fn test_duplicate_remove_message() {
        let left = vec![human("Hello", "1"), ai("Hi there!", "2")];
        let right = vec![Message::remove("2"), Message::remove("2")];
        assert_eq!(merged(left, right), [human("Hello", "1")]);
    }

    #[test]
    fn test_remove_nonexistent_message() {
        let mut left = vec![human("Hello", "1")];
        let err = add_messages(&mut left, vec![Message::remove("2")]).unwrap_err();
        assert_eq!(err, MessagesError::RemoveMissing { id: "2".to_owned() });
        assert_eq!(left, [human("Hello", "1")]);
    }

    #[test]
    fn remove_missing_error_message() {
        let err = MessagesError::RemoveMissing { id: "zz".to_owned() };
        assert_eq!(err.to_string(), "attempting to delete a message with an id that doesn't exist ('zz')");
    }

    #[test]
    fn failed_update_leaves_left_unchanged() {
        let original = vec![human("a", "1"), Message::ai("no id"), ai("b", "2")];
        let mut left = original.clone();
        let right = vec![human("A", "1"), Message::remove("2"), human("c", "3"), Message::remove("zz")];
        let err = add_messages(&mut left, right).unwrap_err();
        assert_eq!(err, MessagesError::RemoveMissing { id: "zz".to_owned() });
        assert_eq!(left, original);
        assert_eq!(left[1].id(), None);
    }

    #[test]
    fn test_mixed_operations() {
        let left = vec![human("Hello", "1"), ai("Hi there!", "2")];
        let right = vec![
            human("Updated hello", "1"),
            Message::remove("2"),
            Message::system("New message").with_id("3"),
        ];
        let expected = [human("Updated hello", "1"), Message::system("New message").with_id("3")];
        assert_eq!(merged(left, right), expected);
    }

    #[test]
    fn test_empty_inputs() {
        assert_eq!(merged(vec![], vec![]), []);
        assert_eq!(merged(vec![], vec![human("Hello", "1")]), [human("Hello", "1")]);
        assert_eq!(merged(vec![human("Hello", "1")], vec![]), [human("Hello", "1")]);
    }

    #[test]
    fn test_delete_all() {
        let left = vec![human("Hello", "1"), ai("Hi there!", "2")];
        assert_eq!(merged(left, vec![Message::remove("1"), Message::remove("2")]), []);
    }

    #[test]
    fn test_remove_all_messages() {
        // Simple removal.
        let left = || vec![Message::human("Hello"), Message::ai("Hi there!")];
        assert_eq!(merged(left(), vec![Message::remove_all()]), []);

        // Removal and update, i.e. overwriting.
        let result = merged(left(), vec![Message::remove_all(), Message::human("Updated hello")]);
        assert_eq!(texts(&result), ["Updated hello"]);
        assert!(result[0].id().is_some_and(is_uuid4));

        // Messages before the marker in the same update are dropped too.
        let right =
            vec![Message::human("Updated hello"), Message::remove_all(), Message::human("Updated hi there")];
        let result = merged(left(), right);
        assert_eq!(texts(&result), ["Updated hi there"]);
        assert_eq!(result[0].kind(), MessageType::Human);
    }

    #[test]
    fn last_remove_all_wins() {
        let right = vec![
            human("a", "1"),
            Message::remove_all(),
            human("b", "2"),
            Message::remove_all(),
            human("c", "3"),
        ];
        assert_eq!(merged(vec![human("x", "0")], right), [human("c", "3")]);
    }

    #[test]
    fn remove_all_tail_is_verbatim() {
        // No dedup after the marker: both messages with id 1 are kept.
        let right = vec![Message::remove_all(), human("a", "1"), human("b", "1")];
        assert_eq!(merged(vec![], right), [human("a", "1"), human("b", "1")]);

        // A remove after the marker is not processed, does not error and stays in state.
        let right = vec![Message::remove_all(), human("a", "1"), Message::remove("zz")];
        let result = merged(vec![human("x", "9")], right);
        assert_eq!(result, [human("a", "1"), Message::remove("zz")]);

        // A marker as the last item empties the state.
        assert_eq!(merged(vec![human("x", "9")], vec![human("y", "8"), Message::remove_all()]), []);
    }

    #[test]
    fn remove_all_id_on_a_normal_message_is_just_an_id() {
        let result = merged(vec![human("x", "9")], vec![human("odd", REMOVE_ALL_MESSAGES)]);
        assert_eq!(ids(&result), ["9", REMOVE_ALL_MESSAGES]);
    }

    #[test]
    fn add_then_remove_in_same_update() {
        let right = vec![human("five", "5"), Message::remove("5")];
        assert_eq!(merged(vec![human("a", "1")], right), [human("a", "1")]);
    }

    #[test]
    fn remove_then_replace_then_remove() {
        let right = vec![Message::remove("1"), human("b", "1"), Message::remove("1")];
        assert_eq!(merged(vec![human("a", "1"), human("z", "2")], right), [human("z", "2")]);
    }

    #[test]
    fn duplicate_ids_in_left_follow_python() {
        // Replacement hits the last occurrence; removal drops every occurrence.
        let left = vec![human("a", "1"), human("b", "1"), human("c", "2")];
        assert_eq!(texts(&merged(left.clone(), vec![human("B", "1")])), ["a", "B", "c"]);
        assert_eq!(merged(left, vec![Message::remove("1")]), [human("c", "2")]);
    }

    #[test]
    fn ids_assigned_to_id_less_left_messages() {
        let result = merged(vec![Message::human("no id"), human("a", "1")], vec![human("A", "1")]);
        assert!(result[0].id().is_some_and(is_uuid4));
        assert_eq!(texts(&result), ["no id", "A"]);
    }

    #[test]
    fn large_update_is_linear() {
        // 200k messages finish quickly only with the id index; a quadratic merge would not.
        let left: Vec<Message> = (0..100_000).map(|i| human("l", &i.to_string())).collect();
        let right: Vec<Message> = (50_000..150_000).map(|i| human("r", &i.to_string())).collect();
        let result = merged(left, right);
        assert_eq!(result.len(), 150_000);
        assert_eq!(result[49_999].text(), "l");
        assert_eq!(result[50_000].text(), "r");
    }

    /// A direct transcription of LangGraph's Python loop, with linear searches.
    fn reference(left: &[Message], right: &[Message]) -> Result<Vec<Message>, MessagesError> {
        if let Some(idx) = right.iter().rposition(Message::is_remove_all) {
            return Ok(right[idx + 1..].to_vec());
        }
        let mut merged = left.to_vec();
        let mut to_remove: Vec<String> = Vec::new();
        for msg in right {
            let id = msg.id().unwrap().to_owned();
            match merged.iter().rposition(|m| m.id() == Some(&id)) {
                Some(_) if msg.kind() == MessageType::Remove => to_remove.push(id),
                Some(pos) => {
                    to_remove.retain(|r| *r != id);
                    merged[pos] = msg.clone();
                }
                None if msg.kind() == MessageType::Remove => {
                    return Err(MessagesError::RemoveMissing { id });
                }
                None => merged.push(msg.clone()),
            }
        }
        merged.retain(|m| !to_remove.iter().any(|r| Some(r.as_str()) == m.id()));
        Ok(merged)
    }

    /// One message of a generated update: `0..=2` normal kinds, `3` remove, `4` remove-all.
    fn arb_message(ids: &'static [&'static str], removes: bool) -> impl Strategy<Value = Message> {
        let kinds = if removes { 0..5u8 } else { 0..3u8 };
        (kinds, prop::sample::select(ids), "[a-c]{0,2}").prop_map(|(kind, id, text)| match kind {
            0 => Message::human(text).with_id(id),
            1 => Message::ai(text).with_id(id),
            2 => Message::tool(text, "c").with_id(id),
            3 => Message::remove(id),
            _ => Message::remove_all(),
        })
    }

    /// A state as the reducer leaves it: distinct ids, some of them missing.
    fn arb_state() -> impl Strategy<Value = Vec<Message>> {
        prop::collection::vec((any::<bool>(), "[a-c]{0,2}"), 0..8).prop_map(|items| {
            items
                .into_iter()
                .enumerate()
                .map(|(i, (has_id, text))| {
                    let msg = Message::human(text);
                    if has_id {
                        msg.with_id(IDS[i])
                    } else {
                        msg
                    }
                })
                .collect()
        })
    }

    const IDS: &[&str] = &["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"];

    proptest! {
        #[test]
        fn prop_length_ids_and_order(left in arb_state(), right in prop::collection::vec(arb_message(IDS, false), 0..10)) {
            let left_ids: Vec<Option<&str>> = left.iter().map(Message::id).collect();
            let mut new_ids = HashSet::new();
            for msg in &right {
                let id = msg.id().unwrap();
                if !left_ids.contains(&Some(id)) {
                    new_ids.insert(id);
                }
            }
            let result = merged(left.clone(), right.clone());
            prop_assert_eq!(result.len(), left.len() + new_ids.len());

            let unique: HashSet<&str> = result.iter().map(|m| m.id().unwrap()).collect();
            prop_assert_eq!(unique.len(), result.len());

            // `left` keeps its slots in order; each slot holds the last update for its id.
            for (slot, old) in result.iter().zip(&left) {
                match old.id() {
                    Some(id) => {
                        prop_assert_eq!(slot.id(), Some(id));
                        let last = right.iter().rev().find(|m| m.id() == Some(id)).unwrap_or(old);
                        prop_assert_eq!(slot, last);
                    }
                    None => prop_assert_eq!(slot.content(), old.content()),
                }
            }
        }

        #[test]
        fn prop_same_update_twice_is_idempotent(left in arb_state(), right in prop::collection::vec(arb_message(IDS, false), 0..10)) {
            let once = merged(left, right.clone());
            let twice = merged(once.clone(), right);
            prop_assert_eq!(once, twice);
        }

        #[test]
        fn prop_matches_python_transcription(
            left in prop::collection::vec(arb_message(&IDS[..6], false), 0..8),
            right in prop::collection::vec(arb_message(IDS, true), 0..10),
        ) {
            let expected = reference(&left, &right);
            let mut actual = left.clone();
            let outcome = add_messages(&mut actual, right);
            match expected {
                Ok(expected) => {
                    prop_assert_eq!(outcome, Ok(()));
                    prop_assert_eq!(actual, expected);
                }
                Err(err) => {
                    prop_assert_eq!(outcome, Err(err));
                    prop_assert_eq!(actual, left);
                }
            }
        }
    }
}
