//! The set-llm flow with scripted answers and a fake model.

use std::collections::VecDeque;
use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;

use super::*;
use crate::testing::{ScriptedModel, answer};

#[derive(Debug, Clone, PartialEq)]
enum Answer {
    Select(usize),
    Text(&'static str),
    Secret(&'static str),
    Confirm(bool),
}

/// Pops one answer per question; a question of the wrong kind or one too many fails the test.
#[derive(Default)]
struct Script {
    answers: VecDeque<Answer>,
    /// Every question and note, in order, for assertions.
    transcript: Vec<String>,
}

impl Script {
    fn new(answers: &[Answer]) -> Self {
        Self { answers: answers.iter().cloned().collect(), transcript: Vec::new() }
    }

    fn next(&mut self, question: String) -> io::Result<Answer> {
        self.transcript.push(question.clone());
        self.answers.pop_front().ok_or_else(|| io::Error::other(format!("unscripted question: {question}")))
    }

    fn saw(&self, needle: &str) -> bool {
        self.transcript.iter().any(|line| line.contains(needle))
    }
}

impl Prompter for Script {
    fn select(&mut self, prompt: &str, items: &[String], default: usize) -> io::Result<usize> {
        match self.next(format!("select {prompt} {items:?} default={default}"))? {
            Answer::Select(index) => Ok(index),
            other => panic!("{prompt}: expected a selection, scripted {other:?}"),
        }
    }
    fn input(&mut self, prompt: &str, initial: &str) -> io::Result<String> {
        match self.next(format!("input {prompt} [{initial}]"))? {
            Answer::Text("=") => Ok(initial.to_owned()),
            Answer::Text(text) => Ok(text.to_owned()),
            other => panic!("{prompt}: expected text, scripted {other:?}"),
        }
    }
    fn password(&mut self, prompt: &str) -> io::Result<String> {
        match self.next(format!("password {prompt}"))? {
            Answer::Secret(text) => Ok(text.to_owned()),
            other => panic!("{prompt}: expected a secret, scripted {other:?}"),
        }
    }
    fn confirm(&mut self, prompt: &str, default: bool) -> io::Result<bool> {
        match self.next(format!("confirm {prompt} default={default}"))? {
            Answer::Confirm(yes) => Ok(yes),
            other => panic!("{prompt}: expected yes/no, scripted {other:?}"),
        }
    }
    fn note(&mut self, line: &str) -> io::Result<()> {
        self.transcript.push(format!("note {line}"));
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Fails {
    Nothing,
    ListNotFound,
    ListUnauthorized,
    /// Nothing listens at the URL.
    Unreachable,
    Chat,
}

/// A scripted model that also records the configs it was built with.
#[derive(Clone)]
struct Fake {
    model: ScriptedModel,
    built: Arc<Mutex<Vec<LlmConfig>>>,
}

impl Fake {
    fn new(models: &[&str], fails: Fails) -> Self {
        let models: Vec<String> = models.iter().map(|m| (*m).to_owned()).collect();
        let model = ScriptedModel::new([])
            .then(move |_| match fails {
                Fails::Chat => Err(LlmError::Http { status: 500, body: "boom".to_owned() }),
                _ => Ok(answer("OK")),
            })
            .listing(move || match fails {
                Fails::ListNotFound => Err(LlmError::Http { status: 404, body: "no /models".to_owned() }),
                Fails::ListUnauthorized => Err(LlmError::Unauthorized { status: 401 }),
                Fails::Unreachable => Err(LlmError::Connect { url: "http://gpu-box:8000/v1".to_owned(), model: None }),
                Fails::Nothing | Fails::Chat => Ok(models.clone()),
            });
        Self { model, built: Arc::default() }
    }

    fn connect(&self) -> impl Fn(&LlmConfig) -> Result<Box<dyn ChatModel>, LlmError> + Sync + use<> {
        let fake = self.clone();
        move |llm: &LlmConfig| {
            fake.built.lock().unwrap().push(llm.clone());
            Ok(Box::new(fake.model.clone()) as Box<dyn ChatModel>)
        }
    }
}

const OLLAMA: usize = 0;
const OPENAI: usize = 1;
const CUSTOM: usize = 5;

#[tokio::test]
async fn ollama_with_a_listed_model_is_tested_and_saved() {
    let fake = Fake::new(&["qwen2.5:7b", "llama3.2:3b"], Fails::Nothing);
    let mut script = Script::new(&[Answer::Select(OLLAMA), Answer::Text("="), Answer::Select(0)]);
    let outcome = run(&mut script, &LlmConfig::default(), &fake.connect()).await.unwrap();
    let expected = LlmConfig { model: "llama3.2:3b".to_owned(), ..LlmConfig::default() };
    assert_eq!(outcome, WizardOutcome::Save { llm: expected, verified: true });
    assert!(script.saw("select Model [\"llama3.2:3b\", \"qwen2.5:7b\", \"Other (type a name)\"] default=1"));
    assert!(!script.saw("password"), "Ollama needs no key: {:?}", script.transcript);
    let requests = fake.model.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!((requests[0].model.as_str(), requests[0].max_tokens), ("llama3.2:3b", Some(1)));
    assert!(requests[0].tools.is_empty());
}

#[tokio::test]
async fn a_rejected_key_skips_the_chat_and_declining_saves_nothing() {
    let fake = Fake::new(&[], Fails::ListUnauthorized);
    let mut script = Script::new(&[
        Answer::Select(OPENAI),
        Answer::Text("="),
        Answer::Secret("sk-wrong-0000000000"),
        Answer::Text("="),
        Answer::Confirm(false),
    ]);
    let outcome = run(&mut script, &LlmConfig::default(), &fake.connect()).await.unwrap();
    assert_eq!(outcome, WizardOutcome::Discard);
    assert!(fake.model.requests().is_empty(), "no chat after a rejected key");
    assert!(script.saw("input Model [gpt-4o-mini]"), "{:?}", script.transcript);
    assert!(script.saw("confirm Save this configuration anyway? default=false"));
    let built = fake.built.lock().unwrap();
    assert_eq!(built[0].base_url, "https://api.openai.com/v1");
    assert_eq!(built[0].api_key.as_deref(), Some("sk-wrong-0000000000"));
}

#[tokio::test]
async fn a_failed_chat_saves_only_when_the_user_insists() {
    let fake = Fake::new(&["deepseek-chat"], Fails::Chat);
    let mut script = Script::new(&[
        Answer::Select(2),
        Answer::Text("="),
        Answer::Secret("sk-deepseek-000000000"),
        Answer::Select(0),
        Answer::Confirm(true),
    ]);
    let outcome = run(&mut script, &LlmConfig::default(), &fake.connect()).await.unwrap();
    let WizardOutcome::Save { llm, verified } = outcome else { panic!("expected a save: {outcome:?}") };
    assert!(!verified);
    assert_eq!((llm.base_url.as_str(), llm.model.as_str()), ("https://api.deepseek.com/v1", "deepseek-chat"));
    assert!(script.saw("connection test failed: the model endpoint failed with HTTP 500"), "{:?}", script.transcript);
}

#[tokio::test]
async fn an_endpoint_without_a_model_list_is_still_verified_by_chat() {
    let fake = Fake::new(&[], Fails::ListNotFound);
    let mut script = Script::new(&[
        Answer::Select(CUSTOM),
        Answer::Text("ftp://nope"),
        Answer::Text("https://llm.internal/v1/chat/completions/"),
        Answer::Secret(""),
        Answer::Text("my-model"),
    ]);
    let outcome = run(&mut script, &LlmConfig::default(), &fake.connect()).await.unwrap();
    let WizardOutcome::Save { llm, verified: true } = outcome else { panic!("expected a verified save: {outcome:?}") };
    assert_eq!((llm.base_url.as_str(), llm.model.as_str(), llm.api_key), ("https://llm.internal/v1", "my-model", None));
    assert!(script.saw("input Base URL [http://localhost:11434/v1]"), "custom starts from the current URL");
    assert!(script.saw("note ✗ `ftp://nope` is not an http:// or https:// URL"));
    assert!(script.saw("could not list the models"));
}

#[tokio::test]
async fn the_current_key_is_kept_on_enter_for_the_same_endpoint() {
    let current = LlmConfig {
        base_url: "https://api.openai.com/v1/".to_owned(),
        model: "gpt-4o".to_owned(),
        api_key: Some("sk-current-key-00001234".to_owned()),
        ..LlmConfig::default()
    };
    let fake = Fake::new(&["gpt-4o", "gpt-4o-mini"], Fails::Nothing);
    let mut script = Script::new(&[Answer::Select(OPENAI), Answer::Text("="), Answer::Secret(""), Answer::Select(0)]);
    let outcome = run(&mut script, &current, &fake.connect()).await.unwrap();
    let WizardOutcome::Save { llm, verified: true } = outcome else { panic!("{outcome:?}") };
    assert_eq!(llm.api_key, current.api_key);
    assert!(script.saw("select LLM provider") && script.saw("default=1"), "OpenAI preselected");
    assert!(script.saw("Enter keeps sk-…1234"));
    assert!(script.saw("default=0"), "the current model preselected");
}

#[tokio::test]
async fn a_required_key_is_asked_again_when_empty() {
    let fake = Fake::new(&["m"], Fails::Nothing);
    let mut script = Script::new(&[
        Answer::Select(OPENAI),
        Answer::Text("="),
        Answer::Secret(""),
        Answer::Secret("sk-now-0000000000"),
        Answer::Select(0),
    ]);
    let outcome = run(&mut script, &LlmConfig::default(), &fake.connect()).await.unwrap();
    assert!(matches!(outcome, WizardOutcome::Save { verified: true, .. }));
    assert!(script.saw("note ✗ OpenAI needs an API key"));
}

#[tokio::test]
async fn set_llm_saves_the_file_keeping_unknown_keys_and_a_backup() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("config.json");
    let original = r#"{"llm": {"model": "old", "x_custom": 1}, "mine": true}"#;
    std::fs::write(&path, original).unwrap();
    let fake = Fake::new(&["qwen2.5:7b"], Fails::Nothing);
    let mut script = Script::new(&[Answer::Select(OLLAMA), Answer::Text("="), Answer::Select(0)]);
    let outcome = set_llm_with(&mut script, home.path(), &fake.connect()).await.unwrap();
    assert_eq!(outcome, SetLlmOutcome::Saved { path: path.clone(), verified: true });
    let saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!((saved["llm"]["model"].as_str(), saved["llm"]["x_custom"].as_i64()), (Some("qwen2.5:7b"), Some(1)));
    assert_eq!(saved["mine"], true);
    assert_eq!(std::fs::read_to_string(home.path().join("config.json.bak")).unwrap(), original);
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
}

#[tokio::test]
async fn set_llm_leaves_the_file_alone_when_not_saved_or_cancelled() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("config.json");
    std::fs::write(&path, "{}").unwrap();
    let fake = Fake::new(&[], Fails::ListUnauthorized);
    let mut script = Script::new(&[
        Answer::Select(OPENAI),
        Answer::Text("="),
        Answer::Secret("k"),
        Answer::Text("="),
        Answer::Confirm(false),
    ]);
    assert_eq!(set_llm_with(&mut script, home.path(), &fake.connect()).await.unwrap(), SetLlmOutcome::NotSaved);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");

    struct CtrlC;
    impl Prompter for CtrlC {
        fn select(&mut self, _: &str, _: &[String], _: usize) -> io::Result<usize> {
            Err(io::ErrorKind::Interrupted.into())
        }
        fn input(&mut self, _: &str, _: &str) -> io::Result<String> {
            Err(io::ErrorKind::Interrupted.into())
        }
        fn password(&mut self, _: &str) -> io::Result<String> {
            Err(io::ErrorKind::Interrupted.into())
        }
        fn confirm(&mut self, _: &str, _: bool) -> io::Result<bool> {
            Err(io::ErrorKind::Interrupted.into())
        }
        fn note(&mut self, _: &str) -> io::Result<()> {
            Ok(())
        }
    }
    assert_eq!(set_llm_with(&mut CtrlC, home.path(), &fake.connect()).await.unwrap(), SetLlmOutcome::Cancelled);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
    assert!(!home.path().join("config.json.bak").exists());
}

#[tokio::test]
async fn the_model_list_leaves_out_non_chat_models_and_finds_prefixed_names() {
    let fake =
        Fake::new(&["models/text-embedding-004", "models/gemini-2.5-pro", "models/gemini-2.5-flash"], Fails::Nothing);
    let mut script =
        Script::new(&[Answer::Select(3), Answer::Text("="), Answer::Secret("AIza-0000000000000"), Answer::Select(0)]);
    let outcome = run(&mut script, &LlmConfig::default(), &fake.connect()).await.unwrap();
    assert!(
        script.saw(
            r#"select Model ["models/gemini-2.5-flash", "models/gemini-2.5-pro", "Other (type a name)"] default=0"#
        ),
        "{:?}",
        script.transcript
    );
    let WizardOutcome::Save { llm, .. } = outcome else { panic!("{outcome:?}") };
    assert_eq!(llm.base_url, "https://generativelanguage.googleapis.com/v1beta/openai");
}

#[tokio::test]
async fn the_base_url_is_a_default_that_typing_replaces_and_two_urls_run_together_are_refused() {
    let fake = Fake::new(&["m"], Fails::Nothing);
    let mut script = Script::new(&[
        Answer::Select(CUSTOM),
        // What typing after an editable pre-filled URL produced before.
        Answer::Text("http://localhost:11434/v1http://gpu-box:8000/v1"),
        Answer::Text("http://"),
        // Enter alone: the default shown beside the prompt.
        Answer::Text(""),
        Answer::Secret(""),
        Answer::Select(0),
    ]);
    let outcome = run(&mut script, &LlmConfig::default(), &fake.connect()).await.unwrap();
    let WizardOutcome::Save { llm, verified: true } = outcome else { panic!("{outcome:?}") };
    assert_eq!(llm.base_url, "http://localhost:11434/v1");
    assert!(script.saw("note ✗ `http://localhost:11434/v1http://gpu-box:8000/v1` holds a second `://`"));
    assert!(script.saw("note ✗ `http://` is not an http:// or https:// URL"), "{:?}", script.transcript);
    let asked = script.transcript.iter().filter(|l| l.starts_with("input Base URL")).collect::<Vec<_>>();
    assert_eq!(asked, ["input Base URL [http://localhost:11434/v1]"; 3], "the default stays the default");

    let mut script = Script::new(&[
        Answer::Select(CUSTOM),
        Answer::Text(" https://gpu-box:8000/v1 "),
        Answer::Secret(""),
        Answer::Select(0),
    ]);
    let outcome = run(&mut script, &LlmConfig::default(), &fake.connect()).await.unwrap();
    let WizardOutcome::Save { llm, .. } = outcome else { panic!("{outcome:?}") };
    assert_eq!(llm.base_url, "https://gpu-box:8000/v1", "what was typed replaces the default");
}

#[tokio::test]
async fn the_key_line_says_what_became_of_the_key_and_never_shows_stars_for_nothing() {
    let fake = Fake::new(&["m"], Fails::Nothing);
    let mut script = Script::new(&[Answer::Select(CUSTOM), Answer::Text(""), Answer::Secret(""), Answer::Select(0)]);
    run(&mut script, &LlmConfig::default(), &fake.connect()).await.unwrap();
    assert!(script.saw("note ✓ API key: none"), "{:?}", script.transcript);
    assert!(!script.saw("*"), "{:?}", script.transcript);

    let mut script = Script::new(&[
        Answer::Select(OPENAI),
        Answer::Text(""),
        Answer::Secret("sk-typed-000000001"),
        Answer::Select(0),
    ]);
    run(&mut script, &LlmConfig::default(), &fake.connect()).await.unwrap();
    assert!(script.saw("note ✓ API key: the one typed (18 characters)"), "{:?}", script.transcript);
    assert!(!script.saw("sk-typed"), "the key itself is never shown");

    let current = LlmConfig {
        base_url: "https://api.openai.com/v1".to_owned(),
        api_key: Some("sk-current-key-00001234".to_owned()),
        ..LlmConfig::default()
    };
    let mut script = Script::new(&[Answer::Select(OPENAI), Answer::Text(""), Answer::Secret(""), Answer::Select(0)]);
    run(&mut script, &current, &fake.connect()).await.unwrap();
    assert!(script.saw("note ✓ API key: kept sk-…1234"), "{:?}", script.transcript);
}

#[tokio::test]
async fn a_failed_test_says_what_to_check_not_to_run_set_llm_again() {
    for fails in [Fails::Unreachable, Fails::ListUnauthorized, Fails::Chat] {
        let fake = Fake::new(&[], fails);
        let mut script = Script::new(&[
            Answer::Select(CUSTOM),
            Answer::Text("http://gpu-box:8000/v1"),
            Answer::Secret(""),
            Answer::Text("mistral-7b"),
            Answer::Confirm(false),
        ]);
        let outcome = run(&mut script, &LlmConfig::default(), &fake.connect()).await.unwrap();
        assert_eq!(outcome, WizardOutcome::Discard);
        assert!(script.saw("connection test failed"), "{:?}", script.transcript);
        assert!(!script.saw("set-llm"), "advice to run the command the user is in: {:?}", script.transcript);
        assert!(
            script.saw("Check the Base URL (http://gpu-box:8000/v1), that the server is running")
                && script.saw("the model name (mistral-7b)")
                && script
                    .saw("`opsai doctor --base-url http://gpu-box:8000/v1 --model mistral-7b` checks it step by step"),
            "{:?}",
            script.transcript
        );
    }
}

/// Issue 23: a key command (or variable, or keyring entry) for the same endpoint is kept without
/// asking; a new endpoint asks for a key and drops the old source.
#[tokio::test]
async fn a_key_source_is_kept_for_the_same_endpoint_and_dropped_for_another() {
    let current = LlmConfig {
        base_url: "https://api.openai.com/v1".to_owned(),
        model: "gpt-4o".to_owned(),
        api_key_cmd: Some("pass show openai".to_owned()),
        ..LlmConfig::default()
    };
    let fake = Fake::new(&["gpt-4o"], Fails::Nothing);
    let mut script = Script::new(&[Answer::Select(OPENAI), Answer::Text("="), Answer::Select(0)]);
    let outcome = run(&mut script, &current, &fake.connect()).await.unwrap();
    let WizardOutcome::Save { llm, .. } = outcome else { panic!("{outcome:?}") };
    assert_eq!((llm.api_key, llm.api_key_cmd.as_deref()), (None, Some("pass show openai")));
    assert!(script.saw("kept from the output of `pass show openai`"), "{:?}", script.transcript);
    assert!(!script.saw("password"), "no key was asked for");

    let mut script = Script::new(&[
        Answer::Select(OPENAI),
        Answer::Text("https://other.example.com/v1"),
        Answer::Secret("sk-typed-0000000000"),
        Answer::Select(0),
    ]);
    let outcome = run(&mut script, &current, &fake.connect()).await.unwrap();
    let WizardOutcome::Save { llm, .. } = outcome else { panic!("{outcome:?}") };
    assert_eq!((llm.api_key.as_deref(), llm.api_key_cmd), (Some("sk-typed-0000000000"), None));
}
