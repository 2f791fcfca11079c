//! The position and the rules of play: phases of a turn, the cube, resignations and checker moves.
//!
//! Checkers are kept the way GNU Backgammon keeps them: for each side 25 counts seen from that
//! side, index `p - 1` for its point `p` and index 24 for its bar. A side's point `p` is the
//! opponent's point `25 - p`, so the opponent's index for the mover's point `p` is `24 - p`.

use crate::rules::side::Side;

pub const CHECKERS: u8 = 15;
pub const BAR: usize = 24;
/// The largest cube value is 2^6 = 64.
pub const MAX_CUBE_LOG: u8 = 6;

/// gnubg's game state (Match ID bits 9–11); `None` (no game) never reaches a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    Playing,
    /// A side has borne off all its checkers.
    Over,
    /// A resignation was accepted.
    Resigned,
    /// A double was passed.
    Dropped,
}

impl State {
    pub fn code(self) -> u32 {
        match self {
            State::Playing => 1,
            State::Over => 2,
            State::Resigned => 3,
            State::Dropped => 4,
        }
    }
}

/// Where a turn stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Finished,
    /// The player on turn answers a resignation offer.
    AnswerResignation,
    /// The player on turn answers a double.
    AnswerDouble,
    /// The player on roll may double or roll.
    CubeDecision,
    /// The server must roll.
    RollDue,
    /// The player on roll plays the dice.
    Checkers,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// Indexed by [`Side::index`]; see the module comment.
    pub(crate) board: [[u8; 25]; 2],
    pub(crate) cube_log: u8,
    pub(crate) owner: Option<Side>,
    /// gnubg's `fMove`: whose turn of play it is (who rolls or rolled the dice).
    pub(crate) on_roll: Side,
    /// gnubg's `fTurn`: who must decide now (differs from `on_roll` while a double or a
    /// resignation waits for an answer).
    pub(crate) turn: Side,
    pub(crate) crawford: bool,
    pub(crate) state: State,
    pub(crate) doubled: bool,
    /// 0 none, 1 single, 2 gammon, 3 backgammon.
    pub(crate) resigned: u8,
    /// Larger die first; `[0, 0]` before the roll.
    pub(crate) dice: [u8; 2],
    pub(crate) match_length: u16,
    /// Indexed by [`Side::index`]: the score before this game.
    pub(crate) score: [u16; 2],
    /// The player on roll chose to roll and the server owes the dice (Match ID bit 68, which gnubg
    /// ignores; needed because gnubg has no such waiting state).
    pub(crate) rolling: bool,
    /// The `cube` option: not part of the IDs, it comes with the options.
    pub(crate) cube_enabled: bool,
}

/// One checker step, from the mover's view: `from` 1–25 (25 is the bar), `to` 0–24 (0 is off).
pub type Step = (u8, u8);

/// A whole checker move: up to four steps, sorted by decreasing source then destination, the
/// order gnubg formats them in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Play {
    pub(crate) steps: [Step; 4],
    pub(crate) len: u8,
}

impl Play {
    pub fn steps(&self) -> &[Step] {
        &self.steps[..usize::from(self.len)]
    }
}

/// What a resignation offers.
pub fn resign_name(level: u8) -> &'static str {
    match level {
        1 => "single",
        2 => "gammon",
        _ => "backgammon",
    }
}

impl Position {
    pub fn start(first: Side, dice: [u8; 2], match_length: u16, cube_enabled: bool) -> Position {
        let mut side = [0u8; 25];
        side[23] = 2;
        side[12] = 5;
        side[7] = 3;
        side[5] = 5;
        Position {
            board: [side; 2],
            cube_log: 0,
            owner: None,
            on_roll: first,
            turn: first,
            crawford: false,
            state: State::Playing,
            doubled: false,
            resigned: 0,
            dice,
            match_length,
            score: [0, 0],
            rolling: false,
            cube_enabled,
        }
    }

    /// Whose turn of play it is: who rolls or rolled the dice (gnubg's `fMove`).
    pub fn turn_side(&self) -> Side {
        self.turn
    }

