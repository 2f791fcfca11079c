//! The replies the mover's opponent planned (conditional moves): the moves just played followed
//! through their plan, and each answer it gives played while it is their move, in the move's own
//! transaction.

use chrono::NaiveDateTime;

use crate::db::models::Move;
use crate::rules::{LoadedPosition, Side};
use crate::service::effects::chance::{Autoplay, Chance};
use crate::service::effects::games::set_turn_or_finish;
use crate::service::model::conditional::Plan;
use crate::service::model::error::ServiceError;
use crate::service::model::game::GameState;

/// What the opponent's plan did after a move.
#[derive(Debug, Default)]
pub(super) struct Replied {
    /// The replies played, in canonical notation, in order.
    pub replies: Vec<String>,
    /// The lines of the plan still to follow.
    pub lines_left: usize,
}

/// Follows the plan of the mover's opponent, if they have one, through `played` (the mover's
/// move) and what the server played after it; while the plan answers and it is its player's
/// move, plays the answer and follows on. A move no line expected drops the plan, and so does a
/// draw offer of the mover's that stands (the player decides on it). Answers the position
/// reached; the game keeps what is left of the plan.
pub(super) fn follow_plan(
    game: &mut GameState,
    chance: &mut Chance,
    mut position: Box<dyn LoadedPosition>,
    played: &str,
    autoplay: Autoplay,
    now: NaiveDateTime,
) -> Result<(Box<dyn LoadedPosition>, Replied), ServiceError> {
    let mut replied = Replied::default();
    let Some(plan) = game.conditional.take() else {
        return Ok((position, replied));
    };
    let owner = plan.side;
    let mut plan = follow(Some(plan), std::iter::once(played));
    plan = follow(
        plan,
        chance.automatic().iter().map(|mv| mv.notation.as_str()),
    );
    while let Some(current) = plan.take() {
        let waiting = game.is_active() && game.to_move == Some(owner.opponent());
        if waiting {
            plan = Some(current);
            break;
        }
        let Some(answer) = current.answer().filter(|_| answers_now(game, owner)) else {
            break;
        };
        let Ok((notation, after)) = position.play(answer) else {
            // Checked when stored from the same position: an engine that changed its mind since
            // drops the plan rather than the move.
            tracing::warn!(game = %game.id, answer, "a planned reply no longer plays");
            break;
        };
        game.ply += 1;
        game.position = after.canonical();
        chance.record(Move {
            game_id: game.id.clone(),
            ply: game.ply,
            side: owner,
            player_id: game.player(owner).to_owned(),
            submitted: answer.to_owned(),
            notation: notation.clone(),
            position: game.position.clone(),
            created_at: now,
            automatic: false,
        });
        let before = chance.automatic().len();
        position = chance.settle(game, after, autoplay, now)?;
        set_turn_or_finish(game, position.as_ref(), now);
        plan = follow(current.follow(&notation), {
            let after_reply = &chance.automatic()[before..];
            after_reply.iter().map(|mv| mv.notation.as_str())
        });
        replied.replies.push(notation);
    }
    replied.lines_left = plan.as_ref().map_or(0, |plan| plan.lines.len());
    game.conditional = plan.filter(|_| game.is_active());
    Ok((position, replied))
}

/// The plan after `moves`, played one after the other.
fn follow<'a>(plan: Option<Plan>, moves: impl IntoIterator<Item = &'a str>) -> Option<Plan> {
    moves
        .into_iter()
        .try_fold(plan?, |plan, mv| plan.follow(mv))
}

/// Whether `owner` answers now: the game goes on, it is their move, and no draw offer of their
/// opponent's waits for them.
fn answers_now(game: &GameState, owner: Side) -> bool {
    game.is_active() && game.to_move == Some(owner) && game.draw_offer != Some(owner.opponent())
}
