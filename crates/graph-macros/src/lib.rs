//! stub
mod attr;
mod expand;
mod input;
mod update;

/// Derives `graph_core::State`.
#[proc_macro_derive(State, attributes(reducer, state))]
pub fn derive_state(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::derive(&input).unwrap_or_else(|err| err.to_compile_error()).into()
}
