//! Webhooks: a run created with `webhook` gets its final record POSTed there when it ends,
//! whether it succeeded, failed, stopped at an interrupt or was cancelled, by the process that
//! ended it, in the background, so that a slow or broken receiver never holds up or fails the
//! run. Targets are the deployer's choice ([`WebhookPolicy`]); a run naming any other is refused
//! when it is created.

#[cfg(feature = "webhooks")]
mod client;
#[cfg(not(feature = "webhooks"))]
mod disabled;
#[cfg(feature = "webhooks")]
mod policy;
mod record;
#[cfg(feature = "webhooks")]
mod sender;

#[cfg(not(feature = "webhooks"))]
pub use disabled::Webhooks;
#[cfg(feature = "webhooks")]
pub use policy::WebhookPolicy;
pub use record::{webhook_of, FinalRecord};
#[cfg(feature = "webhooks")]
pub use sender::Webhooks;
