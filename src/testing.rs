//! Test doubles for the seams, shared by the unit tests and the benches (a separate crate, hence
//! public): a scripted `ChatModel`, a scripted `Executor`, a `FileSystem` with a chosen home, and
//! [`wait_until`], the deadline wait the tests use instead of sleeping. The approvers are the real
//! `ScriptedApprover` and `approval::NoApprover`.
//! Not an API: nothing outside tests and benches uses it.

pub mod postgres;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::approval::{ApprovalRequest, Approver};
use crate::exec::fs::{FileMeta, FileSystem, LocalFs};
use crate::exec::{ExecError, ExecResult, Executor, OutputSink};
use crate::llm::{ChatModel, ChatRequest, DeltaSink, LlmError, ModelDelta, ModelReply};
use crate::protocol::{Approval, CommandRequest, Risk, ToolCall};

type Reply = Result<ModelReply, LlmError>;
type Fallback = Arc<dyn Fn(&ChatRequest) -> Reply + Send + Sync>;
type Listing = Arc<dyn Fn() -> Result<Vec<String>, LlmError> + Send + Sync>;

/// A model that answers from a queue of replies (text, tool calls, errors), in order, and records
/// every request it got. Clones share the queue and the record, so a test can keep one clone to
/// inspect while the code under test owns another.
#[derive(Clone)]
pub struct ScriptedModel {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    requests: Arc<Mutex<Vec<ChatRequest>>>,
    record: bool,
    /// Answers once the queue is empty; by default a protocol error, so a test that asks more
    /// often than it scripted fails instead of looping.
    fallback: Fallback,
    models: Listing,
    chunk_delay: Option<Duration>,
}

impl ScriptedModel {
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        Self {
            replies: Arc::new(Mutex::new(replies.into_iter().collect())),
            requests: Arc::default(),
            record: true,
            fallback: Arc::new(|_| Err(LlmError::Protocol("script ran out".into()))),
            models: Arc::new(|| Ok(Vec::new())),
            chunk_delay: None,
        }
    }

    /// What to answer once the scripted replies are used up.
    pub fn then(mut self, fallback: impl Fn(&ChatRequest) -> Reply + Send + Sync + 'static) -> Self {
        self.fallback = Arc::new(fallback);
        self
    }

    /// What `list_models` answers (an empty list by default).
    pub fn listing(mut self, models: impl Fn() -> Result<Vec<String>, LlmError> + Send + Sync + 'static) -> Self {
        self.models = Arc::new(models);
        self
    }

    /// Streams each reply's text word by word, waiting `delay` before each piece (a slow model).
    pub fn chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = Some(delay);
        self
    }

    /// Keeps no copy of the requests (benches, where the copies would be measured too).
    pub fn unrecorded(mut self) -> Self {
        self.record = false;
        self
    }

    /// The requests so far, in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl ChatModel for ScriptedModel {
    fn complete<'a>(&'a self, request: &'a ChatRequest, on_delta: DeltaSink<'a>) -> BoxFuture<'a, Reply> {
        if self.record {
            self.requests.lock().unwrap_or_else(PoisonError::into_inner).push(request.clone());
        }
        let next = self.replies.lock().unwrap_or_else(PoisonError::into_inner).pop_front();
        let reply = next.unwrap_or_else(|| (self.fallback)(request));
        let delay = self.chunk_delay;
        Box::pin(async move {
            if let (Some(delay), Ok(reply)) = (delay, &reply) {
                for piece in reply.content.split_inclusive(' ') {
                    tokio::time::sleep(delay).await;
                    on_delta(ModelDelta::Content(piece.to_owned()));
                }
            }
            reply
        })
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>> {
        let models = (self.models)();
        Box::pin(async move { models })
    }
}

/// A reply that answers with `text`.
pub fn answer(text: &str) -> ModelReply {
    ModelReply { content: text.into(), ..ModelReply::default() }
}

/// A reply that calls `tool` once with `arguments`.
pub fn tool_call(id: &str, tool: &str, arguments: Value) -> ModelReply {
    ModelReply { tool_calls: vec![ToolCall { id: id.into(), name: tool.into(), arguments }], ..ModelReply::default() }
}

