//! Move notation: the canonical text of a turn, and reading a turn leniently with an explanation
//! of why it cannot be played.

use super::board::{
    Bits, DIAG, Piece, Position, barrier_name, bit, col, corners, far_row, home, manhattan, name,
    offset, row,
};
use super::die::Orientation;
use super::position::{read_square, why_not_barrier};
use super::turn::{Action, Exchange, Timing, Turn};
use crate::rules::errors::MoveError;

pub(crate) const MOVE_FORMS: &str = "a turn is a die, king or soldier move like `B1-B3`, `B1-D1-D3` (start, corner, end; a die may be preceded by its descriptor, `23B1-B3`) or `E1-E2`, a barrier move like `C2D2-D2E2`, a rotation like `B1=26` or a transformation like `C2D2=E2S`; `x` may stand before a captured square (`B1-D1xD3`), and an exchange `*D` or `*E9F9` may come before or after the move, separated by a space (`*D E1-E2`, `E8-E9 *D`)";

fn exchange_text(exchange: Exchange) -> String {
    match exchange {
        Exchange::Die => "*D".to_owned(),
        Exchange::Barrier(a, b) => format!("*{}", barrier_name(a, b)),
    }
}

/// The canonical text of an ordinary move made on `board`.
fn action_text(board: &Position, action: Action) -> String {
    let opponent = board.side.opponent();
    let to_sep = |to: u8| {
        if board.pieces(opponent) & bit(to) != 0 {
            'x'
        } else {
            '-'
        }
    };
    match action {
        Action::Die { from, corner, to } => match corner {
            Some(corner) => format!("{}-{}{}{}", name(from), name(corner), to_sep(to), name(to)),
            None => format!("{}{}{}", name(from), to_sep(to), name(to)),
        },
        Action::King { from, to } | Action::Soldier { from, to } => {
            format!("{}{}{}", name(from), to_sep(to), name(to))
        }
        Action::Barrier { from, to } => {
            format!(
                "{}-{}",
                barrier_name(from.0, from.1),
                barrier_name(to.0, to.1)
            )
        }
        Action::Rotate { at, to } => format!("{}={to}", name(at)),
        Action::Transform { barrier, to } => {
            format!("{}={}S", barrier_name(barrier.0, barrier.1), name(to))
        }
    }
}

/// The canonical text of a turn played from `position`, with `+` or `#` at the very end.
pub(crate) fn format_turn(position: &Position, turn: &Turn) -> String {
    let mut board = *position;
    let mut out = String::new();
    if let Some((Timing::Before, exchange)) = turn.exchange {
        out.push_str(&exchange_text(exchange));
        out.push(' ');
        board.apply_exchange(exchange);
    }
    out.push_str(&action_text(&board, turn.action));
    if let Some((Timing::After, exchange)) = turn.exchange {
        out.push(' ');
        out.push_str(&exchange_text(exchange));
    }
    let after = position.after(turn);
    if after.in_check(after.side) {
        out.push(if after.has_turn() { '+' } else { '#' });
    }
    out
}

/// An exchange as written: the barrier's squares in the order given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ExchangeText {
    Die,
    Barrier(u8, u8),
}

impl ExchangeText {
    fn fits(self, exchange: Exchange) -> bool {
        match (self, exchange) {
            (ExchangeText::Die, Exchange::Die) => true,
            (ExchangeText::Barrier(a, b), Exchange::Barrier(x, y)) => {
                (a.min(b), a.max(b)) == (x, y)
            }
            _ => false,
        }
    }
}

/// The ordinary move as written, before it is checked against the position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// A die, king or soldier: start, optional corner, end; a die's optional descriptor.
    Path {
        descriptor: Option<(u8, u8)>,
        from: u8,
        corner: Option<u8>,
        to: u8,
    },
    Barrier {
        from: (u8, u8),
        to: (u8, u8),
    },
    Rotate {
        descriptor: Option<(u8, u8)>,
        at: u8,
        faces: (u8, u8),
    },
    Transform {
        barrier: (u8, u8),
        to: u8,
    },
}

#[derive(Clone, Copy, Debug)]
struct Pattern {
    shape: Shape,
    exchange: Option<(Timing, ExchangeText)>,
}

fn sorted((a, b): (u8, u8)) -> (u8, u8) {
    (a.min(b), a.max(b))
}

