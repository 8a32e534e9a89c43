//! [`Identity`]: who a request comes from, as an [`Auth`](super::Auth) found it.

use serde_json::{json, Map, Value};

/// The key under which a run's configurable values hold the caller (LangGraph's
/// `config["configurable"]["langgraph_auth_user"]`).
pub const AUTH_USER_KEY: &str = "langgraph_auth_user";
/// The key under which a run's configurable values hold the caller's id alone.
pub const AUTH_USER_ID_KEY: &str = "langgraph_auth_user_id";
/// The key under which a run's configurable values hold the caller's permissions.
pub const AUTH_PERMISSIONS_KEY: &str = "langgraph_auth_permissions";

/// An authenticated caller: LangGraph's `BaseUser` (`identity`, `display_name`, `permissions`,
/// and whatever else the authenticator adds).
///
/// The graph's nodes find it in their runtime:
///
/// ```
/// use mnemograph_server::auth::Identity;
/// # let configurable = serde_json::Map::new();
/// // In a node: `Identity::of(runtime.configurable())`.
/// let user = Identity::of(&configurable);
/// let namespace = vec!["memories".to_owned(), user.map_or("anonymous".to_owned(), |u| u.identity)];
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Identity {
    /// The caller's unique, stable id: what ownership is stamped with.
    pub identity: String,
    /// A name to show; the identity when the authenticator gives none.
    pub display_name: String,
    /// What the authenticator says the caller may do, for [`Auth::authorize`](super::Auth::authorize)
    /// to read.
    pub permissions: Vec<String>,
    /// Anything else the authenticator knows of the caller (an email, a tenant).
    pub extra: Map<String, Value>,
}

impl Identity {
    /// A caller known as `identity`, with no permissions.
    pub fn new(identity: impl Into<String>) -> Self {
        let identity = identity.into();
        Self { display_name: identity.clone(), identity, permissions: Vec::new(), extra: Map::new() }
    }

    /// Names the caller for display.
    #[must_use]
    pub fn display_name(mut self, name: impl Into<String>) -> Self {
        self.display_name = name.into();
        self
    }

    /// Gives the caller `permissions`.
    #[must_use]
    pub fn permissions<I: IntoIterator<Item = P>, P: Into<String>>(mut self, permissions: I) -> Self {
        self.permissions.extend(permissions.into_iter().map(Into::into));
        self
    }

    /// Adds something else known of the caller.
    #[must_use]
    pub fn extra(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.extra.insert(key.into(), value.into());
        self
    }

    /// The caller as a run's config carries it (`langgraph_auth_user`): the extra fields, then
    /// `identity`, `display_name`, `is_authenticated` and `permissions`, which extra fields of
    /// the same names cannot replace.
    pub fn to_json(&self) -> Value {
        let mut user = self.extra.clone();
        let own = json!({
            "identity": self.identity,
            "display_name": self.display_name,
            "is_authenticated": true,
            "permissions": self.permissions,
        });
        if let Value::Object(own) = own {
            user.extend(own);
        }
        Value::Object(user)
    }

    /// The caller a run's configurable values name (what [`Identity::to_json`] wrote under
    /// [`AUTH_USER_KEY`]); `None` for a run no authenticated caller made.
    pub fn of(configurable: &Map<String, Value>) -> Option<Self> {
        Self::from_json(configurable.get(AUTH_USER_KEY)?)
    }

    /// Reads back what [`Identity::to_json`] wrote.
    pub(crate) fn from_json(value: &Value) -> Option<Self> {
        let mut fields = value.as_object()?.clone();
        let identity = fields.remove("identity")?.as_str()?.to_owned();
        let display_name = match fields.remove("display_name") {
            Some(Value::String(name)) => name,
            _ => identity.clone(),
        };
        let permissions = match fields.remove("permissions") {
            Some(Value::Array(list)) => {
                list.into_iter().filter_map(|p| p.as_str().map(str::to_owned)).collect()
            }
            _ => Vec::new(),
        };
        fields.remove("is_authenticated");
        Some(Self { identity, display_name, permissions, extra: fields })
    }

    /// Writes the caller into a run's configurable values, replacing whatever a client put under
    /// the same keys.
    pub(crate) fn configure(&self, configurable: &mut Map<String, Value>) {
        configurable.insert(AUTH_USER_KEY.into(), self.to_json());
        configurable.insert(AUTH_USER_ID_KEY.into(), self.identity.clone().into());
        configurable.insert(AUTH_PERMISSIONS_KEY.into(), self.permissions.clone().into());
    }
}

/// Whether `key` is one only the server writes into a run's configurable values.
pub(crate) fn is_reserved(key: &str) -> bool {
    matches!(key, AUTH_USER_KEY | AUTH_USER_ID_KEY | AUTH_PERMISSIONS_KEY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_identity_reads_back_from_a_runs_configurable_values() {
        let user = Identity::new("alice").permissions(["threads:write"]).extra("email", "a@example.com");
        let mut configurable = Map::new();
        user.configure(&mut configurable);
        assert_eq!(Identity::of(&configurable), Some(user));
        assert_eq!(configurable[AUTH_USER_ID_KEY], "alice");
        assert_eq!(configurable[AUTH_USER_KEY]["is_authenticated"], true);
    }

    #[test]
    fn extra_fields_cannot_replace_the_identity() {
        let user = Identity::new("alice").extra("identity", "bob");
        assert_eq!(user.to_json()["identity"], "alice");
    }
}
