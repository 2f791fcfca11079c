//! Backgammon through the [`Game`] interface: its options, its moves (checker plays and the
//! cube's and resignations' decisions), and reading, writing and playing them.

use serde::{Deserialize, Serialize};

use super::board::{Phase, Play, Position, State, resign_name};
use super::scoring::{between_games, next_game, outcome};
use super::summary::summary;
use super::{diagram, ids, notation};
use crate::rules::details::Details;
use crate::rules::errors::{MoveError, OptionsError, PositionError};
use crate::rules::game::{Game, OptionSpec};
use crate::rules::outcome::Outcome;
use crate::rules::side::Side;

/// The game options.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackgammonOptions {
    /// Whether the doubling cube is used.
    #[serde(default = "default_cube")]
    pub cube: bool,
    /// 0 for a single game; otherwise a match to this many points with the Crawford rule.
    #[serde(default)]
    pub match_length: u32,
}

fn default_cube() -> bool {
    true
}

impl Default for BackgammonOptions {
    fn default() -> Self {
        BackgammonOptions {
            cube: true,
            match_length: 0,
        }
    }
}

/// The longest match offered: long enough for any real match, short enough for gnubg's tables.
pub const MAX_MATCH_LENGTH: u32 = 64;

/// One decision of a player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    Double,
    Roll,
    Take,
    Pass,
    /// No die can be played: the turn is lost.
    None,
    Checkers(Play),
    /// 1 single, 2 gammon, 3 backgammon.
    Resign(u8),
    Accept,
    Reject,
}

pub struct Backgammon;

/// Checks a decoded position against the rules and the options, and puts it in canonical form.
fn assemble(
    boards: [[u8; 25]; 2],
    info: ids::MatchInfo,
    options: &BackgammonOptions,
    text: &str,
) -> Result<Position, PositionError> {
    let bad = |message: String| PositionError::at(text.trim(), message);
    let mut board = [[0u8; 25]; 2];
    board[info.on_roll.opponent().index()] = boards[0];
    board[info.on_roll.index()] = boards[1];
    if u32::from(info.match_length) != options.match_length {
        return Err(bad(format!(
            "the position is for {}, but the game's match_length is {}",
            if info.match_length == 0 {
                "a single game".to_owned()
            } else {
                format!("a {}-point match", info.match_length)
            },
            options.match_length
        )));
    }
    let length = info.match_length;
    if length > 0
        && let Some(side) = Side::BOTH
            .into_iter()
            .find(|s| info.score[s.index()] >= length)
    {
        return Err(bad(format!(
            "{} already has {} points of a {length}-point match: the match is over",
            side.name(),
            info.score[side.index()]
        )));
    }
    if info.crawford
        && (length == 0
            || info
                .score
                .iter()
                .all(|&s| u32::from(s) + 1 != u32::from(length)))
    {
        return Err(bad(
            "the Crawford game is the game after a player first reaches one point short of the match length"
                .into(),
        ));
    }
    if !options.cube && (info.cube_log > 0 || info.owner.is_some() || info.doubled) {
        return Err(bad(
            "the cube is not used in this game (option cube is false)".into(),
        ));
    }
    let position = Position {
        board,
        cube_log: info.cube_log,
        owner: info.owner,
        on_roll: info.on_roll,
        turn: info.turn,
        crawford: info.crawford,
        state: info.state,
        doubled: info.doubled,
        resigned: info.resigned,
        dice: info.dice,
        match_length: length,
        score: info.score,
        rolling: info.rolling,
        cube_enabled: options.cube,
    };
    let mut position = position;
    let done = Side::BOTH
        .into_iter()
        .filter(|&s| position.on_board(s) == 0)
        .count();
    match (position.state, done) {
        (_, 2) => return Err(bad("both sides have borne off every checker".into())),
        (State::Over, 0) => {
            return Err(bad(
                "the Match ID says the game is over, but neither side has borne off all its checkers"
                    .into(),
            ));
        }
        (State::Playing, 1) => {
            return Err(bad(
                "a side has borne off all its checkers, but the Match ID says the game goes on"
                    .into(),
            ));
        }
        _ => {}
    }
    if position.state == State::Playing {
        if position.doubled && position.resigned != 0 {
            return Err(bad(
                "a double and a resignation cannot both wait for an answer".into(),
            ));
        }
        let answering = position.doubled || position.resigned != 0;
        if answering == (position.turn == position.on_roll) {
            return Err(bad(if answering {
                "the player who must answer the offer is the one who made it".into()
            } else {
                "the player on turn is not the player on roll".into()
            }));
        }
        if position.doubled && (position.dice[0] != 0 || !position.can_double()) {
            return Err(bad(
                "the player on roll cannot have doubled here (dice rolled, cube owned by the opponent, cube at 64, the Crawford game or the cube off)"
                    .into(),
            ));
        }
        if position.rolling && (position.dice[0] != 0 || !position.can_double()) {
            position.rolling = false;
        }
    } else {
        position.rolling = false;
    }
    Ok(position)
}