    pub fn side_board(&self, side: Side) -> &[u8; 25] {
        &self.board[side.index()]
    }

    pub fn on_board(&self, side: Side) -> u8 {
        self.board[side.index()].iter().sum()
    }

    pub fn borne_off(&self, side: Side) -> u8 {
        CHECKERS.saturating_sub(self.on_board(side))
    }

    /// The match score before this game, by [`Side::index`].
    pub fn score(&self) -> [u16; 2] {
        self.score
    }

    /// The dice to play, higher first; `[0, 0]` before the roll.
    pub fn dice(&self) -> [u8; 2] {
        self.dice
    }

    /// Who owns the cube; `None` while it is in the middle.
    pub fn cube_owner(&self) -> Option<Side> {
        self.owner
    }

    pub fn cube_value(&self) -> u32 {
        1 << self.cube_log
    }

    /// Whether the player on roll may offer a double before rolling.
    pub fn can_double(&self) -> bool {
        self.cube_enabled
            && self.state == State::Playing
            && !self.crawford
            && self.cube_log < MAX_CUBE_LOG
            && self.owner.is_none_or(|owner| owner == self.on_roll)
    }

    pub fn phase(&self) -> Phase {
        if self.state != State::Playing {
            Phase::Finished
        } else if self.resigned != 0 {
            Phase::AnswerResignation
        } else if self.doubled {
            Phase::AnswerDouble
        } else if self.dice[0] == 0 {
            if self.rolling || !self.can_double() {
                Phase::RollDue
            } else {
                Phase::CubeDecision
            }
        } else {
            Phase::Checkers
        }
    }

    /// The winner and the points of a finished game (`(winner, points, level)`; level 1–3).
    pub fn result(&self) -> Option<(Side, u32, u8)> {
        let cube = self.cube_value();
        match self.state {
            State::Playing => None,
            State::Dropped => Some((self.on_roll, cube, 1)),
            State::Resigned => Some((
                self.on_roll.opponent(),
                cube * u32::from(self.resigned.max(1)),
                self.resigned.max(1),
            )),
            State::Over => {
                let winner = Side::BOTH
                    .into_iter()
                    .find(|&side| self.on_board(side) == 0)?;
                let level = self.win_level(winner);
                Some((winner, cube * u32::from(level), level))
            }
        }
    }

    /// 1 single, 2 gammon, 3 backgammon: what `winner` wins if the game ended now.
    fn win_level(&self, winner: Side) -> u8 {
        let loser = winner.opponent();
        if self.borne_off(loser) > 0 {
            return 1;
        }
        // The winner's home board is the loser's points 19–24 (indices 18..24), plus the bar.
        let stuck = self.board[loser.index()][18..25].iter().any(|&n| n > 0);
        if stuck { 3 } else { 2 }
    }

    /// The checker moves for the dice, each distinct resulting position once, in a stable order:
    /// decreasing by steps, each position written with its largest step list. Empty when no die
    /// can be played.
    pub fn plays(&self) -> Vec<Play> {
        let [high, low] = self.dice;
        if high == 0 || low == 0 {
            return Vec::new();
        }
        let mover = self.on_roll.index();
        let opp = &self.board[1 - mover];
        let opp_count = |point: u8| opp[usize::from(24 - point)];
        let blocked = (1..=24u8)
            .filter(|&point| opp_count(point) >= 2)
            .fold(0, |mask, point| mask | 1 << point);
        let blots = (1..=24u8)
            .filter(|&point| opp_count(point) == 1)
            .fold(0, |mask, point| mask | 1 << point);
        let checkers = Mover::new(&self.board[mover], blocked);
        if high == low {
            let mut doubles = Doubles {
                die: high,
                best: 0,
                plays: Vec::new(),
            };
            doubles.search(&checkers, 25, EMPTY_PLAY);
            // No die can be played: the only record is the empty play.
            if doubles.best == 0 {
                return Vec::new();
            }
            return doubles.plays;
        }
        let mut mixed = Mixed {
            blots,
            high,
            best: 0,
            larger_single: false,
            found: Vec::new(),
            keys: [0; TABLE],
            slots: [0; TABLE],
        };
        mixed.search(&checkers, [high, low]);
        mixed.search(&checkers, [low, high]);
        mixed.finish()
    }

