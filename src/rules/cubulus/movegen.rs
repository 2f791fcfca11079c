//! Making moves and listing the legal turns.
//!
//! Generation works in two stages. [`Position::ordinary`] lists every ordinary move that obeys the
//! movement and capture rules, leaving aside whether the mover's king ends in check, because that
//! is judged only at the end of the whole turn (fine point 9). [`Position::turns`] then combines
//! each ordinary move with the exchanges possible before or after it and keeps the turns that end
//! with the king out of check.

use super::board::{
    Bits, CELLS, DIAG, ORTH, Position, bit, corners, far_row, home, offset, path, rolled, row,
    squares,
};
use super::die::Orientation;
use super::turn::{Action, Exchange, Timing, Turn};
use crate::rules::outcome::{EndReason, Outcome};
use crate::rules::side::Side;

/// The squares of the opponent's barriers, each with the pieces of the side to move that attack
/// its other square (passing over this one): the second attacker a capture there needs.
struct Guards {
    squares: [(u8, Bits); 4],
    len: usize,
}

impl Guards {
    fn new(position: &Position) -> Guards {
        let me = position.side;
        let mut guards = Guards {
            squares: [(CELLS, 0); 4],
            len: 0,
        };
        for &(a, b) in position.barriers[me.opponent().index()].iter().flatten() {
            guards.squares[guards.len] = (a, position.attackers(me, b, bit(a), true));
            guards.squares[guards.len + 1] = (b, position.attackers(me, a, bit(b), true));
            guards.len += 2;
        }
        guards
    }

    /// `None` when `to` is no barrier square; otherwise whether a piece other than `mover`
    /// attacks the barrier's other square.
    fn seconded(&self, to: u8, mover: u8) -> Option<bool> {
        self.squares[..self.len]
            .iter()
            .find(|&&(sq, _)| sq == to)
            .map(|&(_, others)| others & !bit(mover) != 0)
    }
}

/// The die an exchange returns: 1 on top and 4 towards its owner.
pub(crate) fn returned_die(side: Side) -> Orientation {
    let south = match side {
        Side::White => 4,
        Side::Black => 3,
    };
    Orientation::new(1, south).unwrap_or(Orientation::from_index(0))
}

impl Position {
    /// Plays an ordinary move of the side to move, without handing the turn over.
    pub(crate) fn apply(&mut self, action: Action) {
        let me = self.side;
        let s = me.index();
        let opponent = me.opponent();
        match action {
            Action::Die { from, corner, to } => {
                self.capture(opponent, to);
                let o = rolled(self.orient[from as usize], from, corner, to);
                self.dice[s] &= !bit(from);
                self.orient[from as usize] = Orientation::from_index(0);
                self.put_die(me, to, o);
            }
            Action::King { to, .. } => {
                self.capture(opponent, to);
                self.kings[s] = to;
                self.diag[s] = false;
            }
            Action::Soldier { from, to } => {
                self.capture(opponent, to);
                self.soldiers[s] = self.soldiers[s] & !bit(from) | bit(to);
            }
            Action::Barrier { from, to } => {
                self.remove_barrier(me, from);
                self.add_barrier(me, to.0, to.1);
            }
            Action::Rotate { at, to } => self.orient[at as usize] = to,
            Action::Transform { barrier, to } => {
                self.remove_barrier(me, barrier);
                self.soldiers[s] |= bit(to);
            }
        }
    }

    /// Makes an exchange for the side to move, without handing the turn over.
    pub(crate) fn apply_exchange(&mut self, exchange: Exchange) {
        let me = self.side;
        let s = me.index();
        let left = self.kings[s];
        let home = home(me);
        self.capture(me.opponent(), home);
        self.kings[s] = home;
        self.diag[s] = self.extended;
        match exchange {
            Exchange::Die => self.put_die(me, left, returned_die(me)),
            Exchange::Barrier(a, b) => self.add_barrier(me, a, b),
        }
    }

    /// Plays a whole turn and hands the move to the opponent.
    pub(crate) fn after(&self, turn: &Turn) -> Position {
        let mut next = *self;
        if let Some((Timing::Before, exchange)) = turn.exchange {
            next.apply_exchange(exchange);
        }
        next.apply(turn.action);
        if let Some((Timing::After, exchange)) = turn.exchange {
            next.apply_exchange(exchange);
        }
        next.side = self.side.opponent();
        next
    }