fn parse_position(text: &str, options: &BackgammonOptions) -> Result<Position, PositionError> {
    let trimmed = text.trim();
    // `XGID=` with its `=`: a gnubg Position ID is base64 without padding, so it never holds
    // one, but it can begin with the letters `xgid` in any case.
    let (boards, info) = if trimmed
        .get(..5)
        .is_some_and(|head| head.eq_ignore_ascii_case("xgid="))
    {
        ids::read_xgid(trimmed)?
    } else {
        match ids::read_gnubg(trimmed) {
            Ok(parts) => parts,
            Err(e) if trimmed.matches(':').count() >= 8 => {
                ids::read_xgid(trimmed).map_err(|_| e)?
            }
            Err(e) => return Err(e),
        }
    };
    assemble(boards, info, options, text)
}

fn legal_moves(position: &Position) -> Vec<Move> {
    match position.phase() {
        Phase::Finished | Phase::RollDue => Vec::new(),
        Phase::AnswerResignation => vec![Move::Accept, Move::Reject],
        Phase::AnswerDouble => vec![Move::Take, Move::Pass],
        Phase::CubeDecision => vec![Move::Double, Move::Roll],
        Phase::Checkers => {
            let plays = position.plays();
            if plays.is_empty() {
                vec![Move::None]
            } else {
                plays.into_iter().map(Move::Checkers).collect()
            }
        }
    }
}

fn format_move(position: &Position, mv: &Move) -> String {
    match mv {
        Move::Double => "double".into(),
        Move::Roll => "roll".into(),
        Move::Take => "take".into(),
        Move::Pass => "pass".into(),
        Move::None => "none".into(),
        Move::Accept => "accept".into(),
        Move::Reject => "reject".into(),
        Move::Resign(level) => format!("resign {}", resign_name(*level)),
        Move::Checkers(play) => notation::format_play(position, play),
    }
}

