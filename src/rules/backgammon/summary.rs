//! A position as a client draws it and acts on it (dice, cube, score, whose decision), so that no
//! client has to decode gnubg's IDs.

use super::board::{Phase, Position};
use crate::rules::details::{Cube, Decision, Summary};
use crate::rules::side::Side;

pub fn summary(position: &Position) -> Summary {
    let mut score = position.score.map(u32::from);
    if let Some((winner, points, _)) = position.result() {
        score[winner.index()] += points;
    }
    let pips = Side::BOTH.map(|side| {
        position
            .side_board(side)
            .iter()
            .zip(1u32..)
            .map(|(&count, pips)| u32::from(count) * pips)
            .sum()
    });
    let decision = match position.phase() {
        Phase::Finished => None,
        Phase::AnswerResignation => Some(Decision::AcceptOrReject),
        Phase::AnswerDouble => Some(Decision::TakeOrPass),
        Phase::CubeDecision => Some(Decision::DoubleOrRoll),
        Phase::RollDue => Some(Decision::Roll),
        Phase::Checkers => Some(Decision::Move),
    };
    Summary {
        dice: (position.dice[0] != 0).then_some(position.dice),
        cube: position.cube_enabled.then(|| Cube {
            value: position.cube_value(),
            owner: position.owner,
        }),
        match_length: u32::from(position.match_length),
        score,
        crawford: position.crawford,
        pips,
        decision: decision.map(|decision| (position.turn, decision)),
        resignation: (position.phase() == Phase::AnswerResignation).then_some(position.resigned),
    }
}