/// Reads two squares written together (`E9F9`).
fn two_squares(text: &str) -> Option<(u8, u8)> {
    if text.len() != 4 {
        return None;
    }
    Some((read_square(&text[..2]).ok()?, read_square(&text[2..]).ok()?))
}

fn digits(text: &str) -> Option<(u8, u8)> {
    let bytes = text.as_bytes();
    (bytes.len() == 2 && bytes.iter().all(u8::is_ascii_digit))
        .then(|| (bytes[0] - b'0', bytes[1] - b'0'))
}

/// Reads a turn. Whitespace, case and the marks `+` and `#` do not matter; the text is reduced
/// to ASCII capitals without spaces, which keeps every form unambiguous because a square is
/// always a letter and one digit. The error is `Some` when there is more to say than the forms.
fn read_turn(text: &str) -> Result<Pattern, Option<String>> {
    let cleaned: String = text
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '+' && *c != '#')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    if cleaned.is_empty() || !cleaned.is_ascii() {
        return Err(None);
    }
    if cleaned.matches('*').count() > 1 {
        return Err(Some("a turn carries at most one exchange".to_owned()));
    }
    let (ordinary, exchange) = match cleaned.find('*') {
        None => (cleaned.as_str(), None),
        Some(0) => {
            let body = &cleaned[1..];
            // `*D23B1-B3` is a die and a move with a descriptor, `*D9E9...` a barrier: a
            // barrier needs two whole squares.
            match body.get(..4).and_then(two_squares) {
                Some((a, b)) => (
                    &body[4..],
                    Some((Timing::Before, ExchangeText::Barrier(a, b))),
                ),
                None => (
                    body.strip_prefix('D').ok_or(None)?,
                    Some((Timing::Before, ExchangeText::Die)),
                ),
            }
        }
        Some(at) => {
            let body = &cleaned[at + 1..];
            let exchange = if body == "D" {
                ExchangeText::Die
            } else {
                let (a, b) = two_squares(body).ok_or(None)?;
                ExchangeText::Barrier(a, b)
            };
            (&cleaned[..at], Some((Timing::After, exchange)))
        }
    };
    if ordinary.is_empty() {
        return Err(Some(
            "an exchange alone is not a turn: it comes with one ordinary move, before or after it"
                .to_owned(),
        ));
    }
    Ok(Pattern {
        shape: read_shape(ordinary).ok_or(None)?,
        exchange,
    })
}

fn read_shape(text: &str) -> Option<Shape> {
    let (descriptor, rest) = match text.get(..2).and_then(digits) {
        Some(faces) => (Some(faces), &text[2..]),
        None => (None, text),
    };
    if let Some((left, right)) = rest.split_once('=') {
        if left.len() == 2 {
            return Some(Shape::Rotate {
                descriptor,
                at: read_square(left).ok()?,
                faces: digits(right)?,
            });
        }
        if descriptor.is_some() {
            return None;
        }
        let barrier = two_squares(left)?;
        let to = right.strip_suffix('S').unwrap_or(right);
        return Some(Shape::Transform {
            barrier,
            to: read_square(to).ok()?,
        });
    }
    // Groups of squares separated by `-` or `x`.
    let mut groups: Vec<Vec<u8>> = vec![Vec::new()];
    let mut rest = rest;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix(['-', 'X']) {
            if groups.last().is_some_and(Vec::is_empty) {
                return None;
            }
            groups.push(Vec::new());
            rest = after;
            continue;
        }
        let square = read_square(rest.get(..2)?).ok()?;
        groups.last_mut()?.push(square);
        rest = &rest[2..];
    }
    match groups.as_slice() {
        [a, b] if a.len() == 1 && b.len() == 1 => Some(Shape::Path {
            descriptor,
            from: a[0],
            corner: None,
            to: b[0],
        }),
        [a, c, b] if a.len() == 1 && c.len() == 1 && b.len() == 1 => Some(Shape::Path {
            descriptor,
            from: a[0],
            corner: Some(c[0]),
            to: b[0],
        }),
        [a, b] if a.len() == 2 && b.len() == 2 && descriptor.is_none() => Some(Shape::Barrier {
            from: (a[0], a[1]),
            to: (b[0], b[1]),
        }),
        _ => None,
    }
}

