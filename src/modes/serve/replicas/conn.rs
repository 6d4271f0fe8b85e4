//! A replica's connection with the statements prepared on it: each statement is parsed and
//! planned once per connection, then every query of it is one round trip (a query given as text
//! is prepared again each time, two round trips and a parse for the database).

use std::collections::HashMap;
use std::sync::Mutex;

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Error, Row, SimpleQueryMessage, Statement};

pub(super) struct Conn {
    client: Client,
    prepared: Mutex<HashMap<&'static str, Statement>>,
}

type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

impl Conn {
    pub fn new(client: Client) -> Self {
        Self { client, prepared: Mutex::default() }
    }

    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    async fn statement(&self, sql: &'static str) -> Result<Statement, Error> {
        let known = self.prepared.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(sql).cloned();
        if let Some(statement) = known {
            return Ok(statement);
        }
        let statement = self.client.prepare(sql).await?;
        self.prepared.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(sql, statement.clone());
        Ok(statement)
    }

    pub async fn query(&self, sql: &'static str, params: Params<'_>) -> Result<Vec<Row>, Error> {
        self.client.query(&self.statement(sql).await?, params).await
    }

    #[cfg(test)]
    pub async fn query_one(&self, sql: &'static str, params: Params<'_>) -> Result<Row, Error> {
        self.client.query_one(&self.statement(sql).await?, params).await
    }

    pub async fn query_opt(&self, sql: &'static str, params: Params<'_>) -> Result<Option<Row>, Error> {
        self.client.query_opt(&self.statement(sql).await?, params).await
    }

    pub async fn execute(&self, sql: &'static str, params: Params<'_>) -> Result<u64, Error> {
        self.client.execute(&self.statement(sql).await?, params).await
    }

    pub async fn simple_query(&self, sql: &str) -> Result<Vec<SimpleQueryMessage>, Error> {
        self.client.simple_query(sql).await
    }

    #[cfg(test)]
    pub async fn batch_execute(&self, sql: &str) -> Result<(), Error> {
        self.client.batch_execute(sql).await
    }
}
