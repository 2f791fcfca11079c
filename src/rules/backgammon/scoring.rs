//! How a game of Backgammon ends and what it scores, apart from how it is played: the diagram,
//! the client's summary and the engine all tell the same result.

use super::board::{CHECKERS, Position, State};
use crate::rules::outcome::{EndReason, Outcome};
use crate::rules::side::Side;

/// The start of the next game of a match after `finished`, with `first` on roll holding `dice`;
/// `None` when `finished` is not finished, is a single game, or ended the match.
pub fn next_game(finished: &Position, first: Side, dice: [u8; 2]) -> Option<Position> {
    let (winner, points, _) = finished.result()?;
    let length = u32::from(finished.match_length);
    if length == 0 {
        return None;
    }
    let mut score = finished.score;
    let new = u32::from(score[winner.index()]) + points;
    if new >= length {
        return None;
    }
    score[winner.index()] = new as u16;
    // The Crawford game is the one right after a player first reaches match point.
    let before = u32::from(finished.score[0].max(finished.score[1]));
    let crawford = !finished.crawford && before + 1 < length && new + 1 == length;
    let mut dice = dice;
    if dice[0] < dice[1] {
        dice.swap(0, 1);
    }
    let mut start = Position::start(first, dice, finished.match_length, finished.cube_enabled);
    start.score = score;
    start.crawford = crawford;
    Some(start)
}

/// Whether `position` ended a game of a match that goes on, so the next game's opening roll is due.
pub fn between_games(position: &Position) -> bool {
    position.result().is_some_and(|(winner, points, _)| {
        let length = u32::from(position.match_length);
        length > 0 && u32::from(position.score[winner.index()]) + points < length
    })
}

pub(crate) fn outcome(position: &Position) -> Option<Outcome> {
    if between_games(position) {
        return None;
    }
    game_result(position)
}

/// How the game in `position` ended (who won, how many points, the match score after it), even
/// when the match goes on; `None` while it is being played.
pub fn game_result(position: &Position) -> Option<Outcome> {
    let (winner, points, level) = position.result()?;
    let kind = match level {
        1 => "a single game",
        2 => "a gammon",
        _ => "a backgammon",
    };
    let loser = winner.opponent().name();
    let how = match position.state {
        State::Dropped => format!(" ({loser} passed the double)"),
        State::Resigned => format!(" ({loser} resigned)"),
        _ => String::new(),
    };
    let mut summary = format!(
        "{} wins {kind}, {points} point{}{how}",
        winner.name(),
        if points == 1 { "" } else { "s" }
    );
    if position.match_length > 0 {
        let mut score = position.score.map(u32::from);
        score[winner.index()] += points;
        let length = u32::from(position.match_length);
        summary.push_str(&format!(
            "; score {}-{} in a {length}-point match",
            score[0], score[1]
        ));
        if score[winner.index()] >= length {
            summary.push_str(&format!("; {} wins the match", winner.name()));
        }
    }
    Some(Outcome {
        winner: Some(winner),
        reason: match position.state {
            State::Over => EndReason::GoalReached,
            _ => EndReason::Decided,
        },
        summary: Some(summary),
    })
}

/// Checker totals stay 15 a side (for the property tests and debug checks).
pub fn checkers_total(position: &Position, side: Side) -> u8 {
    position.on_board(side) + position.borne_off(side).min(CHECKERS)
}
