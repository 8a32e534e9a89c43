//! `#[derive(State)]`: validates the input and generates the update type and the `State` impl.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, Ident, Result};

use crate::attr::{resolve_reducer, Kind};
use crate::input::{StateField, StateStruct};
use crate::update;

/// Everything the derive generates for `input`.
///
/// # Errors
/// The input is not a state struct the derive supports (see [`StateStruct::from_input`]).
pub(crate) fn derive(input: &DeriveInput) -> Result<TokenStream> {
    let s = StateStruct::from_input(input)?;
    let update = update::expand(&s);
    let state = state_impl(&s);
    Ok(quote! {
        #update
        #state
    })
}

/// A local of the generated code, hidden from the user's tokens (a reducer path such as
/// `#[reducer(written)]` must not resolve to a local called `written`).
fn local(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// The per-field pieces of generated code, all spanned at the field's type so that a missing
/// `Serialize`, `DeserializeOwned`, `Debug` or `Clone` is reported on the field.
struct FieldCode<'a> {
    /// The field.
    field: &'a StateField<'a>,
    /// Its index, as an unsuffixed literal.
    index: Literal,
    /// The local collecting its writes in `apply`.
    writes: Ident,
    /// Where the per-field code points.
    span: Span,
}

impl<'a> FieldCode<'a> {
    fn new(index: usize, field: &'a StateField<'a>) -> Self {
        let writes = format_ident!("{}_writes", field.name, span = Span::mixed_site());
        Self { field, index: Literal::usize_unsuffixed(index), writes, span: field.ty.span() }
    }
}