    /// The position after a checker move (the move must come from [`Position::plays`]).
    pub fn after_play(&self, play: &Play) -> Position {
        let mut next = *self;
        let mover = self.on_roll.index();
        let mut boards = Boards::new(self.board[mover], self.board[1 - mover]);
        for &(from, to) in play.steps() {
            boards.apply(from, to);
        }
        next.board[mover] = boards.me;
        next.board[1 - mover] = boards.opp;
        if boards.me.iter().all(|&n| n == 0) {
            next.state = State::Over;
        }
        // The turn passes after the last checker too: gnubg's `PlayMove` hands the dice to the
        // opponent whatever the move did, so a finished game's IDs are written from the loser's
        // side, like those after every other checker move.
        next.pass_turn();
        next
    }

    /// Hands the dice to the opponent.
    pub fn pass_turn(&mut self) {
        self.on_roll = self.on_roll.opponent();
        self.turn = self.on_roll;
        self.dice = [0, 0];
        self.rolling = false;
    }

    /// The mover's board after a play, for resolving written moves.
    pub fn mover_after(&self, play: &Play) -> [u8; 25] {
        let mover = self.on_roll.index();
        let mut boards = Boards::new(self.board[mover], self.board[1 - mover]);
        for &(from, to) in play.steps() {
            boards.apply(from, to);
        }
        boards.me
    }

    /// The mover's points (1–24) on which the play hits.
    pub fn hits(&self, play: &Play) -> u32 {
        let mover = self.on_roll.index();
        let mut boards = Boards::new(self.board[mover], self.board[1 - mover]);
        let mut hits = 0u32;
        for &(from, to) in play.steps() {
            if to > 0 && boards.opp[usize::from(24 - to)] == 1 {
                hits |= 1 << to;
            }
            boards.apply(from, to);
        }
        hits
    }
}

const EMPTY_PLAY: Play = Play {
    steps: [(0, 0); 4],
    len: 0,
};

#[derive(Clone, Copy)]
struct Boards {
    me: [u8; 25],
    opp: [u8; 25],
}

impl Boards {
    fn new(me: [u8; 25], opp: [u8; 25]) -> Boards {
        Boards { me, opp }
    }

    fn apply(&mut self, from: u8, to: u8) {
        let from_index = usize::from(from - 1);
        self.me[from_index] = self.me[from_index].saturating_sub(1);
        if to > 0 {
            self.me[usize::from(to - 1)] += 1;
            let opp_index = usize::from(24 - to);
            if self.opp[opp_index] == 1 {
                self.opp[opp_index] = 0;
                self.opp[BAR] += 1;
            }
        }
    }
}

/// Points 1–6, as bits of a point mask.
const HOME: u32 = 0b111_1110;

/// The mover's checkers, all the move search needs: hitting never changes what the mover may
/// play next, and the opponent's points (`blocked`) cannot change during the turn.
#[derive(Clone, Copy)]
struct Mover {
    /// Index `p - 1` for point `p`, as in [`Position`]'s boards.
    counts: [u8; 25],
    /// Bit `p` set when point `p` (25 the bar) holds a checker: the search visits only these.
    occupied: u32,
    /// Checkers outside the home board (bar included): bearing off needs none.
    outside: u8,
    /// Bit `p` set when the opponent holds the mover's point `p` with two or more.
    blocked: u32,
}

impl Mover {
    fn new(counts: &[u8; 25], blocked: u32) -> Mover {
        let occupied = (1..=25u8)
            .filter(|&point| counts[usize::from(point - 1)] > 0)
            .fold(0, |mask, point| mask | 1 << point);
        Mover {
            counts: *counts,
            occupied,
            outside: counts[6..25].iter().sum(),
            blocked,
        }
    }

