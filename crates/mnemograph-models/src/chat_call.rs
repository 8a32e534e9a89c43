//! [`ModelCall`]: a model as mnemograph-core's [`ChatCall`], for code that only needs a reply (memory
//! deciders and summarizers), with the request options it sends.

use mnemograph_core::messages::{ChatCall, Message};
use mnemograph_core::BoxError;

use crate::model::{ChatModel, ChatRequest};

/// A model as a [`ChatCall`]: each call sends the messages as a [`ChatRequest`] with this
/// temperature (the model's default when unset).
///
/// ```
/// use mnemograph_core::messages::{ChatCall, Message};
/// use mnemograph_models::{ChatModel, ChatRequest, ModelCall, Result};
///
/// struct Echo;
/// impl ChatModel for Echo {
///     async fn invoke(&self, request: ChatRequest) -> Result<Message> {
///         let at = request.temperature.unwrap_or(1.0);
///         Ok(Message::ai(format!("{} at {at}", request.messages[0].text())))
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let call = ModelCall::new(Echo).temperature(0.0);
/// assert_eq!(call.call(vec![Message::human("hi")]).await.unwrap().text(), "hi at 0");
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct ModelCall<M> {
    /// The model.
    model: M,
    /// Sampling temperature of every request.
    temperature: Option<f32>,
}

impl<M: ChatModel> ModelCall<M> {
    /// Calls `model` with its default temperature.
    pub fn new(model: M) -> Self {
        Self { model, temperature: None }
    }

    /// Sends every request at `temperature` (0 for answers that should not vary between runs).
    #[must_use]
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }
}

impl<M: ChatModel> ChatCall for ModelCall<M> {
    async fn call(&self, messages: Vec<Message>) -> Result<Message, BoxError> {
        let mut request = ChatRequest::new(messages);
        request.temperature = self.temperature;
        Ok(self.model.invoke(request).await?)
    }
}