/// `impl ::mnemograph_core::State for AgentState { ... }`.
fn state_impl(s: &StateStruct<'_>) -> TokenStream {
    let StateStruct { ident, update, .. } = s;
    let fields: Vec<FieldCode<'_>> = s.fields.iter().enumerate().map(|(i, f)| FieldCode::new(i, f)).collect();
    let descriptors = fields.iter().map(|f| {
        let name = &f.field.name;
        match f.field.kind {
            Kind::LastValue => quote!(::mnemograph_core::state::Field::last_value(#name)),
            Kind::Reducer(_) => quote!(::mnemograph_core::state::Field::reducer(#name)),
        }
    });
    let apply = apply(&fields);
    let accessors = accessors(&fields);
    quote! {
        impl ::mnemograph_core::State for #ident {
            type Update = #update;

            const FIELDS: &'static [::mnemograph_core::state::Field] = &[#(#descriptors),*];

            #apply
            #accessors
        }
    }
}

/// `fn apply`: splits the writes by field, then applies each field's writes in field order.
fn apply(fields: &[FieldCode<'_>]) -> TokenStream {
    let (writes, write, value, written) = (local("writes"), local("write"), local("value"), local("written"));
    let collectors = fields.iter().map(|f| {
        let (ty, collected) = (f.field.ty, &f.writes);
        match f.field.kind {
            Kind::LastValue => quote_spanned! {f.span=>
                let mut #collected: ::std::vec::Vec<#ty> = ::std::vec::Vec::new();
            },
            Kind::Reducer(_) => quote_spanned! {f.span=>
                let mut #collected: ::std::vec::Vec<(#ty, bool)> = ::std::vec::Vec::new();
            },
        }
    });
    let splits = fields.iter().map(|f| {
        let (ident, collected) = (f.field.ident, &f.writes);
        // LastValue has no overwrite: an overwrite of it is an ordinary write.
        let item = match f.field.kind {
            Kind::LastValue => quote!(#value),
            Kind::Reducer(_) => quote!((#value, #write.overwrite)),
        };
        quote! {
            if let ::core::option::Option::Some(#value) = #write.update.#ident.take() {
                #collected.push(#item);
            }
        }
    });
    let appliers = fields.iter().map(|f| {
        let FieldCode { field, index, writes: collected, span } = f;
        let (ident, name) = (field.ident, &field.name);
        let call = match &field.kind {
            Kind::LastValue => quote_spanned! {*span=>
                ::mnemograph_core::__private::last_value(#name, &mut self.#ident, #collected)
            },
            Kind::Reducer(path) => {
                let (slot, item) = (local("slot"), local("item"));
                let reducer = resolve_reducer(path);
                // Spanned at the reducer path: a wrong signature or return type points there.
                let body = quote_spanned! {path.span()=>
                    ::mnemograph_core::__private::ReducerOutput::into_reducer_result(#reducer(#slot, #item))
                };
                quote_spanned! {*span=>
                    ::mnemograph_core::__private::reduce(
                        #name, &mut self.#ident, #collected, |#slot, #item| #body
                    )
                }
            }
        };
        quote! {
            if #call? {
                #written.insert(#index);
            }
        }
    });
    quote! {
        fn apply(
            &mut self,
            #writes: ::std::vec::Vec<::mnemograph_core::state::StateWrite<Self::Update>>,
        ) -> ::core::result::Result<
            ::mnemograph_core::state::FieldSet,
            ::mnemograph_core::state::InvalidUpdate,
        > {
            #(#collectors)*
            for mut #write in #writes {
                #(#splits)*
            }
            let mut #written = ::mnemograph_core::state::FieldSet::EMPTY;
            #(#appliers)*
            ::core::result::Result::Ok(#written)
        }
    }
}

/// `written`, `get_field`, `set_field`, `update_values`, `update_from_value` and
/// `update_from_values`.
///
/// Clones are written `Clone::clone(&x)`, not `x.clone()`: the code carries the field's span, so
/// clippy would flag `clone_on_copy` in the user's crate for a `Copy` field.
fn accessors(fields: &[FieldCode<'_>]) -> TokenStream {
    let mut written = Vec::new();
    let mut get = Vec::new();
    let mut set = Vec::new();
    let mut values = Vec::new();
    let mut from_value = Vec::new();
    for FieldCode { field, index, span, .. } in fields {
        let ident = field.ident;
        written.push(quote!(if update.#ident.is_some() { set.insert(#index); }));
        get.push(quote_spanned! {*span=>
            #index => ::mnemograph_core::value::ChannelValue::new(
                ::core::clone::Clone::clone(&self.#ident)
            ),
        });
        set.push(quote_spanned!(*span=> #index => self.#ident = value.decode()?,));
        values.push(quote_spanned! {*span=>
            if let ::core::option::Option::Some(value) = &update.#ident {
                values.push((
                    #index,
                    ::mnemograph_core::value::ChannelValue::new(::core::clone::Clone::clone(value))
                ));
            }
        });
        from_value.push(quote_spanned! {*span=>
            #index => update.#ident = ::core::option::Option::Some(value.decode()?),
        });
    }
    quote! {
        fn written(update: &Self::Update) -> ::mnemograph_core::state::FieldSet {
            let mut set = ::mnemograph_core::state::FieldSet::EMPTY;
            #(#written)*
            set
        }

        fn get_field(&self, index: usize) -> ::mnemograph_core::value::ChannelValue {
            match index {
                #(#get)*
                _ => ::mnemograph_core::value::ChannelValue::Null,
            }
        }

        fn set_field(
            &mut self,
            index: usize,
            value: &::mnemograph_core::value::ChannelValue,
        ) -> ::core::result::Result<(), ::mnemograph_core::value::ValueError> {
            match index {
                #(#set)*
                _ => {}
            }
            ::core::result::Result::Ok(())
        }

        fn update_values(
            update: &Self::Update,
        ) -> ::std::vec::Vec<(usize, ::mnemograph_core::value::ChannelValue)> {
            let mut values = ::std::vec::Vec::new();
            #(#values)*
            values
        }

        fn update_from_value(
            index: usize,
            value: &::mnemograph_core::value::ChannelValue,
        ) -> ::core::result::Result<Self::Update, ::mnemograph_core::value::ValueError> {
            let mut update = <Self::Update as ::core::default::Default>::default();
            match index {
                #(#from_value)*
                _ => {}
            }
            ::core::result::Result::Ok(update)
        }

        fn update_from_values(
            values: &[(usize, ::mnemograph_core::value::ChannelValue)],
        ) -> ::core::result::Result<Self::Update, ::mnemograph_core::value::ValueError> {
            let mut update = <Self::Update as ::core::default::Default>::default();
            for (index, value) in values {
                match *index {
                    #(#from_value)*
                    _ => {}
                }
            }
            ::core::result::Result::Ok(update)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::{parse_quote, File, ImplItem, Item, ItemImpl};

    fn state_impl_of(input: &DeriveInput) -> ItemImpl {
        let tokens = derive(input).unwrap_or_else(|e| panic!("{e}"));
        let file: File = syn::parse2(tokens).unwrap_or_else(|e| panic!("does not parse: {e}"));
        file.items
            .into_iter()
            .find_map(|item| match item {
                Item::Impl(i) if quote!(#i).to_string().starts_with("impl :: mnemograph_core :: State") => {
                    Some(i)
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("no State impl"))
    }

    fn item(i: &ItemImpl, name: &str) -> String {
        i.items
            .iter()
            .find_map(|item| match item {
                ImplItem::Fn(f) if f.sig.ident == name => Some(quote!(#f).to_string()),
                ImplItem::Const(c) if c.ident == name => Some(quote!(#c).to_string()),
                ImplItem::Type(t) if t.ident == name => Some(quote!(#t).to_string()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no {name}"))
    }

    fn sample() -> DeriveInput {
        parse_quote! {
            pub struct AgentState {
                #[reducer(add_messages)] messages: Vec<Message>,
                #[reducer(append)] log: Vec<String>,
                #[reducer(crate::sum)] total: i64,
                user_id: String,
            }
        }
    }

    #[test]
    fn fields_are_described_in_declaration_order() {
        let i = state_impl_of(&sample());
        assert_eq!(item(&i, "Update"), "type Update = AgentStateUpdate ;");
        assert_eq!(
            item(&i, "FIELDS"),
            "const FIELDS : & 'static [:: mnemograph_core :: state :: Field] = \
             & [:: mnemograph_core :: state :: Field :: reducer (\"messages\") , \
             :: mnemograph_core :: state :: Field :: reducer (\"log\") , \
             :: mnemograph_core :: state :: Field :: reducer (\"total\") , \
             :: mnemograph_core :: state :: Field :: last_value (\"user_id\")] ;"
        );
    }

    #[test]
    fn apply_splits_writes_then_applies_each_field() {
        let apply = item(&state_impl_of(&sample()), "apply");
        for expected in [
            "let mut messages_writes : :: std :: vec :: Vec < (Vec < Message > , bool) >",
            "let mut user_id_writes : :: std :: vec :: Vec < String >",
            "for mut write in writes",
            "if let :: core :: option :: Option :: Some (value) = write . update . messages . take () \
             { messages_writes . push ((value , write . overwrite)) ; }",
            "if let :: core :: option :: Option :: Some (value) = write . update . user_id . take () \
             { user_id_writes . push (value) ; }",
            "if :: mnemograph_core :: __private :: reduce (\"messages\" , & mut self . messages , messages_writes , \
             | slot , item | :: mnemograph_core :: __private :: ReducerOutput :: into_reducer_result \
             (:: mnemograph_core :: messages :: add_messages (slot , item))) ? { written . insert (0) ; }",
            "(:: mnemograph_core :: state :: append (slot , item))) ? { written . insert (1) ; }",
            "(crate :: sum (slot , item))) ? { written . insert (2) ; }",
            "if :: mnemograph_core :: __private :: last_value (\"user_id\" , & mut self . user_id , user_id_writes) ? \
             { written . insert (3) ; }",
        ] {
            assert!(apply.contains(expected), "missing {expected:?} in\n{apply}");
        }
        let splits = apply.find("for mut write").unwrap_or_default();
        let applies = apply.find("FieldSet :: EMPTY").unwrap_or_default();
        assert!(splits < applies, "writes are split before any field is applied");
    }

    #[test]
    fn accessors_cover_every_field_by_index() {
        let i = state_impl_of(&sample());
        let get = item(&i, "get_field");
        assert!(get.contains(
            "3 => :: mnemograph_core :: value :: ChannelValue :: new \
             (:: core :: clone :: Clone :: clone (& self . user_id)) ,"
        ));
        assert!(get.contains("_ => :: mnemograph_core :: value :: ChannelValue :: Null"));
        assert!(item(&i, "set_field").contains("0 => self . messages = value . decode () ? ,"));
        assert!(item(&i, "written").contains("if update . total . is_some () { set . insert (2) ; }"));
        assert!(item(&i, "update_values").contains(
            "values . push ((1 , :: mnemograph_core :: value :: ChannelValue :: new \
             (:: core :: clone :: Clone :: clone (value)))) ;"
        ));
        assert!(item(&i, "update_from_value")
            .contains("2 => update . total = :: core :: option :: Option :: Some (value . decode () ?) ,"));
    }

    #[test]
    fn errors_come_from_validation() {
        let err = derive(&parse_quote!(
            enum E {
                A,
            }
        ))
        .err()
        .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("`State` cannot be derived for an enum: use a struct with named fields")
        );
    }
}
