//! The Backgammon board as text, in the manner of GNU Backgammon's ASCII board: points 13–24
//! along the top and 12–1 along the bottom, White's checkers as `O` and Black's as `X` (gnubg's
//! players 0 and 1), at most five drawn a point with the count in the fifth place beyond that.
//!
//! The board is seen by the player to move ([`Game::side_to_move`], the one who must decide
//! now): their home board is at the bottom right and the point numbers are theirs, as in their
//! move notation. A mail goes to that player, so the numbers match the move they will write.
//! Checkers on the bar stand in the bar column of the half where they come back in.

use super::board::{BAR, Phase, Position, resign_name};
use super::ids;
use super::scoring::game_result;
use crate::rules::diagram::centred;
use crate::rules::side::Side;

/// How many checkers a point draws before it shows their count instead.
const STACK: usize = 5;
/// A point's column is three characters wide, like gnubg's.
const POINT: usize = 3;

fn mark(side: Side) -> char {
    match side {
        Side::White => 'O',
        Side::Black => 'X',
    }
}

/// The checkers on the viewer's point `point` (1–24) or, for 25, on the viewer's bar.
fn checkers(position: &Position, viewer: Side, point: usize) -> Option<(Side, u8)> {
    let own = position.side_board(viewer);
    let theirs = position.side_board(viewer.opponent());
    if point == 25 {
        return (own[BAR] > 0).then_some((viewer, own[BAR]));
    }
    if own[point - 1] > 0 {
        Some((viewer, own[point - 1]))
    } else if theirs[24 - point] > 0 {
        Some((viewer.opponent(), theirs[24 - point]))
    } else {
        None
    }
}

/// What `slot` (0 next to the edge of the board) of a stack shows.
fn slot_text(stack: Option<(Side, u8)>, slot: usize) -> String {
    match stack {
        Some((side, count)) if usize::from(count) > slot => {
            if slot == STACK - 1 && usize::from(count) > STACK {
                count.to_string()
            } else {
                mark(side).to_string()
            }
        }
        _ => String::new(),
    }
}

/// One line of a half board: six points, the bar, six points.
fn half_line(
    position: &Position,
    viewer: Side,
    points: &[usize; 12],
    bar: Option<(Side, u8)>,
    slot: usize,
) -> String {
    let cells = |points: &[usize]| -> String {
        points
            .iter()
            .map(|&p| centred(&slot_text(checkers(position, viewer, p), slot), POINT))
            .collect()
    };
    format!(
        "|{}|{}|{}|",
        cells(&points[..6]),
        centred(&slot_text(bar, slot), POINT),
        cells(&points[6..])
    )
}

/// The numbered edge of the board, `+13-14-…-24-+`.
fn edge(points: &[usize; 12]) -> String {
    let labels = |points: &[usize]| -> String {
        points
            .iter()
            .map(|p| format!("{p:->2}-"))
            .collect::<String>()
    };
    format!("+{}-----{}+", labels(&points[..6]), labels(&points[6..]))
}

fn pips(position: &Position, side: Side) -> u32 {
    position
        .side_board(side)
        .iter()
        .enumerate()
        .map(|(index, &count)| (index as u32 + 1) * u32::from(count))
        .sum()
}

fn status(position: &Position) -> String {
    let turn = position.turn;
    match position.phase() {
        // The match score after the game would overflow the line; the notes keep the score
        // before it, so only the end of the match is added.
        Phase::Finished => match game_result(position).and_then(|o| o.summary) {
            Some(summary) => {
                let game = summary.split(';').next().unwrap_or_default();
                let ended = if summary.contains("wins the match") {
                    "; match over"
                } else {
                    ""
                };
                format!("Game over: {game}{ended}")
            }
            None => "Game over".to_owned(),
        },
        Phase::AnswerResignation => format!(
            "{turn} to accept or reject {}'s resignation ({})",
            position.on_roll,
            resign_name(position.resigned)
        ),
        Phase::AnswerDouble => format!(
            "{turn} to take or pass the double to {}",
            2 * position.cube_value()
        ),
        Phase::CubeDecision => format!("{turn} to double or roll"),
        Phase::RollDue => format!("{turn} to move, dice to come"),
        Phase::Checkers => format!(
            "{turn} to move, rolled {}-{}",
            position.dice[0], position.dice[1]
        ),
    }
}

fn cube(position: &Position) -> String {
    if !position.cube_enabled {
        "No cube".to_owned()
    } else if position.crawford {
        "Crawford game, no cube".to_owned()
    } else {
        match position.owner {
            None => format!("Cube: {}", position.cube_value()),
            Some(owner) => format!("Cube: {}, owned by {owner}", position.cube_value()),
        }
    }
}

/// What stands to the right of a player's half: who they are, their score and what they have
/// borne off.
fn player_notes(position: &Position, side: Side) -> [String; 3] {
    let score = if position.match_length > 0 {
        format!(
            "Score {} of {}",
            position.score[side.index()],
            position.match_length
        )
    } else {
        String::new()
    };
    [
        format!("{}: {side}", mark(side)),
        format!(
            "Off {}, pips {}",
            position.borne_off(side),
            pips(position, side)
        ),
        score,
    ]
}

pub(crate) fn draw(position: &Position) -> String {
    let viewer = position.turn;
    let opponent = viewer.opponent();
    let top: [usize; 12] = std::array::from_fn(|i| 13 + i);
    let bottom: [usize; 12] = std::array::from_fn(|i| 12 - i);
    let own_bar = checkers(position, viewer, 25);
    let their_bar = {
        let count = position.side_board(opponent)[BAR];
        (count > 0).then_some((opponent, count))
    };

    let mut board = vec![edge(&top)];
    for slot in 0..STACK {
        board.push(half_line(position, viewer, &top, own_bar, slot));
    }
    board.push(format!(
        "|{}|BAR|{}|",
        " ".repeat(6 * POINT),
        " ".repeat(6 * POINT)
    ));
    for slot in (0..STACK).rev() {
        board.push(half_line(position, viewer, &bottom, their_bar, slot));
    }
    board.push(edge(&bottom));

    let [top_name, top_off, top_score] = player_notes(position, opponent);
    let [bottom_name, bottom_off, bottom_score] = player_notes(position, viewer);
    let mut notes = vec![String::new(); board.len()];
    notes[0] = top_name;
    notes[1] = top_off;
    notes[2] = top_score;
    notes[STACK + 1] = cube(position);
    notes[board.len() - 3] = bottom_score;
    notes[board.len() - 2] = bottom_off;
    notes[board.len() - 1] = bottom_name;

    let mut out = status(position);
    out.push('\n');
    for (line, note) in board.iter().zip(&notes) {
        out.push_str(format!("{line}     {note}").trim_end());
        out.push('\n');
    }
    out.push_str(&format!(
        "Position ID:Match ID {}\n",
        ids::canonical(position)
    ));
    out
}
