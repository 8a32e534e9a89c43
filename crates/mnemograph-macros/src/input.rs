//! Checks the derive input and turns it into a [`StateStruct`]: the struct's name, visibility,
//! update type name and fields.

use quote::format_ident;
use syn::ext::IdentExt;
use syn::{Data, DeriveInput, Error, Fields, Ident, Result, Type, Visibility};

use crate::attr::{self, Kind};

/// The most fields a state may have: `FieldSet` is a 64-bit set.
const MAX_FIELDS: usize = 64;

/// A validated `#[derive(State)]` input.
pub(crate) struct StateStruct<'a> {
    /// The state struct's name.
    pub(crate) ident: &'a Ident,
    /// The state struct's visibility, given to the update type, its fields and builders.
    pub(crate) vis: &'a Visibility,
    /// The update type's name: `<State>Update` or `#[state(update = "...")]`.
    pub(crate) update: Ident,
    /// The fields in declaration order; a field's index is its position here.
    pub(crate) fields: Vec<StateField<'a>>,
}

/// One field (channel) of the state.
pub(crate) struct StateField<'a> {
    /// The field as written (possibly a raw identifier such as `r#type`).
    pub(crate) ident: &'a Ident,
    /// The field's type.
    pub(crate) ty: &'a Type,
    /// The channel name: the field name without any `r#`.
    pub(crate) name: String,
    /// How its writes are combined.
    pub(crate) kind: Kind,
}

