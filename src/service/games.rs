//! Games: reading them, playing moves, and the endings that happen off the board (resignation,
//! agreed draws).
//!
//! The stored position is the truth: a move reads it, asks the engine, and writes the new
//! position, the history row and the game's new state in one transaction. Nothing replays the
//! history.

use std::sync::Arc;

use chrono::{DateTime, NaiveDateTime, Utc};

use super::chance::{Autoplay, Chance};
use super::error::{Conflict, Refusal, ServiceError, Unauthenticated};
use super::events::{self, EventKind};
use super::game::{Dice, GameResult, GameState, GameStatus, Termination};
use super::notifications::{self, GameForMail, Notifier, Recipient};
use super::views::{self, GameView, MoveView};
use super::{Page, PageRequest, UserRef, clocks, user_ref, user_refs};
use crate::auth::{AuthUser, Caller};
use crate::clock::TimeControl;
use crate::db::events::NewEvent;
use crate::db::games::Revisions;
use crate::db::models::{Move, OutboxRow, Roll};
use crate::db::recent::{Recent, RecentGames};
use crate::db::users::SessionKey;
use crate::db::{self, Database, DbConn};
use crate::dice::Seed;
use crate::rules::{
    Engine, GameKind, LoadedPosition, MoveError, OptionsError, Outcome, PlayError, Side,
};
use serde_json::Value;
use serde_json::value::RawValue;

/// A game with the names of its players.
#[derive(Clone, Debug)]
pub struct GameDetails {
    pub game: GameState,
    pub white: UserRef,
    pub black: UserRef,
}

/// The result of a move request.
pub struct PlayedMove {
    pub mv: Move,
    /// The game as the move left it, legal moves included, as JSON.
    pub game: Box<RawValue>,
    /// The request repeated a move that had already been accepted.
    pub replayed: bool,
    /// Whether the game waits for the mover again (Backgammon's roll before the checkers).
    pub my_turn: bool,
}

/// Which of the caller's games to list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, utoipa::ToSchema)]
#[schema(as = GameStatusFilter, rename_all = "lowercase")]
pub enum StatusFilter {
    Active,
    Finished,
    All,
}

/// The clock a new game is played with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockSetup {
    pub control: TimeControl,
    /// No time counts on Saturdays and Sundays in the zone of the player to move.
    pub weekend_pause: bool,
}

fn not_found(id: &str) -> ServiceError {
    ServiceError::NotFound(format!("there is no game with id `{id}`"))
}

/// Loads a game, typed.
pub(super) fn find(conn: &mut DbConn, id: &str) -> Result<GameState, ServiceError> {
    let row = db::games::find(conn, id)?.ok_or_else(|| not_found(id))?;
    GameState::from_row(row)
}

fn details(conn: &mut DbConn, game: GameState) -> Result<GameDetails, ServiceError> {
    let refs = user_refs(conn, &[&game.white_id, &game.black_id])?;
    Ok(GameDetails {
        white: user_ref(&refs, &game.white_id)?,
        black: user_ref(&refs, &game.black_id)?,
        game,
    })
}

/// Stores a new game at its start position; used when a challenge is accepted. `options` are
/// complete (normalised by the engine).
pub fn create(
    conn: &mut DbConn,
    kind: GameKind,
    options: &Value,
    white_id: &str,
    black_id: &str,
    clock: ClockSetup,
    now: DateTime<Utc>,
) -> Result<GameState, ServiceError> {
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
    };
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
fn autoplay_of(conn: &mut DbConn, game: &GameState) -> Result<Autoplay, ServiceError> {
    let settings = db::games::forced_move_settings(conn, [&game.white_id, &game.black_id])?;
    let of = |id: &str| settings.iter().any(|(user, on)| user == id && *on != 0);
    Ok([of(&game.white_id), of(&game.black_id)])
}

