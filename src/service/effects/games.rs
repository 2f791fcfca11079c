//! What several use cases do to a stored game: read it with its players' names, start it (from
//! an accepted challenge), save it on condition that nobody changed it meanwhile, end it (on the
//! board, by resignation or agreement, on time), and tell its players and spectators.

use chrono::{DateTime, NaiveDateTime, Utc};
use serde_json::Value;

use super::chance::{Autoplay, Chance};
use super::clocks;
use super::event_log::{self, GameChange};
use super::mail::{GameForMail, Notifier, enqueue};
use super::ratings;
use crate::clock::TimeControl;
use crate::db::{self, Database, DbConn};
use crate::dice::Seed;
use crate::mail::Notification;
use crate::rules::{GameKind, LoadedPosition, OptionsError, Outcome, Side};
use crate::service::model::error::{Conflict, ServiceError};
use crate::service::model::event::EventKind;
use crate::service::model::game::{
    ClockSetup, Dice, GameDetails, GameResult, GameState, GameStatus, Termination,
};
use crate::service::model::page::{Page, PageRequest};
use crate::service::model::rating::RatingChanges;
use crate::service::model::users::{Recipient, UserRef, recipient, user_ref, user_refs};
use crate::service::views::{self, GameView};

pub fn not_found(id: &str) -> ServiceError {
    ServiceError::NotFound(format!("there is no game with id `{id}`"))
}

/// Loads a game, typed.
pub fn find(conn: &mut DbConn, id: &str) -> Result<GameState, ServiceError> {
    let row = db::games::find(conn, id)?.ok_or_else(|| not_found(id))?;
    GameState::from_row(row)
}

pub fn details(conn: &mut DbConn, game: GameState) -> Result<GameDetails, ServiceError> {
    let refs = user_refs(conn, &[&game.white_id, &game.black_id])?;
    Ok(GameDetails {
        white: user_ref(&refs, &game.white_id)?,
        black: user_ref(&refs, &game.black_id)?,
        game,
    })
}

/// One page of a player's games (`listing`), each with its players' names.
pub fn listed(
    conn: &mut DbConn,
    listing: db::games::Listing<'_>,
    page: PageRequest,
) -> Result<Page<GameDetails>, ServiceError> {
    let total = db::games::count_for_user(conn, listing)?;
    let rows = db::games::page_for_user(conn, listing, page.per_page, page.offset())?;
    let ids: Vec<&str> = rows
        .iter()
        .flat_map(|g| [g.white_id.as_str(), g.black_id.as_str()])
        .collect();
    let refs = user_refs(conn, &ids)?;
    let items = rows
        .into_iter()
        .map(|row| {
            let game = GameState::from_row(row)?;
            Ok(GameDetails {
                white: user_ref(&refs, &game.white_id)?,
                black: user_ref(&refs, &game.black_id)?,
                game,
            })
        })
        .collect::<Result<_, ServiceError>>()?;
    Ok(Page {
        items,
        page: page.page,
        per_page: page.per_page,
        total,
    })
}

/// A game about to start: what is played, with which options and clock, by whom.
pub struct NewGame<'a> {
    pub kind: GameKind,
    /// Complete (normalised by the engine).
    pub options: &'a Value,
    pub white_id: &'a str,
    pub black_id: &'a str,
    pub clock: ClockSetup,
    pub rated: bool,
}

/// Stores a new game at its start position; used when a challenge is accepted.
pub fn create(
    conn: &mut DbConn,
    new: NewGame<'_>,
    now: DateTime<Utc>,
) -> Result<GameState, ServiceError> {
    let NewGame {
        kind,
        options,
        white_id,
        black_id,
        clock,
        rated,
    } = new;
    let utc_now = now;
    let now = now.naive_utc();
    let engine = kind
        .engine()
        .ok_or_else(|| ServiceError::invalid("game", format!("{kind} cannot be played yet")))?;
    let bad_options = |e: OptionsError| ServiceError::invalid("options", e.to_string());
    let position = engine.start_position(options).map_err(bad_options)?;
    let mut game = GameState {
        id: uuid::Uuid::now_v7().to_string(),
        kind,
        engine,
        options: options.clone(),
        white_id: white_id.to_owned(),
        black_id: black_id.to_owned(),
        status: GameStatus::Active,
        position,
        ply: 0,
        to_move: None,
        result: None,
        termination: None,
        result_summary: None,
        draw_offer: None,
        days_per_move: match clock.control {
            TimeControl::PerMove { days } => Some(days as i32),
            _ => None,
        },
        created_at: now,
        updated_at: now,
        finished_at: None,
        dice: None,
        time_control: clock.control,
        weekend_pause: clock.weekend_pause,
        banks: [None, None],
        turn_started_at: None,
        deadline_at: None,
        next_reminder_at: None,
        rated,
        ratings_at_start: [None, None],
        conditional: None,
    };
    ratings::at_start(conn, &mut game)?;
    let start = game.load_position()?;
    if engine.opening_roll() || start.roll_due().is_some() {
        let seed = Seed::generate();
        game.dice = Some(Dice {
            commitment: seed.commitment(),
            seed,
            used: 0,
        });
    }
    let mut chance = Chance::default();
    let start = if engine.opening_roll() {
        let (white_die, black_die) = chance.opening_roll(&mut game, now)?;
        game.position = engine
            .start_position_for_opening(options, white_die, black_die)
            .map_err(bad_options)?;
        game.load_position()?
    } else {
        start
    };
    let autoplay = autoplay_of(conn, &game)?;
    let position = chance.settle(&mut game, start, autoplay, now)?;
    set_turn_or_finish(&mut game, position.as_ref(), now);
    clocks::start(conn, &mut game, utc_now)?;
    db::games::insert(conn, &game.to_row())?;
    chance.store(conn)?;
    Ok(game)
}

