//! A move: decided on a reader from the copy of the game kept since its last move when there is
//! one, then stored by one conditional write; anything else decided again inside the write.

mod decide;
mod read;
mod replies;
mod store;

use std::sync::Arc;

use chrono::{DateTime, NaiveDateTime, Utc};

use crate::auth::Caller;
use crate::clock::TimeControl;
use crate::db::{Database, DbConn};
use crate::rules::GameKind;
use crate::service::effects::games::{lose_on_time, write_game};
use crate::service::effects::mail::Notifier;
use crate::service::model::error::{Conflict, ServiceError};
use crate::service::model::game::PlayedMove;
use crate::telemetry;
pub use decide::MoveRequest;
use decide::{Decided, MoveContext, decide};
use read::{read_game, read_recent_game};
use store::store;

/// Plays a move for the caller.
pub async fn play(
    db: &Database,
    notifier: &Notifier,
    caller: Caller,
    request: MoveRequest,
    now: DateTime<Utc>,
) -> Result<PlayedMove, ServiceError> {
    let key = request.game_id.clone();
    // Decided on a reader, beside the other requests, from the copy of the game kept since its
    // last move when there is one (see `db::recent`); the writer then only checks that the game,
    // its players and the caller's session are still as read and stores the outcome. Anything
    // else (an error, a replay, a lost race) is decided again inside the write transaction,
    // where the answer is exact; so is a game with a clock from the start, since its deadline
    // depends on more than the game's row (the players' vacations and zones).
    let recent = db.recent_games().clone();
    let on_reader = (
        recent.clone(),
        notifier.clone(),
        caller.clone(),
        request.clone(),
    );
    let decided = db
        .read_by_key(move |conn| {
            let (recent, notifier, caller, request) = &on_reader;
            let (read, kept) = read_recent_game(conn, recent, &request.game_id, caller)?;
            if read.game.time_control != TimeControl::None {
                return Ok(None);
            }
            let ctx = MoveContext {
                caller,
                request,
                notifier,
                now,
                writing: false,
            };
            let decided = decide(conn, &ctx, read)?;
            Ok::<_, ServiceError>(Some((decided, kept)))
        })
        .await;
    // A rated game's last move also changes two ratings, which another game's end may change
    // at the same moment: it is decided inside the write (`Decided::EndsRatedGame`).
    if let Ok(Some((Decided::Write(plan), kept))) = decided {
        let kind = plan.game.kind;
        let after = plan.game.is_active().then(|| kept.moved(plan.row.clone()));
        // It only stores what was decided, so it may run again (see `db::group_commit`); a lost
        // race is answered before its first write.
        let stored = db
            .write_rerunnable(&key, move |conn| store(conn, &plan), ServiceError::is_race)
            .await;
        match stored {
            Ok(played) => {
                match after {
                    Some(after) => recent.keep(Arc::new(after)),
                    None => recent.forget(&key),
                }
                count_move(kind);
                return Ok(played);
            }
            Err(e) if e.is_race() => {}
            Err(e) => return Err(e),
        }
    }
    // Whatever is decided inside the write, the copy (if any) is read again next time.
    recent.forget(&key);
    let notifier = notifier.clone();
    let answer = write_game(db, &key, move |conn| {
        let ctx = MoveContext {
            caller: &caller,
            request: &request,
            notifier: &notifier,
            now,
            writing: true,
        };
        play_in_transaction(conn, &ctx)
    })
    .await?;
    match answer {
        MoveAnswer::Played(played, kind) => {
            if let Some(kind) = kind {
                count_move(kind);
            }
            Ok(*played)
        }
        MoveAnswer::FlagFell { deadline } => Err(ServiceError::conflict(
            Conflict::GameOver,
            format!(
                "your time ran out at {}; the game is lost on time",
                deadline
                    .and_utc()
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            ),
        )),
    }
}

/// Counts a move once it is committed (a write may run more than once before).
fn count_move(kind: GameKind) {
    metrics::counter!(telemetry::MOVES, "game" => kind.id()).increment(1);
}

/// What a move request did: the move, or, when it came after the mover's deadline, the end of the
/// game on time (committed, then reported as an error).
enum MoveAnswer {
    /// With the game's kind when the move was stored now, not repeated.
    Played(Box<PlayedMove>, Option<GameKind>),
    FlagFell {
        deadline: NaiveDateTime,
    },
}

/// Plays a move inside the write transaction: decided and stored at once.
fn play_in_transaction(
    conn: &mut DbConn,
    ctx: &MoveContext<'_>,
) -> Result<MoveAnswer, ServiceError> {
    let read = read_game(conn, &ctx.request.game_id, ctx.caller)?;
    match decide(conn, ctx, read)? {
        Decided::Write(plan) => Ok(MoveAnswer::Played(
            Box::new(store(conn, &plan)?),
            Some(plan.game.kind),
        )),
        Decided::Replayed(played) => Ok(MoveAnswer::Played(played, None)),
        Decided::EndsRatedGame => Err(ServiceError::internal(
            "a move decided inside its write was sent back to the write",
        )),
        Decided::OutOfTime {
            mut game,
            players,
            deadline,
        } => {
            let [white, black] = &*players;
            lose_on_time(conn, ctx.notifier, &mut game, [white, black], ctx.now)?;
            Ok(MoveAnswer::FlagFell { deadline })
        }
    }
}