/// A reply that asks to run `command`.
pub fn command_call(id: &str, command: &str) -> ModelReply {
    tool_call(id, "run_command", json!({"command": command}))
}

type Answer = Box<dyn Fn(&str) -> Result<ExecResult, ExecError> + Send + Sync>;

/// Runs nothing: records each command and answers what `answer` says for it, passing the
/// output to the live-output sink as a real executor would.
pub struct ScriptedExecutor {
    answer: Answer,
    ran: Mutex<Vec<String>>,
}

impl ScriptedExecutor {
    pub fn new(answer: impl Fn(&str) -> Result<ExecResult, ExecError> + Send + Sync + 'static) -> Self {
        Self { answer: Box::new(answer), ran: Mutex::new(Vec::new()) }
    }

    /// Every command exits with the code and prints the text `output` gives for it.
    pub fn printing(output: impl Fn(&str) -> (i32, String) + Send + Sync + 'static) -> Self {
        Self::new(move |command| {
            let (code, text) = output(command);
            Ok(exited(code, text))
        })
    }

    /// For code that must never run a command: running one fails the test.
    pub fn unused() -> Self {
        Self::new(|command| panic!("no command was expected to run, but `{command}` was"))
    }

    /// The commands run so far, in order.
    pub fn ran(&self) -> Vec<String> {
        self.ran.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl Executor for ScriptedExecutor {
    fn run<'a>(
        &'a self,
        request: &'a CommandRequest,
        on_output: OutputSink<'a>,
        _: CancellationToken,
    ) -> BoxFuture<'a, Result<ExecResult, ExecError>> {
        self.ran.lock().unwrap_or_else(PoisonError::into_inner).push(request.command.clone());
        let result = (self.answer)(&request.command);
        if let Ok(result) = &result {
            on_output(result.output.text().as_bytes());
        }
        Box::pin(async move { result })
    }
}

/// A command that ran to its end with `code`, having printed `output`.
pub fn exited(code: i32, output: impl Into<String>) -> ExecResult {
    let output = output.into();
    ExecResult {
        exit_code: Some(code),
        timed_out: false,
        interrupted: false,
        output: output.into(),
        duration: Duration::from_millis(3),
    }
}

/// This machine's files (`LocalFs`), with a chosen home directory.
pub struct HomeFs(pub PathBuf);

impl FileSystem for HomeFs {
    fn canonicalize<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, std::io::Result<PathBuf>> {
        LocalFs.canonicalize(path)
    }
    fn metadata<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, std::io::Result<Option<FileMeta>>> {
        LocalFs.metadata(path)
    }
    fn read<'a>(&'a self, path: &'a Path, limit: u64) -> BoxFuture<'a, std::io::Result<Vec<u8>>> {
        LocalFs.read(path, limit)
    }
    fn replace<'a>(&'a self, path: &'a Path, content: &'a [u8]) -> BoxFuture<'a, std::io::Result<()>> {
        LocalFs.replace(path, content)
    }
    fn remove<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, std::io::Result<()>> {
        LocalFs.remove(path)
    }
    fn home(&self) -> Option<PathBuf> {
        Some(self.0.clone())
    }
}

/// Writes `script` as an executable (mode 0755) at `path`, for a test's fake program.
///
/// The bytes go to a staged file and a child `cp` writes `path`, so this process never holds
/// `path` open for writing. A test binary runs its tests on several threads: a descriptor open here
/// is inherited, until its `exec`, by any child another test starts at that moment, and running a
/// file that some process still holds for writing fails with "Text file busy" (ETXTBSY).
pub fn write_program(path: impl AsRef<Path>, script: impl AsRef<[u8]>) {
    let path = path.as_ref();
    let staged = staged_beside(path);
    std::fs::write(&staged, script).unwrap_or_else(|e| panic!("writing {}: {e}", staged.display()));
    copy_program(&staged, path);
    let _ = std::fs::remove_file(&staged);
}

