//! Compile-time behaviour of `#[derive(State)]`: what must build, and the errors for what must not.
//!
//! Regenerate the expected errors with `TRYBUILD=overwrite cargo test -p mnemograph-macros --test ui`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
