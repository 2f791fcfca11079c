//! GNU Backgammon's Position ID and Match ID, and XGID on input.
//!
//! White is gnubg's player 0 and Black its player 1. The Position ID lists the checkers of the
//! player not on roll (`fMove`'s opponent) first, then those of the player on roll, each from its
//! own ace point to its bar, as gnubg's `PositionKey` does with `anBoard[0]` and `anBoard[1]`.

use super::board::{BAR, CHECKERS, MAX_CUBE_LOG, Position, State};
use crate::rules::errors::PositionError;
use crate::rules::side::Side;

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The Match ID bit (beyond gnubg's 67) that marks "the player chose to roll, dice are due".
const ROLLING_BIT: u32 = 67;

fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 2);
    for chunk in bytes.chunks(3) {
        let b0 = chunk[0];
        let b1 = chunk.get(1).copied().unwrap_or(0);
        let b2 = chunk.get(2).copied().unwrap_or(0);
        out.push(char::from(BASE64[usize::from(b0 >> 2)]));
        out.push(char::from(BASE64[usize::from(((b0 & 3) << 4) | (b1 >> 4))]));
        if chunk.len() > 1 {
            out.push(char::from(
                BASE64[usize::from(((b1 & 0x0f) << 2) | (b2 >> 6))],
            ));
        }
        if chunk.len() > 2 {
            out.push(char::from(BASE64[usize::from(b2 & 0x3f)]));
        }
    }
    out
}

fn decode<const N: usize>(text: &str, what: &str) -> Result<[u8; N], PositionError> {
    let chars = N * 4 / 3 + usize::from(!N.is_multiple_of(3));
    if text.len() != chars {
        return Err(PositionError::at(
            text,
            format!("a {what} has {chars} characters"),
        ));
    }
    let mut values = Vec::with_capacity(chars + 3);
    for ch in text.bytes() {
        match BASE64.iter().position(|&b| b == ch) {
            Some(v) => values.push(v as u8),
            None => {
                return Err(PositionError::at(
                    text,
                    format!(
                        "`{}` is not a base64 character; a {what} uses A-Z a-z 0-9 + /",
                        char::from(ch)
                    ),
                ));
            }
        }
    }
    values.resize(chars.div_ceil(4) * 4, 0);
    let mut out = [0u8; N];
    for (i, group) in values.chunks(4).enumerate() {
        let bytes = [
            (group[0] << 2) | (group[1] >> 4),
            (group[1] << 4) | (group[2] >> 2),
            (group[2] << 6) | group[3],
        ];
        for (j, b) in bytes.into_iter().enumerate() {
            if let Some(slot) = out.get_mut(i * 3 + j) {
                *slot = b;
            }
        }
    }
    Ok(out)
}

fn gnubg_player(side: Side) -> u32 {
    side.index() as u32
}

fn side_of(player: u32) -> Side {
    if player == 0 {
        Side::White
    } else {
        Side::Black
    }
}

/// The canonical position string: `PositionID:MatchID`.
pub fn canonical(position: &Position) -> String {
    format!("{}:{}", position_id(position), match_id(position))
}

/// The Position ID of a position.
pub fn position_id(position: &Position) -> String {
    let first = position.on_roll.opponent();
    let mut key = [0u8; 10];
    let mut bit = 0usize;
    for side in [first, position.on_roll] {
        for &n in position.side_board(side) {
            for _ in 0..n {
                if let Some(byte) = key.get_mut(bit / 8) {
                    *byte |= 1 << (bit % 8);
                }
                bit += 1;
            }
            bit += 1;
        }
    }
    encode(&key)
}

