//! Game records: a stored game written as text (`docs/notation.md`).

use chrono::NaiveDateTime;

use super::effects::chance::parse_dice;
use super::effects::games;
use super::model::error::ServiceError;
use super::model::game::GameState;
use super::model::game::roll_purpose::{OPENING, TURN};
use super::model::users::{user_ref, user_refs};
use crate::db::models::{Move, Roll};
use crate::db::{Database, DbConn, moves, rolls};
use crate::rules::record::{Record, RecordMove, RecordResult};

/// The whole game as a record: headers, then every move in canonical notation, each with its
/// roll in games with dice.
pub async fn record(db: &Database, id: String) -> Result<String, ServiceError> {
    let stored = db.read(move |conn| stored(conn, &id)).await?;
    let Stored {
        game,
        white,
        black,
        history,
        rolls,
    } = &stored;
    let rfc3339 = |at: NaiveDateTime| {
        at.and_utc()
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    };
    let mut headers = vec![
        ("Game", game.kind.id().to_owned()),
        ("Id", game.id.clone()),
        ("White", white.clone()),
        ("Black", black.clone()),
        ("Options", game.options.to_string()),
        ("Started", rfc3339(game.created_at)),
    ];
    // As PGN's `WhiteElo`: the ratings in this game when it started, rounded.
    for (key, rating) in ["WhiteRating", "BlackRating"]
        .into_iter()
        .zip(game.ratings_at_start)
    {
        if let Some(rating) = rating {
            headers.push((key, format!("{rating:.0}")));
        }
    }
    if game.rated {
        headers.push(("Rated", "true".to_owned()));
    }
    if let Some(days) = game.days_per_move {
        headers.push(("DaysPerMove", days.to_string()));
    }
    if let Some(finished) = game.finished_at {
        headers.push(("Finished", rfc3339(finished)));
    }
    let result = match game.result {
        None => RecordResult::InProgress,
        Some(result) => RecordResult::Ended(result.winner()),
    };
    headers.push(("Result", result.token().to_owned()));
    if let Some(termination) = game.termination {
        headers.push(("Termination", termination.as_str().to_owned()));
    }
    if let Some(summary) = &game.result_summary {
        headers.push(("Summary", summary.clone()));
    }
    if let Some(dice) = &game.dice {
        headers.push(("DiceCommitment", dice.commitment.clone()));
    }
    // After an opening roll the game starts from the position it chose, which the record names.
    let opening = rolls.iter().rev().find(|roll| roll.purpose == OPENING);
    if let Some(opening) = opening {
        let (white_die, black_die) = match parse_dice(&opening.dice)[..] {
            [white, black] => (white, black),
            _ => {
                return Err(ServiceError::Internal(anyhow::anyhow!(
                    "opening roll `{}` is not two dice",
                    opening.dice
                )));
            }
        };
        let start = game
            .engine
            .start_position_for_opening(&game.options, white_die, black_die)
            .map_err(|e| ServiceError::Internal(anyhow::anyhow!("{e}")))?;
        headers.push(("Position", start));
    }
    // The last roll at a ply counts: between two games of a match, ties are rolled again.
    let turn_roll = |ply: i32| {
        rolls
            .iter()
            .rev()
            .find(|roll| roll.purpose == TURN && roll.ply == ply)
            .map(|roll| parse_dice(&roll.dice))
    };
    let record = Record {
        headers: headers
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect(),
        moves: history
            .iter()
            .map(|mv| RecordMove {
                line: 0,
                dice: turn_roll(mv.ply - 1),
                text: mv.notation.clone(),
            })
            .collect(),
    };
    Ok(record.format())
}

/// What a record is written from, read at once.
struct Stored {
    game: GameState,
    white: String,
    black: String,
    history: Vec<Move>,
    /// Empty for a game without dice.
    rolls: Vec<Roll>,
}

fn stored(conn: &mut DbConn, id: &str) -> Result<Stored, ServiceError> {
    let game = games::find(conn, id)?;
    let refs = user_refs(conn, &[&game.white_id, &game.black_id])?;
    let history = moves::of_game(conn, id)?;
    let rolls = if game.dice.is_some() {
        rolls::of_game(conn, id)?
    } else {
        Vec::new()
    };
    Ok(Stored {
        white: user_ref(&refs, &game.white_id)?.username,
        black: user_ref(&refs, &game.black_id)?.username,
        game,
        history,
        rolls,
    })
}