impl<'a> StateStruct<'a> {
    /// Validates `input`.
    ///
    /// # Errors
    /// Anything but a non-generic struct with 1 to 64 named fields, and malformed attributes.
    /// Field errors are reported together.
    pub(crate) fn from_input(input: &'a DeriveInput) -> Result<Self> {
        let named = match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => named,
                Fields::Unnamed(fields) => {
                    return Err(Error::new_spanned(
                        fields,
                        "`State` cannot be derived for a tuple struct: \
                         its fields are channels and need names",
                    ));
                }
                Fields::Unit => {
                    return Err(Error::new_spanned(
                        &input.ident,
                        "`State` cannot be derived for a unit struct: a state needs named fields",
                    ));
                }
            },
            Data::Enum(data) => {
                return Err(Error::new(
                    data.enum_token.span,
                    "`State` cannot be derived for an enum: use a struct with named fields",
                ));
            }
            Data::Union(data) => {
                return Err(Error::new(
                    data.union_token.span,
                    "`State` cannot be derived for a union: use a struct with named fields",
                ));
            }
        };
        if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
            return Err(Error::new_spanned(
                &input.generics,
                "`State` cannot be derived for a generic struct: give the fields concrete types",
            ));
        }
        if named.named.is_empty() {
            return Err(Error::new_spanned(
                named,
                "`State` needs at least one field: each field is a channel",
            ));
        }
        if let Some(extra) = named.named.iter().nth(MAX_FIELDS) {
            return Err(Error::new_spanned(
                extra,
                format!("a `State` has at most {MAX_FIELDS} fields; this is field {}", MAX_FIELDS + 1),
            ));
        }

        let mut errors: Option<Error> = None;
        let mut push = |e: Error| match &mut errors {
            Some(all) => all.combine(e),
            None => errors = Some(e),
        };
        let update = match attr::update_name(&input.attrs) {
            Ok(name) => name.unwrap_or_else(|| format_ident!("{}Update", input.ident.unraw())),
            Err(e) => {
                push(e);
                format_ident!("{}Update", input.ident.unraw())
            }
        };
        if update == input.ident {
            push(Error::new(update.span(), "the update type needs a name of its own"));
        }
        let mut fields = Vec::with_capacity(named.named.len());
        for field in &named.named {
            // Named fields always have an identifier.
            let Some(ident) = &field.ident else { continue };
            match Kind::from_field_attrs(&field.attrs) {
                Ok(kind) => {
                    fields.push(StateField { ident, ty: &field.ty, name: ident.unraw().to_string(), kind });
                }
                Err(e) => push(e),
            }
        }
        // A field `with_x` would clash with field `x`'s generated `with_x` builder.
        for field in &fields {
            let clashes = field
                .name
                .strip_prefix("with_")
                .is_some_and(|rest| fields.iter().any(|other| other.name == rest));
            if clashes {
                push(Error::new(
                    field.ident.span(),
                    format!(
                        "field `{}` clashes with the generated `{}` builder of field `{}`; rename one",
                        field.name,
                        field.name,
                        &field.name["with_".len()..]
                    ),
                ));
            }
        }
        match errors {
            Some(e) => Err(e),
            None => Ok(Self { ident: &input.ident, vis: &input.vis, update, fields }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn error_of(input: &DeriveInput) -> String {
        match StateStruct::from_input(input) {
            Err(e) => e.into_iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"),
            Ok(_) => panic!("expected an error"),
        }
    }

    #[test]
    fn reads_fields_in_order_with_their_kinds() {
        let input: DeriveInput = parse_quote! {
            pub(crate) struct S {
                #[reducer(append)] log: Vec<String>,
                r#type: String,
            }
        };
        let s = StateStruct::from_input(&input).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.update, "SUpdate");
        let vis = s.vis;
        assert_eq!(quote::quote!(#vis).to_string(), "pub (crate)");
        let names: Vec<_> = s.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["log", "type"]);
        assert!(matches!(s.fields[0].kind, Kind::Reducer(_)));
        assert!(matches!(s.fields[1].kind, Kind::LastValue));
    }

    #[test]
    fn update_name_can_be_overridden() {
        let input: DeriveInput = parse_quote! {
            #[state(update = "Delta")]
            struct S { a: u8 }
        };
        let s = StateStruct::from_input(&input).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.update, "Delta");
        let input: DeriveInput = parse_quote!(
            #[state(update = "S")]
            struct S {
                a: u8,
            }
        );
        assert_eq!(error_of(&input), "the update type needs a name of its own");
    }

    #[test]
    fn rejects_shapes_other_than_a_plain_struct() {
        let cases: [(DeriveInput, &str); 6] = [
            (
                parse_quote!(
                    enum E {
                        A,
                    }
                ),
                "for an enum",
            ),
            (parse_quote!(union U { a: u8 }), "for a union"),
            (
                parse_quote!(
                    struct T(u8);
                ),
                "for a tuple struct",
            ),
            (
                parse_quote!(
                    struct U;
                ),
                "for a unit struct",
            ),
            (
                parse_quote!(
                    struct G<T> {
                        a: T,
                    }
                ),
                "for a generic struct",
            ),
            (
                parse_quote!(
                    struct E {}
                ),
                "at least one field",
            ),
        ];
        for (input, expected) in cases {
            let err = error_of(&input);
            assert!(err.contains(expected), "{err:?} should contain {expected:?}");
        }
    }

    #[test]
    fn rejects_more_than_64_fields() {
        let fields = (0..65).map(|i| format_ident!("f{i}"));
        let input: DeriveInput = parse_quote!(struct Big { #(#fields: u8,)* });
        assert_eq!(error_of(&input), "a `State` has at most 64 fields; this is field 65");
        let fields = (0..64).map(|i| format_ident!("f{i}"));
        let input: DeriveInput = parse_quote!(struct Big { #(#fields: u8,)* });
        assert!(StateStruct::from_input(&input).is_ok());
    }

    #[test]
    fn reports_every_bad_field_at_once() {
        let input: DeriveInput = parse_quote! {
            #[state(updat = "X")]
            struct S {
                #[reducer] a: u8,
                #[reducer(x, y)] b: u8,
                c: u8,
                with_c: u8,
            }
        };
        let err = error_of(&input);
        assert_eq!(err.lines().count(), 4, "{err}");
        assert!(err.starts_with("unknown `state` argument `updat`"), "{err}");
        assert!(err.ends_with(
            "field `with_c` clashes with the generated `with_c` builder of field `c`; rename one"
        ));
    }
}