/// Reads a Position ID into the two boards: (the player not on roll, the player on roll).
pub fn read_position_id(text: &str) -> Result<[[u8; 25]; 2], PositionError> {
    let key: [u8; 10] = decode(text, "Position ID")?;
    let mut boards = [[0u8; 25]; 2];
    let mut bit = 0usize;
    for board in boards.iter_mut() {
        for count in board.iter_mut() {
            loop {
                if bit >= 80 {
                    return Err(PositionError::at(
                        text,
                        "the Position ID ends before both sides' 25 points are described",
                    ));
                }
                let set = key[bit / 8] & (1 << (bit % 8)) != 0;
                bit += 1;
                if !set {
                    break;
                }
                *count += 1;
            }
        }
        let total: u32 = board.iter().map(|&n| u32::from(n)).sum();
        if total > u32::from(CHECKERS) {
            return Err(PositionError::at(
                text,
                format!("the Position ID gives a side {total} checkers; a side has 15"),
            ));
        }
    }
    for point in 1..=24usize {
        if boards[1][point - 1] > 0 && boards[0][24 - point] > 0 {
            return Err(PositionError::at(
                text,
                format!("the Position ID puts both sides' checkers on point {point}"),
            ));
        }
    }
    Ok(boards)
}

fn set_bits(key: &mut [u8; 9], pos: u32, n: u32, value: u32) {
    for i in 0..n {
        if value & (1 << i) != 0 {
            let bit = (pos + i) as usize;
            if let Some(byte) = key.get_mut(bit / 8) {
                *byte |= 1 << (bit % 8);
            }
        }
    }
}

fn get_bits(key: &[u8; 9], pos: u32, n: u32) -> u32 {
    (0..n)
        .filter(|i| {
            let bit = (pos + i) as usize;
            key.get(bit / 8)
                .is_some_and(|byte| byte & (1 << (bit % 8)) != 0)
        })
        .fold(0, |acc, i| acc | (1 << i))
}

/// The Match ID of a position.
pub fn match_id(position: &Position) -> String {
    let mut key = [0u8; 9];
    set_bits(&mut key, 0, 4, u32::from(position.cube_log));
    let owner = position.owner.map_or(3, gnubg_player);
    set_bits(&mut key, 4, 2, owner);
    set_bits(&mut key, 6, 1, gnubg_player(position.on_roll));
    set_bits(&mut key, 7, 1, u32::from(position.crawford));
    set_bits(&mut key, 8, 3, position.state.code());
    set_bits(&mut key, 11, 1, gnubg_player(position.turn));
    set_bits(&mut key, 12, 1, u32::from(position.doubled));
    set_bits(&mut key, 13, 2, u32::from(position.resigned));
    set_bits(&mut key, 15, 3, u32::from(position.dice[0]));
    set_bits(&mut key, 18, 3, u32::from(position.dice[1]));
    set_bits(&mut key, 21, 15, u32::from(position.match_length));
    set_bits(&mut key, 36, 15, u32::from(position.score[0]));
    set_bits(&mut key, 51, 15, u32::from(position.score[1]));
    // The engine never applies the Jacoby rule, so gnubg's "no Jacoby" bit is set.
    set_bits(&mut key, 66, 1, 1);
    set_bits(&mut key, ROLLING_BIT, 1, u32::from(position.rolling));
    encode(&key)
}

/// Everything a Match ID says, before it is checked against the board and the options.
pub struct MatchInfo {
    pub cube_log: u8,
    pub owner: Option<Side>,
    pub on_roll: Side,
    pub crawford: bool,
    pub state: State,
    pub turn: Side,
    pub doubled: bool,
    pub resigned: u8,
    pub dice: [u8; 2],
    pub match_length: u16,
    pub score: [u16; 2],
    pub rolling: bool,
}

