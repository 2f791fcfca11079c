//! The position and the rules of play: phases of a turn, the cube, resignations and checker moves.
//!
//! Checkers are kept the way GNU Backgammon keeps them: for each side 25 counts seen from that
//! side, index `p - 1` for its point `p` and index 24 for its bar. A side's point `p` is the
//! opponent's point `25 - p`, so the opponent's index for the mover's point `p` is `24 - p`.

use crate::rules::Side;

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

    pub fn side_board(&self, side: Side) -> &[u8; 25] {
        &self.board[side.index()]
    }

    pub fn on_board(&self, side: Side) -> u8 {
        self.board[side.index()].iter().sum()
    }

    pub fn borne_off(&self, side: Side) -> u8 {
        CHECKERS.saturating_sub(self.on_board(side))
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

    /// The checker moves for the dice, each distinct resulting position once, in a stable order.
    /// Empty when no die can be played.
    pub fn plays(&self) -> Vec<Play> {
        let [high, low] = self.dice;
        if high == 0 || low == 0 {
            return Vec::new();
        }
        let mover = self.on_roll.index();
        let mut generator = Generator {
            best: 0,
            found: Vec::new(),
            first_die: 0,
        };
        let boards = Boards {
            me: self.board[mover],
            opp: self.board[1 - mover],
        };
        let empty = Play {
            steps: [(0, 0); 4],
            len: 0,
        };
        if high == low {
            generator.doubles(&boards, high, 25, empty);
        } else {
            generator.sequence(&boards, [high, low], empty);
            generator.sequence(&boards, [low, high], empty);
        }
        let best = generator.best;
        let larger_playable = best == 1 && generator.found.iter().any(|f| f.2 == 1 && f.3 == high);
        let found: Vec<(u128, Play)> = generator
            .found
            .into_iter()
            // Only one die can be played: the larger whenever it can be.
            .filter(|f| f.2 == best && f.1.len > 0 && (!larger_playable || f.3 == high))
            .map(|(key, play, _, _)| (key, play))
            .collect();
        let mut found = found;
        found.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        found.dedup_by_key(|(key, _)| *key);
        let mut plays: Vec<Play> = found.into_iter().map(|(_, play)| play).collect();
        plays.sort_unstable_by(|a, b| b.cmp(a));
        plays
    }

    /// The position after a checker move (the move must come from [`Position::plays`]).
    pub fn after_play(&self, play: &Play) -> Position {
        let mut next = *self;
        let mover = self.on_roll.index();
        let mut boards = Boards {
            me: self.board[mover],
            opp: self.board[1 - mover],
        };
        for &(from, to) in play.steps() {
            boards.apply(from, to);
        }
        next.board[mover] = boards.me;
        next.board[1 - mover] = boards.opp;
        if boards.me.iter().all(|&n| n == 0) {
            next.state = State::Over;
        } else {
            next.pass_turn();
        }
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
        let mut boards = Boards {
            me: self.board[mover],
            opp: self.board[1 - mover],
        };
        for &(from, to) in play.steps() {
            boards.apply(from, to);
        }
        boards.me
    }

    /// The mover's points (1–24) on which the play hits.
    pub fn hits(&self, play: &Play) -> u32 {
        let mover = self.on_roll.index();
        let mut boards = Boards {
            me: self.board[mover],
            opp: self.board[1 - mover],
        };
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

#[derive(Clone, Copy)]
struct Boards {
    me: [u8; 25],
    opp: [u8; 25],
}

impl Boards {
    /// The destination of a step with `die` from `from` (1–25), if the step is legal.
    fn target(&self, from: u8, die: u8) -> Option<u8> {
        let from_index = usize::from(from - 1);
        if self.me[from_index] == 0 || (self.me[BAR] > 0 && from != 25) {
            return None;
        }
        if from > die {
            let to = from - die;
            return (self.opp[usize::from(24 - to)] < 2).then_some(to);
        }
        // Bearing off: everything home first.
        if self.me[6..25].iter().any(|&n| n > 0) {
            return None;
        }
        if from == die || self.me[from_index + 1..6].iter().all(|&n| n == 0) {
            Some(0)
        } else {
            None
        }
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

    /// A compact key of both boards: distinct positions give distinct keys (gnubg's own
    /// 80-bit position key).
    fn key(&self) -> u128 {
        let mut key = 0u128;
        let mut bit = 0u32;
        for side in [&self.me, &self.opp] {
            for &n in side.iter() {
                for _ in 0..n {
                    if bit < 128 {
                        key |= 1 << bit;
                    }
                    bit += 1;
                }
                bit += 1;
            }
        }
        key
    }
}

struct Generator {
    best: u8,
    /// Key, play, dice used, and the die of the first step (for the larger-die rule).
    found: Vec<(u128, Play, u8, u8)>,
    first_die: u8,
}

impl Generator {
    fn record(&mut self, boards: &Boards, play: Play) {
        if play.len >= self.best {
            self.best = play.len;
            let mut sorted = play;
            let len = usize::from(play.len);
            sorted.steps[..len].sort_unstable_by(|a, b| b.cmp(a));
            self.found
                .push((boards.key(), sorted, play.len, self.first_die));
        }
    }

    /// Two different dice in the given order.
    fn sequence(&mut self, boards: &Boards, dice: [u8; 2], play: Play) {
        let depth = usize::from(play.len);
        let Some(&die) = dice.get(depth) else {
            self.record(boards, play);
            return;
        };
        let mut moved = false;
        for from in (1..=25u8).rev() {
            if let Some(to) = boards.target(from, die) {
                moved = true;
                if depth == 0 {
                    self.first_die = die;
                }
                let mut next = *boards;
                next.apply(from, to);
                let mut play = play;
                play.steps[depth] = (from, to);
                play.len += 1;
                self.sequence(&next, dice, play);
            }
        }
        if !moved {
            self.record(boards, play);
        }
    }

    /// Four moves of one number; sources never increase, which reaches every distinct result
    /// once per multiset of steps instead of once per ordering.
    fn doubles(&mut self, boards: &Boards, die: u8, max_from: u8, play: Play) {
        if play.len == 4 {
            self.record(boards, play);
            return;
        }
        let mut moved = false;
        for from in (1..=max_from).rev() {
            if let Some(to) = boards.target(from, die) {
                moved = true;
                let mut next = *boards;
                next.apply(from, to);
                let mut play = play;
                play.steps[usize::from(play.len)] = (from, to);
                play.len += 1;
                self.doubles(&next, die, from, play);
            }
        }
        if !moved {
            self.record(boards, play);
        }
    }
}