/// After a move or at the start: whose turn it is, or how the game ended.
fn set_turn_or_finish(game: &mut GameState, position: &dyn LoadedPosition, now: NaiveDateTime) {
    match position.outcome() {
        Some(outcome) => finish_on_board(game, &outcome, now),
        None => game.to_move = Some(position.side_to_move()),
    }
}

pub async fn get(db: &Database, id: String) -> Result<GameDetails, ServiceError> {
    db.read(move |conn| {
        let game = find(conn, &id)?;
        details(conn, game)
    })
    .await
}

/// The caller's games: those where it is their move first, then the most recently active;
/// `awaiting_move` keeps only those where it is their move.
pub async fn list_mine(
    db: &Database,
    user_id: String,
    filter: StatusFilter,
    awaiting_move: bool,
    page: PageRequest,
) -> Result<Page<GameDetails>, ServiceError> {
    db.read(move |conn| {
        let listing = db::games::Listing {
            user_id: &user_id,
            status: match filter {
                StatusFilter::Active => Some(GameStatus::Active.as_str()),
                StatusFilter::Finished => Some(GameStatus::Finished.as_str()),
                StatusFilter::All => None,
            },
            awaiting_move,
        };
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
    })
    .await
}

/// The whole history of a game, oldest first.
pub async fn history(db: &Database, id: String) -> Result<(GameDetails, Vec<Move>), ServiceError> {
    db.read(move |conn| {
        let game = find(conn, &id)?;
        let history = db::moves::of_game(conn, &id)?;
        Ok((details(conn, game)?, history))
    })
    .await
}

/// A game with its position after `ply` moves: 0 is its start, `None` (or the game's own ply)
/// now. A ply the game has not reached is invalid input.
pub async fn position_at(
    db: &Database,
    id: String,
    ply: Option<i32>,
) -> Result<(GameState, String), ServiceError> {
    db.read(move |conn| {
        let game = find(conn, &id)?;
        let position = match ply {
            None => game.position.clone(),
            Some(ply) if ply == game.ply => game.position.clone(),
            Some(ply) if ply < 0 || ply > game.ply => {
                return Err(ServiceError::invalid(
                    "ply",
                    format!("the game has plies 0 to {}, not {ply}", game.ply),
                ));
            }
            Some(0) => start_of(conn, &game)?,
            Some(ply) => {
                db::moves::at(conn, &game.id, ply)?
                    .ok_or_else(|| {
                        ServiceError::internal(format!("game {}: no move at ply {ply}", game.id))
                    })?
                    .position
            }
        };
        Ok((game, position))
    })
    .await
}

