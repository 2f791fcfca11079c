//! The group commit, below the API, on the backend the suite runs on: a write that fails touches
//! no other write of its group, whether it ran in a savepoint of its own or without one (and the
//! writes before it were run again).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::sql_types::Text;
use diesel::{QueryableByName, RunQueryDsl};
use futures_util::future::join_all;

use kuryr::db::{Database, DbConn, StorageError};

use crate::helpers::spawn_app;

/// How a test write ends.
#[derive(Debug, PartialEq)]
enum Failure {
    /// Refused before writing anything.
    Refused,
    /// Failed after writing.
    Broke,
    Storage(String),
}

impl From<StorageError> for Failure {
    fn from(e: StorageError) -> Self {
        Failure::Storage(e.to_string())
    }
}

fn wrote_nothing(e: &Failure) -> bool {
    *e == Failure::Refused
}

fn insert(conn: &mut DbConn, name: &str) -> Result<(), Failure> {
    diesel::sql_query("INSERT INTO grouped (name) VALUES ($1)")
        .bind::<Text, _>(name)
        .execute(conn)
        .map(drop)
        .map_err(|e| Failure::Storage(e.to_string()))
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    name: String,
}

/// What a write of the group does.
#[derive(Clone, Copy)]
enum Plan {
    /// Rerunnable: inserts its row.
    Store,
    /// Rerunnable: refuses, writing nothing.
    Refuse,
    /// Rerunnable: inserts its row, then fails.
    Break,
    /// Run once: inserts its row, then fails.
    BreakOnce,
}

async fn write(
    db: &Database,
    name: String,
    plan: Plan,
    runs: Arc<AtomicUsize>,
) -> Result<(), Failure> {
    let job = move |conn: &mut DbConn| {
        runs.fetch_add(1, Ordering::SeqCst);
        match plan {
            Plan::Refuse => Err(Failure::Refused),
            Plan::Store => insert(conn, &name),
            Plan::Break | Plan::BreakOnce => {
                insert(conn, &name)?;
                Err(Failure::Broke)
            }
        }
    };
    match plan {
        Plan::BreakOnce => db.write_grouped("grouped", job).await,
        _ => db.write_rerunnable("grouped", job, wrote_nothing).await,
    }
}

#[actix_web::test]
async fn a_failed_write_is_undone_alone_and_the_rest_of_its_group_is_kept() {
    let app = spawn_app().await;
    let db = app.db.clone();
    db.write(|conn| {
        conn.batch_execute("CREATE TABLE grouped (name TEXT PRIMARY KEY)")
            .map_err(StorageError::from)
    })
    .await
    .unwrap();

    // The lane is held by a write of its own while the group queues behind it, so that the
    // group runs as one, in the order given.
    let (started, has_started) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let holder = {
        let db = db.clone();
        actix_web::rt::spawn(async move {
            db.write_grouped("grouped", move |_conn: &mut DbConn| {
                started.send(()).unwrap();
                released.recv_timeout(Duration::from_secs(30)).unwrap();
                Ok::<_, StorageError>(())
            })
            .await
        })
    };
    while has_started.try_recv().is_err() {
        actix_web::rt::time::sleep(Duration::from_millis(5)).await;
    }

    use Plan::*;
    let plans = [
        Store, Store, Refuse, Store, Break, Store, BreakOnce, Store, Break, Store,
    ];
    let runs: Vec<Arc<AtomicUsize>> = plans.iter().map(|_| Arc::default()).collect();
    let writes = join_all(
        plans
            .iter()
            .zip(&runs)
            .enumerate()
            .map(|(i, (plan, runs))| write(&db, format!("w{i}"), *plan, runs.clone())),
    );
    let releasing = async {
        actix_web::rt::time::sleep(Duration::from_millis(200)).await;
        release.send(()).unwrap();
    };
    let (answers, ()) = futures_util::future::join(writes, releasing).await;
    holder.await.unwrap().unwrap();

    let expected: Vec<Result<(), Failure>> = plans
        .iter()
        .map(|plan| match plan {
            Store => Ok(()),
            Refuse => Err(Failure::Refused),
            Break | BreakOnce => Err(Failure::Broke),
        })
        .collect();
    assert_eq!(answers, expected);

    let stored: Vec<String> = db
        .read(|conn| {
            diesel::sql_query("SELECT name FROM grouped ORDER BY name")
                .load::<Row>(conn)
                .map_err(StorageError::from)
        })
        .await
        .unwrap()
        .into_iter()
        .map(|row| row.name)
        .collect();
    assert_eq!(stored, ["w0", "w1", "w3", "w5", "w7", "w9"]);

    // The first failure undid the writes since `BEGIN` (w0 to w3, run again); the write run once
    // ended that run, so the second failure undid only w7, back to the savepoint after it.
    let counts: Vec<usize> = runs.iter().map(|r| r.load(Ordering::SeqCst)).collect();
    assert_eq!(counts, [2, 2, 2, 2, 1, 1, 1, 2, 1, 1]);
}
