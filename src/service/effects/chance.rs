//! What the server does between two decisions of the players: rolling the dice the rules ask
//! for, playing the turns the dice leave empty, and playing the only legal move for players who
//! asked for it (see `docs/fair-dice.md`).

use chrono::NaiveDateTime;

use crate::db::models::{Move, Roll};
use crate::db::{self, DbConn};
use crate::rules::{LoadedPosition, Side};
use crate::service::model::error::ServiceError;
use crate::service::model::game::GameState;
use crate::service::model::game::roll_purpose::{OPENING, TURN};

/// How many rolls and forced passes may follow one move before the server stops and waits;
/// far more than any game needs, so that a bug cannot loop for ever.
const MAX_CHANCE_STEPS: usize = 64;

/// What the server does between two decisions of the players: rolling the dice the rules ask
/// for, and playing the passes they force. Collected first and stored after the game row, so
/// that a lost race is detected before anything else is written.
#[derive(Default)]
pub struct Chance {
    rolls: Vec<Roll>,
    automatic: Vec<Move>,
}

/// Whose only legal moves the server plays, by [`Side::index`]: the players'
/// `play_forced_moves` settings.
pub type Autoplay = [bool; 2];

impl Chance {
    fn roll(
        &mut self,
        game: &mut GameState,
        count: usize,
        side: Side,
        purpose: &str,
        now: NaiveDateTime,
    ) -> Result<Vec<u8>, ServiceError> {
        let Some(seeded) = game.dice.as_mut() else {
            return Err(ServiceError::internal(format!(
                "game {} needs dice but has no seed",
                game.id
            )));
        };
        let first = seeded.used + 1;
        let dice = seeded.seed.dice(first as u64, count);
        seeded.used += count as i32;
        self.rolls.push(Roll {
            game_id: game.id.clone(),
            number: first,
            ply: game.ply,
            side,
            purpose: purpose.to_owned(),
            dice: dice.iter().map(u8::to_string).collect::<Vec<_>>().join(","),
            created_at: now,
        });
        Ok(dice)
    }

    /// One die each, White's first, until they differ (the higher starts); returns the
    /// deciding dice, White's first.
    pub fn opening_roll(
        &mut self,
        game: &mut GameState,
        now: NaiveDateTime,
    ) -> Result<(u8, u8), ServiceError> {
        for _ in 0..MAX_CHANCE_STEPS {
            let dice = self.roll(game, 2, Side::White, OPENING, now)?;
            if dice[0] != dice[1] {
                return Ok((dice[0], dice[1]));
            }
        }
        Err(ServiceError::Internal(anyhow::anyhow!(
            "the opening roll never settled"
        )))
    }

    /// Rolls and plays moves without a choice until a player has one to make or the game is
    /// over; answers the position reached, and leaves its canonical form in the game.
    pub fn settle(
        &mut self,
        game: &mut GameState,
        mut position: Box<dyn LoadedPosition>,
        autoplay: Autoplay,
        now: NaiveDateTime,
    ) -> Result<Box<dyn LoadedPosition>, ServiceError> {
        let mut changed = false;
        for _ in 0..MAX_CHANCE_STEPS {
            if position.outcome().is_some() {
                break;
            }
            let side = position.side_to_move();
            if let Some(count) = position.roll_due() {
                let dice = self.roll(game, count, side, TURN, now)?;
                position = position
                    .apply_roll(&dice)
                    .map_err(|e| ServiceError::internal(format!("cannot apply a roll: {e}")))?;
                changed = true;
                continue;
            }
            // Only the dice can leave a player without a move; sparing the other games (for
            // players who play their forced moves themselves) this second move generation keeps
            // their move path lean.
            if game.dice.is_none() && !autoplay[side.index()] {
                break;
            }
            let legal = position.legal_moves();
            let forced = match legal.as_slice() {
                [only] if LOST_TURNS.contains(&only.as_str()) || autoplay[side.index()] => only,
                _ => break,
            };
            let (notation, after) = position.play(forced).map_err(|e| {
                ServiceError::internal(format!("cannot play the forced `{forced}`: {e}"))
            })?;
            position = after;
            game.ply += 1;
            game.position = position.canonical();
            changed = false;
            self.automatic.push(Move {
                game_id: game.id.clone(),
                ply: game.ply,
                side,
                player_id: game.player(side).to_owned(),
                submitted: forced.clone(),
                notation,
                position: game.position.clone(),
                created_at: now,
                automatic: true,
            });
        }
        if changed {
            game.position = position.canonical();
        }
        Ok(position)
    }

    /// A move the server plays for a player who planned it (a conditional reply), in its place
    /// among the moves played after the one being stored.
    pub fn record(&mut self, mv: Move) {
        self.automatic.push(mv);
    }

    /// The moves the server played, in order.
    pub fn automatic(&self) -> &[Move] {
        &self.automatic
    }

    /// Whether the server played a move for `side`.
    pub fn moved(&self, side: Side) -> bool {
        self.automatic.iter().any(|mv| mv.side == side)
    }

    /// The last move the server played for `side`, if any.
    pub fn last_move_of(&self, side: Side) -> Option<&String> {
        self.automatic
            .iter()
            .rev()
            .find(|mv| mv.side == side)
            .map(|mv| &mv.notation)
    }

    pub fn store(&self, conn: &mut DbConn) -> Result<(), ServiceError> {
        // One row at a time: multi-row inserts are not portable across the two backends.
        for roll in &self.rolls {
            db::rolls::record(conn, roll)?;
        }
        for mv in &self.automatic {
            db::moves::append(conn, mv)?;
        }
        Ok(())
    }
}

/// The dice of a stored roll, `"3,5"`.
pub fn parse_dice(text: &str) -> Vec<u8> {
    text.split(',').filter_map(|d| d.parse().ok()).collect()
}

/// The moves that stand for a turn the dice left without a playable move (Suluc's `pass`,
/// Backgammon's `none`); the server always plays them for the player.
const LOST_TURNS: [&str; 2] = ["pass", "none"];