fn parse_move(position: &Position, text: &str) -> Result<Move, MoveError> {
    let phase = position.phase();
    if phase == Phase::Finished {
        return Err(MoveError::GameOver);
    }
    let lower = text.trim().to_ascii_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    let illegal = |message: &str| MoveError::Illegal {
        message: message.to_owned(),
    };
    let wanted = match words.as_slice() {
        ["double"] => Some(Move::Double),
        ["roll"] => Some(Move::Roll),
        ["take"] => Some(Move::Take),
        ["pass" | "drop"] => Some(Move::Pass),
        ["none" | "no" | "nomove" | "no-move"] | ["no", "move"] => Some(Move::None),
        ["accept"] => Some(Move::Accept),
        ["reject" | "decline"] => Some(Move::Reject),
        ["resign", rest @ ..] => {
            let level = match rest {
                [] | ["single" | "normal" | "s" | "n" | "1"] => 1,
                ["gammon" | "g" | "2"] => 2,
                ["backgammon" | "b" | "bg" | "3"] => 3,
                _ => {
                    return Err(MoveError::Syntax {
                        message: "a resignation is `resign single`, `resign gammon` or `resign backgammon`".into(),
                    });
                }
            };
            if !matches!(phase, Phase::CubeDecision | Phase::Checkers) {
                return Err(illegal(
                    "you may resign only on your own turn, before or after rolling, not while an offer waits for an answer",
                ));
            }
            return Ok(Move::Resign(level));
        }
        _ => None,
    };
    let legal = legal_moves(position);
    if let Some(mv) = wanted {
        if legal.contains(&mv) {
            return Ok(mv);
        }
        return Err(illegal(&match phase {
            Phase::RollDue => "the dice must be rolled first".to_owned(),
            Phase::AnswerResignation => {
                "answer the resignation with `accept` or `reject`".to_owned()
            }
            Phase::AnswerDouble => "answer the double with `take` or `pass`".to_owned(),
            Phase::CubeDecision => {
                "before rolling you may `double` or `roll` (or resign)".to_owned()
            }
            _ if mv == Move::None => {
                "a die can be played, so the turn cannot be given up".to_owned()
            }
            _ if mv == Move::Double => "a double is offered before rolling, not after".to_owned(),
            _ => format!(
                "`{}` is not possible now: play the dice {}-{}",
                text.trim(),
                position.dice[0],
                position.dice[1]
            ),
        }));
    }
    match phase {
        Phase::Checkers => {
            let plays: Vec<Play> = legal
                .iter()
                .filter_map(|mv| match mv {
                    Move::Checkers(play) => Some(*play),
                    _ => None,
                })
                .collect();
            if plays.is_empty() {
                // Still report a syntax error as one.
                notation::read_segments(text)?;
                return Err(illegal(&format!(
                    "no die of {}-{} can be played: the only move is `none`",
                    position.dice[0], position.dice[1]
                )));
            }
            notation::resolve(position, &plays, text).map(Move::Checkers)
        }
        _ => {
            notation::read_segments(text)?;
            Err(illegal(match phase {
                Phase::RollDue => "the dice must be rolled before checkers move",
                Phase::CubeDecision => "before moving checkers, choose `double` or `roll`",
                Phase::AnswerDouble => "answer the double with `take` or `pass`",
                _ => "answer the resignation with `accept` or `reject`",
            }))
        }
    }
}

fn play(position: &Position, mv: &Move) -> Position {
    let mut next = *position;
    match mv {
        Move::Double => {
            next.doubled = true;
            next.turn = position.on_roll.opponent();
        }
        Move::Roll => next.rolling = true,
        Move::Take => {
            next.doubled = false;
            next.cube_log = (position.cube_log + 1).min(super::board::MAX_CUBE_LOG);
            next.owner = Some(position.turn);
            next.turn = position.on_roll;
        }
        Move::Pass => {
            next.doubled = false;
            next.state = State::Dropped;
        }
        Move::None => next.pass_turn(),
        Move::Checkers(p) => next = position.after_play(p),
        Move::Resign(level) => {
            next.resigned = (*level).clamp(1, 3);
            next.turn = position.on_roll.opponent();
            next.rolling = false;
        }
        Move::Accept => next.state = State::Resigned,
        Move::Reject => {
            next.resigned = 0;
            next.turn = position.on_roll;
        }
    }
    next
}

impl Game for Backgammon {
    const ID: &'static str = "backgammon";
    const NAME: &'static str = "Backgammon";
    /// Backgammon has no draw: every game ends with a winner.
    const CAN_DRAW: bool = false;
    const OPENING_ROLL: bool = true;

    type Options = BackgammonOptions;
    type Position = Position;
    type Move = Move;

