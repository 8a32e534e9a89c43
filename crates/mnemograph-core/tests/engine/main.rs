//! Engine behaviours reproduced from LangGraph, one test each, named after the test in
//! LangGraph's own suite (`libs/langgraph/tests/test_pregel.py` and its neighbours).

mod support;

mod channels;
mod command_input;
mod control_flow;
mod determinism;
mod interrupts;
mod parallel;
mod persistence;
mod remembered;
mod saves;
mod streaming;
mod subgraphs;
mod update_state;
