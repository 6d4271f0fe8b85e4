//! The usual local model servers, each asked for its model list (`GET …/v1/models`) on its
//! default port on this machine: Ollama, the llama.cpp server, LM Studio, vLLM.
//!
//! [`TEST_SERVERS`] replaces the list, for tests only: a test machine's default ports may be taken
//! by something else (8000 and 8080 often are), so a test cannot rely on binding them; the
//! variable points the search at the test's own servers instead. Only loopback addresses are
//! accepted from it, so it cannot make opsai offer a server elsewhere.

use std::time::Duration;

/// `NAME=URL,NAME=URL`: the servers to look for instead of the usual ones. For tests only.
pub(crate) const TEST_SERVERS: &str = "OPSAI_TEST_LOCAL_SERVERS";

/// How long one server may take to list its models.
const ASK_WITHIN: Duration = Duration::from_millis(900);

/// The usual servers and their OpenAI-compatible base URLs on their default ports.
const USUAL: &[(&str, &str)] = &[
    ("Ollama", "http://localhost:11434/v1"),
    ("llama.cpp server", "http://127.0.0.1:8080/v1"),
    ("LM Studio", "http://127.0.0.1:1234/v1"),
    ("vLLM", "http://127.0.0.1:8000/v1"),
];

/// A model server that answered, with the first model it lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LocalServer {
    pub name: String,
    pub base_url: String,
    pub model: String,
}

/// The servers to look for: [`USUAL`], or [`TEST_SERVERS`]'s loopback entries when it is set.
pub(crate) fn candidates() -> Vec<(String, String)> {
    match std::env::var(TEST_SERVERS) {
        Ok(list) => parse(&list),
        Err(_) => USUAL.iter().map(|(name, url)| ((*name).to_owned(), (*url).to_owned())).collect(),
    }
}

fn parse(list: &str) -> Vec<(String, String)> {
    list.split(',')
        .filter_map(|entry| entry.split_once('='))
        .map(|(name, url)| (name.trim().to_owned(), url.trim().trim_end_matches('/').to_owned()))
        .filter(|(_, url)| reqwest::Url::parse(url).is_ok_and(|u| crate::llm::transport::is_loopback(&u)))
        .collect()
}

/// Those of `candidates` that answer with at least one model, in the order given; all asked at once.
pub(crate) async fn local_servers(candidates: &[(String, String)]) -> Vec<LocalServer> {
    let Ok(client) = reqwest::Client::builder().no_proxy().timeout(ASK_WITHIN).build() else { return Vec::new() };
    let asks = candidates.iter().map(|(name, url)| {
        let client = client.clone();
        async move {
            let model = first_model(&client, url).await?;
            Some(LocalServer { name: name.clone(), base_url: url.clone(), model })
        }
    });
    futures_util::future::join_all(asks).await.into_iter().flatten().collect()
}

/// The first model `GET {base_url}/models` lists (`{"data": [{"id": …}]}`).
async fn first_model(client: &reqwest::Client, base_url: &str) -> Option<String> {
    let response = client.get(format!("{base_url}/models")).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let body: serde_json::Value = response.json().await.ok()?;
    let id = body.get("data")?.as_array()?.iter().find_map(|model| model.get("id")?.as_str())?;
    // The id is the server's: shown to the person and saved, so only a plain one is taken.
    (!id.is_empty() && id.len() <= 200 && !id.chars().any(char::is_control)).then(|| id.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_list_keeps_only_loopback_servers() {
        let list =
            parse("LM Studio=http://127.0.0.1:41234/v1/, far=http://example.com:1234/v1,bad, v=http://localhost:9/v1");
        assert_eq!(
            list,
            [
                ("LM Studio".to_owned(), "http://127.0.0.1:41234/v1".to_owned()),
                ("v".to_owned(), "http://localhost:9/v1".to_owned())
            ]
        );
    }
}
