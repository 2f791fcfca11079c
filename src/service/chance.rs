//! What the server does between two decisions of the players: rolling the dice the rules ask
//! for and playing the passes they force (see `docs/fair-dice.md`).

use chrono::NaiveDateTime;
use diesel::prelude::*;
use serde_json::Value;

use super::games::player_of;
use crate::db::DbConn;
use crate::db::models::{Game, Move, Roll};
use crate::db::schema::{moves, rolls};
use crate::dice::Seed;
use crate::error::ApiError;
use crate::rules::{Analysis, Engine, Side};

/// How many rolls and forced passes may follow one move before the server stops and waits;
/// far more than any game needs, so that a bug cannot loop for ever.
const MAX_CHANCE_STEPS: usize = 64;

/// What the server does between two decisions of the players: rolling the dice the rules ask
/// for, and playing the passes they force. Collected first and stored after the game row, so
/// that a lost race is detected before anything else is written.
#[derive(Default)]
pub(super) struct Chance {
    rolls: Vec<Roll>,
    passes: Vec<Move>,
}

impl Chance {
    fn seed(game: &Game) -> Result<Seed, ApiError> {
        game.dice_seed
            .as_deref()
            .and_then(Seed::from_hex)
            .ok_or_else(|| {
                ApiError::Internal(anyhow::anyhow!(
                    "game {} needs dice but has no seed",
                    game.id
                ))
            })
    }

    fn roll(
        &mut self,
        game: &mut Game,
        count: usize,
        side: Side,
        purpose: &str,
        now: NaiveDateTime,
    ) -> Result<Vec<u8>, ApiError> {
        let first = game.dice_used + 1;
        let dice = Self::seed(game)?.dice(first as u64, count);
        game.dice_used += count as i32;
        self.rolls.push(Roll {
            game_id: game.id.clone(),
            number: first,
            ply: game.ply,
            side: side.name().to_owned(),
            purpose: purpose.to_owned(),
            dice: dice.iter().map(u8::to_string).collect::<Vec<_>>().join(","),
            created_at: now,
        });
        Ok(dice)
    }

    /// One die each, White's first, until they differ; the higher starts.
    pub(super) fn opening_roll(
        &mut self,
        game: &mut Game,
        now: NaiveDateTime,
    ) -> Result<Side, ApiError> {
        for _ in 0..MAX_CHANCE_STEPS {
            let dice = self.roll(game, 2, Side::White, "opening", now)?;
            if dice[0] != dice[1] {
                return Ok(if dice[0] > dice[1] {
                    Side::White
                } else {
                    Side::Black
                });
            }
        }
        Err(ApiError::Internal(anyhow::anyhow!(
            "the opening roll never settled"
        )))
    }

    /// Rolls and passes until a player has a choice to make or the game is over.
    pub(super) fn settle(
        &mut self,
        game: &mut Game,
        engine: &dyn Engine,
        options: &Value,
        mut analysis: Analysis,
        now: NaiveDateTime,
    ) -> Result<Analysis, ApiError> {
        for _ in 0..MAX_CHANCE_STEPS {
            if analysis.outcome.is_some() {
                break;
            }
            if let Some(count) = analysis.roll_due {
                let dice = self.roll(game, count, analysis.side_to_move, "turn", now)?;
                analysis = engine
                    .apply_roll(&analysis.position, options, &dice)
                    .map_err(|e| ApiError::Internal(anyhow::anyhow!("cannot apply a roll: {e}")))?;
                game.position = analysis.position.clone();
                continue;
            }
            // Only the dice can leave a player without a move; sparing the other games this
            // second move generation keeps their move path lean.
            if game.dice_seed.is_none() {
                break;
            }
            let legal = engine
                .legal_moves(&analysis.position, options)
                .map_err(|e| ApiError::Internal(anyhow::anyhow!("{e}")))?;
            if legal != [PASS] {
                break;
            }
            let side = analysis.side_to_move;
            let played = engine
                .play(&analysis.position, options, PASS)
                .map_err(|e| ApiError::Internal(anyhow::anyhow!("cannot pass: {e:?}")))?;
            game.ply += 1;
            game.position = played.after.position.clone();
            self.passes.push(Move {
                game_id: game.id.clone(),
                ply: game.ply,
                side: side.name().to_owned(),
                player_id: player_of(game, side).to_owned(),
                submitted: PASS.to_owned(),
                notation: played.notation,
                position: game.position.clone(),
                created_at: now,
            });
            analysis = played.after;
        }
        Ok(analysis)
    }

    pub(super) fn store(self, conn: &mut DbConn) -> Result<(), ApiError> {
        // One row at a time: multi-row inserts are not portable across the two backends.
        for roll in &self.rolls {
            diesel::insert_into(rolls::table)
                .values(roll)
                .execute(conn)?;
        }
        for pass in &self.passes {
            diesel::insert_into(moves::table)
                .values(pass)
                .execute(conn)?;
        }
        Ok(())
    }
}

/// The move a player makes when the rules leave them none; the server plays it for them.
const PASS: &str = "pass";
