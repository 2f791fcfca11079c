//! The rules of a move, in the order they apply: who may move now (the checks), what the board
//! makes of the move (the engine's play, then the dice and forced moves after it), and what
//! follows from it (the clocks, the draw offer, the opponent's mail, the events). Nothing here
//! writes: the outcome is a plan that `store` writes, or an answer without a write.

use chrono::{DateTime, NaiveDateTime, Utc};

use super::read::{Player, Read};
use super::replies::{Replied, follow_plan};
use super::store::{MovePlan, Notice};
use crate::auth::Caller;
use crate::db::models::{Move, OutboxRow};
use crate::db::{self, DbConn};
use crate::mail::ConditionalPlayed;
use crate::rules::{LoadedPosition, Side};
use crate::service::effects::chance::Chance;
use crate::service::effects::clocks;
use crate::service::effects::event_log::{self, GameChange};
use crate::service::effects::games::set_turn_or_finish;
use crate::service::effects::mail::{self, GameForMail, Notifier, TurnEvent};
use crate::service::effects::ratings;
use crate::service::games::refusals::refusal;
use crate::service::model::error::{Conflict, ServiceError};
use crate::service::model::game::{GameDetails, GameResult, GameState, PlayedMove};
use crate::service::model::rating::RatingChanges;
use crate::service::model::users::Recipient;
use crate::service::views::{self, GameView, MoveView};

/// A move request as the client sent it.
#[derive(Clone, Debug)]
pub struct MoveRequest {
    pub game_id: String,
    pub text: String,
    /// The ply the client believes the game is at.
    pub ply: Option<i32>,
}

/// A move request with everything its decision needs besides the game: who asks, what they
/// sent, when, and where the links of the mails it writes point.
pub(super) struct MoveContext<'a> {
    pub caller: &'a Caller,
    pub request: &'a MoveRequest,
    pub notifier: &'a Notifier,
    pub now: DateTime<Utc>,
    /// Whether it is decided inside the write transaction that stores it.
    pub writing: bool,
}

/// What a move request comes to, decided from one read of the game and its players.
pub(super) enum Decided {
    /// The move is legal: what to store.
    Write(Box<MovePlan>),
    /// The request repeated a move already stored.
    Replayed(Box<PlayedMove>),
    /// The move ends a rated game: decided again inside the write, where its players' ratings
    /// are read and held until they are changed.
    EndsRatedGame,
    /// The mover's time had run out before the move came: the game is lost on time.
    OutOfTime {
        game: Box<GameState>,
        players: Box<[Recipient; 2]>,
        deadline: NaiveDateTime,
    },
}

/// Decides what a move request comes to, writing nothing.
pub(super) fn decide(
    conn: &mut DbConn,
    ctx: &MoveContext<'_>,
    read: Read,
) -> Result<Decided, ServiceError> {
    let Read {
        game,
        players,
        revisions,
    } = read;
    let side = mover(&game, ctx.caller)?;
    if let Some(replayed) = replayed(conn, ctx, &game, side, &players)? {
        return Ok(Decided::Replayed(Box::new(replayed)));
    }
    check_turn(&game, side, ctx.request)?;
    if let Some(deadline) = flag_fallen(&game, ctx.now) {
        let [white, black] = players.map(|player| player.recipient);
        return Ok(Decided::OutOfTime {
            game: Box::new(game),
            players: Box::new([white, black]),
            deadline,
        });
    }
    let read = db::games::AsRead {
        ply: game.ply,
        revisions,
        deadline_at: game.deadline_at,
        next_reminder_at: game.next_reminder_at,
    };
    let mut played = play_on_board(game, side, &players, ctx)?;
    run_clocks(conn, &mut played, ctx.now)?;
    let moving_now = played.moving_now();
    let rated = match ctx.writing {
        true => ratings::decide(conn, &played.game, &moving_now)?,
        false if ratings::rates(conn, &played.game, &moving_now)? => {
            return Ok(Decided::EndsRatedGame);
        }
        false => None,
    };
    let (mail, more_mail, notice) = mails(&played, &players, ctx)?;
    let (view, events) = announce(&played, &players, rated.as_ref(), ctx.now)?;
    let Played {
        game, mv, chance, ..
    } = played;
    Ok(Decided::Write(Box::new(MovePlan {
        read,
        caller: ctx.caller.clone(),
        mv,
        chance,
        mail,
        more_mail,
        notice,
        rated,
        view,
        events,
        row: game.to_row(),
        game,
    })))
}

