//! Review fixes: a title cut after redaction, a users file that fails to load, approvals that need
//! a grant, a context removed from `kube.contexts`, how a turn ended.

use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::serve::*;

const TOKEN: &str = "ghp_1234567890abcdefghijABCDEFGHIJ123456";

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_across_the_titles_cut_is_not_kept_in_part() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("Noted.")]);
    let server = Server::builder(&env).mock(&mock).start();
    let api = server.api();
    let id = api.create(json!({"title": ""})).await["id"].as_i64().unwrap();
    let message = format!("{} {TOKEN} is my token", "p".repeat(62));
    api.chat(id, &message).await.collect().await;
    let (_, list) = api.list().await;
    let title = list[0]["title"].as_str().unwrap();
    assert!(title.starts_with(&"p".repeat(62)), "{title}");
    assert!(!title.contains("ghp_") && !title.contains("1234567890"), "{title}");
    server.stop();
}
