//! `#[derive(State)]` for [mnemograph-core](https://docs.rs/mnemograph-core): turns a struct whose fields are
//! a graph's channels into a `mnemograph_core::State`, plus the partial-update type its nodes return.
//!
//! mnemograph-core re-exports the derive with its `macros` feature (on by default); this crate is only
//! needed directly when that feature is off. Everything the derive writes can be written by hand:
//! see [the expansion](#what-the-derive-generates) below.
//!
//! # Example
//!
//! ```
//! use mnemograph_core::state::StateWrite;
//! use mnemograph_core::State as _;
//!
//! fn sum(total: &mut i64, n: i64) {
//!     *total += n;
//! }
//!
//! #[derive(mnemograph_macros::State, Clone, Default)]
//! struct Counter {
//!     #[reducer(append)]
//!     log: Vec<String>,
//!     #[reducer(sum)]
//!     total: i64,
//!     name: String,
//! }
//!
//! let mut state = Counter::default();
//! state.apply(vec![
//!     StateWrite::new(CounterUpdate::total(2).with_log(vec!["a".to_owned()])),
//!     StateWrite::new(CounterUpdate::total(3).with_name("c")),
//! ])?;
//! assert_eq!((state.total, state.log.len(), state.name.as_str()), (5, 1, "c"));
//! # Ok::<(), mnemograph_core::state::InvalidUpdate>(())
//! ```
//!
//! # Attributes
//!
//! | attribute | on | meaning |
//! |---|---|---|
//! | none | field | LangGraph's `LastValue`: at most one write per superstep, which replaces the value |
//! | `#[reducer(append)]` | field | `mnemograph_core::state::append`: extends a `Vec` |
//! | `#[reducer(add_messages)]` | field | `mnemograph_core::messages::add_messages`: LangGraph's message reducer |
//! | `#[reducer(path::to::f)]` | field | any function `fn(&mut T, T)` or `fn(&mut T, T) -> Result<(), E: Display>` |
//! | `#[state(update = "Name")]` | struct | names the update type (default: the struct's name + `Update`) |
//!
//! A bare `append` or `add_messages` always means mnemograph-core's; any other path is used as
//! written, so an in-scope `merge` or `crate::reducers::merge` both work (write `self::append` to
//! reach a function of your own called `append`).
//!
//! Field types must be `Clone + Debug + Serialize + DeserializeOwned + Send + Sync + 'static`; a
//! missing bound is reported on the field. The struct must have named fields (1 to 64, the size
//! of `mnemograph_core::state::FieldSet`) and no generics.
//!
//! # What the derive generates
//!
//! For the `Counter` above, the derive writes exactly this (modulo fully qualified paths and
//! doc comments). The update type and its builders take the struct's visibility.
//!
//! ```
//! // `__private` holds what generated code calls; it is hidden and may change between releases.
//! use mnemograph_core::__private::{last_value, reduce, ReducerOutput};
//! use mnemograph_core::state::{append, Field, FieldSet, InvalidUpdate, StateWrite};
//! use mnemograph_core::value::{ChannelValue, ValueError};
//! use mnemograph_core::{IntoNodeOutput, NodeOutput, State};
//!
//! # fn sum(total: &mut i64, n: i64) { *total += n; }
//! #[derive(Clone, Default)]
//! struct Counter {
//!     log: Vec<String>,
//!     total: i64,
//!     name: String,
//! }
//!
//! /// Update for [`Counter`]: every field optional; the `Some` fields are written.
//! #[derive(Clone, Default, Debug)]
//! struct CounterUpdate {
//!     log: Option<Vec<String>>,
//!     total: Option<i64>,
//!     name: Option<String>,
//! }
//!
//! impl CounterUpdate {
//!     /// An update that writes only the `log` field.
//!     #[must_use]
//!     fn log(value: impl Into<Vec<String>>) -> Self {
//!         Self::default().with_log(value)
//!     }
//!     /// Sets the `log` field of this update, replacing any value it held.
//!     #[must_use]
//!     fn with_log(mut self, value: impl Into<Vec<String>>) -> Self {
//!         self.log = Some(value.into());
//!         self
//!     }
//!     // ... `total`/`with_total` and `name`/`with_name` alike.
//! }
//!
//! impl State for Counter {
//!     type Update = CounterUpdate;
//!
//!     const FIELDS: &'static [Field] =
//!         &[Field::reducer("log"), Field::reducer("total"), Field::last_value("name")];
//!
//!     fn apply(
//!         &mut self,
//!         writes: Vec<StateWrite<CounterUpdate>>,
//!     ) -> Result<FieldSet, InvalidUpdate> {
//!         // Split the writes by field first, keeping task-path order within each field.
//!         let mut log_writes: Vec<(Vec<String>, bool)> = Vec::new();
//!         let mut total_writes: Vec<(i64, bool)> = Vec::new();
//!         let mut name_writes: Vec<String> = Vec::new();
//!         for mut write in writes {
//!             if let Some(value) = write.update.log.take() {
//!                 log_writes.push((value, write.overwrite));
//!             }
//!             if let Some(value) = write.update.total.take() {
//!                 total_writes.push((value, write.overwrite));
//!             }
//!             // An overwrite of a LastValue field is an ordinary write.
//!             if let Some(value) = write.update.name.take() {
//!                 name_writes.push(value);
//!             }
//!         }
//!         let mut written = FieldSet::EMPTY;
//!         // `ReducerOutput` accepts a reducer returning `()` or `Result<(), E: Display>`; by hand,
//!         // a `()` reducer can as well be called as `{ sum(slot, item); Ok(()) }`.
//!         if reduce("log", &mut self.log, log_writes, |slot, item| {
//!             ReducerOutput::into_reducer_result(append(slot, item))
//!         })? {
//!             written.insert(0);
//!         }
//!         if reduce("total", &mut self.total, total_writes, |slot, item| {
//!             ReducerOutput::into_reducer_result(sum(slot, item))
//!         })? {
//!             written.insert(1);
//!         }
//!         if last_value("name", &mut self.name, name_writes)? {
//!             written.insert(2);
//!         }
//!         Ok(written)
//!     }
//!
//!     fn written(update: &CounterUpdate) -> FieldSet {
//!         let mut set = FieldSet::EMPTY;
//!         if update.log.is_some() {
//!             set.insert(0);
//!         }
//!         if update.total.is_some() {
//!             set.insert(1);
//!         }
//!         if update.name.is_some() {
//!             set.insert(2);
//!         }
//!         set
//!     }
//!
//!     fn get_field(&self, index: usize) -> ChannelValue {
//!         match index {
//!             0 => ChannelValue::new(self.log.clone()),
//!             1 => ChannelValue::new(self.total),
//!             2 => ChannelValue::new(self.name.clone()),
//!             _ => ChannelValue::Null,
//!         }
//!     }
//!
//!     fn set_field(&mut self, index: usize, value: &ChannelValue) -> Result<(), ValueError> {
//!         match index {
//!             0 => self.log = value.decode()?,
//!             1 => self.total = value.decode()?,
//!             2 => self.name = value.decode()?,
//!             _ => {}
//!         }
//!         Ok(())
//!     }
//!
//!     fn update_values(update: &CounterUpdate) -> Vec<(usize, ChannelValue)> {
//!         let mut values = Vec::new();
//!         if let Some(value) = &update.log {
//!             values.push((0, ChannelValue::new(value.clone())));
//!         }
//!         if let Some(value) = &update.total {
//!             values.push((1, ChannelValue::new(*value)));
//!         }
//!         if let Some(value) = &update.name {
//!             values.push((2, ChannelValue::new(value.clone())));
//!         }
//!         values
//!     }
//!
//!     fn update_from_value(
//!         index: usize,
//!         value: &ChannelValue,
//!     ) -> Result<CounterUpdate, ValueError> {
//!         let mut update = CounterUpdate::default();
//!         match index {
//!             0 => update.log = Some(value.decode()?),
//!             1 => update.total = Some(value.decode()?),
//!             2 => update.name = Some(value.decode()?),
//!             _ => {}
//!         }
//!         Ok(update)
//!     }
//!
//!     fn update_from_values(values: &[(usize, ChannelValue)]) -> Result<CounterUpdate, ValueError> {
//!         let mut update = CounterUpdate::default();
//!         for (index, value) in values {
//!             match *index {
//!                 0 => update.log = Some(value.decode()?),
//!                 1 => update.total = Some(value.decode()?),
//!                 2 => update.name = Some(value.decode()?),
//!                 _ => {}
//!             }
//!         }
//!         Ok(update)
//!     }
//! }
//!
//! // Nodes may return the update, or `None` for "no change".
//! impl IntoNodeOutput<Counter> for CounterUpdate {
//!     fn into_node_output(self) -> NodeOutput<Counter> {
//!         NodeOutput::update(self)
//!     }
//! }
//!
//! impl IntoNodeOutput<Counter> for Option<CounterUpdate> {
//!     fn into_node_output(self) -> NodeOutput<Counter> {
//!         match self {
//!             Some(update) => NodeOutput::update(update),
//!             None => NodeOutput::empty(),
//!         }
//!     }
//! }
//!
//! let mut state = Counter::default();
//! state.apply(vec![StateWrite::new(CounterUpdate::log(vec!["a".to_owned()]))])?;
//! assert_eq!(state.log, ["a"]);
//! # Ok::<(), InvalidUpdate>(())
//! ```
//!
//! # Layout
//!
//! The macro entry point below only parses and reports errors. `input` validates the struct,
//! `attr` reads the `#[reducer]`/`#[state]` attributes, `update` writes the update type and
//! `expand` writes the `State` impl; each is unit-tested on its token output, and
//! `tests/ui/{pass,fail}` pins the compile errors.

mod attr;
mod expand;
mod input;
mod update;

/// Derives `mnemograph_core::State` and generates the struct's update type.
///
/// See the [crate documentation](crate) for the attributes and the generated code.
#[proc_macro_derive(State, attributes(reducer, state))]
pub fn derive_state(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input).unwrap_or_else(|err| err.to_compile_error()).into()
}