    /// The points a checker may leave from, up to `max_from`: the bar alone while it holds any.
    fn sources(&self, max_from: u8) -> u32 {
        let up_to = (2u32 << max_from) - 1;
        let bar = 1 << 25;
        if self.occupied & bar != 0 {
            self.occupied & bar & up_to
        } else {
            self.occupied & up_to
        }
    }

    /// The destination of a step with `die` from an occupied source, if the step is legal.
    fn target(&self, from: u8, die: u8) -> Option<u8> {
        if from > die {
            let to = from - die;
            return (self.blocked & (1 << to) == 0).then_some(to);
        }
        // Bearing off: everything home first, and a larger die only from the highest point.
        let higher = HOME & !((2u32 << from) - 1);
        (self.outside == 0 && (from == die || self.occupied & higher == 0)).then_some(0)
    }

    fn apply(&mut self, from: u8, to: u8) {
        let from_index = usize::from(from - 1);
        self.counts[from_index] = self.counts[from_index].saturating_sub(1);
        if self.counts[from_index] == 0 {
            self.occupied &= !(1 << from);
        }
        if from > 6 {
            self.outside = self.outside.saturating_sub(1);
        }
        if to > 0 {
            self.counts[usize::from(to - 1)] += 1;
            self.occupied |= 1 << to;
            if to > 6 {
                self.outside += 1;
            }
        }
    }
}

/// The points of a source mask from the highest down.
fn descending(mut mask: u32) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        let point = 31u32.checked_sub(mask.leading_zeros())?;
        mask &= !(1 << point);
        u8::try_from(point).ok()
    })
}

/// Doubles. Each die sends a checker from a point `p` to one fixed place (`p - die`, or off),
/// so a play's resulting position determines its multiset of steps and distinct multisets never
/// collide: trying sources in non-increasing order reaches every multiset exactly once, with its
/// steps already sorted, and in decreasing play order. No key, dedup or sort is needed.
struct Doubles {
    die: u8,
    best: u8,
    /// The plays using `best` dice, in decreasing order.
    plays: Vec<Play>,
}

impl Doubles {
    fn search(&mut self, checkers: &Mover, max_from: u8, play: Play) {
        let depth = usize::from(play.len);
        let mut moved = false;
        if depth < 3 {
            for from in descending(checkers.sources(max_from)) {
                if let Some(to) = checkers.target(from, self.die) {
                    moved = true;
                    let mut next = *checkers;
                    next.apply(from, to);
                    let mut longer = play;
                    longer.steps[depth] = (from, to);
                    longer.len += 1;
                    self.search(&next, from, longer);
                }
            }
        } else if depth == 3 {
            // The last step changes nothing the search needs, so it is recorded without a copy
            // of the board or another call: most of the tree's nodes are here.
            for from in descending(checkers.sources(max_from)) {
                if let Some(to) = checkers.target(from, self.die) {
                    moved = true;
                    let mut longer = play;
                    longer.steps[depth] = (from, to);
                    longer.len = 4;
                    self.record(longer);
                }
            }
        }
        if !moved {
            self.record(play);
        }
    }

    /// Sequences that stop early are kept only while nothing longer is known.
    fn record(&mut self, play: Play) {
        if play.len > self.best {
            self.best = play.len;
            self.plays.clear();
        }
        if play.len == self.best {
            self.plays.push(play);
        }
    }
}

/// A one- or two-step play of different dice packed so that integer order is [`Play`]'s order:
/// the first step in the top bytes, the length in the lowest.
fn pack(first: Step, second: Step, len: u8) -> u64 {
    let bytes = [0, 0, 0, first.0, first.1, second.0, second.1, len];
    u64::from_be_bytes(bytes)
}

fn unpack(packed: u64) -> Play {
    let [_, _, _, a, b, c, d, len] = packed.to_be_bytes();
    Play {
        steps: [(a, b), (c, d), (0, 0), (0, 0)],
        len,
    }
}