/// Whether an ordinary move made on `board` is the one `shape` describes.
fn fits(board: &Position, shape: &Shape, action: Action) -> bool {
    let descriptor_fits = |descriptor: Option<(u8, u8)>, at: u8| {
        descriptor.is_none_or(|(top, south)| {
            Orientation::new(top, south) == Some(board.orient[at as usize])
        })
    };
    match (*shape, action) {
        (
            Shape::Path {
                descriptor,
                from,
                corner,
                to,
            },
            Action::Die {
                from: f,
                corner: c,
                to: t,
            },
        ) => {
            from == f
                && to == t
                && (corner.is_none() || corner == c)
                && descriptor_fits(descriptor, f)
        }
        (
            Shape::Path {
                descriptor: None,
                from,
                corner: None,
                to,
            },
            Action::King { from: f, to: t } | Action::Soldier { from: f, to: t },
        ) => from == f && to == t,
        (Shape::Barrier { from, to }, Action::Barrier { from: f, to: t }) => {
            sorted(from) == f && sorted(to) == t
        }
        (
            Shape::Rotate {
                descriptor,
                at,
                faces: (top, south),
            },
            Action::Rotate { at: a, to },
        ) => at == a && Orientation::new(top, south) == Some(to) && descriptor_fits(descriptor, a),
        (Shape::Transform { barrier, to }, Action::Transform { barrier: b, to: t }) => {
            sorted(barrier) == b && to == t
        }
        _ => false,
    }
}

fn turn_fits(position: &Position, pattern: &Pattern, turn: &Turn) -> bool {
    let timing_fits = match (pattern.exchange, turn.exchange) {
        (None, None) => true,
        (Some((when, written)), Some((timing, exchange))) => {
            when == timing && written.fits(exchange)
        }
        _ => false,
    };
    if !timing_fits {
        return false;
    }
    match turn.exchange {
        Some((Timing::Before, exchange)) => {
            let mut board = *position;
            board.apply_exchange(exchange);
            fits(&board, &pattern.shape, turn.action)
        }
        _ => fits(position, &pattern.shape, turn.action),
    }
}

/// Reads a turn and resolves it against the legal turns of `position`.
pub(crate) fn parse_turn(position: &Position, text: &str) -> Result<Turn, MoveError> {
    let pattern = read_turn(text).map_err(|why| MoveError::Syntax {
        message: match why {
            Some(why) => format!("`{}`: {why}; {MOVE_FORMS}", text.trim()),
            None => format!("`{}` is not a Cubulus turn: {MOVE_FORMS}", text.trim()),
        },
    })?;
    let turns = position.turns();
    if turns.is_empty() {
        return Err(MoveError::GameOver);
    }
    let found: Vec<&Turn> = turns
        .iter()
        .filter(|turn| turn_fits(position, &pattern, turn))
        .collect();
    match found.as_slice() {
        [] => Err(MoveError::Illegal {
            message: explain(position, &pattern),
        }),
        [only] => Ok(**only),
        [first, rest @ ..] => {
            // Leaving out a corner is fine when both paths end the same way.
            let result = position.after(first);
            if rest.iter().all(|turn| position.after(turn) == result) {
                return Ok(**first);
            }
            let mut candidates: Vec<String> = Vec::new();
            for turn in found {
                let text = format_turn(position, turn);
                if !candidates.contains(&text) {
                    candidates.push(text);
                }
            }
            Err(MoveError::Ambiguous { candidates })
        }
    }
}

// ---- why a turn is illegal ----

/// Why no legal turn fits `pattern`. It replays the turn step by step (exchange first, ordinary
/// move, exchange after, the king's safety) and reports the first step that fails, using the
/// generator itself to decide and only then looking for the words.
fn explain(position: &Position, pattern: &Pattern) -> String {
    let me = position.side;
    let mut board = *position;
    if let Some((Timing::Before, written)) = pattern.exchange {
        match exchange_for(&board, written) {
            Ok(exchange) => board.apply_exchange(exchange),
            Err(why) => return why,
        }
    }
    let mut all = Vec::new();
    board.ordinary(&mut all);
    let actions: Vec<Action> = all
        .into_iter()
        .filter(|&action| fits(&board, &pattern.shape, action))
        .collect();
    if actions.is_empty() {
        return why_not(&board, &pattern.shape);
    }
    let mut reason = None;
    for action in actions {
        let mut next = board;
        next.apply(action);
        if let Some((Timing::After, written)) = pattern.exchange {
            match exchange_for(&next, written) {
                Ok(exchange) => next.apply_exchange(exchange),
                Err(why) => {
                    reason.get_or_insert(why);
                    continue;
                }
            }
        }
        if let Some(by) = next.checker(me) {
            reason.get_or_insert_with(|| check_message(position, &next, by));
        }
    }
    reason.unwrap_or_else(|| "this turn is not legal here".to_owned())
}