/// The board after a legal move: the game as it left it, the move itself, what the server
/// rolled and played after it (the opponent's planned replies among it), and the position
/// reached (asked once, by everything after).
struct Played {
    game: GameState,
    side: Side,
    mv: Move,
    chance: Chance,
    replied: Replied,
    position: Box<dyn LoadedPosition>,
}

impl Played {
    /// The sides whose own moves this stores: the mover's, and their opponent's planned replies.
    fn moving_now(&self) -> Vec<Side> {
        let mut sides = vec![self.side];
        if !self.replied.replies.is_empty() {
            sides.push(self.side.opponent());
        }
        sides
    }
}

/// Check: only the game's two players move in it.
fn mover(game: &GameState, caller: &Caller) -> Result<Side, ServiceError> {
    game.side_of(&caller.id).ok_or_else(|| {
        ServiceError::Forbidden(
            "you are not a player in this game; only its two players can move".into(),
        )
    })
}

/// Check: a request that repeats the caller's last accepted move (a client retrying) is
/// answered with that move, as long as it could not be a new one.
fn replayed(
    conn: &mut DbConn,
    ctx: &MoveContext<'_>,
    game: &GameState,
    side: Side,
    players: &[Player; 2],
) -> Result<Option<PlayedMove>, ServiceError> {
    let my_turn = game.is_active() && game.to_move == Some(side);
    if my_turn && ply_matches(game, ctx.request) {
        return Ok(None);
    }
    let Some(mv) = replay_of(conn, game, side, ctx.request)? else {
        return Ok(None);
    };
    let view = GameView::new(with_players(game.clone(), players), true)?;
    Ok(Some(PlayedMove {
        my_turn,
        mv,
        game: views::raw(&view)?,
        replayed: true,
    }))
}

fn ply_matches(game: &GameState, request: &MoveRequest) -> bool {
    request.ply.is_none_or(|ply| ply == game.ply)
}

