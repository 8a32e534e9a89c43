//! Parsing of the derive's two helper attributes: `#[reducer(path)]` on a field and
//! `#[state(update = "Name")]` on the struct.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::parse::ParseStream;
use syn::{Attribute, Error, ExprPath, Ident, LitStr, Meta, Result};

/// What a malformed `#[reducer]` is told to look like.
const REDUCER_USAGE: &str = "expected one reducer function: `#[reducer(append)]`, \
     `#[reducer(add_messages)]` or `#[reducer(path::to::merge)]`";

/// How a field combines the writes of one superstep.
pub(crate) enum Kind {
    /// No `#[reducer]`: LangGraph's `LastValue`.
    LastValue,
    /// `#[reducer(path)]`: the path as the user wrote it.
    Reducer(ExprPath),
}

impl Kind {
    /// Reads a field's attributes.
    ///
    /// # Errors
    /// A malformed or repeated `#[reducer]`, or a `#[state]` on a field.
    pub(crate) fn from_field_attrs(attrs: &[Attribute]) -> Result<Self> {
        let mut kind = Self::LastValue;
        for attr in attrs {
            if attr.path().is_ident("state") {
                return Err(Error::new_spanned(attr, "`#[state(...)]` goes on the struct, not on a field"));
            }
            if !attr.path().is_ident("reducer") {
                continue;
            }
            if matches!(kind, Self::Reducer(_)) {
                return Err(Error::new_spanned(attr, "duplicate `#[reducer(...)]`: a field has one reducer"));
            }
            kind = Self::Reducer(parse_reducer(attr)?);
        }
        Ok(kind)
    }
}

/// Parses the single path inside `#[reducer(...)]`.
fn parse_reducer(attr: &Attribute) -> Result<ExprPath> {
    let Meta::List(list) = &attr.meta else {
        return Err(Error::new_spanned(attr, REDUCER_USAGE));
    };
    if list.tokens.is_empty() {
        return Err(Error::new_spanned(attr, REDUCER_USAGE));
    }
    list.parse_args_with(|input: ParseStream<'_>| {
        // An `ExprPath` rather than a `Path`, so turbofish (`merge::<T>`) and qualified paths
        // (`<T as Merge>::merge`) are accepted as written.
        let path = input.parse::<ExprPath>().map_err(|e| Error::new(e.span(), REDUCER_USAGE))?;
        if let Some(attr) = path.attrs.first() {
            return Err(Error::new_spanned(attr, REDUCER_USAGE));
        }
        if !input.is_empty() {
            return Err(input.error(REDUCER_USAGE));
        }
        Ok(path)
    })
}

