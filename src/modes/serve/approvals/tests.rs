use super::*;

fn pending(
    pendings: &Pendings,
    call_id: &str,
    conversation: i64,
    risk: Risk,
) -> std::sync::mpsc::Receiver<(Approval, String)> {
    let (answer, answered) = sync_channel(1);
    let (owner, command) = ("alice".to_owned(), format!("touch {conversation}"));
    // Calls named "nogrant…" are requests the terminal offers no "always" for.
    let grantable = !call_id.starts_with("nogrant");
    let request = json!({"id": call_id, "conversation_id": conversation});
    let pending = Pending {
        call_id: call_id.into(),
        request_id: format!("r-{conversation}-{call_id}"),
        conversation,
        owner,
        risk,
        command,
        grantable,
        request,
        since: 0,
        answer,
    };
    pendings.waiting.lock().unwrap().push(pending);
    answered
}

const ALICE: Answerer = Answerer { user: "alice", operator: false };
const BOB: Answerer = Answerer { user: "bob", operator: false };

fn in_conversation(conversation: i64) -> Target<'static> {
    Target { conversation: Some(conversation), command: None, request: None }
}

#[test]
fn only_the_owner_answers_and_high_needs_the_word() {
    let pendings = Pendings::default();
    let medium = pending(&pendings, "c1", 1, Risk::Medium);
    let high = pending(&pendings, "c2", 1, Risk::High);
    assert_eq!(pendings.answer("c1", BOB, Target::default(), Approval::Approved, false), Err(AnswerError::NotPending));
    assert_eq!(
        pendings.answer("c1", ALICE, in_conversation(2), Approval::Approved, false),
        Err(AnswerError::NotPending)
    );
    assert_eq!(pendings.answer("c1", ALICE, Target::default(), Approval::Approved, false), Ok(()));
    assert_eq!(medium.recv().unwrap().0, Approval::Approved);
    assert_eq!(
        pendings.answer("c2", ALICE, Target::default(), Approval::Approved, false),
        Err(AnswerError::NeedsConfirm)
    );
    assert_eq!(pendings.answer("c2", ALICE, Target::default(), Approval::Denied, false), Ok(()), "no needs no word");
    assert_eq!(high.recv().unwrap().0, Approval::Denied);
    assert_eq!(pendings.answer("c2", ALICE, Target::default(), Approval::Denied, false), Err(AnswerError::NotPending));
}

#[test]
fn approve_session_needs_a_request_with_a_grant() {
    let pendings = Pendings::default();
    let plain = pending(&pendings, "nogrant1", 1, Risk::Medium);
    let grantable = pending(&pendings, "c2", 1, Risk::Medium);
    let session = |id| pendings.answer(id, ALICE, Target::default(), Approval::ApprovedForSession, false);
    assert_eq!(session("nogrant1"), Err(AnswerError::NoGrant));
    assert!(plain.try_recv().is_err(), "nothing was decided");
    assert_eq!(session("c2"), Ok(()));
    assert_eq!(grantable.recv().unwrap().0, Approval::ApprovedForSession);
    assert_eq!(pendings.answer("nogrant1", ALICE, Target::default(), Approval::Approved, false), Ok(()));
    assert_eq!(plain.recv().unwrap().0, Approval::Approved);
}

#[test]
fn an_answer_after_the_timeout_is_told_so_and_one_just_before_counts() {
    let pendings = Pendings::default();
    let _late = pending(&pendings, "c1", 1, Risk::Medium);
    assert!(pendings.expire("c1", 1, "alice"));
    let answer = || pendings.answer("c1", ALICE, Target::default(), Approval::Approved, false);
    assert_eq!(answer(), Err(AnswerError::TimedOut));
    let just_in_time = pending(&pendings, "c2", 1, Risk::Medium);
    assert_eq!(pendings.answer("c2", ALICE, Target::default(), Approval::Approved, false), Ok(()));
    assert!(!pendings.expire("c2", 1, "alice"), "the answer took it first");
    assert_eq!(just_in_time.try_recv().map(|answer| answer.0), Ok(Approval::Approved));
}

#[test]
fn a_stop_aborts_the_conversations_approvals_only() {
    let pendings = Pendings::default();
    let stopped = pending(&pendings, "c1", 1, Risk::Medium);
    let other = pending(&pendings, "c1", 2, Risk::Medium);
    pendings.abort(1);
    assert_eq!(stopped.recv().unwrap().0, Approval::Abort);
    assert!(other.try_recv().is_err());
    assert_eq!(pendings.answer("c1", ALICE, Target::default(), Approval::Approved, false), Ok(()));
    assert_eq!(other.recv().unwrap().0, Approval::Approved);
}

