//! `GET /models`: the model names an endpoint offers, for the set-llm wizard.

use serde_json::Value;
use tokio::time::timeout;

use super::{Failure, Next, OpenAiClient, with_attempts};
use crate::llm::LlmError;

impl OpenAiClient {
    pub(super) async fn models_with_retries(&self) -> Result<Vec<String>, LlmError> {
        let mut attempt = 1;
        loop {
            let failure = match self.models_once().await {
                Ok(models) => return Ok(models),
                Err(failure) => failure,
            };
            match failure.next {
                Next::Retry { after } if attempt < self.retry.max_attempts => {
                    tokio::time::sleep(self.retry.delay(attempt, after)).await;
                    attempt += 1;
                }
                _ => return Err(with_attempts(failure.error, attempt)),
            }
        }
    }

    async fn models_once(&self) -> Result<Vec<String>, Failure> {
        let url = format!("{}/models", self.base_url);
        let response = self.send(self.authorized(self.http.get(&url)), "", false).await?;
        if !response.status().is_success() {
            return Err(self.status_failure(response, "").await);
        }
        let text = match timeout(self.timeout, response.text()).await {
            Err(_) => return Err(Failure::stop(self.timed_out())),
            Ok(Err(err)) => return Err(self.transport_failure(&err, "")),
            Ok(Ok(text)) => text,
        };
        model_names(&text).ok_or_else(|| {
            let excerpt: String = text.chars().take(200).collect();
            Failure::stop(LlmError::Protocol(format!("the model list could not be read: {excerpt}")))
        })
    }
}

/// Model names from `GET /models`: OpenAI's `{"data":[{"id"}]}`, Ollama's `{"models":[{"name"}]}`,
/// or a plain array; sorted, without duplicates.
pub(super) fn model_names(body: &str) -> Option<Vec<String>> {
    let value: Value = serde_json::from_str(body).ok()?;
    let list = value.get("data").or_else(|| value.get("models")).unwrap_or(&value).as_array()?;
    let mut names: Vec<String> = list
        .iter()
        .filter_map(|item| {
            item.as_str().or_else(|| ["id", "name", "model"].iter().find_map(|key| item.get(*key)?.as_str()))
        })
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    Some(names)
}