/// The reducer path to call: a bare `append` or `add_messages` means mnemograph-core's; anything else
/// is used as written, so a user's `crate::merge` or an in-scope `merge` both work.
pub(crate) fn resolve_reducer(path: &ExprPath) -> TokenStream {
    let bare = path.qself.is_none() && path.path.leading_colon.is_none();
    if let (true, Some(segment), 1) = (bare, path.path.segments.first(), path.path.segments.len()) {
        let module = match segment.ident.to_string().as_str() {
            "append" => Some(quote!(state)),
            "add_messages" => Some(quote!(messages)),
            _ => None,
        };
        if let Some(module) = module {
            // Spanned at the user's word, so a type mismatch points at the attribute.
            return quote_spanned!(segment.ident.span()=> ::mnemograph_core::#module::#segment);
        }
    }
    quote!(#path)
}

/// The reducer path as written, for doc comments (`crate::sum`, not `crate :: sum`).
pub(crate) fn reducer_display(path: &ExprPath) -> String {
    let text = quote!(#path).to_string();
    if path.qself.is_some() {
        // `<T as Trait>::f` needs its spaces.
        text
    } else {
        text.replace(' ', "")
    }
}

/// Reads `#[state(update = "Name")]` off the struct: the name of the update type, if given.
///
/// # Errors
/// An unknown or repeated argument, a name that is not an identifier, or a `#[reducer]` on the
/// struct.
pub(crate) fn update_name(attrs: &[Attribute]) -> Result<Option<Ident>> {
    let mut update: Option<Ident> = None;
    for attr in attrs {
        if attr.path().is_ident("reducer") {
            return Err(Error::new_spanned(attr, "`#[reducer(...)]` goes on a field, not on the struct"));
        }
        if !attr.path().is_ident("state") {
            continue;
        }
        attr.parse_nested_meta(|meta| {
            if !meta.path.is_ident("update") {
                let path = &meta.path;
                let name = quote!(#path).to_string().replace(' ', "");
                return Err(
                    meta.error(format!("unknown `state` argument `{name}`; expected `update = \"Name\"`"))
                );
            }
            if update.is_some() {
                return Err(meta.error("duplicate `update` argument"));
            }
            let lit: LitStr = meta.value()?.parse()?;
            let ident = lit
                .parse::<Ident>()
                .map_err(|_| Error::new(lit.span(), "`update` must name a type: `update = \"MyUpdate\"`"))?;
            update = Some(ident);
            Ok(())
        })?;
    }
    Ok(update)
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn field_attrs(field: &syn::Field) -> Result<Kind> {
        Kind::from_field_attrs(&field.attrs)
    }

    fn reducer_of(field: &syn::Field) -> String {
        match field_attrs(field) {
            Ok(Kind::Reducer(path)) => resolve_reducer(&path).to_string(),
            Ok(Kind::LastValue) => "last value".to_owned(),
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    fn error_of(field: &syn::Field) -> String {
        match field_attrs(field) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("expected an error"),
        }
    }

    #[test]
    fn no_attribute_is_last_value() {
        assert_eq!(reducer_of(&parse_quote!(#[doc = "x"] pub a: u32)), "last value");
    }

    #[test]
    fn bare_builtin_names_resolve_to_graph_core() {
        assert_eq!(
            reducer_of(&parse_quote!(#[reducer(append)] a: Vec<u32>)),
            ":: mnemograph_core :: state :: append"
        );
        assert_eq!(
            reducer_of(&parse_quote!(#[reducer(add_messages)] a: Vec<u32>)),
            ":: mnemograph_core :: messages :: add_messages"
        );
    }

    #[test]
    fn other_paths_are_used_as_written() {
        assert_eq!(reducer_of(&parse_quote!(#[reducer(crate::sum)] a: i64)), "crate :: sum");
        assert_eq!(reducer_of(&parse_quote!(#[reducer(merge)] a: i64)), "merge");
        assert_eq!(reducer_of(&parse_quote!(#[reducer(self::append)] a: Vec<u8>)), "self :: append");
        assert_eq!(reducer_of(&parse_quote!(#[reducer(m::merge::<u8>)] a: Vec<u8>)), "m :: merge :: < u8 >");
        assert_eq!(reducer_of(&parse_quote!(#[reducer(<T as M>::merge)] a: T)), "< T as M > :: merge");
    }

    #[test]
    fn reducer_display_drops_token_spaces() {
        let path: ExprPath = parse_quote!(crate::m::sum);
        assert_eq!(reducer_display(&path), "crate::m::sum");
    }

    #[test]
    fn malformed_reducers_are_rejected() {
        for field in [
            parse_quote!(#[reducer] a: u8),
            parse_quote!(#[reducer()] a: u8),
            parse_quote!(#[reducer(a, b)] a: u8),
            parse_quote!(#[reducer = "append"] a: u8),
            parse_quote!(#[reducer(|a, b| ())] a: u8),
        ] {
            assert_eq!(error_of(&field), REDUCER_USAGE);
        }
    }

    #[test]
    fn misplaced_and_repeated_attributes_are_rejected() {
        assert_eq!(
            error_of(&parse_quote!(#[reducer(append)] #[reducer(append)] a: Vec<u8>)),
            "duplicate `#[reducer(...)]`: a field has one reducer"
        );
        assert_eq!(
            error_of(&parse_quote!(#[state(update = "X")] a: u8)),
            "`#[state(...)]` goes on the struct, not on a field"
        );
        let attrs: Vec<Attribute> = parse_quote!(#[reducer(append)]);
        let err = update_name(&attrs).err().map(|e| e.to_string());
        assert_eq!(err.as_deref(), Some("`#[reducer(...)]` goes on a field, not on the struct"));
    }

    #[test]
    fn update_name_is_read_from_the_state_attribute() {
        let attrs: Vec<Attribute> = parse_quote!(#[derive(Clone)] #[state(update = "Delta")]);
        assert_eq!(update_name(&attrs).ok().flatten().map(|i| i.to_string()).as_deref(), Some("Delta"));
        let attrs: Vec<Attribute> = parse_quote!(#[derive(Clone)]);
        assert!(update_name(&attrs).ok().flatten().is_none());
    }

    #[test]
    fn bad_state_arguments_are_rejected() {
        let cases: [(Vec<Attribute>, &str); 4] = [
            (
                parse_quote!(#[state(updat = "X")]),
                "unknown `state` argument `updat`; expected `update = \"Name\"`",
            ),
            (parse_quote!(#[state(update = "X", update = "Y")]), "duplicate `update` argument"),
            (
                parse_quote!(#[state(update = "not a name")]),
                "`update` must name a type: `update = \"MyUpdate\"`",
            ),
            (parse_quote!(#[state(update = X)]), "expected string literal"),
        ];
        for (attrs, expected) in cases {
            let err = update_name(&attrs).err().map(|e| e.to_string());
            assert_eq!(err.as_deref(), Some(expected));
        }
    }
}