    fn option_specs() -> Vec<OptionSpec> {
        vec![
            OptionSpec {
                name: "cube",
                kind: "boolean",
                default: serde_json::Value::Bool(true),
                description: "Play with the doubling cube: before rolling, the player who owns the cube (or anyone while it is in the middle) may double; the opponent takes or passes.",
                minimum: None,
                maximum: None,
            },
            OptionSpec {
                name: "match_length",
                kind: "integer",
                default: serde_json::Value::from(0),
                description: "0 for a single game scored like a money game (cube x 1, 2 or 3); 1 to 64 for a match to that many points with the Crawford rule.",
                minimum: Some(0),
                maximum: Some(i64::from(MAX_MATCH_LENGTH)),
            },
        ]
    }

    fn validate_options(options: &BackgammonOptions) -> Result<(), OptionsError> {
        if options.match_length > MAX_MATCH_LENGTH {
            return Err(OptionsError(format!(
                "match_length is 0 for a single game or 1 to {MAX_MATCH_LENGTH} points for a match; {} is longer than any match Kuryr plays",
                options.match_length
            )));
        }
        Ok(())
    }

    fn start(options: &BackgammonOptions) -> Position {
        Position::start(
            Side::White,
            [0, 0],
            options.match_length.min(MAX_MATCH_LENGTH) as u16,
            options.cube,
        )
    }

    /// Without the opening dice the first player still has to roll (as in [`Game::start`]).
    fn start_with_first(options: &BackgammonOptions, first: Side) -> Position {
        Position::start(
            first,
            [0, 0],
            options.match_length.min(MAX_MATCH_LENGTH) as u16,
            options.cube,
        )
    }

    /// The higher die starts and plays both numbers; the server rolls ties again, and a tie that
    /// reaches here anyway starts White with nothing rolled.
    fn start_with_opening(options: &BackgammonOptions, white_die: u8, black_die: u8) -> Position {
        let valid = |d: u8| (1..=6).contains(&d);
        if white_die == black_die || !valid(white_die) || !valid(black_die) {
            return Self::start(options);
        }
        let first = if white_die > black_die {
            Side::White
        } else {
            Side::Black
        };
        Position::start(
            first,
            [white_die.max(black_die), white_die.min(black_die)],
            options.match_length.min(MAX_MATCH_LENGTH) as u16,
            options.cube,
        )
    }

    fn parse_position(text: &str, options: &BackgammonOptions) -> Result<Position, PositionError> {
        parse_position(text, options)
    }

    fn format_position(position: &Position) -> String {
        ids::canonical(position)
    }

    fn diagram(position: &Position) -> String {
        diagram::draw(position)
    }

    fn side_to_move(position: &Position) -> Side {
        position.turn
    }

    fn legal_moves(position: &Position) -> Vec<Move> {
        legal_moves(position)
    }

    fn parse_move(position: &Position, text: &str) -> Result<Move, MoveError> {
        parse_move(position, text)
    }

    fn format_move(position: &Position, mv: &Move) -> String {
        format_move(position, mv)
    }

    fn play(position: &Position, mv: &Move) -> Position {
        play(position, mv)
    }

    fn outcome(position: &Position) -> Option<Outcome> {
        outcome(position)
    }

    fn roll_due(position: &Position) -> Option<usize> {
        (position.phase() == Phase::RollDue || between_games(position)).then_some(2)
    }

    /// Between two games of a match the dice are the next game's opening roll, White's die
    /// first; a tie leaves the position as it was, waiting for another roll.
    fn apply_roll(position: &Position, dice: &[u8]) -> Position {
        if let [white @ 1..=6, black @ 1..=6] = dice
            && white != black
            && between_games(position)
        {
            let first = if white > black {
                Side::White
            } else {
                Side::Black
            };
            if let Some(next) = next_game(position, first, [*white, *black]) {
                return next;
            }
        }
        let mut next = *position;
        if let [a @ 1..=6, b @ 1..=6] = dice
            && position.phase() == Phase::RollDue
        {
            next.dice = [*a.max(b), *a.min(b)];
            next.rolling = false;
        }
        next
    }

    fn details(position: &Position) -> Option<Details> {
        Some(Details::Backgammon(summary(position)))
    }
}
