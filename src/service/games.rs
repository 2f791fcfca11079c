//! Games: reading them, playing moves, and the endings that happen off the board (resignation,
//! agreed draws).
//!
//! The stored position is the truth: a move reads it, asks the engine, and writes the new
//! position, the history row and the game's new state in one transaction. Nothing replays the
//! history.

use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::prelude::*;
use serde_json::Value;

use super::chance::{Autoplay, Chance};
use super::error::{Conflict, Refusal, ServiceError, Unauthenticated};
use super::notifications::{self, GameForMail, Notifier};
use super::{Page, PageRequest, UserRef, clocks, user_ref, user_refs};
use crate::auth::{AuthUser, Caller};
use crate::clock::TimeControl;
use crate::db::models::{Game, Move, Roll, status};
use crate::db::schema::{games, moves, rolls, users};
use crate::db::{Database, DbConn};
use crate::dice::Seed;
use crate::rules::{
    Engine, GameKind, LoadedPosition, MoveError, OptionsError, Outcome, PlayError, Side,
};

/// A game with the names of its players.
#[derive(Clone, Debug)]
pub struct GameDetails {
    pub game: Game,
    pub white: UserRef,
    pub black: UserRef,
}

impl GameDetails {
    pub fn engine(&self) -> Result<&'static dyn Engine, ServiceError> {
        engine_of(&self.game)
    }

    pub fn options(&self) -> Result<Value, ServiceError> {
        options_of(&self.game)
    }
}

/// The result of a move request.
#[derive(Debug)]
pub struct PlayedMove {
    pub mv: Move,
    pub game: GameDetails,
    /// The position the game is in now, already read (none for a replayed move).
    pub position: Option<Box<dyn LoadedPosition>>,
    /// The request repeated a move that had already been accepted.
    pub replayed: bool,
}

/// Which of the caller's games to list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusFilter {
    Active,
    Finished,
    All,
}

/// How a game ended, as stored in `termination` beside the engine's own reasons.
pub mod termination {
    pub const RESIGNATION: &str = "resignation";
    pub const AGREEMENT: &str = "agreement";
    pub const TIME: &str = "time";
}

/// The clock a new game is played with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockSetup {
    pub control: TimeControl,
    /// No time counts on Saturdays and Sundays in the zone of the player to move.
    pub weekend_pause: bool,
}

pub fn engine_of(game: &Game) -> Result<&'static dyn Engine, ServiceError> {
    game.game_kind
        .parse::<GameKind>()
        .ok()
        .and_then(GameKind::engine)
        .ok_or_else(|| {
            ServiceError::Internal(anyhow::anyhow!(
                "game {} is of kind `{}`, which this server cannot play",
                game.id,
                game.game_kind
            ))
        })
}

/// A game's stored options. Options that no longer read are an error that says so, never
/// quietly the defaults: they decide what is legal.
pub(super) fn options_of(game: &Game) -> Result<Value, ServiceError> {
    serde_json::from_str(&game.options).map_err(|e| {
        ServiceError::internal(format!(
            "game {}: stored options `{}` are unreadable: {e}",
            game.id, game.options
        ))
    })
}

fn side_of(game: &Game, user_id: &str) -> Option<Side> {
    if game.white_id == user_id {
        Some(Side::White)
    } else if game.black_id == user_id {
        Some(Side::Black)
    } else {
        None
    }
}

pub(super) fn player_of(game: &Game, side: Side) -> &str {
    match side {
        Side::White => &game.white_id,
        Side::Black => &game.black_id,
    }
}

fn not_found(id: &str) -> ServiceError {
    ServiceError::NotFound(format!("there is no game with id `{id}`"))
}

fn find(conn: &mut DbConn, id: &str) -> Result<Game, ServiceError> {
    games::table
        .find(id)
        .select(Game::as_select())
        .get_result(conn)
        .optional()?
        .ok_or_else(|| not_found(id))
}