fn check_message(before: &Position, after: &Position, by: u8) -> String {
    let me = before.side;
    let (was, is) = (before.kings[me.index()], after.kings[me.index()]);
    let attacker = after.describe(by);
    if was != is {
        format!(
            "{me}'s king would be in check on {} from {attacker}",
            name(is)
        )
    } else if before.checker(me) == Some(by) {
        format!(
            "{me}'s king on {} is in check from {attacker} and stays in check",
            name(is)
        )
    } else {
        format!(
            "this leaves {me}'s king on {} in check from {attacker}",
            name(is)
        )
    }
}

/// The exchange `written` means on `board`, or why it cannot be made there.
fn exchange_for(board: &Position, written: ExchangeText) -> Result<Exchange, String> {
    let me = board.side;
    let opponent = me.opponent();
    let mut possible = Vec::new();
    board.exchanges(&mut possible);
    if let Some(&exchange) = possible.iter().find(|&&e| written.fits(e)) {
        return Ok(exchange);
    }
    let king = board.kings[me.index()];
    if row(king) != far_row(me) {
        return Err(format!(
            "an exchange needs {me}'s king on {opponent}'s first row (row {}), but it is on {}",
            far_row(me) + 1,
            name(king)
        ));
    }
    match written {
        ExchangeText::Die if board.captured_dice(me) == 0 => {
            return Err(format!("{me} has no captured die to take back"));
        }
        ExchangeText::Barrier(..) if board.captured_barriers(me) == 0 => {
            return Err(format!(
                "{me} has no captured barrier or soldier to take back"
            ));
        }
        _ => {}
    }
    let home = home(me);
    match board.piece_at(home) {
        Some((owner, _)) if owner == me => {
            return Err(format!(
                "the king cannot go home to {}: it holds {}",
                name(home),
                board.describe(home)
            ));
        }
        Some((_, Piece::King)) => {
            return Err(format!(
                "the king cannot go home to {}: {opponent}'s king stands there",
                name(home)
            ));
        }
        Some((_, Piece::Barrier(other))) if board.attackers(me, other, bit(home), false) == 0 => {
            return Err(format!(
                "{} covers {}, the king's home; the exchange would capture it, but no {me} piece other than the king attacks its other square {}",
                board.describe(home),
                name(home),
                name(other)
            ));
        }
        _ => {}
    }
    if let ExchangeText::Barrier(a, b) = written {
        if a != king && b != king {
            return Err(format!(
                "a barrier taken back covers the square the king leaves, {}, and one of its neighbours",
                name(king)
            ));
        }
        let other = if a == king { b } else { a };
        if let Some(why) = why_not_barrier(king, other) {
            return Err(why);
        }
        if board.occupied() & bit(other) != 0 {
            return Err(format!(
                "the barrier's second square {} is not empty: it holds {}",
                name(other),
                board.describe(other)
            ));
        }
    }
    Err("this exchange is not possible here".to_owned())
}

fn path_name(from: u8, corner: Option<u8>, to: u8) -> String {
    match corner {
        Some(c) => format!("{}-{}-{}", name(from), name(c), name(to)),
        None => format!("{}-{}", name(from), name(to)),
    }
}

/// The squares of a path in the order the die crosses them (neither end included).
fn crossing_order(from: u8, corner: Option<u8>, to: u8) -> Vec<u8> {
    let mut order = Vec::new();
    let mut walk = |a: u8, b: u8| {
        let (dc, dr) = ((col(b) - col(a)).signum(), (row(b) - row(a)).signum());
        let mut sq = a;
        while sq != b {
            match offset(sq, dc, dr) {
                Some(next) => sq = next,
                None => break,
            }
            order.push(sq);
        }
    };
    match corner {
        Some(c) => {
            walk(from, c);
            walk(c, to);
        }
        None => walk(from, to),
    }
    order.retain(|&sq| sq != to);
    order
}

