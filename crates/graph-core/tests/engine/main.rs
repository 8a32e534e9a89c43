//! Engine behaviours reproduced from LangGraph, one test each, named after the LangGraph test
//! (../shared/reference/langgraph.md §7).

mod support;

mod channels;
mod control_flow;
mod determinism;
mod interrupts;
mod persistence;
mod remembered;
mod saves;
mod streaming;
mod subgraphs;
mod update_state;