fn details(conn: &mut DbConn, game: Game) -> Result<GameDetails, ServiceError> {
    let refs = user_refs(conn, &[&game.white_id, &game.black_id])?;
    Ok(GameDetails {
        white: user_ref(&refs, &game.white_id)?,
        black: user_ref(&refs, &game.black_id)?,
        game,
    })
}

/// Stores a new game at its start position; used when a challenge is accepted.
pub fn create(
    conn: &mut DbConn,
    kind: GameKind,
    options: &Value,
    white_id: &str,
    black_id: &str,
    clock: ClockSetup,
    now: DateTime<Utc>,
) -> Result<Game, ServiceError> {
    let utc_now = now;
    let now = now.naive_utc();
    let engine = kind
        .engine()
        .ok_or_else(|| ServiceError::invalid("game", format!("{kind} cannot be played yet")))?;
    let bad_options = |e: OptionsError| ServiceError::invalid("options", e.to_string());
    let position = engine.start_position(options).map_err(bad_options)?;
    let start = engine
        .load(&position, options)
        .map_err(|e| ServiceError::internal(format!("unreadable start position: {e}")))?;
    let uses_dice = engine.opening_roll() || start.roll_due().is_some();
    let seed = uses_dice.then(Seed::generate);
    let mut game = Game {
        id: uuid::Uuid::now_v7().to_string(),
        game_kind: kind.id().to_owned(),
        options: options.to_string(),
        white_id: white_id.to_owned(),
        black_id: black_id.to_owned(),
        status: status::ACTIVE.into(),
        position,
        ply: 0,
        to_move_id: None,
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
        dice_seed: seed.as_ref().map(Seed::to_hex),
        dice_commitment: seed.as_ref().map(Seed::commitment),
        dice_used: 0,
        time_control: (clock.control != TimeControl::None)
            .then(|| serde_json::to_string(&clock.control).unwrap_or_default()),
        weekend_pause: i32::from(clock.weekend_pause),
        clock_white: None,
        clock_black: None,
        turn_started_at: None,
        deadline_at: None,
        next_reminder_at: None,
    };
    let mut chance = Chance::default();
    let start = if engine.opening_roll() {
        let (white_die, black_die) = chance.opening_roll(&mut game, now)?;
        game.position = engine
            .start_position_for_opening(options, white_die, black_die)
            .map_err(bad_options)?;
        load(engine, &game, options)?
    } else {
        start
    };
    let autoplay = autoplay_of(conn, &game)?;
    let position = chance.settle(&mut game, start, autoplay, now)?;
    set_turn_or_finish(&mut game, position.as_ref(), now);
    clocks::start(conn, &mut game, utc_now)?;
    diesel::insert_into(games::table)
        .values(&game)
        .execute(conn)?;
    chance.store(conn)?;
    Ok(game)
}

/// The players' `play_forced_moves` settings, by side.
fn autoplay_of(conn: &mut DbConn, game: &Game) -> Result<Autoplay, ServiceError> {
    let settings: Vec<(String, i32)> = users::table
        .filter(users::id.eq_any([&game.white_id, &game.black_id]))
        .select((users::id, users::play_forced_moves))
        .load(conn)?;
    let of = |id: &str| settings.iter().any(|(user, on)| user == id && *on != 0);
    Ok([of(&game.white_id), of(&game.black_id)])
}

/// After a move or at the start: whose turn it is, or how the game ended.
fn set_turn_or_finish(game: &mut Game, position: &dyn LoadedPosition, now: NaiveDateTime) {
    match position.outcome() {
        Some(outcome) => finish_on_board(game, &outcome, now),
        None => game.to_move_id = Some(player_of(game, position.side_to_move()).to_owned()),
    }
}

pub async fn get(db: &Database, id: String) -> Result<GameDetails, ServiceError> {
    db.read(move |conn| {
        let game = find(conn, &id)?;
        details(conn, game)
    })
    .await
}

