//! TEMPORARY: the contract's store API over the current store, until CORE's migration 2 lands.
#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::type_complexity)]
use std::sync::Mutex;

use crate::protocol::ChatMessage;
use crate::store::sessions::{SessionError, SessionStore};

pub struct WebConversation {
    pub id: i64,
    pub title: String,
    pub user: Option<String>,
    pub cluster: Option<String>,
    pub message_count: i64,
    pub created_at: i64,
    pub updated_at: i64,
}
pub struct StoredMessage {
    pub id: i64,
    pub message: ChatMessage,
    pub created_at: i64,
}
pub struct NewConversation<'a> {
    pub first_request: &'a str,
    pub cwd: &'a str,
    pub host: &'a str,
    pub model: &'a str,
    pub user: Option<&'a str>,
    pub cluster: Option<&'a str>,
}
static OWNERS: Mutex<Vec<(i64, Option<String>, Option<String>, String)>> = Mutex::new(Vec::new());

pub trait Web {
    fn create(&self, new: &NewConversation<'_>) -> Result<i64, SessionError>;
    fn get_web(&self, id: i64) -> Result<Option<WebConversation>, SessionError>;
    fn list_for_user(&self, user: &str) -> Result<Vec<WebConversation>, SessionError>;
    fn messages_with_meta(&self, id: i64) -> Result<Vec<StoredMessage>, SessionError>;
    fn set_title(&self, id: i64, title: &str) -> Result<(), SessionError>;
}
impl Web for SessionStore {
    fn create(&self, new: &NewConversation<'_>) -> Result<i64, SessionError> {
        let id = SessionStore::create(
            self,
            &crate::store::sessions::NewConversation {
                first_request: new.first_request,
                cwd: new.cwd,
                host: new.host,
                model: new.model,
            },
        )?;
        OWNERS.lock().unwrap().push((
            id,
            new.user.map(Into::into),
            new.cluster.map(Into::into),
            new.first_request.into(),
        ));
        Ok(id)
    }
    fn get_web(&self, id: i64) -> Result<Option<WebConversation>, SessionError> {
        let Some(s) = self.get(id)? else { return Ok(None) };
        let owners = OWNERS.lock().unwrap();
        let o = owners.iter().find(|o| o.0 == id);
        Ok(Some(WebConversation {
            id,
            title: o.map(|o| o.3.clone()).unwrap_or_default(),
            user: o.and_then(|o| o.1.clone()),
            cluster: o.and_then(|o| o.2.clone()),
            message_count: s.message_count,
            created_at: s.created_at / 1000,
            updated_at: s.updated_at / 1000,
        }))
    }
    fn list_for_user(&self, user: &str) -> Result<Vec<WebConversation>, SessionError> {
        let mut out = vec![];
        for s in self.list(1000)? {
            if let Some(w) = self.get_web(s.id)?
                && w.user.as_deref() == Some(user)
            {
                out.push(w);
            }
        }
        Ok(out)
    }
    fn messages_with_meta(&self, id: i64) -> Result<Vec<StoredMessage>, SessionError> {
        Ok(self
            .messages(id)?
            .into_iter()
            .enumerate()
            .map(|(i, m)| StoredMessage { id: i as i64, message: m, created_at: 1_764_000_000 })
            .collect())
    }
    fn set_title(&self, id: i64, title: &str) -> Result<(), SessionError> {
        if let Some(o) = OWNERS.lock().unwrap().iter_mut().find(|o| o.0 == id) {
            o.3 = title.into();
        }
        Ok(())
    }
}