#[test]
fn the_same_call_id_in_two_conversations_needs_the_conversation_and_the_right_command() {
    let pendings = Pendings::default();
    let three = pending(&pendings, "call_1", 3, Risk::Medium);
    let four = pending(&pendings, "call_1", 4, Risk::Medium);
    let answer = |target| pendings.answer("call_1", ALICE, target, Approval::Approved, false);
    assert_eq!(answer(Target::default()), Err(AnswerError::Ambiguous));
    let wrong = Target { conversation: Some(4), command: Some("touch 3"), request: None };
    assert_eq!(answer(wrong), Err(AnswerError::OtherCommand));
    assert_eq!(answer(Target { command: Some("touch 4 "), ..wrong }), Err(AnswerError::OtherCommand));
    assert!(three.try_recv().is_err() && four.try_recv().is_err(), "nothing was decided");
    assert_eq!(answer(Target { command: Some("touch 4"), ..wrong }), Ok(()));
    assert_eq!(four.recv().unwrap().0, Approval::Approved);
    assert!(three.try_recv().is_err());
    assert_eq!(answer(Target::default()), Ok(()), "one left: the id alone names it");
    assert_eq!(three.recv().unwrap().0, Approval::Approved);
}

#[test]
fn an_operator_answers_anyones_request_from_the_queue_but_grants_only_their_own() {
    let pendings = Pendings::default();
    let viewers = pending(&pendings, "c1", 7, Risk::Medium);
    pendings.waiting.lock().unwrap()[0].owner = "bob".into();
    pendings.waiting.lock().unwrap()[0].since = 20;
    let _own = pending(&pendings, "c1", 8, Risk::Medium);
    pendings.waiting.lock().unwrap()[1].since = 10;
    let queue = pendings.queue();
    let asked: Vec<(&str, i64)> =
        queue.iter().map(|e| (e["asked_by"].as_str().unwrap(), e["conversation_id"].as_i64().unwrap())).collect();
    assert_eq!(asked, [("alice", 8), ("bob", 7)], "oldest first, with who asked");

    let carol = Answerer { user: "carol", operator: false };
    assert_eq!(
        pendings.answer("c1", carol, in_conversation(7), Approval::Approved, false),
        Err(AnswerError::NotPending),
        "only an operator answers another user's request"
    );
    let operator = Answerer { user: "carol", operator: true };
    assert_eq!(
        pendings.answer("c1", operator, Target::default(), Approval::Approved, false),
        Err(AnswerError::Ambiguous),
        "the id waits in two conversations"
    );
    let seen = Target { request: Some("r-7-c1"), ..in_conversation(7) };
    assert_eq!(
        pendings.answer("c1", operator, seen, Approval::ApprovedForSession, false),
        Err(AnswerError::OthersSession)
    );
    assert_eq!(
        pendings.answer("c1", operator, in_conversation(7), Approval::Approved, false),
        Err(AnswerError::NeedsRequestId),
        "another user's request is answered by its request id"
    );
    let stale = Target { request: Some("r-7-old"), ..in_conversation(7) };
    assert_eq!(pendings.answer("c1", operator, stale, Approval::Approved, false), Err(AnswerError::NotPending));
    let this_one = Target { request: Some("r-7-c1"), ..Target::default() };
    assert_eq!(pendings.answer("c1", operator, this_one, Approval::Approved, false), Ok(()));
    assert_eq!(viewers.recv().unwrap(), (Approval::Approved, "carol".to_owned()), "the answer says who gave it");
    assert_eq!(pendings.queue().len(), 1);
}

#[test]
fn a_viewer_has_at_most_two_requests_waiting() {
    let pendings = Pendings::default();
    let _first = pending(&pendings, "c1", 1, Risk::Medium);
    assert!(!pendings.viewer_at_cap("alice"));
    let _second = pending(&pendings, "c2", 2, Risk::Medium);
    assert!(pendings.viewer_at_cap("alice"), "two waiting: a third is refused at once");
    assert!(!pendings.viewer_at_cap("bob"), "others are not held back");
    pendings.abort(1);
    assert!(!pendings.viewer_at_cap("alice"), "one answered (here: stopped): room again");
}