/// The caller's games: those where it is their move first, then the most recently active.
pub async fn list_mine(
    db: &Database,
    user_id: String,
    filter: StatusFilter,
    page: PageRequest,
) -> Result<Page<GameDetails>, ServiceError> {
    db.read(move |conn| {
        let mine = || {
            let mut query = games::table
                .filter(
                    games::white_id
                        .eq(user_id.clone())
                        .or(games::black_id.eq(user_id.clone())),
                )
                .into_boxed();
            match filter {
                StatusFilter::Active => query = query.filter(games::status.eq(status::ACTIVE)),
                StatusFilter::Finished => query = query.filter(games::status.eq(status::FINISHED)),
                StatusFilter::All => {}
            }
            query
        };
        let total: i64 = mine().count().get_result(conn)?;
        // 'active' sorts before 'finished'; among active games `to_move_id` is never NULL.
        let rows: Vec<Game> = mine()
            .order((
                games::status.asc(),
                games::to_move_id.eq(user_id.clone()).desc(),
                games::updated_at.desc(),
                games::id.desc(),
            ))
            .limit(page.per_page)
            .offset(page.offset())
            .select(Game::as_select())
            .load(conn)?;
        let ids: Vec<&str> = rows
            .iter()
            .flat_map(|g| [g.white_id.as_str(), g.black_id.as_str()])
            .collect();
        let refs = user_refs(conn, &ids)?;
        let items = rows
            .into_iter()
            .map(|game| {
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
    })
    .await
}

/// The whole history of a game, oldest first.
pub async fn history(db: &Database, id: String) -> Result<(GameDetails, Vec<Move>), ServiceError> {
    db.read(move |conn| {
        let game = find(conn, &id)?;
        let history = moves::table
            .filter(moves::game_id.eq(&id))
            .order(moves::ply.asc())
            .select(Move::as_select())
            .load(conn)?;
        Ok((details(conn, game)?, history))
    })
    .await
}

/// A move request as the client sent it.
#[derive(Clone, Debug)]
pub struct MoveRequest {
    pub text: String,
    /// The ply the client believes the game is at.
    pub ply: Option<i32>,
}

/// Plays a move for the caller.
pub async fn play(
    db: &Database,
    notifier: &Notifier,
    game_id: String,
    caller: Caller,
    request: MoveRequest,
    now: DateTime<Utc>,
) -> Result<PlayedMove, ServiceError> {
    let notifier = notifier.clone();
    let key = game_id.clone();
    let answer = write_game(db, &key, move |conn| {
        play_in_transaction(conn, &notifier, &game_id, &caller, &request, now)
    })
    .await?;
    match answer {
        MoveAnswer::Played(played) => Ok(*played),
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

/// What a move request did: the move, or, when it came after the mover's deadline, the end of the
/// game on time (committed, then reported as an error).
enum MoveAnswer {
    Played(Box<PlayedMove>),
    FlagFell { deadline: NaiveDateTime },
}

diesel::alias! {
    const WHITE_PLAYER: Alias<WhitePlayer> = users as white_player;
    const BLACK_PLAYER: Alias<BlackPlayer> = users as black_player;
}

/// A player as the move transaction needs them: to confirm the caller's session, to play their
/// forced moves, and to decide whether they are mailed.
#[derive(Clone, Debug, Queryable)]
struct Player {
    session_version: i32,
    play_forced_moves: i32,
    recipient: notifications::Recipient,
}

impl Player {
    fn user_ref(&self) -> UserRef {
        UserRef {
            id: self.recipient.id.clone(),
            username: self.recipient.username.clone(),
        }
    }
}

/// A game and both its players in one query: the move path's only read of them.
fn find_with_players(conn: &mut DbConn, id: &str) -> Result<(Game, [Player; 2]), ServiceError> {
    let (game, white, black) = games::table
        .inner_join(WHITE_PLAYER.on(WHITE_PLAYER.field(users::id).eq(games::white_id)))
        .inner_join(BLACK_PLAYER.on(BLACK_PLAYER.field(users::id).eq(games::black_id)))
        .filter(games::id.eq(id))
        .select((
            Game::as_select(),
            WHITE_PLAYER.fields((
                users::session_version,
                users::play_forced_moves,
                (
                    users::id,
                    users::username,
                    users::email,
                    users::email_verified_at,
                    users::notification_settings,
                    users::time_zone,
                ),
            )),
            BLACK_PLAYER.fields((
                users::session_version,
                users::play_forced_moves,
                (
                    users::id,
                    users::username,
                    users::email,
                    users::email_verified_at,
                    users::notification_settings,
                    users::time_zone,
                ),
            )),
        ))
        .get_result::<(Game, Player, Player)>(conn)
        .optional()?
        .ok_or_else(|| not_found(id))?;
    Ok((game, [white, black]))
}

/// Runs a transaction that changes a game in the group commit of its lane, and runs it once more
/// if a concurrent request changed the game between its read and its conditional write (possible
/// with several server processes on PostgreSQL; inside one process the writes to one game take
/// turns). The second run reads the new state, so its caller gets the true answer: not your turn,
/// the game is over, their own move replayed, or the action applied after the other request.
async fn write_game<T, F>(db: &Database, game_id: &str, transaction: F) -> Result<T, ServiceError>
where
    F: Fn(&mut DbConn) -> Result<T, ServiceError> + Clone + Send + 'static,
    T: Send + 'static,
{
    match db.write_grouped(game_id, transaction.clone()).await {
        Err(e) if e.is_race() => db.write_grouped(game_id, transaction).await,
        other => other,
    }
}

fn play_in_transaction(
    conn: &mut DbConn,
    notifier: &Notifier,
    game_id: &str,
    caller: &Caller,
    request: &MoveRequest,
    now: DateTime<Utc>,
) -> Result<MoveAnswer, ServiceError> {
    let (mut game, players) = find_with_players(conn, game_id)?;
    let side = side_of(&game, &caller.id);
    // The caller's token was only checked for its signature and expiry; the session is confirmed
    // here, from the row the game query already read.
    let session_version = match side {
        Some(side) => Some(players[side.index()].session_version),
        None => users::table
            .find(&caller.id)
            .select(users::session_version)
            .get_result(conn)
            .optional()?,
    };
    if session_version != Some(caller.session_version) {
        return Err(ServiceError::Unauthenticated(Unauthenticated::InvalidToken));
    }
    let Some(side) = side else {
        return Err(ServiceError::Forbidden(
            "you are not a player in this game; only its two players can move".into(),
        ));
    };
    let [white, black] = &players;
    let with_players = |game: Game| GameDetails {
        game,
        white: white.user_ref(),
        black: black.user_ref(),
    };
    let engine = engine_of(&game)?;
    let options = options_of(&game)?;

    let my_turn = game.status == status::ACTIVE && game.to_move_id.as_deref() == Some(&caller.id);
    let ply_matches = request.ply.is_none_or(|ply| ply == game.ply);
    if (!my_turn || !ply_matches)
        && let Some(mv) = replay_of(conn, &game, side, engine, &options, request)?
    {
        return Ok(MoveAnswer::Played(Box::new(PlayedMove {
            mv,
            game: with_players(game),
            position: None,
            replayed: true,
        })));
    }
    if game.status != status::ACTIVE {
        return Err(ServiceError::conflict(
            Conflict::GameOver,
            "this game has ended; no more moves can be played",
        ));
    }
    if !ply_matches {
        return Err(ServiceError::conflict(
            Conflict::PlyMismatch {
                current_ply: game.ply,
            },
            format!(
                "you sent ply {}, but the game is at ply {}; reload the game and decide again",
                request.ply.unwrap_or_default(),
                game.ply
            ),
        ));
    }
    if !my_turn {
        return Err(ServiceError::conflict(
            Conflict::NotYourTurn {
                to_move: side.opponent(),
            },
            format!("it is {}'s turn; wait for their move", side.opponent()),
        ));
    }

    if let Some(deadline) = game.deadline_at
        && crate::clock::flag_fallen(deadline.and_utc(), now)
    {
        let names = [
            white.recipient.username.as_str(),
            black.recipient.username.as_str(),
        ];
        lose_on_time(conn, notifier, &mut game, names, now)?;
        return Ok(MoveAnswer::FlagFell { deadline });
    }

    // The position is read once; the move, the dice after it and the answer's legal moves all
    // ask this one value.
    let before = load(engine, &game, &options)?;
    let (notation, after) = before
        .play(&request.text)
        .map_err(|e| refusal(e, before.as_ref()))?;

    let previous_ply = game.ply;
    let naive_now = now.naive_utc();
    game.ply += 1;
    game.position = after.canonical();
    game.updated_at = naive_now;
    // A move answers a standing draw offer from the opponent by declining it.
    if game.draw_offer.as_deref().and_then(Side::from_name) == Some(side.opponent()) {
        game.draw_offer = None;
    }
    let mv = Move {
        game_id: game.id.clone(),
        ply: game.ply,
        side: side.name().to_owned(),
        player_id: caller.id.clone(),
        submitted: request.text.clone(),
        notation,
        position: game.position.clone(),
        created_at: naive_now,
        automatic: 0,
    };
    let autoplay = [white.play_forced_moves != 0, black.play_forced_moves != 0];
    let mut chance = Chance::default();
    let after = chance.settle(&mut game, after, autoplay, naive_now)?;
    set_turn_or_finish(&mut game, after.as_ref(), naive_now);

    // The mover's turn ends when the game passes to the opponent, or when the server played
    // the opponent's turn for them; it goes on through the mover's own further decisions.
    let opponent = side.opponent();
    let turn_passed =
        game.to_move_id.as_deref() != Some(caller.id.as_str()) || chance.moved(opponent.name());
    if turn_passed || game.status != status::ACTIVE {
        // A move that beat the deadline cannot be late here; a clock that says otherwise (a
        // vacation ended in the same instant) gives the player the benefit.
        let _ = clocks::end_turn(conn, &mut game, side, now)?;
        clocks::start_turn(conn, &mut game, now)?;
    }

    save(conn, &game, previous_ply)?;
    diesel::insert_into(moves::table)
        .values(&mv)
        .execute(conn)?;
    chance.store(conn)?;

    let to = &players[opponent.index()].recipient;
    if game.status != status::ACTIVE {
        let mail = GameForMail {
            game: &game,
            notifier,
            white: &white.recipient.username,
            black: &black.recipient.username,
        };
        notifications::enqueue(conn, to, mail.game_over(to), Some(&game.id), now)?;
    } else if game.to_move_id.as_deref() == Some(to.id.as_str()) {
        // The mail itself (the board, the legal moves, the deadline in the reader's zone) is
        // worked out by the delivery worker, outside this transaction.
        let turn = notifications::TurnEvent {
            game_id: game.id.clone(),
            game: engine_kind(engine)?,
            options: options.clone(),
            ply: game.ply,
            position: game.position.clone(),
            last_move: Some(
                chance
                    .last_move_of(side.name())
                    .unwrap_or(&mv.notation)
                    .to_owned(),
            ),
            opponent: players[side.index()].recipient.username.clone(),
            deadline_at: game.deadline_at,
        };
        notifications::enqueue_turn(conn, to, &turn, now)?;
    }
    Ok(MoveAnswer::Played(Box::new(PlayedMove {
        mv,
        game: with_players(game),
        position: Some(after),
        replayed: false,
    })))
}

fn engine_kind(engine: &dyn Engine) -> Result<GameKind, ServiceError> {
    engine
        .id()
        .parse()
        .map_err(|e| ServiceError::internal(format!("{e}")))
}

/// Reads a stored position; one that does not read is the server's fault, never the caller's.
fn load(
    engine: &dyn Engine,
    game: &Game,
    options: &Value,
) -> Result<Box<dyn LoadedPosition>, ServiceError> {
    engine.load(&game.position, options).map_err(|e| {
        ServiceError::internal(format!(
            "game {}: stored position `{}` is unreadable: {e}",
            game.id, game.position
        ))
    })
}

/// The refusal of a move the engine would not play, with the legal moves or the candidates.
fn refusal(error: MoveError, position: &dyn LoadedPosition) -> ServiceError {
    match error {
        MoveError::Syntax { message } => ServiceError::Refused {
            refusal: Refusal::Syntax {
                legal_moves: position.legal_moves(),
            },
            detail: message,
        },
        MoveError::Illegal { message } => ServiceError::Refused {
            refusal: Refusal::Illegal {
                legal_moves: position.legal_moves(),
            },
            detail: message,
        },
        MoveError::Ambiguous { candidates } => ServiceError::Refused {
            detail: MoveError::Ambiguous {
                candidates: candidates.clone(),
            }
            .to_string(),
            refusal: Refusal::Ambiguous { candidates },
        },
        MoveError::GameOver => ServiceError::conflict(
            Conflict::GameOver,
            "the position is finished; no more moves can be played",
        ),
    }
}

/// Ends a game as lost on time by the player to move, and tells both players.
pub(super) fn lose_on_time(
    conn: &mut DbConn,
    notifier: &Notifier,
    game: &mut Game,
    names: [&str; 2],
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let Some(loser_id) = game.to_move_id.clone() else {
        return Ok(());
    };
    let loser = side_of(game, &loser_id).unwrap_or(Side::White);
    let ply = game.ply;
    let flag_fell = game.deadline_at.unwrap_or(now.naive_utc());
    finish(
        game,
        Some(loser.opponent()),
        termination::TIME,
        Some(format!("{} ran out of time", loser.name())),
        flag_fell,
    );
    game.deadline_at = None;
    game.next_reminder_at = None;
    save(conn, game, ply)?;
    let mail = GameForMail {
        game,
        notifier,
        white: names[0],
        black: names[1],
    };
    for side in [Side::White, Side::Black] {
        let to = notifications::recipient(conn, player_of(game, side))?;
        notifications::enqueue(conn, &to, mail.timeout(&to, loser), Some(&game.id), now)?;
    }
    Ok(())
}

/// A request that repeats the caller's last accepted move (same ply, same move, perhaps written
/// differently) is answered with that move instead of an error, so clients can retry safely.
fn replay_of(
    conn: &mut DbConn,
    game: &Game,
    side: Side,
    engine: &dyn Engine,
    options: &Value,
    request: &MoveRequest,
) -> Result<Option<Move>, ServiceError> {
    if game.ply == 0 || request.ply.is_some_and(|ply| ply != game.ply - 1) {
        return Ok(None);
    }
    let last: Option<Move> = moves::table
        .find((&game.id, game.ply))
        .select(Move::as_select())
        .get_result(conn)
        .optional()?;
    let Some(last) = last.filter(|m| m.ply == game.ply && m.side == side.name()) else {
        return Ok(None);
    };
    if last.submitted == request.text || last.notation == request.text.trim() {
        return Ok(Some(last));
    }
    // Written another way: read it in the position it was played in.
    let before: Option<String> = moves::table
        .filter(moves::game_id.eq(&game.id))
        .filter(moves::ply.eq(game.ply - 1))
        .select(moves::position)
        .get_result(conn)
        .optional()?;
    let before = match before {
        Some(position) => position,
        None => engine
            .start_position(options)
            .map_err(|e| ServiceError::Internal(anyhow::anyhow!("{e}")))?,
    };
    let same = engine
        .play(&before, options, &request.text)
        .is_ok_and(|played| played.notation == last.notation);
    Ok(same.then_some(last))
}

/// The problem for a move the engine refused, with the legal moves or the candidates.
pub fn move_error(
    error: PlayError,
    engine: &dyn Engine,
    position: &str,
    options: &Value,
) -> ServiceError {
    let legal = || engine.legal_moves(position, options).unwrap_or_default();
    match error {
        PlayError::Position(e) => ServiceError::Internal(anyhow::anyhow!(
            "stored position `{position}` is unreadable: {e}"
        )),
        PlayError::Move(MoveError::Syntax { message }) => ServiceError::Refused {
            refusal: Refusal::Syntax {
                legal_moves: legal(),
            },
            detail: message,
        },
        PlayError::Move(MoveError::Illegal { message }) => ServiceError::Refused {
            refusal: Refusal::Illegal {
                legal_moves: legal(),
            },
            detail: message,
        },
        PlayError::Move(MoveError::Ambiguous { candidates }) => ServiceError::Refused {
            detail: MoveError::Ambiguous {
                candidates: candidates.clone(),
            }
            .to_string(),
            refusal: Refusal::Ambiguous { candidates },
        },
        PlayError::Move(MoveError::GameOver) => ServiceError::conflict(
            Conflict::GameOver,
            "the position is finished; no more moves can be played",
        ),
    }
}

fn finish(
    game: &mut Game,
    winner: Option<Side>,
    termination: &str,
    summary: Option<String>,
    now: NaiveDateTime,
) {
    game.status = status::FINISHED.into();
    game.result = Some(winner.map_or("draw", Side::name).to_owned());
    game.termination = Some(termination.to_owned());
    game.result_summary = summary;
    game.to_move_id = None;
    game.draw_offer = None;
    game.finished_at = Some(now);
    game.updated_at = now;
}

fn finish_on_board(game: &mut Game, outcome: &Outcome, now: NaiveDateTime) {
    finish(
        game,
        outcome.winner,
        outcome.reason.id(),
        outcome.summary.clone(),
        now,
    );
}

/// Writes a game's new state, on condition that it is still active and at the ply it was read
/// at: of two requests that raced on the same game, the second changes nothing and learns so.
fn save(conn: &mut DbConn, game: &Game, read_ply: i32) -> Result<(), ServiceError> {
    let updated = diesel::update(
        games::table
            .filter(games::id.eq(&game.id))
            .filter(games::ply.eq(read_ply))
            .filter(games::status.eq(status::ACTIVE)),
    )
    .set((
        games::position.eq(&game.position),
        games::ply.eq(game.ply),
        games::to_move_id.eq(&game.to_move_id),
        games::status.eq(&game.status),
        games::result.eq(&game.result),
        games::termination.eq(&game.termination),
        games::result_summary.eq(&game.result_summary),
        games::draw_offer.eq(&game.draw_offer),
        games::updated_at.eq(game.updated_at),
        games::finished_at.eq(game.finished_at),
        games::dice_used.eq(game.dice_used),
        games::clock_white.eq(game.clock_white),
        games::clock_black.eq(game.clock_black),
        games::turn_started_at.eq(game.turn_started_at),
        games::deadline_at.eq(game.deadline_at),
        games::next_reminder_at.eq(game.next_reminder_at),
    ))
    .execute(conn)?;
    if updated == 0 {
        return Err(ServiceError::conflict(
            Conflict::ConcurrentUpdate,
            "the game changed at the same moment; reload it and try again",
        ));
    }
    Ok(())
}

/// Reads an active game the caller plays in, for an action off the board.
fn my_active_game(
    conn: &mut DbConn,
    id: &str,
    user: &AuthUser,
) -> Result<(Game, Side), ServiceError> {
    let game = find(conn, id)?;
    let side = side_of(&game, &user.id)
        .ok_or_else(|| ServiceError::Forbidden("you are not a player in this game".into()))?;
    if game.status != status::ACTIVE {
        return Err(ServiceError::conflict(
            Conflict::GameOver,
            "this game has already ended",
        ));
    }
    Ok((game, side))
}

pub async fn resign(
    db: &Database,
    notifier: &Notifier,
    id: String,
    user: AuthUser,
    now: DateTime<Utc>,
) -> Result<GameDetails, ServiceError> {
    let notifier = notifier.clone();
    let key = id.clone();
    write_game(db, &key, move |conn| {
        let (mut game, side) = my_active_game(conn, &id, &user)?;
        let ply = game.ply;
        finish(
            &mut game,
            Some(side.opponent()),
            termination::RESIGNATION,
            None,
            now.naive_utc(),
        );
        game.deadline_at = None;
        game.next_reminder_at = None;
        save(conn, &game, ply)?;
        let details = details(conn, game)?;
        tell_opponent(conn, &notifier, &details, side, now, |mail, to| {
            mail.game_over(to)
        })?;
        Ok(details)
    })
    .await
}

/// Mails the opponent of `actor` about what `actor` just did.
fn tell_opponent(
    conn: &mut DbConn,
    notifier: &Notifier,
    details: &GameDetails,
    actor: Side,
    now: DateTime<Utc>,
    what: impl Fn(&GameForMail<'_>, &notifications::Recipient) -> crate::mail::Notification,
) -> Result<(), ServiceError> {
    let mail = GameForMail {
        game: &details.game,
        notifier,
        white: &details.white.username,
        black: &details.black.username,
    };
    let to = notifications::recipient(conn, player_of(&details.game, actor.opponent()))?;
    notifications::enqueue(conn, &to, what(&mail, &to), Some(&details.game.id), now)?;
    Ok(())
}

/// What a player does about a draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrawAction {
    Offer,
    Accept,
    Decline,
}

pub async fn draw(
    db: &Database,
    notifier: &Notifier,
    id: String,
    user: AuthUser,
    action: DrawAction,
    now: DateTime<Utc>,
) -> Result<GameDetails, ServiceError> {
    let notifier = notifier.clone();
    let key = id.clone();
    write_game(db, &key, move |conn| {
        let (mut game, side) = my_active_game(conn, &id, &user)?;
        if !engine_of(&game)?.can_draw() {
            return Err(ServiceError::conflict(
                Conflict::DrawNotPossible,
                format!("{} cannot end in a draw", engine_of(&game)?.name()),
            ));
        }
        let standing = game.draw_offer.as_deref().and_then(Side::from_name);
        let ply = game.ply;
        let naive_now = now.naive_utc();
        match (action, standing) {
            // Offering when the opponent has already offered is agreeing.
            (DrawAction::Offer | DrawAction::Accept, Some(offerer)) if offerer != side => {
                finish(&mut game, None, termination::AGREEMENT, None, naive_now);
                game.deadline_at = None;
                game.next_reminder_at = None;
            }
            (DrawAction::Offer, Some(_)) => {
                return Err(ServiceError::conflict(
                    Conflict::DrawAlreadyOffered,
                    "you have already offered a draw; wait for your opponent's answer",
                ));
            }
            (DrawAction::Offer, None) => {
                game.draw_offer = Some(side.name().to_owned());
                game.updated_at = naive_now;
            }
            (DrawAction::Decline, Some(offerer)) if offerer != side => {
                game.draw_offer = None;
                game.updated_at = naive_now;
            }
            (DrawAction::Accept | DrawAction::Decline, _) => {
                return Err(ServiceError::conflict(
                    Conflict::NoDrawOffer,
                    "your opponent has not offered a draw",
                ));
            }
        }
        save(conn, &game, ply)?;
        let details = details(conn, game)?;
        if details.game.status != status::ACTIVE {
            tell_opponent(conn, &notifier, &details, side, now, |mail, to| {
                mail.game_over(to)
            })?;
        } else if action == DrawAction::Offer {
            tell_opponent(conn, &notifier, &details, side, now, |mail, to| {
                mail.draw_offered(to)
            })?;
        }
        Ok(details)
    })
    .await
}

/// A dice game's commitment, its rolls so far, and its seed once it is over.
pub async fn dice(db: &Database, id: String) -> Result<(Game, Vec<Roll>), ServiceError> {
    db.read(move |conn| {
        let game = find(conn, &id)?;
        if game.dice_commitment.is_none() {
            return Err(ServiceError::NotFound(format!(
                "game `{id}` is a game of {}, which uses no dice",
                game.game_kind
            )));
        }
        let rolls = rolls::table
            .filter(rolls::game_id.eq(&id))
            .order(rolls::number.asc())
            .select(Roll::as_select())
            .load(conn)?;
        Ok((game, rolls))
    })
    .await
}