/// Why the ordinary move `shape` cannot be made on `board` (no move of the generator fits it).
fn why_not(board: &Position, shape: &Shape) -> String {
    let me = board.side;
    let opponent = me.opponent();
    match *shape {
        Shape::Path {
            descriptor,
            from,
            corner,
            to,
        } => why_not_path(board, descriptor, from, corner, to),
        Shape::Barrier { from, to } => {
            let from = sorted(from);
            if !board.barriers[me.index()].contains(&Some(from)) {
                return match board.piece_at(from.0) {
                    Some((owner, Piece::Barrier(_))) if owner == opponent => format!(
                        "{} belongs to {opponent}; it is {me}'s turn",
                        board.describe(from.0)
                    ),
                    _ => format!(
                        "there is no {me} barrier on {}",
                        barrier_name(from.0, from.1)
                    ),
                };
            }
            if let Some(why) = why_not_barrier(to.0, to.1) {
                return why;
            }
            let to = sorted(to);
            if to == from {
                return "the barrier must move".to_owned();
            }
            let kept = [from.0, from.1]
                .into_iter()
                .find(|&sq| sq == to.0 || sq == to.1);
            let Some(kept) = kept else {
                return format!(
                    "a barrier moves by one square: one of its squares, {} or {}, stays covered",
                    name(from.0),
                    name(from.1)
                );
            };
            let new = if to.0 == kept { to.1 } else { to.0 };
            if board.occupied() & bit(new) != 0 {
                return format!(
                    "{} is not empty: it holds {}; a barrier moves only onto an empty square and never captures",
                    name(new),
                    board.describe(new)
                );
            }
            "this barrier move is not possible".to_owned()
        }
        Shape::Rotate {
            descriptor,
            at,
            faces: (top, south),
        } => {
            if !board.extended {
                return "rotating a die is an extended rule, and this game uses the basic rules"
                    .to_owned();
            }
            let o = match board.piece_at(at) {
                Some((owner, Piece::Die(o))) if owner == me => o,
                Some(_) => {
                    return format!(
                        "only {me}'s own dice rotate; {} holds {}",
                        name(at),
                        board.describe(at)
                    );
                }
                None => return format!("there is no die on {}", name(at)),
            };
            if let Some(why) = descriptor_mismatch(o, at, descriptor) {
                return why;
            }
            if let Some(why) = Orientation::why_impossible(top, south) {
                return why;
            }
            let others: Vec<String> = o.rotations().map(|r| r.to_string()).collect();
            if top != o.top() {
                return format!(
                    "a rotation keeps the top face: the die on {} shows {} on top, so it can become {}",
                    name(at),
                    o.top(),
                    others.join(", ")
                );
            }
            format!(
                "the die on {} already shows {o}; a rotation turns another face towards row 1: {}",
                name(at),
                others.join(", ")
            )
        }
        Shape::Transform { barrier, to } => {
            if !board.extended {
                return "standing a barrier up as a soldier is an extended rule, and this game uses the basic rules"
                    .to_owned();
            }
            let barrier = sorted(barrier);
            if !board.barriers[me.index()].contains(&Some(barrier)) {
                return format!(
                    "there is no {me} barrier on {}",
                    barrier_name(barrier.0, barrier.1)
                );
            }
            let places: Vec<u8> = board.transform_squares(barrier).collect();
            if !places.contains(&to) {
                let names: Vec<String> = places.iter().map(|&sq| name(sq)).collect();
                return format!(
                    "a barrier stands up on a square next to one of its ends, in line with it: {}",
                    names.join(" or ")
                );
            }
            board
                .why_no_transform(barrier, to)
                .unwrap_or_else(|| "this transformation is not possible".to_owned())
        }
    }
}

fn descriptor_mismatch(o: Orientation, at: u8, descriptor: Option<(u8, u8)>) -> Option<String> {
    let (top, south) = descriptor?;
    if Orientation::new(top, south) == Some(o) {
        return None;
    }
    Some(format!(
        "the die on {} shows {o} (top {}, {} towards row 1), not {top}{south}",
        name(at),
        o.top(),
        o.south()
    ))
}

