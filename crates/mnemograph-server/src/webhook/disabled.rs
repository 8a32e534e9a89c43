//! [`Webhooks`] in a build without the `webhooks` feature: every `webhook` is refused.

use super::record::FinalRecord;
use crate::error::{Result, ServerError};

/// The server's webhooks, which this build cannot send. Not a unit struct, so that both builds
/// make it with `Webhooks::default()`.
#[derive(Debug, Clone, Default)]
pub struct Webhooks(());

impl Webhooks {
    /// Refuses a run request naming a `webhook` (422): nothing would be sent.
    pub(crate) fn check(&self, webhook: Option<&str>) -> Result<()> {
        match webhook {
            None => Ok(()),
            Some(_) => Err(ServerError::Unprocessable(
                "webhooks are off on this server: it is built without mnemograph-server's `webhooks` feature"
                    .into(),
            )),
        }
    }

    /// Logs that `record` is not sent: a run queued by a cluster process built with webhooks
    /// ended in one built without.
    #[allow(clippy::needless_pass_by_value, reason = "the signature of the build that sends it")]
    pub fn deliver(&self, target: &str, record: FinalRecord) {
        tracing::warn!(
            run_id = record.run_id(),
            webhook = target,
            "webhooks are not built in this process; not sent"
        );
    }
}
