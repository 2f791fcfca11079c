//! Reading the three games' moves and piece tokens as people write them (`A2xC4xE6`, `a2-b3`,
//! `E4F`), and saying why a written move is not legal, in the same words for every game.

use super::board::{Bits, COLS, Dir, ROWS, bit, index, line, neighbour, square};
use super::moves::Move;
use crate::rules::errors::MoveError;
use crate::rules::notation::Square;
use crate::rules::side::Side;

/// Reads a move such as `A2xC4xE6`, `a2-b3`, `A2 C4` or `a2:c4` into its squares. Squares may be
/// joined by `-`, `x`, `:` or whitespace, or written straight after each other.
pub fn read_squares(text: &str) -> Result<Vec<u8>, String> {
    let mut squares = Vec::new();
    // Whether a joint (`-`, `x`, `:`) was written since the last square.
    let mut joined = false;
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        if matches!(c, '-' | 'x' | 'X' | ':') {
            if squares.is_empty() || joined {
                return Err(format!("`{c}` must stand between two squares"));
            }
            joined = true;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            return Err(format!("unexpected `{c}`"));
        }
        let mut end = start + c.len_utf8();
        while let Some(&(at, digit)) = chars.peek() {
            if !digit.is_ascii_digit() {
                break;
            }
            end = at + digit.len_utf8();
            chars.next();
        }
        let written = &text[start..end];
        let parsed = Square::parse(written, COLS, ROWS).ok_or_else(|| {
            format!(
                "`{written}` is not a square; squares run from A1 to J8, and there is no column I"
            )
        })?;
        squares.push(index(parsed));
        joined = false;
    }
    if joined {
        return Err("the move ends with a joint; it must end with a square".to_owned());
    }
    if squares.len() < 2 {
        return Err("a move names at least two squares".to_owned());
    }
    Ok(squares)
}

/// What a move's squares, as written, can mean among the legal moves.
pub enum Resolved {
    One(Move),
    Several(Vec<Move>),
    None,
}

/// Finds the legal moves a written path can mean: the move with exactly that path, or else the
/// captures that start and end where it does and pass through every square written between (so a
/// long chain may be written by its first and last squares when that is unambiguous).
pub fn resolve(legal: &[Move], written: &[u8]) -> Resolved {
    if let Some(exact) = legal.iter().find(|mv| mv.path() == written) {
        return Resolved::One(*exact);
    }
    let fits = |mv: &&Move| {
        mv.is_capture()
            && mv.from() == written[0]
            && mv.to() == written[written.len() - 1]
            && is_subsequence(written, mv.path())
    };
    let mut candidates: Vec<Move> = legal.iter().filter(fits).copied().collect();
    match candidates.len() {
        0 => Resolved::None,
        1 => Resolved::One(candidates.remove(0)),
        _ => Resolved::Several(candidates),
    }
}

fn is_subsequence(short: &[u8], long: &[u8]) -> bool {
    let mut long = long.iter();
    short.iter().all(|s| long.any(|l| l == s))
}

