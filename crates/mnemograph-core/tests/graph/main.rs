//! What `compile()` and the drawings say about a graph's shape: warnings about nodes no run
//! reaches and loops no run leaves, and drawings that survive any node name.

mod drawing;
mod subgraphs;
mod support;
mod warnings;