/// Copies the program `from` to `to` as an executable, by a child `cp` (see [`write_program`]).
pub fn copy_program(from: impl AsRef<Path>, to: impl AsRef<Path>) {
    let (from, to) = (from.as_ref(), to.as_ref());
    use std::os::unix::fs::PermissionsExt;
    let status = std::process::Command::new("cp")
        .arg("--")
        .arg(from)
        .arg(to)
        .status()
        .unwrap_or_else(|e| panic!("starting cp: {e}"));
    assert!(status.success(), "cp {} {} failed: {status}", from.display(), to.display());
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("chmod {}: {e}", to.display()));
}

fn staged_beside(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.staged-{}", std::process::id()))
}

/// Polls `condition` every 10 ms until it holds or `limit` has passed; whether it held. Meant
/// for `assert!(wait_until(LIMIT, || …), "what did not happen: {state}")`, so a timeout fails with
/// the state at that moment.
pub fn wait_until(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// An approval request for `git commit -m wip` at `risk`, with a reason, a why and (for Medium) a grant.
pub fn approval_request(risk: Risk) -> ApprovalRequest {
    ApprovalRequest {
        call_id: "c1".into(),
        command: "git commit -m wip".into(),
        display: None,
        risk,
        reasons: vec!["git commit -m wip: git commit changes the repository".into()],
        why: Some("save the work".into()),
        grant: (risk == Risk::Medium).then(|| "git commit".into()),
        host: None,
        detail: None,
    }
}

/// Answers from a script, in order; `Denied` once it runs out. For tests.
pub struct ScriptedApprover {
    answers: Mutex<VecDeque<Approval>>,
    pub asked: Mutex<Vec<ApprovalRequest>>,
}

impl ScriptedApprover {
    pub fn new(answers: impl IntoIterator<Item = Approval>) -> Self {
        Self { answers: Mutex::new(answers.into_iter().collect()), asked: Mutex::new(Vec::new()) }
    }
}

impl Approver for ScriptedApprover {
    fn ask(&self, request: &ApprovalRequest) -> Approval {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(request.clone());
        }
        self.answers.lock().ok().and_then(|mut answers| answers.pop_front()).unwrap_or_default()
    }
    fn interactive(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_postgres_server_starts_answers_and_stops() {
        let Some(server) = postgres::PgServer::start() else { return };
        let url = server.database("t1");
        let mut client = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
        let row = client.query_one("SELECT 1 + 1", &[]).unwrap();
        assert_eq!(row.get::<_, i32>(0), 2);
        let port = server.port;
        drop(client);
        drop(server);
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err(), "the server is gone");
    }

    #[tokio::test]
    async fn the_model_answers_in_order_then_fails_and_records_what_it_was_asked() {
        let model = ScriptedModel::new([Ok(answer("one two")), Err(LlmError::ContextTooLong)])
            .chunk_delay(Duration::from_millis(1));
        let request = ChatRequest { model: "m".into(), messages: vec![], tools: vec![], max_tokens: None };
        let mut pieces = Vec::new();
        let first = model.clone().complete(&request, &mut |delta| pieces.push(delta)).await.unwrap();
        assert_eq!(first.content, "one two");
        assert_eq!(pieces, [ModelDelta::Content("one ".into()), ModelDelta::Content("two".into())]);
        assert!(matches!(model.complete(&request, &mut |_| {}).await, Err(LlmError::ContextTooLong)));
        let ran_out = model.complete(&request, &mut |_| {}).await.unwrap_err();
        assert_eq!(ran_out.to_string(), "the model's reply could not be read: script ran out");
        assert_eq!(model.requests().len(), 3);
    }

    #[tokio::test]
    async fn the_executor_records_commands_and_streams_its_output() {
        let executor = ScriptedExecutor::printing(|command| (2, format!("ran {command}\n")));
        let request = CommandRequest {
            call_id: "c1".into(),
            command: "ls".into(),
            cwd: std::env::temp_dir(),
            timeout: Duration::from_secs(1),
            why: None,
            sandbox: None,
        };
        let mut seen = Vec::new();
        let result =
            executor.run(&request, &mut |bytes| seen.extend_from_slice(bytes), CancellationToken::new()).await.unwrap();
        assert_eq!((result.exit_code, result.output.text().as_str()), (Some(2), "ran ls\n"));
        assert_eq!(seen, b"ran ls\n");
        assert_eq!(executor.ran(), ["ls"]);
    }
}