    /// Whether the side to move meets the conditions of an exchange right now, regardless of
    /// what it would take back: king on the far row, something captured, and a home square the
    /// king may go to.
    pub(crate) fn can_exchange(&self) -> bool {
        let me = self.side;
        let king = self.kings[me.index()];
        if row(king) != far_row(me) || self.captured_dice(me) + self.captured_barriers(me) == 0 {
            return false;
        }
        let home = home(me);
        match self.piece_at(home) {
            None => true,
            Some((owner, _)) if owner == me => false,
            Some((_, super::board::Piece::King)) => false,
            Some((_, super::board::Piece::Barrier(other))) => {
                self.attackers(me, other, bit(home), false) != 0
            }
            Some(_) => true,
        }
    }

    /// The exchanges the side to move may make now, into `out` (cleared first).
    pub(crate) fn exchanges(&self, out: &mut Vec<Exchange>) {
        out.clear();
        if !self.can_exchange() {
            return;
        }
        let me = self.side;
        if self.captured_dice(me) > 0 {
            out.push(Exchange::Die);
        }
        if self.captured_barriers(me) > 0 {
            let king = self.kings[me.index()];
            let free = !(self.occupied() & !bit(king));
            for other in squares(ORTH[king as usize] & free) {
                out.push(Exchange::Barrier(king.min(other), king.max(other)));
            }
        }
    }

