use super::*;

#[test]
fn a_turn_of_a_deleted_conversation_keeps_no_grants() {
    let grants = Grants::default();
    let given = || HashSet::from(["run_command:touch".to_owned()]);
    let turn = Turn::new(1, "alice".into(), Arc::default());
    keep_grants(&grants, &turn, (1, "alice".into()), given());
    assert_eq!(grants.lock().unwrap().len(), 1);
    grants.lock().unwrap().clear();
    turn.delete();
    keep_grants(&grants, &turn, (1, "alice".into()), given());
    assert!(grants.lock().unwrap().is_empty());
}