pub fn read_match_id(text: &str) -> Result<MatchInfo, PositionError> {
    let key: [u8; 9] = decode(text, "Match ID")?;
    let bad = |message: String| PositionError::at(text, message);
    let cube_log = get_bits(&key, 0, 4) as u8;
    if cube_log > MAX_CUBE_LOG {
        return Err(bad(format!(
            "the Match ID's cube is {}; the cube goes up to 64",
            1u32 << cube_log
        )));
    }
    let owner = match get_bits(&key, 4, 2) {
        0 => Some(Side::White),
        1 => Some(Side::Black),
        // gnubg reads 2 as centred too.
        _ => None,
    };
    let state = match get_bits(&key, 8, 3) {
        0 => return Err(bad("the Match ID says no game is being played".into())),
        1 => State::Playing,
        2 => State::Over,
        3 => State::Resigned,
        4 => State::Dropped,
        n => {
            return Err(bad(format!(
                "the Match ID's game state {n} is not one gnubg knows"
            )));
        }
    };
    let mut dice = [get_bits(&key, 15, 3) as u8, get_bits(&key, 18, 3) as u8];
    if dice.iter().any(|&d| d > 6) || (dice[0] == 0) != (dice[1] == 0) {
        return Err(bad(format!(
            "the Match ID's dice {}-{} are not a roll",
            dice[0], dice[1]
        )));
    }
    if dice[0] < dice[1] {
        dice.swap(0, 1);
    }
    Ok(MatchInfo {
        cube_log,
        owner,
        on_roll: side_of(get_bits(&key, 6, 1)),
        crawford: get_bits(&key, 7, 1) == 1,
        state,
        turn: side_of(get_bits(&key, 11, 1)),
        doubled: get_bits(&key, 12, 1) == 1,
        resigned: get_bits(&key, 13, 2) as u8,
        dice,
        match_length: get_bits(&key, 21, 15) as u16,
        score: [get_bits(&key, 36, 15) as u16, get_bits(&key, 51, 15) as u16],
        rolling: get_bits(&key, ROLLING_BIT, 1) == 1,
    })
}

/// Reads `PositionID:MatchID` into its parts.
pub fn read_gnubg(text: &str) -> Result<([[u8; 25]; 2], MatchInfo), PositionError> {
    let text = text.trim();
    let text = text
        .strip_prefix("GNUBGID")
        .or_else(|| text.strip_prefix("GNUID"))
        .map_or(text, |rest| rest.trim_start_matches([' ', '=', ':']).trim());
    let Some((pid, mid)) = text.split_once(':') else {
        return Err(PositionError::at(
            text,
            "a backgammon position is `PositionID:MatchID` (14 and 12 characters) or an XGID",
        ));
    };
    Ok((read_position_id(pid.trim())?, read_match_id(mid.trim())?))
}