/// Checks: the game goes on, the client saw the position it moves in, and it is the mover's
/// turn.
fn check_turn(game: &GameState, side: Side, request: &MoveRequest) -> Result<(), ServiceError> {
    if !game.is_active() {
        return Err(ServiceError::conflict(
            Conflict::GameOver,
            "this game has ended; no more moves can be played",
        ));
    }
    if !ply_matches(game, request) {
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
    if game.to_move != Some(side) {
        return Err(ServiceError::conflict(
            Conflict::NotYourTurn {
                to_move: side.opponent(),
            },
            format!("it is {}'s turn; wait for their move", side.opponent()),
        ));
    }
    Ok(())
}

/// Check: the mover's deadline, if it has passed before the move came.
fn flag_fallen(game: &GameState, now: DateTime<Utc>) -> Option<NaiveDateTime> {
    game.deadline_at
        .filter(|deadline| crate::clock::flag_fallen(deadline.and_utc(), now))
}

/// The engine's play: the move on the board, then whatever the server rolls and plays before
/// someone has a choice again, and whose turn it is or how the game ended. A move answers a
/// standing draw offer from the opponent by declining it.
fn play_on_board(
    mut game: GameState,
    side: Side,
    players: &[Player; 2],
    ctx: &MoveContext<'_>,
) -> Result<Played, ServiceError> {
    // The position is read once; the move, the dice after it and the answer's legal moves all
    // ask this one value.
    let before = game.load_position()?;
    let (notation, after) = before
        .play(&ctx.request.text)
        .map_err(|e| refusal(e, before.as_ref()))?;
    let now = ctx.now.naive_utc();
    game.ply += 1;
    game.position = after.canonical();
    game.updated_at = now;
    if game.draw_offer == Some(side.opponent()) {
        game.draw_offer = None;
    }
    let mv = Move {
        game_id: game.id.clone(),
        ply: game.ply,
        side,
        player_id: ctx.caller.id.clone(),
        submitted: ctx.request.text.clone(),
        notation,
        position: game.position.clone(),
        created_at: now,
        automatic: false,
    };
    let autoplay = players.each_ref().map(|player| player.play_forced_moves);
    let mut chance = Chance::default();
    let position = chance.settle(&mut game, after, autoplay, now)?;
    set_turn_or_finish(&mut game, position.as_ref(), now);
    let (position, replied) = follow_plan(
        &mut game,
        &mut chance,
        position,
        &mv.notation,
        autoplay,
        now,
    )?;
    Ok(Played {
        game,
        side,
        mv,
        chance,
        replied,
        position,
    })
}

/// The clocks: the mover's turn ends when the game passes to the opponent, or when the server
/// played the opponent's turn for them; it goes on through the mover's own further decisions.
fn run_clocks(
    conn: &mut DbConn,
    played: &mut Played,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let Played {
        game,
        side,
        chance,
        replied,
        ..
    } = played;
    let turn_passed = game.to_move != Some(*side) || chance.moved(side.opponent());
    if turn_passed || !game.is_active() {
        // A move that beat the deadline cannot be late here; a clock that says otherwise (a
        // vacation ended in the same instant) gives the player the benefit.
        let _ = clocks::end_turn(conn, game, *side, now)?;
        if !replied.replies.is_empty() {
            // A planned reply takes no thinking time, and earns any increment.
            game.turn_started_at = Some(now.naive_utc());
            let _ = clocks::end_turn(conn, game, side.opponent(), now)?;
        }
        clocks::start_turn(conn, game, now)?;
    }
    Ok(())
}

/// The mail a move writes: the first in its one write, the others after it, and the notice of
/// planned replies played.
type Mails = (Option<OutboxRow>, Vec<OutboxRow>, Option<Notice>);

/// The mails of a move: the opponent's (see [`opponents_mail`]); or, when the opponent's planned
/// replies answered it, the mover's (their turn after the last reply, or the game's end), the
/// opponent's at the game's end, and the opponent's notice of their replies.
fn mails(
    played: &Played,
    players: &[Player; 2],
    ctx: &MoveContext<'_>,
) -> Result<Mails, ServiceError> {
    let Played {
        game,
        side,
        mv,
        chance,
        replied,
        ..
    } = played;
    if replied.replies.is_empty() {
        return Ok((opponents_mail(played, players, ctx)?, Vec::new(), None));
    }
    let owner_side = side.opponent();
    let mover = &players[side.index()].recipient;
    let owner = &players[owner_side.index()].recipient;
    let about = for_mail(game, players, ctx.notifier);
    let mut more = Vec::new();
    let mail = if !game.is_active() {
        more.extend(mail::mail_row(
            owner,
            about.game_over(owner),
            Some(&game.id),
            ctx.now,
        )?);
        mail::mail_row(mover, about.game_over(mover), Some(&game.id), ctx.now)?
    } else if game.to_move == Some(*side) {
        let last = chance.last_move_of(owner_side).cloned();
        mail::turn_row(mover, &turn(game, last, owner), ctx.now)?
    } else {
        None
    };
    let game_over = (!game.is_active()).then(|| {
        match game.result.and_then(GameResult::winner) {
            Some(winner) if winner == owner_side => "You won the game.",
            Some(_) => "You lost the game.",
            None => "The game was drawn.",
        }
        .to_owned()
    });
    let notice = Notice {
        to: owner.clone(),
        game_id: game.id.clone(),
        mail: ConditionalPlayed {
            game: game.engine.name().to_owned(),
            opponent: mover.username.clone(),
            opponent_move: mv.notation.clone(),
            reply: replied.replies.join(", "),
            move_number: u32::try_from(mv.ply + 1).unwrap_or(0),
            lines_left: u32::try_from(replied.lines_left).unwrap_or(u32::MAX),
            game_over,
            game_url: ctx.notifier.game_url(&game.id),
        },
        now: ctx.now,
    };
    Ok((mail, more, Some(notice)))
}

/// The opponent's mail: the game's end, or their turn; nothing while the mover is still to
/// decide (Backgammon's roll before the checkers).
fn opponents_mail(
    played: &Played,
    players: &[Player; 2],
    ctx: &MoveContext<'_>,
) -> Result<Option<OutboxRow>, ServiceError> {
    let Played {
        game,
        side,
        mv,
        chance,
        ..
    } = played;
    let opponent = side.opponent();
    let to = &players[opponent.index()].recipient;
    if !game.is_active() {
        let about = for_mail(game, players, ctx.notifier);
        return mail::mail_row(to, about.game_over(to), Some(&game.id), ctx.now);
    }
    if game.to_move != Some(opponent) {
        return Ok(None);
    }
    let last = chance
        .last_move_of(*side)
        .unwrap_or(&mv.notation)
        .to_owned();
    let turn = turn(game, Some(last), &players[side.index()].recipient);
    mail::turn_row(to, &turn, ctx.now)
}

/// The game as its mails speak of it, with its players' names.
fn for_mail<'a>(
    game: &'a GameState,
    players: &'a [Player; 2],
    notifier: &'a Notifier,
) -> GameForMail<'a> {
    let [white, black] = players.each_ref().map(|p| p.recipient.username.as_str());
    GameForMail {
        game,
        notifier,
        white,
        black,
    }
}