/// The players' `play_forced_moves` settings, by side.
pub fn autoplay_of(conn: &mut DbConn, game: &GameState) -> Result<Autoplay, ServiceError> {
    let settings = db::games::forced_move_settings(conn, [&game.white_id, &game.black_id])?;
    let of = |id: &str| settings.iter().any(|(user, on)| user == id && *on);
    Ok([of(&game.white_id), of(&game.black_id)])
}

/// After a move or at the start: whose turn it is, or how the game ended.
pub fn set_turn_or_finish(game: &mut GameState, position: &dyn LoadedPosition, now: NaiveDateTime) {
    match position.outcome() {
        Some(outcome) => finish_on_board(game, &outcome, now),
        None => game.to_move = Some(position.side_to_move()),
    }
}

/// Runs a transaction that changes a game in the group commit of its lane, and runs it once more
/// if a concurrent request changed the game between its read and its conditional write (possible
/// with several server processes on PostgreSQL; inside one process the writes to one game take
/// turns). The second run reads the new state, so its caller gets the true answer: not your turn,
/// the game is over, their own move replayed, or the action applied after the other request.
pub async fn write_game<T, F>(
    db: &Database,
    game_id: &str,
    transaction: F,
) -> Result<T, ServiceError>
where
    F: Fn(&mut DbConn) -> Result<T, ServiceError> + Clone + Send + 'static,
    T: Send + 'static,
{
    match db.write_grouped(game_id, transaction.clone()).await {
        Err(e) if e.is_race() => db.write_grouped(game_id, transaction).await,
        other => other,
    }
}

/// Ends a game: no one is to move any more, and its clock stops.
pub fn finish(
    game: &mut GameState,
    result: GameResult,
    termination: Termination,
    summary: Option<String>,
    now: NaiveDateTime,
) {
    game.status = GameStatus::Finished;
    game.result = Some(result);
    game.termination = Some(termination);
    game.result_summary = summary;
    game.to_move = None;
    game.draw_offer = None;
    game.finished_at = Some(now);
    game.updated_at = now;
    game.deadline_at = None;
    game.next_reminder_at = None;
}

pub fn finish_on_board(game: &mut GameState, outcome: &Outcome, now: NaiveDateTime) {
    let result = outcome.winner.map_or(GameResult::Drawn, GameResult::Won);
    finish(
        game,
        result,
        Termination::Board(outcome.reason),
        outcome.summary.clone(),
        now,
    );
}

/// Writes a game's new state, on condition that it is still active and at the ply it was read
/// at: of two requests that raced on the same game, the second changes nothing and learns so.
pub fn save(conn: &mut DbConn, game: &GameState, read_ply: i32) -> Result<(), ServiceError> {
    if db::games::save_if_unchanged(conn, &game.to_row(), read_ply)? {
        Ok(())
    } else {
        Err(race())
    }
}

pub fn race() -> ServiceError {
    ServiceError::conflict(
        Conflict::ConcurrentUpdate,
        "the game changed at the same moment; reload it and try again",
    )
}

/// Ends a game as lost on time by the player to move, and tells both players (`players`,
/// White first).
pub fn lose_on_time(
    conn: &mut DbConn,
    notifier: &Notifier,
    game: &mut GameState,
    players: [&Recipient; 2],
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let Some(loser) = game.to_move else {
        return Ok(());
    };
    let ply = game.ply;
    let flag_fell = game.deadline_at.unwrap_or(now.naive_utc());
    finish(
        game,
        GameResult::Won(loser.opponent()),
        Termination::Time,
        Some(format!("{} ran out of time", loser.name())),
        flag_fell,
    );
    save(conn, game, ply)?;
    let rated = ratings::settle(conn, game)?;
    let mail = GameForMail {
        game,
        notifier,
        white: &players[0].username,
        black: &players[1].username,
    };
    for to in players {
        enqueue(conn, to, mail.timeout(to, loser), Some(&game.id), now)?;
    }
    let [white, black] = players.map(|p| UserRef {
        id: p.id.clone(),
        username: p.username.clone(),
    });
    let details = GameDetails {
        game: game.clone(),
        white,
        black,
    };
    tell_everyone(conn, details, None, rated.as_ref(), now)?;
    Ok(())
}

/// Records the events of a change made off the board (a draw answered, a resignation, a flag
/// fallen) for both players and the game's spectators.
pub fn tell_everyone(
    conn: &mut DbConn,
    details: GameDetails,
    draw: Option<(EventKind, Side)>,
    rated: Option<&RatingChanges>,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let view = GameView::new(details.clone(), true)?;
    let change = GameChange {
        moves: &[],
        draw,
        rated,
    };
    let events = event_log::after_game_change(&details, &view, &views::raw(&view)?, change)?;
    event_log::record(conn, events, now.naive_utc())?;
    Ok(())
}

/// Mails the opponent of `actor` about what `actor` just did.
pub fn tell_opponent(
    conn: &mut DbConn,
    about: &GameForMail<'_>,
    actor: Side,
    now: DateTime<Utc>,
    what: impl Fn(&GameForMail<'_>, &Recipient) -> Notification,
) -> Result<(), ServiceError> {
    let to = recipient(conn, about.game.player(actor.opponent()))?;
    enqueue(conn, &to, what(about, &to), Some(&about.game.id), now)?;
    Ok(())
}