/// Two different dice, tried in both orders. The same position can come from different step
/// lists (13/7 7/2 and 13/8 8/2) or from both orders, so results are keyed and deduplicated.
struct Mixed {
    /// Bit `p` set when the opponent has a blot on the mover's point `p` at the start.
    blots: u32,
    high: u8,
    best: u8,
    /// A single step with the larger die exists (only matters when no two steps do).
    larger_single: bool,
    /// The largest packed play for each position reached so far.
    found: Vec<u64>,
    /// Open addressing from result keys (0 marks a free slot; keys never are 0) to `found`:
    /// sorting hundreds of entries to deduplicate them cost more than generating them.
    keys: [u64; TABLE],
    slots: [u16; TABLE],
}

/// At most 2 × 15 × 15 = 450 two-step plays exist, so the table stays under half full.
const TABLE: usize = 1024;

impl Mixed {
    fn search(&mut self, checkers: &Mover, dice: [u8; 2]) {
        for from in descending(checkers.sources(25)) {
            let Some(to) = checkers.target(from, dice[0]) else {
                continue;
            };
            let mut next = *checkers;
            next.apply(from, to);
            let mut second = false;
            for from2 in descending(next.sources(25)) {
                if let Some(to2) = next.target(from2, dice[1]) {
                    second = true;
                    if self.best < 2 {
                        self.best = 2;
                        self.clear();
                    }
                    let (first, last) = if (from, to) >= (from2, to2) {
                        ((from, to), (from2, to2))
                    } else {
                        ((from2, to2), (from, to))
                    };
                    self.push(first, last, 2);
                }
            }
            if !second && self.best < 2 {
                self.best = 1;
                if dice[0] == self.high && !self.larger_single {
                    // The larger die can be played alone: the smaller-die singles go.
                    self.larger_single = true;
                    self.clear();
                }
                if dice[0] == self.high || !self.larger_single {
                    self.push((from, to), (0, 0), 1);
                }
            }
        }
    }

    /// Keys the position a play reaches by what it changes: the mover's emptied and filled
    /// places once a checker's intermediate point cancels, and the blots it lands on.
    fn push(&mut self, first: Step, second: Step, len: u8) {
        let ((a, b), (c, d)) = (first, second);
        let lands = |point: u8| {
            if point > 0 {
                self.blots & (1 << point)
            } else {
                0
            }
        };
        let hits = lands(b) | if len == 2 { lands(d) } else { 0 };
        // 31 marks an unused slot; 0 is off and 25 the bar.
        let (removed, added) = if len == 1 {
            ([a, 31], [b, 31])
        } else if b == c && b > 0 {
            ([a, 31], [d, 31])
        } else {
            ([a, c], [b.max(d), b.min(d)])
        };
        let changes = u64::from_be_bytes([0, 0, 0, 0, removed[0], removed[1], added[0], added[1]]);
        let key = changes << 32 | u64::from(hits);
        let packed = pack(first, second, len);
        // Fibonacci hashing: the top bits of the product mix every bit of the key.
        let mut slot = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54) as usize;
        for _ in 0..TABLE {
            slot %= TABLE;
            if self.keys[slot] == 0 {
                if let Ok(index) = u16::try_from(self.found.len()) {
                    self.keys[slot] = key;
                    self.slots[slot] = index;
                }
                self.found.push(packed);
                return;
            }
            if self.keys[slot] == key {
                if let Some(kept) = self.found.get_mut(usize::from(self.slots[slot])) {
                    *kept = (*kept).max(packed);
                }
                return;
            }
            slot += 1;
        }
        // Unreachable with at most 450 plays; keeping the play beats losing it.
        self.found.push(packed);
    }

    fn clear(&mut self) {
        self.found.clear();
        self.keys = [0; TABLE];
    }

    fn finish(mut self) -> Vec<Play> {
        if self.best == 0 {
            return Vec::new();
        }
        self.found.sort_unstable_by(|x, y| y.cmp(x));
        self.found.into_iter().map(unpack).collect()
    }
}