    /// Every ordinary move of the side to move that the movement and capture rules allow, into
    /// `out`; whether the king ends in check is left to the caller.
    pub(crate) fn ordinary(&self, out: &mut Vec<Action>) {
        let me = self.side;
        let s = me.index();
        let opponent = me.opponent();
        let occupied = self.occupied();
        // Own pieces are never captured and kings never are.
        let closed = self.pieces(me) | bit(self.kings[opponent.index()]);
        let guards = Guards::new(self);

        for from in squares(self.dice[s]) {
            let n = self.orient[from as usize].top() as i8;
            // Every target lies exactly n squares away (straight or L); rows ascending, then
            // columns, gives the canonical order.
            for dr in -n..=n {
                let rest = n - dr.abs();
                let columns = [-rest, rest];
                let columns = if rest == 0 {
                    &columns[..1]
                } else {
                    &columns[..]
                };
                for &dc in columns {
                    let Some(to) = offset(from, dc, dr) else {
                        continue;
                    };
                    if closed & bit(to) != 0 {
                        continue;
                    }
                    // The pass-over: only onto a barrier square, only over its other square.
                    let pass = match guards.seconded(to, from) {
                        Some(false) => continue,
                        Some(true) => self
                            .barrier_at(opponent, to)
                            .map_or(0, |(a, b)| bit(a) | bit(b)),
                        None => 0,
                    };
                    let blocked = occupied & !pass;
                    match corners(from, to) {
                        None => {
                            if path(from, None, to) & blocked == 0 {
                                out.push(Action::Die {
                                    from,
                                    corner: None,
                                    to,
                                });
                            }
                        }
                        Some(both) => {
                            for corner in both {
                                if path(from, Some(corner), to) & blocked == 0 {
                                    out.push(Action::Die {
                                        from,
                                        corner: Some(corner),
                                        to,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }

        let king = self.kings[s];
        for to in squares(self.king_reach(me) & !closed) {
            if guards.seconded(to, king) != Some(false) {
                out.push(Action::King { from: king, to });
            }
        }

        for from in squares(self.soldiers[s]) {
            for to in squares(DIAG[from as usize] & !closed) {
                if guards.seconded(to, from) != Some(false) {
                    out.push(Action::Soldier { from, to });
                }
            }
        }

        for &(a, b) in self.barriers[s].iter().flatten() {
            // A barrier's squares are orthogonal neighbours, so no square touches both.
            for new in squares((ORTH[a as usize] | ORTH[b as usize]) & !occupied) {
                let kept = if ORTH[a as usize] & bit(new) != 0 {
                    a
                } else {
                    b
                };
                out.push(Action::Barrier {
                    from: (a, b),
                    to: (kept.min(new), kept.max(new)),
                });
            }
        }

        if !self.extended {
            return;
        }
        for at in squares(self.dice[s]) {
            for to in self.orient[at as usize].rotations() {
                out.push(Action::Rotate { at, to });
            }
        }
        for &barrier in self.barriers[s].iter().flatten() {
            for to in self.transform_squares(barrier) {
                if self.why_no_transform(barrier, to).is_none() {
                    out.push(Action::Transform { barrier, to });
                }
            }
        }
    }

    /// The squares next to either end of a barrier, in line with it, ascending.
    pub(crate) fn transform_squares(&self, (a, b): (u8, u8)) -> impl Iterator<Item = u8> {
        let (dc, dr) = (super::board::col(b) - super::board::col(a), row(b) - row(a));
        [offset(a, -dc, -dr), offset(b, dc, dr)]
            .into_iter()
            .flatten()
    }

    /// Why the side to move may not stand its barrier up on `to` (one of the barrier's
    /// transformation squares), or `None` if it may, leaving aside its own king's safety.
    pub(crate) fn why_no_transform(&self, barrier: (u8, u8), to: u8) -> Option<String> {
        let me = self.side;
        if self.occupied() & bit(to) != 0 {
            return Some(format!(
                "{} is not empty: it holds {}",
                super::board::name(to),
                self.describe(to)
            ));
        }
        if self.barrier_capturable(me, barrier) {
            return Some(format!(
                "{} could be captured now (two different {} pieces attack its two squares), and a barrier that could be captured may not stand up",
                self.describe(barrier.0),
                me.opponent()
            ));
        }
        let mut after = *self;
        after.remove_barrier(me, barrier);
        after.soldiers[me.index()] |= bit(to);
        after.attacker(me.opponent(), to).map(|by| {
            format!(
                "the soldier on {} would be attacked by {}",
                super::board::name(to),
                after.describe(by)
            )
        })
    }

    /// Every legal turn of the side to move: each ordinary move alone, then with each exchange
    /// possible after it, and last the exchanges made first, each with every move after it.
    pub(crate) fn turns(&self) -> Vec<Turn> {
        let me = self.side;
        let mut moves = Vec::with_capacity(128);
        self.ordinary(&mut moves);
        let mut turns = Vec::with_capacity(moves.len());
        let mut exchanges = Vec::new();
        for &action in &moves {
            let mut next = *self;
            next.apply(action);
            if !next.in_check(me) {
                turns.push(Turn {
                    action,
                    exchange: None,
                });
            }
            next.exchanges(&mut exchanges);
            for &exchange in &exchanges {
                let mut last = next;
                last.apply_exchange(exchange);
                if !last.in_check(me) {
                    turns.push(Turn {
                        action,
                        exchange: Some((Timing::After, exchange)),
                    });
                }
            }
        }
        self.exchanges(&mut exchanges);
        for &exchange in &exchanges {
            let mut first = *self;
            first.apply_exchange(exchange);
            moves.clear();
            first.ordinary(&mut moves);
            for &action in &moves {
                let mut last = first;
                last.apply(action);
                if !last.in_check(me) {
                    turns.push(Turn {
                        action,
                        exchange: Some((Timing::Before, exchange)),
                    });
                }
            }
        }
        turns
    }

    /// Whether the side to move has any legal turn; stops at the first one found.
    pub(crate) fn has_turn(&self) -> bool {
        let me = self.side;
        let mut moves = Vec::with_capacity(128);
        self.ordinary(&mut moves);
        let mut exchanges = Vec::new();
        for &action in &moves {
            let mut next = *self;
            next.apply(action);
            if !next.in_check(me) {
                return true;
            }
            next.exchanges(&mut exchanges);
            for &exchange in &exchanges {
                let mut last = next;
                last.apply_exchange(exchange);
                if !last.in_check(me) {
                    return true;
                }
            }
        }
        self.exchanges(&mut exchanges);
        for &exchange in &exchanges {
            let mut first = *self;
            first.apply_exchange(exchange);
            moves.clear();
            first.ordinary(&mut moves);
            for &action in &moves {
                let mut last = first;
                last.apply(action);
                if !last.in_check(me) {
                    return true;
                }
            }
        }
        false
    }
}

/// How the game stands when the side to move has no turn left: lost, by mate when in check.
/// `None` while a turn remains.
pub(crate) fn outcome(position: &Position) -> Option<Outcome> {
    if position.has_turn() {
        return None;
    }
    let side = position.side;
    Some(Outcome {
        winner: Some(side.opponent()),
        reason: if position.in_check(side) {
            EndReason::Checkmate
        } else {
            EndReason::NoLegalMove
        },
        summary: None,
    })
}