fn why_not_path(
    board: &Position,
    descriptor: Option<(u8, u8)>,
    from: u8,
    corner: Option<u8>,
    to: u8,
) -> String {
    let me = board.side;
    let opponent = me.opponent();
    let piece = match board.piece_at(from) {
        None => return format!("there is no piece on {}", name(from)),
        Some((owner, _)) if owner != me => {
            return format!(
                "{} holds {}; it is {me}'s turn",
                name(from),
                board.describe(from)
            );
        }
        Some((_, Piece::Barrier(other))) => {
            return format!(
                "{} holds {}; a barrier move gives both its squares, like `{}-...`",
                name(from),
                board.describe(from),
                barrier_name(from, other)
            );
        }
        Some((_, piece)) => piece,
    };
    if descriptor.is_some() && !matches!(piece, Piece::Die(_)) {
        return format!(
            "only a die is written with a descriptor, and {} holds {}",
            name(from),
            board.describe(from)
        );
    }
    if from == to {
        return format!("the move starts and ends on {}", name(from));
    }
    if let Piece::Die(o) = piece
        && let Some(why) = descriptor_mismatch(o, from, descriptor)
    {
        return why;
    }
    if board.pieces(me) & bit(to) != 0 {
        return format!(
            "{} holds {}, and nobody captures their own pieces",
            name(to),
            board.describe(to)
        );
    }
    if board.kings[opponent.index()] == to {
        return format!(
            "{} holds {opponent}'s king, and a king is never captured",
            name(to)
        );
    }
    // Whether capturing on `to` would take a barrier without the second attacker it needs.
    let unguarded = |mover: u8| -> Option<String> {
        let (a, b) = board.barrier_at(opponent, to)?;
        let other = if a == to { b } else { a };
        let seconds = board.attackers(me, other, bit(to), true) & !bit(mover);
        (seconds == 0).then(|| {
            format!(
                "{} can be captured only when two different {me} pieces attack its two squares, and no other {me} piece attacks {}",
                board.describe(to),
                name(other)
            )
        })
    };
    match piece {
        Piece::King => {
            let step = manhattan(from, to);
            let diagonal = DIAG[from as usize] & bit(to) != 0;
            if diagonal && !board.diag[me.index()] {
                return if board.extended {
                    format!(
                        "the king moves diagonally only on its first move (and its first after an exchange); {me}'s king has moved since"
                    )
                } else {
                    "a king moves one square forwards, backwards or sideways, never diagonally"
                        .to_owned()
                };
            }
            if !diagonal && (step != 1 || corner.is_some()) {
                return "a king moves one square forwards, backwards or sideways".to_owned();
            }
            unguarded(from).unwrap_or_else(|| "this king move is not possible".to_owned())
        }
        Piece::Soldier => {
            if DIAG[from as usize] & bit(to) == 0 || corner.is_some() {
                return "a soldier moves one square diagonally".to_owned();
            }
            unguarded(from).unwrap_or_else(|| "this soldier move is not possible".to_owned())
        }
        Piece::Barrier(_) => "a barrier move gives both its squares".to_owned(),
        Piece::Die(o) => {
            let n = o.top();
            let distance = manhattan(from, to);
            if distance != n {
                return format!(
                    "the die on {} shows {n}, so it moves exactly {n} square{}; {} to {} is {distance}",
                    name(from),
                    if n == 1 { "" } else { "s" },
                    name(from),
                    name(to)
                );
            }
            let paths: Vec<Option<u8>> = match (corners(from, to), corner) {
                (None, None) => vec![None],
                (None, Some(c)) => {
                    return format!(
                        "{} to {} is a straight move; it has no corner like {}",
                        name(from),
                        name(to),
                        name(c)
                    );
                }
                (Some([x, y]), Some(c)) if c != x && c != y => {
                    return format!(
                        "{} is not a corner of an L from {} to {}; the corner is {} or {}",
                        name(c),
                        name(from),
                        name(to),
                        name(x),
                        name(y)
                    );
                }
                (Some(_), Some(c)) => vec![Some(c)],
                (Some([x, y]), None) => vec![Some(x), Some(y)],
            };
            if let Some(why) = unguarded(from) {
                return why;
            }
            // The pass-over is open only towards a barrier square, over its other square.
            let pass: Bits = board
                .barrier_at(opponent, to)
                .map_or(0, |(a, b)| bit(a) | bit(b));
            let mut reasons = Vec::new();
            for corner in paths {
                let blocked = crossing_order(from, corner, to)
                    .into_iter()
                    .find(|&sq| board.occupied() & !pass & bit(sq) != 0);
                if let Some(sq) = blocked {
                    let hint = match board.piece_at(sq) {
                        Some((owner, Piece::Barrier(_))) if owner == opponent => {
                            " (a die passes over a barrier's square only to capture that barrier on its other square)"
                        }
                        _ => "",
                    };
                    reasons.push(format!(
                        "the path {} is blocked on {} by {}{hint}",
                        path_name(from, corner, to),
                        name(sq),
                        board.describe(sq)
                    ));
                }
            }
            if reasons.is_empty() {
                "this die move is not possible".to_owned()
            } else {
                reasons.join("; ")
            }
        }
    }
}