/// Reads an XGID: `XGID=board:cube:owner:turn:dice:score:score:crawford:length:maxcube`.
/// XGID names its players by place only (bottom: upper-case checkers, turn 1; top: lower case,
/// turn -1). As gnubg reads an XGID, the player on roll becomes gnubg's player 1, Black, and the
/// other White; so the same XGID gives the same Position ID and Match ID here as in gnubg.
pub fn read_xgid(text: &str) -> Result<([[u8; 25]; 2], MatchInfo), PositionError> {
    let body = text.trim();
    let body = body
        .strip_prefix("XGID=")
        .or_else(|| body.strip_prefix("xgid="))
        .unwrap_or(body);
    let fields: Vec<&str> = body.split(':').collect();
    if fields.len() < 9 {
        return Err(PositionError::at(
            text,
            "an XGID has ten fields separated by `:` (board, cube, owner, turn, dice, two scores, Crawford, match length, maximum cube)",
        ));
    }
    let board = fields[0];
    if board.len() != 26 {
        return Err(PositionError::at(
            board,
            "the XGID board has 26 characters: White's bar, points 1-24, Black's bar",
        ));
    }
    // Black (bottom) sees the XGID's point order; White's point q is Black's 25 - q.
    let mut white = [0u8; 25];
    let mut black = [0u8; 25];
    for (i, ch) in board.bytes().enumerate() {
        match ch {
            b'-' => {}
            b'A'..=b'P' => {
                let n = ch - b'A' + 1;
                match i {
                    25 => black[BAR] += n,
                    1..=24 => black[i - 1] += n,
                    _ => {
                        return Err(PositionError::at(
                            board,
                            "the XGID's first character is White's bar (lower case)",
                        ));
                    }
                }
            }
            b'a'..=b'p' => {
                let n = ch - b'a' + 1;
                match i {
                    0 => white[BAR] += n,
                    1..=24 => white[24 - i] += n,
                    _ => {
                        return Err(PositionError::at(
                            board,
                            "the XGID's last character is Black's bar (upper case)",
                        ));
                    }
                }
            }
            _ => {
                return Err(PositionError::at(
                    board,
                    format!(
                        "`{}` is not an XGID board character (`-`, A-P, a-p)",
                        char::from(ch)
                    ),
                ));
            }
        }
    }
    for (board_side, name) in [(&white, "White"), (&black, "Black")] {
        let total: u32 = board_side.iter().map(|&n| u32::from(n)).sum();
        if total > u32::from(CHECKERS) {
            return Err(PositionError::at(
                board,
                format!("the XGID gives {name} {total} checkers; a side has 15"),
            ));
        }
    }
    let number = |i: usize, what: &str| -> Result<i64, PositionError> {
        fields[i]
            .trim()
            .parse::<i64>()
            .map_err(|_| PositionError::at(fields[i], format!("the XGID's {what} is not a number")))
    };
    let cube_log = number(1, "cube")?;
    if !(0..=i64::from(MAX_CUBE_LOG)).contains(&cube_log) {
        return Err(PositionError::at(
            fields[1],
            "the XGID's cube is a power of two from 0 (cube 1) to 6 (cube 64)",
        ));
    }
    let owner = match number(2, "cube owner")? {
        0 => None,
        1 => Some(Side::Black),
        -1 => Some(Side::White),
        _ => {
            return Err(PositionError::at(
                fields[2],
                "the XGID's cube owner is -1, 0 or 1",
            ));
        }
    };
    let turn = match number(3, "turn")? {
        1 => Side::Black,
        -1 => Side::White,
        _ => return Err(PositionError::at(fields[3], "the XGID's turn is 1 or -1")),
    };
    let dice_field = fields[4].trim();
    let (dice, doubled) = match dice_field.as_bytes() {
        [b'0', b'0'] | [b'0'] => ([0, 0], false),
        [b'D'] | [b'd'] => ([0, 0], true),
        [a @ b'1'..=b'6', b @ b'1'..=b'6'] => {
            ([(a - b'0').max(b - b'0'), (a - b'0').min(b - b'0')], false)
        }
        [b'B' | b'b' | b'R' | b'r'] => {
            return Err(PositionError::at(
                dice_field,
                "beavers and raccoons are not played here",
            ));
        }
        _ => {
            return Err(PositionError::at(
                dice_field,
                "the XGID's dice are `00` (to roll), `D` (doubled) or two digits 1-6",
            ));
        }
    };
    let score_black = number(5, "first score")?;
    let score_white = number(6, "second score")?;
    let crawford_field = number(7, "Crawford/Jacoby field")?;
    let match_length = number(8, "match length")?;
    if !(0..=64).contains(&match_length)
        || !(0..=32767).contains(&score_black)
        || !(0..=32767).contains(&score_white)
    {
        return Err(PositionError::at(
            text,
            "the XGID's match length or scores are out of range",
        ));
    }
    // With "D" the player on turn has been doubled and answers; the doubler is on roll. (gnubg
    // 1.07 drops the "D" when it reads an XGID; it is kept here.)
    let on_roll = if doubled { turn.opponent() } else { turn };
    // The boards go (player not on roll, player on roll), whatever their names.
    let boards = if on_roll == Side::White {
        [black, white]
    } else {
        [white, black]
    };
    // The player on roll is Black: when that is XGID's top player, the two swap names.
    let (owner, turn, on_roll, score_black, score_white) = if on_roll == Side::White {
        (
            owner.map(Side::opponent),
            turn.opponent(),
            Side::Black,
            score_white,
            score_black,
        )
    } else {
        (owner, turn, on_roll, score_black, score_white)
    };
    Ok((
        boards,
        MatchInfo {
            cube_log: cube_log as u8,
            owner,
            on_roll,
            crawford: match_length > 0 && crawford_field == 1,
            state: State::Playing,
            turn,
            doubled,
            resigned: 0,
            dice,
            match_length: match_length as u16,
            score: [score_white as u16, score_black as u16],
            rolling: false,
        },
    ))
}