/// The rules a capturing game (Nubulus, Basileus) tells the shared move reader, so that it can say
/// why a move is not legal.
pub trait Draughts {
    fn side_to_move(&self) -> Side;
    /// The owner and the kind (`piece`, `pawn`, `figure`, `basileus`) of the piece on a square.
    fn occupant(&self, index: u8) -> Option<(Side, &'static str)>;
    fn legal(&self) -> Vec<Move>;
    /// Why the mover's piece on `from` cannot step to `to`, one square away, when no capture is due.
    fn why_not_step(&self, from: u8, to: u8) -> String;
    /// The directions the piece on `origin` jumps in, and how to say them ("diagonally").
    fn jump_dirs(&self, origin: u8) -> (&'static [Dir], &'static str);
    /// Why the piece on `origin` may not jump the opponent's piece on `over`; `None` if it may.
    fn why_not_jump_over(&self, origin: u8, over: u8) -> Option<String>;
    /// Why jumping `over` onto `to` ends the turn at once, if it does.
    fn ends_turn(&self, origin: u8, over: u8, to: u8) -> Option<String>;
}

/// Reads a move of a capturing game and resolves it against the legal moves, saying why when it
/// is not legal. `finished` positions take no moves; `syntax` shows the expected form.
pub fn parse_draughts_move(
    game: &impl Draughts,
    finished: bool,
    text: &str,
    syntax: &str,
) -> Result<Move, MoveError> {
    let written = read_squares(text).map_err(|why| MoveError::Syntax {
        message: match text.trim() {
            "" => format!("the move is empty; {syntax}"),
            shown => format!("`{shown}` is not a move: {why}; {syntax}"),
        },
    })?;
    if finished {
        return Err(MoveError::GameOver);
    }
    let legal = game.legal();
    match resolve(&legal, &written) {
        Resolved::One(mv) => Ok(mv),
        Resolved::Several(moves) => Err(MoveError::Ambiguous {
            candidates: moves.iter().map(ToString::to_string).collect(),
        }),
        Resolved::None => Err(MoveError::Illegal {
            message: why_illegal(game, &legal, &written),
        }),
    }
}

/// Says why a written path is none of the legal moves. The checks run from the most basic (is
/// there a piece of the mover) to the subtle (the chain must go on), so the first that fails is
/// the one worth telling.
fn why_illegal(game: &impl Draughts, legal: &[Move], written: &[u8]) -> String {
    let side = game.side_to_move();
    let from = written[0];
    match game.occupant(from) {
        None => return format!("there is no piece on {}", square(from)),
        Some((owner, kind)) if owner != side => {
            return format!(
                "{} holds {owner}'s {kind}; it is {side}'s turn",
                square(from)
            );
        }
        Some(_) => {}
    }
    let mandatory = || {
        let own = legal.iter().find(|mv| mv.from() == from);
        let example = own.or_else(|| legal.iter().find(|mv| mv.is_capture()));
        example.map(|mv| {
            format!("a capture is available and capturing is mandatory: for example {mv}")
        })
    };
    let first = line(from, written[1]);
    if written.len() == 2 && matches!(first, Some((_, 1))) {
        if legal.iter().any(Move::is_capture) {
            return mandatory().unwrap_or_default();
        }
        return game.why_not_step(from, written[1]);
    }
    // Everything else is read as a capture chain, jump by jump.
    let (dirs, dirs_said) = game.jump_dirs(from);
    let (_, kind) = game.occupant(from).unwrap_or((side, "piece"));
    let mut jumped: Bits = 0;
    let mut at = from;
    let mut ended: Option<(u8, String)> = None;
    for &to in &written[1..] {
        if let Some((end, why)) = &ended {
            return format!("{why}, so the move ends on {}", square(*end));
        }
        let hop = (square(at), square(to));
        let dir = match line(at, to) {
            Some((_, 1)) => {
                return format!(
                    "a step goes one square and ends the turn; only a capture goes on ({} to {})",
                    hop.0, hop.1
                );
            }
            Some((dir, 2)) => dir,
            _ => {
                return format!(
                    "{} to {} is not a jump: a jump goes over an adjacent piece onto the square directly beyond, and a chain is written with every landing square, like A2xC4xE6",
                    hop.0, hop.1
                );
            }
        };
        if !dirs.contains(&dir) {
            return format!("{} to {}: a {kind} captures only {dirs_said}", hop.0, hop.1);
        }
        let over = neighbour(at, dir).unwrap_or(at);
        match game.occupant(over) {
            None => {
                return format!(
                    "{} to {}: there is no piece on {} to jump",
                    hop.0,
                    hop.1,
                    square(over)
                );
            }
            Some((owner, other)) if owner == side => {
                return format!(
                    "{} to {}: {} holds {side}'s own {other}",
                    hop.0,
                    hop.1,
                    square(over)
                );
            }
            Some(_) if jumped & bit(over) != 0 => {
                return format!(
                    "{} to {}: the piece on {} is already jumped in this move, and a piece is jumped only once",
                    hop.0,
                    hop.1,
                    square(over)
                );
            }
            Some(_) => {}
        }
        if let Some(why) = game.why_not_jump_over(from, over) {
            return format!("{} to {}: {why}", hop.0, hop.1);
        }
        // The starting square is free once the piece has left it. (A jumped piece, which stays
        // until the turn ends, never stands where a jump lands: two-square jumps keep a piece on
        // squares whose column and row have the parity of its start, and a jumped piece is one
        // square off such a square.)
        if to != from
            && let Some((owner, other)) = game.occupant(to)
        {
            return format!(
                "{} to {}: {} is occupied by {owner}'s {other}",
                hop.0, hop.1, hop.1
            );
        }
        jumped |= bit(over);
        if let Some(why) = game.ends_turn(from, over, to) {
            ended = Some((to, why));
        }
        at = to;
    }
    if let Some(longer) = legal
        .iter()
        .find(|mv| mv.path().len() > written.len() && mv.path().starts_with(written))
    {
        return format!(
            "the chain must go on from {}: for example {longer}",
            square(at)
        );
    }
    mandatory().unwrap_or_else(|| "this move is not legal here".to_owned())
}

/// Reads the body of a piece token: a square, then optionally one letter from `kinds`. The error
/// says what is wrong; the caller adds the token.
pub fn read_token(body: &str, kinds: &[char], game: &str) -> Result<(u8, Option<char>), String> {
    let letters = |kinds: &[char]| {
        kinds
            .iter()
            .map(|k| k.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let expected = if kinds.is_empty() {
        format!("a {game} piece is written as its square, like `E4`")
    } else {
        format!(
            "a {game} piece is written as its square with an optional letter after it ({}), like `E4` or `E4{}`",
            letters(kinds),
            kinds[0]
        )
    };
    let digits_from = body
        .char_indices()
        .find(|(_, c)| c.is_ascii_digit())
        .map(|(at, _)| at);
    let Some(digits_from) = digits_from else {
        return Err(expected);
    };
    let digits_to = body[digits_from..]
        .char_indices()
        .find(|(_, c)| !c.is_ascii_digit())
        .map_or(body.len(), |(at, _)| digits_from + at);
    let (written_square, suffix) = body.split_at(digits_to);
    let kind = match suffix.chars().collect::<Vec<_>>().as_slice() {
        [] => None,
        [letter] => {
            let upper = letter.to_ascii_uppercase();
            if !kinds.contains(&upper) {
                return Err(if kinds.is_empty() {
                    format!("unknown piece letter `{letter}`; {expected}")
                } else {
                    format!(
                        "unknown piece letter `{letter}`; the letters are {}",
                        letters(kinds)
                    )
                });
            }
            Some(upper)
        }
        _ => return Err(expected),
    };
    let parsed = Square::parse(written_square, COLS, ROWS).ok_or_else(|| {
        let mut letters = written_square.chars().take(2);
        if letters.all(|c| c.is_ascii_alphabetic()) && written_square.len() > 2 {
            return format!(
                "`{written_square}` is not a square; the square comes first and the piece letter after it"
            );
        }
        format!("`{written_square}` is not a square; squares run from A1 to J8, and there is no column I")
    })?;
    Ok((index(parsed), kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::lukaszewicz::board::DIAGONAL;
    use crate::rules::lukaszewicz::moves::{Jumps, sort_moves};

    fn at(text: &str) -> u8 {
        index(Square::parse(text, COLS, ROWS).unwrap())
    }

    #[test]
    fn chains_branch_and_never_jump_twice() {
        // A white piece on E4 below a ring of four black pieces round E6. It can go round the ring
        // either way; each way jumps all four and comes home to E4, its own starting square,
        // which it left free. There it stops: D5 and F5 are jumped already.
        let targets = bit(at("D5")) | bit(at("F5")) | bit(at("D7")) | bit(at("F7"));
        let jumps = Jumps {
            dirs: &DIAGONAL,
            targets,
            blockers: targets,
            ends_turn: |_, _| false,
        };
        let mut out = Vec::new();
        jumps.chains(at("E4"), &mut out);
        sort_moves(&mut out);
        let written: Vec<String> = out.iter().map(ToString::to_string).collect();
        assert_eq!(written, ["E4xC6xE8xG6xE4", "E4xG6xE8xC6xE4"]);
        assert!(out.iter().all(|mv| mv.captured() == targets));
        // Written by its ends alone, the ring is ambiguous, and so is `E4xC6xE4` (both ways pass
        // C6); `E4xC6xE8xE4` settles it.
        assert!(
            matches!(resolve(&out, &[at("E4"), at("E4")]), Resolved::Several(m) if m.len() == 2)
        );
        assert!(
            matches!(resolve(&out, &[at("E4"), at("C6"), at("E4")]), Resolved::Several(m) if m.len() == 2)
        );
        let settled = [at("E4"), at("C6"), at("E8"), at("E4")];
        assert!(matches!(resolve(&out, &settled), Resolved::One(m) if m == out[0]));
        // A jump that ends the turn at once ends the chain there, even with more to jump.
        let jumps = Jumps {
            dirs: &DIAGONAL,
            targets,
            blockers: targets,
            ends_turn: |_, to| to == at("E8"),
        };
        let mut out = Vec::new();
        jumps.chains(at("E4"), &mut out);
        sort_moves(&mut out);
        let written: Vec<String> = out.iter().map(ToString::to_string).collect();
        assert_eq!(written, ["E4xC6xE8", "E4xG6xE8"]);
    }

    #[test]
    fn moves_read_leniently() {
        assert_eq!(
            read_squares("A2xC4xE6"),
            Ok(vec![at("A2"), at("C4"), at("E6")])
        );
        assert_eq!(read_squares(" a2 - b3 "), Ok(vec![at("A2"), at("B3")]));
        assert_eq!(read_squares("a2b3"), Ok(vec![at("A2"), at("B3")]));
        assert_eq!(
            read_squares("a2:c4 x e6"),
            Ok(vec![at("A2"), at("C4"), at("E6")])
        );
        assert_eq!(read_squares("J8 X H6"), Ok(vec![at("J8"), at("H6")]));
        for bad in [
            "", "A2", "A2-", "-A2-B3", "A2--B3", "I2-I3", "A9-A8", "A2-B3!", "A0-A1", "A2xx",
        ] {
            assert!(read_squares(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn moves_resolve_by_their_ends() {
        let a = Move::step(at("A2"), at("B3"));
        let long = Move::start(at("A2"))
            .jump(at("B3"), at("C4"))
            .jump(at("D5"), at("E6"));
        let other = Move::start(at("A2"))
            .jump(at("B3"), at("C4"))
            .jump(at("D3"), at("E2"));
        let legal = [a, long, other];
        assert!(matches!(resolve(&legal, &[at("A2"), at("B3")]), Resolved::One(m) if m == a));
        assert!(matches!(resolve(&legal, &[at("A2"), at("E6")]), Resolved::One(m) if m == long));
        assert!(matches!(
            resolve(&legal, &[at("A2"), at("C4")]),
            Resolved::None
        ));
        assert_eq!(long.to_string(), "A2xC4xE6");
        assert_eq!(a.to_string(), "A2-B3");
    }

    #[test]
    fn tokens_read_with_their_letters() {
        assert_eq!(read_token("E4", &[], "Nubulus"), Ok((at("E4"), None)));
        assert_eq!(
            read_token("e4f", &['F', 'B'], "Basileus"),
            Ok((at("E4"), Some('F')))
        );
        assert!(
            read_token("E4K", &[], "Nubulus")
                .unwrap_err()
                .contains("unknown piece letter `K`")
        );
        assert!(
            read_token("E4K", &['F', 'B'], "Basileus")
                .unwrap_err()
                .contains("unknown piece letter `K`")
        );
        assert!(
            read_token("FE4", &['F', 'B'], "Basileus")
                .unwrap_err()
                .contains("square comes first")
        );
        assert!(
            read_token("I4", &[], "Nubulus")
                .unwrap_err()
                .contains("no column I")
        );
        assert!(
            read_token("E9", &[], "Nubulus")
                .unwrap_err()
                .contains("not a square")
        );
        assert!(read_token("E", &[], "Nubulus").is_err());
        assert!(read_token("E4FF", &['F'], "Basileus").is_err());
        assert!(read_token("É4", &[], "Nubulus").is_err());
    }
}