/// The position a game started from: after its opening roll, for the games that have one.
fn start_of(conn: &mut DbConn, game: &GameState) -> Result<String, ServiceError> {
    let internal = |e: OptionsError| ServiceError::internal(e.to_string());
    if !game.engine.opening_roll() {
        return game.engine.start_position(&game.options).map_err(internal);
    }
    let rolls = db::rolls::of_game(conn, &game.id)?;
    let opening = rolls
        .iter()
        .rev()
        .find(|roll| roll.purpose == super::chance::OPENING)
        .map(|roll| super::records::parse_dice(&roll.dice));
    match opening.as_deref() {
        Some(&[white, black]) => game
            .engine
            .start_position_for_opening(&game.options, white, black)
            .map_err(internal),
        _ => Err(ServiceError::internal(format!(
            "game {}: no opening roll of two dice",
            game.id
        ))),
    }
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
    let key = game_id.clone();
    // Decided on a reader, beside the other requests, from the copy of the game kept since its
    // last move when there is one (see `db::recent`); the writer then only checks that the game,
    // its players and the caller's session are still as read and stores the outcome. Anything
    // else (an error, a replay, a lost race) is decided again inside the write transaction,
    // where the answer is exact; so is a game with a clock from the start, since its deadline
    // depends on more than the game's row (the players' vacations and zones).
    let recent = db.recent_games().clone();
    let (read_recent, read_notifier, read_id, read_caller, read_request) = (
        recent.clone(),
        notifier.clone(),
        game_id.clone(),
        caller.clone(),
        request.clone(),
    );
    let decided = db
        .read_by_key(move |conn| {
            let (read, kept) = read_recent_game(conn, &read_recent, &read_id, &read_caller)?;
            if read.game.time_control != TimeControl::None {
                return Ok(None);
            }
            let decided = decide(conn, read, &read_notifier, &read_caller, &read_request, now)?;
            Ok::<_, ServiceError>(Some((decided, kept)))
        })
        .await;
    if let Ok(Some((Decided::Write(plan), kept))) = decided {
        let after = plan.game.is_active().then(|| kept.moved(plan.row.clone()));
        // It only stores what was decided, so it may run again (see `db::group_commit`); a lost
        // race is answered before its first write.
        let stored = db
            .write_rerunnable(&key, move |conn| apply(conn, &plan), ServiceError::is_race)
            .await;
        match stored {
            Ok(played) => {
                match after {
                    Some(after) => recent.keep(Arc::new(after)),
                    None => recent.forget(&key),
                }
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

/// A player of the game being moved in, as its one read found them.
struct Player {
    play_forced_moves: bool,
    recipient: Recipient,
}

impl From<&db::games::Player> for Player {
    fn from(row: &db::games::Player) -> Self {
        Player {
            play_forced_moves: row.play_forced_moves != 0,
            recipient: Recipient {
                id: row.id.clone(),
                username: row.username.clone(),
                email: row.email.clone(),
                email_verified_at: row.email_verified_at,
                settings_json: row.notification_settings.clone(),
                time_zone: row.time_zone.clone(),
            },
        }
    }
}

impl Player {
    fn user_ref(&self) -> UserRef {
        UserRef {
            id: self.recipient.id.clone(),
            username: self.recipient.username.clone(),
        }
    }
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

/// Plays a move inside the write transaction: decided and stored at once.
fn play_in_transaction(
    conn: &mut DbConn,
    notifier: &Notifier,
    game_id: &str,
    caller: &Caller,
    request: &MoveRequest,
    now: DateTime<Utc>,
) -> Result<MoveAnswer, ServiceError> {
    let read = read_game(conn, game_id, caller)?;
    match decide(conn, read, notifier, caller, request, now)? {
        Decided::Write(plan) => Ok(MoveAnswer::Played(Box::new(apply(conn, &plan)?))),
        Decided::Replayed(played) => Ok(MoveAnswer::Played(played)),
        Decided::OutOfTime {
            mut game,
            players,
            deadline,
        } => {
            let [white, black] = &*players;
            lose_on_time(conn, notifier, &mut game, [white, black], now)?;
            Ok(MoveAnswer::FlagFell { deadline })
        }
    }
}

/// What a move request comes to, decided from one read of the game and its players.
enum Decided {
    /// The move is legal: what to store.
    Write(Box<MovePlan>),
    /// The request repeated a move already stored.
    Replayed(Box<PlayedMove>),
    /// The mover's time had run out before the move came: the game is lost on time.
    OutOfTime {
        game: Box<GameState>,
        players: Box<[Recipient; 2]>,
        deadline: NaiveDateTime,
    },
}

/// What a legal move writes, and what its caller is answered once it is stored.
struct MovePlan {
    /// The game as the move leaves it.
    game: GameState,
    /// The same, as stored.
    row: db::models::Game,
    /// The game as read: it is stored only if it is still at that ply.
    read: db::games::AsRead,
    caller: Caller,
    mv: Move,
    chance: Chance,
    mail: Option<OutboxRow>,
    /// The game after the move as clients see it, as JSON: the answer, and the events' data.
    view: Box<RawValue>,
    events: Vec<NewEvent>,
}

/// Stores a decided move, on condition that neither the game nor the caller's session changed
/// since they were read; when either did, the move is decided again inside the write (which
/// tells a lost race from an ended session).
fn apply(conn: &mut DbConn, plan: &MovePlan) -> Result<PlayedMove, ServiceError> {
    let session = plan
        .caller
        .credential
        .login_session()
        .map(|session| SessionKey {
            user_id: &plan.caller.id,
            version: session.version,
            id: &session.id,
        });
    let stored = db::played::store(
        conn,
        &db::played::PlayedMove {
            game: &plan.row,
            read: plan.read,
            session,
            mv: &plan.mv,
            mail: plan.mail.as_ref(),
            events: &plan.events,
        },
    )?;
    if !stored {
        return Err(race());
    }
    plan.chance.store(conn)?;
    Ok(PlayedMove {
        my_turn: plan.game.is_active() && plan.game.to_move_id() == Some(plan.caller.id.as_str()),
        mv: plan.mv.clone(),
        game: plan.view.clone(),
        replayed: false,
    })
}

/// What a move is decided from: a game, both its players (White first), and the revisions at
/// which they were read.
struct Read {
    game: GameState,
    players: [Player; 2],
    revisions: Revisions,
}

/// A game and both its players, White first, in one query: all a move is decided from. The
/// caller's token was only checked for its signature and expiry; its login session is confirmed
/// here, from the rows this query reads anyway, before anything else is answered.
fn read_game(conn: &mut DbConn, game_id: &str, caller: &Caller) -> Result<Read, ServiceError> {
    let found = find_with_players(conn, game_id, caller)?;
    let revisions = found.revisions();
    let players = found.players.each_ref();
    Read::confirmed(conn, caller, found.game, players, revisions, found.revoked)
}

/// [`read_game`] from the copy of the game kept since it was last read or moved in, when there is
/// one, and else from storage, keeping a copy. A copy does not know whether the caller's login
/// session was revoked since: the conditional write that stores the move does.
fn read_recent_game(
    conn: &mut DbConn,
    recent: &RecentGames,
    game_id: &str,
    caller: &Caller,
) -> Result<(Read, Arc<Recent>), ServiceError> {
    let (kept, revoked) = match recent.get(game_id) {
        Some(kept) => (kept, false),
        None => {
            let found = find_with_players(conn, game_id, caller)?;
            let revoked = found.revoked;
            let copy = recent.copy(found);
            // A game with a clock is decided inside the write, never from a copy.
            if copy.game.time_control.is_none() {
                recent.keep(copy.clone());
            }
            (copy, revoked)
        }
    };
    let players = kept.players.each_ref().map(|player| &**player);
    let read = Read::confirmed(
        conn,
        caller,
        kept.game.clone(),
        players,
        kept.revisions(),
        revoked,
    )?;
    Ok((read, kept))
}

/// The game and its players as stored, with whether the caller's login session was revoked.
fn find_with_players(
    conn: &mut DbConn,
    game_id: &str,
    caller: &Caller,
) -> Result<db::games::WithPlayers, ServiceError> {
    let session_id = caller
        .credential
        .login_session()
        .map(|session| session.id.as_str());
    match db::games::find_with_players(conn, game_id, session_id)? {
        Some(found) => Ok(found),
        None => {
            // No game, so no player row to confirm the session from: an ended session is
            // answered as such, as everywhere, before the missing game.
            confirm_session(conn, caller, None)?;
            Err(not_found(game_id))
        }
    }
}

impl Read {
    /// What a move is decided from, once the caller's login session is confirmed from what the
    /// players' rows tell of it (when the caller is one of them: their account's session version)
    /// and whether the session was `revoked`.
    fn confirmed(
        conn: &mut DbConn,
        caller: &Caller,
        game: db::models::Game,
        players: [&db::games::Player; 2],
        revisions: Revisions,
        revoked: bool,
    ) -> Result<Read, ServiceError> {
        let known = players
            .iter()
            .find(|player| player.id == caller.id)
            .map(|player| (player.session_version, revoked));
        confirm_session(conn, caller, known)?;
        Ok(Read {
            game: GameState::from_row(game)?,
            players: players.map(Player::from),
            revisions,
        })
    }
}

/// Refuses a caller whose login session has ended (the account is gone, its password changed
/// since the token, or the session was logged out), from what the game query found of it
/// (`known`: the account's session version and whether the session was revoked), or else with a
/// query of its own. A personal token's caller was confirmed by the guard.
fn confirm_session(
    conn: &mut DbConn,
    caller: &Caller,
    known: Option<(i32, bool)>,
) -> Result<(), ServiceError> {
    let Some(session) = caller.credential.login_session() else {
        return Ok(());
    };
    let holds = match known {
        Some((version, revoked)) => version == session.version && !revoked,
        None => db::users::find_session(
            conn,
            SessionKey {
                user_id: &caller.id,
                version: session.version,
                id: &session.id,
            },
        )?
        .is_some(),
    };
    if !holds {
        return Err(ServiceError::Unauthenticated(Unauthenticated::InvalidToken));
    }
    Ok(())
}

/// Decides what a move request comes to, writing nothing.
fn decide(
    conn: &mut DbConn,
    read: Read,
    notifier: &Notifier,
    caller: &Caller,
    request: &MoveRequest,
    now: DateTime<Utc>,
) -> Result<Decided, ServiceError> {
    let Read {
        mut game,
        players,
        revisions,
    } = read;
    let Some(side) = game.side_of(&caller.id) else {
        return Err(ServiceError::Forbidden(
            "you are not a player in this game; only its two players can move".into(),
        ));
    };
    let [white, black] = &players;
    let with_players = |game: GameState| GameDetails {
        game,
        white: white.user_ref(),
        black: black.user_ref(),
    };

    let my_turn = game.is_active() && game.to_move == Some(side);
    let ply_matches = request.ply.is_none_or(|ply| ply == game.ply);
    if (!my_turn || !ply_matches)
        && let Some(mv) = replay_of(conn, &game, side, request)?
    {
        return Ok(Decided::Replayed(Box::new(PlayedMove {
            my_turn,
            mv,
            game: views::raw(&GameView::new(with_players(game), true)?)?,
            replayed: true,
        })));
    }
    if !game.is_active() {
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
        return Ok(Decided::OutOfTime {
            game: Box::new(game),
            players: Box::new([white.recipient.clone(), black.recipient.clone()]),
            deadline,
        });
    }

    // The position is read once; the move, the dice after it and the answer's legal moves all
    // ask this one value.
    let before = game.load_position()?;
    let (notation, after) = before
        .play(&request.text)
        .map_err(|e| refusal(e, before.as_ref()))?;

    let read = db::games::AsRead {
        ply: game.ply,
        revisions,
        deadline_at: game.deadline_at,
        next_reminder_at: game.next_reminder_at,
    };
    let naive_now = now.naive_utc();
    game.ply += 1;
    game.position = after.canonical();
    game.updated_at = naive_now;
    // A move answers a standing draw offer from the opponent by declining it.
    if game.draw_offer == Some(side.opponent()) {
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
    let autoplay = [white.play_forced_moves, black.play_forced_moves];
    let mut chance = Chance::default();
    let after = chance.settle(&mut game, after, autoplay, naive_now)?;
    set_turn_or_finish(&mut game, after.as_ref(), naive_now);

    // The mover's turn ends when the game passes to the opponent, or when the server played
    // the opponent's turn for them; it goes on through the mover's own further decisions.
    let opponent = side.opponent();
    let turn_passed = game.to_move != Some(side) || chance.moved(opponent);
    if turn_passed || !game.is_active() {
        // A move that beat the deadline cannot be late here; a clock that says otherwise (a
        // vacation ended in the same instant) gives the player the benefit.
        let _ = clocks::end_turn(conn, &mut game, side, now)?;
        clocks::start_turn(conn, &mut game, now)?;
    }

    let to = &players[opponent.index()].recipient;
    let mail = if !game.is_active() {
        let mail = GameForMail {
            game: &game,
            notifier,
            white: &white.recipient.username,
            black: &black.recipient.username,
        };
        notifications::mail_row(to, mail.game_over(to), Some(&game.id), now)?
    } else if game.to_move == Some(opponent) {
        // The mail itself (the board, the legal moves, the deadline in the reader's zone) is
        // worked out by the delivery worker, outside the transaction.
        let turn = notifications::TurnEvent {
            game_id: game.id.clone(),
            game: game.kind,
            options: game.options.clone(),
            ply: game.ply,
            position: game.position.clone(),
            last_move: Some(chance.last_move_of(side).unwrap_or(&mv.notation).to_owned()),
            opponent: players[side.index()].recipient.username.clone(),
            deadline_at: game.deadline_at,
        };
        notifications::turn_row(to, &turn, now)?
    } else {
        None
    };
    // The view and the events' data are worked out here, before the write, so that the writer
    // only stores them.
    let details = with_players(game.clone());
    let view = GameView::of_position(details.clone(), after.as_ref());
    let written = views::raw(&view)?;
    let moves: Vec<MoveView> = std::iter::once(&mv)
        .chain(chance.automatic())
        .cloned()
        .map(MoveView::from)
        .collect();
    let events = events::rows(
        events::after_game_change(&details, &view, &written, &moves, None)?,
        naive_now,
    );
    Ok(Decided::Write(Box::new(MovePlan {
        read,
        caller: caller.clone(),
        mv,
        chance,
        mail,
        view: written,
        events,
        row: game.to_row(),
        game,
    })))
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

/// Ends a game as lost on time by the player to move, and tells both players (`players`,
/// White first).
pub(super) fn lose_on_time(
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
    let mail = GameForMail {
        game,
        notifier,
        white: &players[0].username,
        black: &players[1].username,
    };
    for to in players {
        notifications::enqueue(conn, to, mail.timeout(to, loser), Some(&game.id), now)?;
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
    tell_everyone(conn, details, None, now)?;
    Ok(())
}

/// A request that repeats the caller's last accepted move (same ply, same move, perhaps written
/// differently) is answered with that move instead of an error, so clients can retry safely.
fn replay_of(
    conn: &mut DbConn,
    game: &GameState,
    side: Side,
    request: &MoveRequest,
) -> Result<Option<Move>, ServiceError> {
    if game.ply == 0 || request.ply.is_some_and(|ply| ply != game.ply - 1) {
        return Ok(None);
    }
    let last = db::moves::at(conn, &game.id, game.ply)?;
    let Some(last) = last.filter(|m| m.side == side.name()) else {
        return Ok(None);
    };
    if last.submitted == request.text || last.notation == request.text.trim() {
        return Ok(Some(last));
    }
    // Written another way: read it in the position it was played in.
    let before = match db::moves::at(conn, &game.id, game.ply - 1)? {
        Some(previous) => previous.position,
        None => game
            .engine
            .start_position(&game.options)
            .map_err(|e| ServiceError::internal(e.to_string()))?,
    };
    let same = game
        .engine
        .play(&before, &game.options, &request.text)
        .is_ok_and(|played| played.notation == last.notation);
    Ok(same.then_some(last))
}

/// The problem for a move the engine refused on a position given as text (the stateless rules
/// endpoints), with the legal moves or the candidates.
pub fn move_error(
    error: PlayError,
    engine: &dyn Engine,
    position: &str,
    options: &Value,
) -> ServiceError {
    match error {
        PlayError::Position(e) => {
            ServiceError::internal(format!("stored position `{position}` is unreadable: {e}"))
        }
        PlayError::Move(error) => match engine.load(position, options) {
            Ok(loaded) => refusal(error, loaded.as_ref()),
            Err(e) => ServiceError::internal(format!("position `{position}` is unreadable: {e}")),
        },
    }
}

/// Ends a game: no one is to move any more, and its clock stops.
fn finish(
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

fn finish_on_board(game: &mut GameState, outcome: &Outcome, now: NaiveDateTime) {
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
fn save(conn: &mut DbConn, game: &GameState, read_ply: i32) -> Result<(), ServiceError> {
    if db::games::save_if_unchanged(conn, &game.to_row(), read_ply)? {
        Ok(())
    } else {
        Err(race())
    }
}

fn race() -> ServiceError {
    ServiceError::conflict(
        Conflict::ConcurrentUpdate,
        "the game changed at the same moment; reload it and try again",
    )
}

/// Reads an active game the caller plays in, for an action off the board.
fn my_active_game(
    conn: &mut DbConn,
    id: &str,
    user: &AuthUser,
) -> Result<(GameState, Side), ServiceError> {
    let game = find(conn, id)?;
    let side = game
        .side_of(&user.id)
        .ok_or_else(|| ServiceError::Forbidden("you are not a player in this game".into()))?;
    if !game.is_active() {
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
            GameResult::Won(side.opponent()),
            Termination::Resignation,
            None,
            now.naive_utc(),
        );
        save(conn, &game, ply)?;
        let details = details(conn, game)?;
        tell_opponent(conn, &notifier, &details, side, now, |mail, to| {
            mail.game_over(to)
        })?;
        tell_everyone(conn, details.clone(), None, now)?;
        Ok(details)
    })
    .await
}

/// Records the events of a change made off the board (a draw answered, a resignation, a flag
/// fallen) for both players and the game's spectators.
fn tell_everyone(
    conn: &mut DbConn,
    details: GameDetails,
    draw: Option<(EventKind, Side)>,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let view = GameView::new(details.clone(), true)?;
    let events = events::after_game_change(&details, &view, &views::raw(&view)?, &[], draw)?;
    events::record(conn, events, now.naive_utc())?;
    Ok(())
}

/// Mails the opponent of `actor` about what `actor` just did.
fn tell_opponent(
    conn: &mut DbConn,
    notifier: &Notifier,
    details: &GameDetails,
    actor: Side,
    now: DateTime<Utc>,
    what: impl Fn(&GameForMail<'_>, &Recipient) -> crate::mail::Notification,
) -> Result<(), ServiceError> {
    let mail = GameForMail {
        game: &details.game,
        notifier,
        white: &details.white.username,
        black: &details.black.username,
    };
    let to = notifications::recipient(conn, details.game.player(actor.opponent()))?;
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
        if !game.engine.can_draw() {
            return Err(ServiceError::conflict(
                Conflict::DrawNotPossible,
                format!("{} cannot end in a draw", game.engine.name()),
            ));
        }
        let ply = game.ply;
        let naive_now = now.naive_utc();
        match (action, game.draw_offer) {
            // Offering when the opponent has already offered is agreeing.
            (DrawAction::Offer | DrawAction::Accept, Some(offerer)) if offerer != side => {
                finish(
                    &mut game,
                    GameResult::Drawn,
                    Termination::Agreement,
                    None,
                    naive_now,
                );
            }
            (DrawAction::Offer, Some(_)) => {
                return Err(ServiceError::conflict(
                    Conflict::DrawAlreadyOffered,
                    "you have already offered a draw; wait for your opponent's answer",
                ));
            }
            (DrawAction::Offer, None) => {
                game.draw_offer = Some(side);
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
        let happened = if !details.game.is_active() {
            EventKind::DrawAccepted
        } else if action == DrawAction::Offer {
            EventKind::DrawOffered
        } else {
            EventKind::DrawDeclined
        };
        tell_everyone(conn, details.clone(), Some((happened, side)), now)?;
        if !details.game.is_active() {
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
pub async fn dice(db: &Database, id: String) -> Result<(GameState, Vec<Roll>), ServiceError> {
    db.read(move |conn| {
        let game = find(conn, &id)?;
        if game.dice.is_none() {
            return Err(ServiceError::NotFound(format!(
                "game `{id}` is a game of {}, which uses no dice",
                game.kind
            )));
        }
        let rolls = db::rolls::of_game(conn, &id)?;
        Ok((game, rolls))
    })
    .await
}