/// The turn that passes to a player whose opponent, `opponent`, played `last_move`. The mail
/// itself (the board, the legal moves, the deadline in the reader's zone) is worked out by the
/// delivery worker, outside the transaction.
fn turn(game: &GameState, last_move: Option<String>, opponent: &Recipient) -> TurnEvent {
    TurnEvent {
        game_id: game.id.clone(),
        game: game.kind,
        options: game.options.clone(),
        ply: game.ply,
        position: game.position.clone(),
        last_move,
        opponent: opponent.username.clone(),
        deadline_at: game.deadline_at,
    }
}

/// The events, and the game as clients see it after the move (the answer, and the events'
/// data), worked out here so that the writer only stores them.
fn announce(
    played: &Played,
    players: &[Player; 2],
    rated: Option<&RatingChanges>,
    now: DateTime<Utc>,
) -> Result<(Box<serde_json::value::RawValue>, Vec<db::events::NewEvent>), ServiceError> {
    let details = with_players(played.game.clone(), players);
    let view = GameView::of_position(details.clone(), played.position.as_ref());
    let written = views::raw(&view)?;
    let moves: Vec<MoveView> = std::iter::once(&played.mv)
        .chain(played.chance.automatic())
        .cloned()
        .map(MoveView::from)
        .collect();
    let events = event_log::rows(
        event_log::after_game_change(
            &details,
            &view,
            &written,
            GameChange {
                moves: &moves,
                draw: None,
                rated,
            },
        )?,
        now.naive_utc(),
    );
    Ok((written, events))
}

fn with_players(game: GameState, [white, black]: &[Player; 2]) -> GameDetails {
    GameDetails {
        game,
        white: white.user_ref(),
        black: black.user_ref(),
    }
}

/// How far back a repeated request may find the caller's last move: past the replies and the
/// moves the server played after it.
const REPLAY_WINDOW: i32 = 8;

/// The caller's last accepted move, if `request` repeats it: the same ply (the move after the
/// request's, or the last one), no move of the caller's since, and the same move, perhaps
/// written differently.
fn replay_of(
    conn: &mut DbConn,
    game: &GameState,
    side: Side,
    request: &MoveRequest,
) -> Result<Option<Move>, ServiceError> {
    let at = request.ply.map_or(game.ply, |ply| ply.saturating_add(1));
    if at < 1 || at > game.ply || game.ply - at > REPLAY_WINDOW {
        return Ok(None);
    }
    let last = db::moves::at(conn, &game.id, at)?;
    let Some(last) = last.filter(|m| m.side == side) else {
        return Ok(None);
    };
    for later in at + 1..=game.ply {
        let mine = db::moves::at(conn, &game.id, later)?.is_some_and(|m| m.side == side);
        if mine {
            return Ok(None);
        }
    }
    if last.submitted == request.text || last.notation == request.text.trim() {
        return Ok(Some(last));
    }
    // Written another way: read it in the position it was played in.
    let before = match db::moves::at(conn, &game.id, at - 1)? {
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
