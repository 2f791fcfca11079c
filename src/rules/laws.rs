//! The laws every engine obeys, written once for all of them.
//!
//! Each game's tests implement [`Subject`] (what is particular to the game: its options, how a
//! random player picks, what its positions keep from one move to the next) and invoke
//! [`obeys_the_laws!`], which runs the same properties for every game through the [`Game`] and
//! [`Engine`] interfaces:
//!
//! * legal moves agree with `play`: every legal move plays to a well-formed position, and a written
//!   move either names a legal move or is refused;
//! * notation round-trips: the canonical notation of each legal move reads back as that move, and
//!   positions read back from their canonical text (in any case and spacing where the game allows);
//! * the side to move follows the rules' order;
//! * replaying a game, move by move or as a game record, gives the same positions;
//! * a finished game has no legal move and refuses every move with game over;
//! * no text, however near a position or a move, makes a parser panic;
//! * options are normalised, values of the wrong type refused, and start positions load;
//! * every position of a random game is drawn whole: a plain diagram of the game's size, whose
//!   first line says who moves or that the game is over, and which shows what the game's own
//!   reading of it ([`Subject::check_drawn`]) expects;
//! * the fast move generator agrees with the game's independent, slow reading of its rules
//!   ([`Subject::check_reading`]) on random games, on the positions its tests made by hand and
//!   on any position read from near-miss text;
//! * where a game pins it, how many of a fixed sweep of random games the move limit stops.
//!
//! What only one game has (its reference positions, counts, rules and sample games) stays in its
//! own tests, with the hooks and numbers that feed these laws. They write their cases with the
//! helpers here too: [`random_game`], [`play_to_the_end`], [`play_through_engine`], and the
//! [`shorthands!`] of a game without options.
//!
//! A random game draws its choices and its dice from one seed that proptest picks (and keeps in
//! `proptest-regressions/` when a case fails), so every failure replays. Dice reach the engines
//! through their roll API, as the server's do.

use std::fmt::Debug;
use std::ops::Range;

use proptest::prelude::*;
use proptest::strategy::Union;
use proptest::string::string_regex;
use proptest::test_runner::{RngAlgorithm, TestRng};

use super::diagram::reading::assert_plain;
use super::engine::{Engine, PlayError, Typed};
use super::errors::MoveError;
use super::game::Game;
use super::record::{self, Record, RecordMove};
use super::side::Side;

/// What the laws need to know of a game beyond its [`Game`] implementation.
pub(crate) trait Subject:
    Game<Position: PartialEq + Debug + Send + Sync + 'static, Move: Debug> + Sized + 'static
{
    /// How many random games (and texts) each law is tried on.
    const CASES: u32;
    /// The longest random game, in moves; a game still going then is stopped.
    const MOVE_LIMIT: usize;
    /// Whether every random game must end within [`Subject::MOVE_LIMIT`].
    const ALWAYS_ENDS: bool = false;
    /// Every how many positions of a random game the notation of every legal move is read back
    /// (at the others, the move played is).
    const EVERY_MOVE_STRIDE: usize = 1;
    /// Every how many positions every legal move is also played through the engine and its
    /// position read back, and moves of an earlier position are tried.
    const DEEP_STRIDE: usize = 8;
    /// Whether positions and moves read in any case and with any run of whitespace.
    const ANY_CASE: bool = true;

    /// How many of the fixed sweep of random games from seeds `0..`[`PINNED_SWEEP`] the move
    /// limit stops. Pinned where random games may outlast the limit, so that a change to the
    /// rules or to the random player that makes games longer or shorter shows here; `None` where
    /// the game's tests pin nothing (its random games always end, or its own tests sweep further).
    const STOPPED_BY_LIMIT: Option<usize> = None;

    /// Text shaped like this game's position strings, so that many cases get past the layout.
    const NEAR_MISS_POSITION: NearMiss = NearMiss::NOTHING;
    /// Text shaped like this game's moves.
    const NEAR_MISS_MOVE: NearMiss = NearMiss::NOTHING;

    /// How many lines every diagram of this game has, whatever the position, so that a mail
    /// lays out every one alike.
    const DIAGRAM_LINES: usize;
    /// The random games whose every position is drawn and read back with
    /// [`Subject::check_drawn`].
    const DRAWN: Sweep = Sweep::games(24);
    /// The random games whose positions [`Subject::check_reading`] is tried on. None by default:
    /// a game's independent reading of its rules is slow, so its tests say how far it goes.
    const READING: Sweep = Sweep::NONE;

    /// The options random games are played under.
    fn options() -> Vec<Self::Options> {
        vec![Self::Options::default()]
    }

    /// Which of `moves` (never empty) a random player picks in `position`.
    fn choose(_position: &Self::Position, moves: &[Self::Move], chance: &mut Chance) -> usize {
        chance.below(moves.len())
    }

    /// Who moves after `mv`, when the game goes on.
    fn side_after(before: &Self::Position, _mv: &Self::Move) -> Side {
        Self::side_to_move(before).opponent()
    }

    /// What this game's positions keep from one move to the next.
    fn check_step(
        _before: &Self::Position,
        _legal: &[Self::Move],
        _mv: &Self::Move,
        _after: &Self::Position,
    ) -> Result<(), TestCaseError> {
        Ok(())
    }

    /// What this game says of where a random game stopped.
    fn check_end(_game: &Playout<Self>) -> Result<(), TestCaseError> {
        Ok(())
    }

    /// Positions, besides the start, that arbitrary move text is read in.
    fn probes() -> Vec<Self::Position> {
        Vec::new()
    }

    /// Positions made by hand for the cases random games seldom reach: the slow reading
    /// ([`Subject::check_reading`]) is tried on them, and on the start, on every run.
    fn hand_made() -> Vec<Self::Position> {
        Vec::new()
    }

    /// What `diagram`, already found plain and of [`Subject::DIAGRAM_LINES`] lines, shows of
    /// `position`: every piece where the position has it, read back from the drawing.
    fn check_drawn(_position: &Self::Position, _diagram: &str) -> Result<(), TestCaseError> {
        Ok(())
    }

    /// Whether the fast rules agree, in `position`, with an independent and slow reading of them
    /// written for the tests. Tried on the random games of [`Subject::READING`], on the start and
    /// [`Subject::hand_made`] positions, and on every position that near-miss text reads as,
    /// which no game reaches by playing.
    fn check_reading(_position: &Self::Position) -> Result<(), TestCaseError> {
        Ok(())
    }
}

/// How many random games, from seeds `0..PINNED_SWEEP`, [`Subject::STOPPED_BY_LIMIT`] counts
/// among.
pub(crate) const PINNED_SWEEP: u64 = 200;

/// Random games a law sweeps: how many, each stopped after how many moves, and every how many
/// of the positions it passes through are looked at.
pub(crate) struct Sweep {
    /// Read by [`obeys_the_laws!`] as the law's number of cases.
    pub(crate) games: u32,
    /// `None`: as long as the game's [`Subject::MOVE_LIMIT`].
    moves: Option<usize>,
    stride: usize,
}

impl Sweep {
    /// No game at all.
    pub(crate) const NONE: Sweep = Sweep::games(0);

    /// `games` random games played to the move limit, every position looked at.
    pub(crate) const fn games(games: u32) -> Sweep {
        Sweep {
            games,
            moves: None,
            stride: 1,
        }
    }

    /// The same games stopped after `moves` moves.
    pub(crate) const fn stopped_at(self, moves: usize) -> Sweep {
        Sweep {
            moves: Some(moves),
            ..self
        }
    }

    /// Only every `stride`-th position looked at, from the first.
    pub(crate) const fn every(self, stride: usize) -> Sweep {
        Sweep { stride, ..self }
    }

    /// The positions of the random game from `seed` to look at.
    fn positions<G: Subject>(&self, seed: u64) -> impl Iterator<Item = G::Position> {
        let game = random_game::<G>(seed, self.moves.unwrap_or(G::MOVE_LIMIT));
        game.passed_through().into_iter().step_by(self.stride)
    }
}

/// Text near a game's own: a run of pieces, each matching one of `pieces` (regular
/// expressions), as many as `count` says, joined with `joint`. Random text almost never gets
/// past a parser's first check; text of the right shape reaches the checks behind it.
pub(crate) struct NearMiss {
    pieces: &'static [&'static str],
    count: Range<usize>,
    joint: &'static str,
}

impl NearMiss {
    /// The empty text: for a game whose tests give no shape.
    pub(crate) const NOTHING: NearMiss = NearMiss::one_of(&[""]);

    /// Fewer than `below` words, space-separated, as position strings are written.
    pub(crate) const fn words(pieces: &'static [&'static str], below: usize) -> NearMiss {
        NearMiss {
            pieces,
            count: 0..below,
            joint: " ",
        }
    }

    /// Fewer than `below` pieces written together, as moves are.
    pub(crate) const fn run(pieces: &'static [&'static str], below: usize) -> NearMiss {
        NearMiss {
            pieces,
            count: 0..below,
            joint: "",
        }
    }

    /// A single piece.
    pub(crate) const fn one_of(pieces: &'static [&'static str]) -> NearMiss {
        NearMiss {
            pieces,
            count: 1..2,
            joint: "",
        }
    }

    /// The strategy that draws such text.
    pub(crate) fn strategy(&self) -> BoxedStrategy<String> {
        let piece = Union::new(
            self.pieces
                .iter()
                .map(|piece| string_regex(piece).expect("a near-miss piece is a regex")),
        );
        let joint = self.joint;
        prop::collection::vec(piece, self.count.clone())
            .prop_map(move |pieces| pieces.join(joint))
            .boxed()
    }
}

/// The choices and dice of random games, from a seed.
pub(crate) struct Chance(TestRng);

impl Chance {
    pub(crate) fn new(seed: u64) -> Chance {
        let mut bytes = [0u8; 32];
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let word = seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        Chance(TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
    }

    /// A number below `n` (which is not 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.0.next_u64() % n as u64) as usize
    }

    pub(crate) fn dice(&mut self, count: usize) -> Vec<u8> {
        (0..count).map(|_| self.below(6) as u8 + 1).collect()
    }
}

/// One move of a random game: the dice rolled just before it, if any, the position it was played
/// in (with those dice) and the move.
pub(crate) struct Step<G: Game> {
    pub dice: Option<Vec<u8>>,
    pub position: G::Position,
    pub mv: G::Move,
}

/// A random game.
pub(crate) struct Playout<G: Game> {
    pub options: G::Options,
    /// The dice of the opening roll, in games that roll for who starts.
    pub opening: Option<(u8, u8)>,
    pub start: G::Position,
    pub steps: Vec<Step<G>>,
    /// The position after the last move.
    pub played: G::Position,
    /// Where the game stopped: finished, or at the move limit (with any roll due then put in).
    pub end: G::Position,
}

impl<G: Subject> Playout<G> {
    /// Every position the game passed through, in order: before and after each roll, and after
    /// each move.
    pub(crate) fn passed_through(&self) -> Vec<G::Position> {
        let mut out = vec![self.start.clone()];
        for step in &self.steps {
            if step.dice.is_some() {
                out.push(step.position.clone());
            }
            out.push(G::play(&step.position, &step.mv));
        }
        if self.end != self.played {
            out.push(self.end.clone());
        }
        out
    }

    pub(crate) fn options_json(&self) -> serde_json::Value {
        serde_json::to_value(&self.options).unwrap()
    }
}

/// A random game from `seed`, under options picked among [`Subject::options`], that stops at the
/// end or after `limit` moves. The one way every rules test plays random games.
pub(crate) fn random_game<G: Subject>(seed: u64, limit: usize) -> Playout<G> {
    let mut chance = Chance::new(seed);
    let mut all = G::options();
    let options = all.swap_remove(chance.below(all.len()));
    let (opening, start) = if G::OPENING_ROLL {
        let white = chance.dice(1)[0];
        let black = (white + chance.below(5) as u8) % 6 + 1;
        (
            Some((white, black)),
            G::start_with_opening(&options, white, black),
        )
    } else {
        (None, G::start(&options))
    };
    let mut position = start.clone();
    let mut played = start.clone();
    let mut steps = Vec::new();
    while steps.len() < limit {
        let mut dice = None;
        if let Some(count) = G::roll_due(&position) {
            let rolled = chance.dice(count);
            position = G::apply_roll(&position, &rolled);
            dice = Some(rolled);
        }
        let moves = G::legal_moves(&position);
        if moves.is_empty() {
            break;
        }
        let mv = moves[G::choose(&position, &moves, &mut chance)].clone();
        let next = G::play(&position, &mv);
        steps.push(Step { dice, position, mv });
        played = next.clone();
        position = next;
    }
    Playout {
        options,
        opening,
        start,
        steps,
        played,
        end: position,
    }
}

fn engine<G: Subject>() -> &'static dyn Engine {
    Typed::<G>::engine()
}

/// Positions read back from their canonical text, and, where the game allows, from it written
/// in lower case with its spaces widened.
fn reads_back<G: Subject>(
    position: &G::Position,
    options: &G::Options,
) -> Result<(), TestCaseError> {
    let text = G::format_position(position);
    let reread = G::parse_position(&text, options);
    prop_assert_eq!(reread.as_ref(), Ok(position), "{} does not read back", text);
    prop_assert_eq!(G::format_position(&reread.unwrap()), text.clone());
    if G::ANY_CASE {
        let lenient = text.to_lowercase().replace(' ', "  \t");
        let reread = G::parse_position(&lenient, options);
        prop_assert_eq!(reread.as_ref(), Ok(position));
    }
    Ok(())
}

/// The canonical notation of `mv` reads back as `mv`.
fn move_reads_back<G: Subject>(position: &G::Position, mv: &G::Move) -> Result<(), TestCaseError> {
    let written = G::format_move(position, mv);
    let read = G::parse_move(position, &written);
    prop_assert_eq!(
        read.as_ref(),
        Ok(mv),
        "{} does not read back in {}",
        written,
        G::format_position(position)
    );
    Ok(())
}

/// A written move either names one of `legal` or is refused, and never as game over while the
/// game goes on.
fn names_a_legal_move_or_is_refused<G: Subject>(
    position: &G::Position,
    legal: &[G::Move],
    text: &str,
) -> Result<(), TestCaseError> {
    match G::parse_move(position, text) {
        Ok(mv) => prop_assert!(
            legal.contains(&mv),
            "`{}` read as {:?}, which is not legal",
            text,
            mv
        ),
        Err(MoveError::GameOver) => prop_assert!(G::outcome(position).is_some()),
        Err(_) => {}
    }
    Ok(())
}

/// Every law of a game played out: run on random games by [`obeys_the_laws!`].
pub(crate) fn random_games_obey_the_laws<G: Subject>(seed: u64) -> Result<(), TestCaseError> {
    let game = random_game::<G>(seed, G::MOVE_LIMIT);
    let options = &game.options;
    let json = game.options_json();
    let engine = engine::<G>();

    // The start position loads through the engine as the game states it.
    let start = G::format_position(&game.start);
    let stated = match game.opening {
        Some((white, black)) => engine.start_position_for_opening(&json, white, black),
        None => engine.start_position(&json),
    };
    prop_assert_eq!(stated, Ok(start.clone()));
    reads_back::<G>(&game.start, options)?;

    let mut loaded = engine.load(&start, &json).unwrap();
    let mut replayed = game.start.clone();
    let mut previous_legal: Vec<String> = Vec::new();
    for (i, step) in game.steps.iter().enumerate() {
        let position = &step.position;
        if let Some(dice) = &step.dice {
            loaded = loaded.apply_roll(dice).unwrap();
        }
        prop_assert_eq!(loaded.canonical(), G::format_position(position));
        prop_assert!(G::outcome(position).is_none());
        let legal = G::legal_moves(position);
        prop_assert!(legal.contains(&step.mv));
        reads_back::<G>(position, options)?;
        move_reads_back::<G>(position, &step.mv)?;
        let written = G::format_move(position, &step.mv);
        if G::ANY_CASE {
            let read = G::parse_move(position, &written.to_lowercase());
            prop_assert_eq!(read.as_ref(), Ok(&step.mv), "{} in lower case", written);
        }
        let after = G::play(position, &step.mv);

        if i % G::EVERY_MOVE_STRIDE == 0 {
            for mv in &legal {
                move_reads_back::<G>(position, mv)?;
                if G::ANY_CASE {
                    let lower = G::format_move(position, mv).to_lowercase();
                    let read = G::parse_move(position, &lower);
                    prop_assert_eq!(read.as_ref(), Ok(mv), "{} in lower case", lower);
                }
            }
        }
        if i % G::DEEP_STRIDE == 0 {
            let text = G::format_position(position);
            let with_positions = engine.legal_moves_with_positions(&text, &json).unwrap();
            prop_assert_eq!(with_positions.len(), legal.len());
            for (mv, shown) in legal.iter().zip(&with_positions) {
                prop_assert_eq!(&shown.notation, &G::format_move(position, mv));
                let next = G::play(position, mv);
                prop_assert_eq!(&shown.position, &G::format_position(&next));
                let reread = G::parse_position(&shown.position, options);
                prop_assert_eq!(
                    reread.as_ref(),
                    Ok(&next),
                    "{} is not well formed",
                    shown.position
                );
            }
            let notations: Vec<String> = with_positions.into_iter().map(|m| m.notation).collect();
            prop_assert_eq!(&loaded.legal_moves(), &notations);
            for text in previous_legal.iter().take(4) {
                names_a_legal_move_or_is_refused::<G>(position, &legal, text)?;
            }
            previous_legal = notations;
        }

        if G::outcome(&after).is_none() {
            prop_assert_eq!(
                G::side_to_move(&after),
                G::side_after(position, &step.mv),
                "after {}",
                written
            );
        }
        G::check_step(position, &legal, &step.mv, &after)?;

        // Replayed through the typed interface and through a loaded position.
        if let Some(dice) = &step.dice {
            replayed = G::apply_roll(&replayed, dice);
        }
        let reread = G::parse_move(&replayed, &written).unwrap();
        replayed = G::play(&replayed, &reread);
        let (notation, next) = loaded.play(&written).unwrap();
        prop_assert_eq!(&notation, &written);
        prop_assert_eq!(next.canonical(), G::format_position(&after));
        loaded = next;
    }
    prop_assert_eq!(&replayed, &game.played);

    // The same game as a record, written, read and replayed by the engine.
    let record = Record {
        headers: vec![("Game".to_owned(), G::ID.to_owned())],
        moves: game
            .steps
            .iter()
            .map(|step| RecordMove {
                line: 0,
                dice: step.dice.clone(),
                text: G::format_move(&step.position, &step.mv),
            })
            .collect(),
    };
    let reread = Record::parse(&record.format()).unwrap();
    let replay = record::replay(engine, &json, &start, &reread).unwrap();
    prop_assert_eq!(&replay.position, &G::format_position(&game.played));
    prop_assert_eq!(replay.side_to_move, G::side_to_move(&game.played));
    prop_assert_eq!(&replay.outcome, &G::outcome(&game.played));

    // Where the game stopped.
    let end = &game.end;
    reads_back::<G>(end, options)?;
    match G::outcome(end) {
        Some(_) => {
            prop_assert!(G::legal_moves(end).is_empty());
            prop_assert_eq!(G::roll_due(end), None);
            let text = G::format_position(end);
            let refused = engine.play(&text, &json, previous_legal.first().map_or("x", |m| m));
            prop_assert_eq!(refused, Err(PlayError::Move(MoveError::GameOver)));
            let finished = engine.load(&text, &json).unwrap();
            prop_assert!(matches!(finished.play("x"), Err(MoveError::GameOver)));
            prop_assert_eq!(engine.legal_moves(&text, &json), Ok(Vec::new()));
        }
        None => {
            prop_assert!(!G::ALWAYS_ENDS, "no end in {} moves", G::MOVE_LIMIT);
            prop_assert_eq!(game.steps.len(), G::MOVE_LIMIT);
        }
    }
    G::check_end(&game)
}

/// Any text at all is read as a position or a move without a panic, and a move read is legal.
pub(crate) fn any_text_is_read_without_panic<G: Subject>(text: &str) -> Result<(), TestCaseError> {
    let mut positions = G::probes();
    for options in G::options() {
        let _ = G::parse_position(text, &options);
        positions.push(G::start(&options));
    }
    for position in &positions {
        names_a_legal_move_or_is_refused::<G>(position, &G::legal_moves(position), text)?;
    }
    let engine = engine::<G>();
    let _ = engine.load(text, &serde_json::Value::Null);
    let start = engine.start_position(&serde_json::Value::Null).unwrap();
    let _ = engine.play(&start, &serde_json::Value::Null, text);
    Ok(())
}

/// Text shaped like a position either fails to read or reads as a position that round-trips,
/// answers every question, is drawn whole and agrees with the slow reading of the rules; text
/// shaped like a move is read in it without a panic.
pub(crate) fn near_miss_text_is_read_without_panic<G: Subject>(
    text: &str,
    mv: &str,
) -> Result<(), TestCaseError> {
    for options in G::options() {
        if let Ok(parsed) = G::parse_position(text, &options) {
            let canonical = G::format_position(&parsed);
            let reread = G::parse_position(&canonical, &options);
            prop_assert_eq!(reread.as_ref(), Ok(&parsed));
            let _ = G::outcome(&parsed);
            is_drawn_whole::<G>(&parsed)?;
            G::check_reading(&parsed)?;
            let legal = G::legal_moves(&parsed);
            for legal in &legal {
                let _ = G::play(&parsed, legal);
            }
            names_a_legal_move_or_is_refused::<G>(&parsed, &legal, mv)?;
            if let Some(count) = G::roll_due(&parsed) {
                let rolled = G::apply_roll(&parsed, &vec![3; count]);
                for legal in G::legal_moves(&rolled) {
                    let _ = G::play(&rolled, &legal);
                }
            }
        }
        let start = G::start(&options);
        names_a_legal_move_or_is_refused::<G>(&start, &G::legal_moves(&start), mv)?;
    }
    for position in G::probes() {
        names_a_legal_move_or_is_refused::<G>(&position, &G::legal_moves(&position), mv)?;
    }
    Ok(())
}

/// Edits to damage a text with: (where, what kind, a character from the text, any character).
pub(crate) fn edits() -> impl Strategy<Value = Vec<(usize, u8, usize, char)>> {
    prop::collection::vec(
        (any::<usize>(), any::<u8>(), any::<usize>(), any::<char>()),
        1..4,
    )
}

/// `text` with characters replaced, deleted or inserted as `edits` say; a replacement or an
/// insertion is mostly one of the text's own characters, so the result stays near the original.
pub(crate) fn mutate(text: &str, edits: &[(usize, u8, usize, char)]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let own: Vec<char> = chars.clone();
    for &(at, kind, pick, any) in edits {
        let at = at % (chars.len() + 1);
        let c = if own.is_empty() || kind % 8 == 7 {
            any
        } else {
            own[pick % own.len()]
        };
        match kind % 3 {
            0 if at < chars.len() => chars[at] = c,
            1 if at < chars.len() => {
                chars.remove(at);
            }
            _ => chars.insert(at, c),
        }
    }
    chars.into_iter().collect()
}

/// A random game's last position and a move of it, damaged in a few places, read without a panic;
/// a damaged position that still reads round-trips, and a damaged move that reads is legal.
pub(crate) fn mutated_text_is_read_without_panic<G: Subject>(
    seed: u64,
    edits: &[(usize, u8, usize, char)],
) -> Result<(), TestCaseError> {
    let game = random_game::<G>(seed, 40);
    let options = &game.options;
    let text = mutate(&G::format_position(&game.end), edits);
    if let Ok(parsed) = G::parse_position(&text, options) {
        let reread = G::parse_position(&G::format_position(&parsed), options);
        prop_assert_eq!(reread.as_ref(), Ok(&parsed));
        let _ = G::outcome(&parsed);
        for mv in G::legal_moves(&parsed) {
            let _ = G::play(&parsed, &mv);
        }
    }
    if let Some(step) = game.steps.get(game.steps.len() / 2) {
        let written = mutate(&G::format_move(&step.position, &step.mv), edits);
        let legal = G::legal_moves(&step.position);
        names_a_legal_move_or_is_refused::<G>(&step.position, &legal, &written)?;
    }
    Ok(())
}

/// Options are normalised (every option present, with its default when left out; unknown
/// options and values of the wrong type refused) and the start positions load, with White to
/// move unless a roll decides.
pub(crate) fn options_are_normalised_and_starts_load<G: Subject>() {
    let engine = engine::<G>();
    let null = serde_json::Value::Null;
    let defaults = engine.normalize_options(&null).unwrap();
    assert_eq!(
        defaults,
        serde_json::to_value(G::Options::default()).unwrap()
    );
    assert_eq!(engine.normalize_options(&defaults), Ok(defaults.clone()));
    assert_eq!(
        engine.normalize_options(&serde_json::json!({})),
        Ok(defaults.clone())
    );
    for spec in G::option_specs() {
        assert_eq!(
            defaults.get(spec.name),
            Some(&spec.default),
            "{}",
            spec.name
        );
        let wrong = match spec.kind {
            "boolean" => serde_json::json!(1),
            _ => serde_json::json!(true),
        };
        assert!(
            engine
                .normalize_options(&serde_json::json!({ spec.name: wrong }))
                .is_err(),
            "{} = {wrong} is not refused",
            spec.name
        );
    }
    assert_eq!(
        defaults.as_object().map(|o| o.len()),
        Some(G::option_specs().len())
    );
    assert!(
        engine
            .normalize_options(&serde_json::json!({ "no_such_option": true }))
            .is_err()
    );
    assert_eq!(
        (engine.id(), engine.name(), engine.can_draw()),
        (G::ID, G::NAME, G::CAN_DRAW)
    );
    assert_eq!(engine.opening_roll(), G::OPENING_ROLL);
    for options in G::options() {
        let json = serde_json::to_value(&options).unwrap();
        assert_eq!(engine.normalize_options(&json), Ok(json.clone()));
        let start = engine.start_position(&json).unwrap();
        assert_eq!(start, G::format_position(&G::start(&options)));
        let analysis = engine.analyse(&start, &json).unwrap();
        assert_eq!(analysis.position, start);
        assert_eq!(analysis.outcome, None);
        assert_eq!(engine.load(&start, &json).unwrap().canonical(), start);
        for side in Side::BOTH {
            let first = engine.start_position_for(&json, side).unwrap();
            if G::OPENING_ROLL {
                assert_eq!(engine.analyse(&first, &json).unwrap().side_to_move, side);
            } else {
                assert_eq!(first, start);
            }
        }
        if !G::OPENING_ROLL {
            assert_eq!(analysis.side_to_move, Side::White);
            assert_eq!(analysis.roll_due, None);
        }
    }
    assert_eq!(
        engine.start_position(&null),
        engine.start_position(&defaults)
    );
}

/// The diagram of `position` is plain, of the game's size, says on its first line who moves or
/// that the game is over, and shows what the game's own reading of it expects.
fn is_drawn_whole<G: Subject>(position: &G::Position) -> Result<(), TestCaseError> {
    let diagram = G::diagram(position);
    assert_plain(&diagram, G::DIAGRAM_LINES);
    let status = diagram.lines().next().unwrap_or_default();
    match G::outcome(position) {
        Some(_) => prop_assert!(status.starts_with("Game over"), "{}", diagram),
        None => prop_assert!(
            status.starts_with(&format!("{} ", G::side_to_move(position))),
            "{}",
            diagram
        ),
    }
    G::check_drawn(position, &diagram)
}

/// Every position a random game passes through is drawn whole: run on the games of
/// [`Subject::DRAWN`].
pub(crate) fn every_position_of_a_random_game_is_drawn_whole<G: Subject>(
    seed: u64,
) -> Result<(), TestCaseError> {
    for position in G::DRAWN.positions::<G>(seed) {
        is_drawn_whole::<G>(&position)?;
    }
    Ok(())
}

/// The fast rules agree with the slow reading on the positions a random game passes through:
/// run on the games of [`Subject::READING`].
pub(crate) fn the_fast_rules_agree_with_the_naive_reading<G: Subject>(
    seed: u64,
) -> Result<(), TestCaseError> {
    for position in G::READING.positions::<G>(seed) {
        G::check_reading(&position)?;
    }
    Ok(())
}

/// The fast rules agree with the slow reading on the start positions and on the positions the
/// game's tests made by hand.
pub(crate) fn the_naive_reading_agrees_on_the_hand_made_positions<G: Subject>() {
    let starts = G::options().iter().map(G::start).collect::<Vec<_>>();
    for position in starts.into_iter().chain(G::hand_made()) {
        if let Err(e) = G::check_reading(&position) {
            panic!("{e}\nin {}", G::format_position(&position));
        }
    }
}

/// How many of the fixed sweep of random games the move limit stops is the number the game pins
/// ([`Subject::STOPPED_BY_LIMIT`]; nothing to check where it pins none). The property tests draw
/// new games on every run; this sweep is the same on every run, so its count can be pinned.
pub(crate) fn random_games_end_or_hit_the_limit<G: Subject>() {
    let Some(pinned) = G::STOPPED_BY_LIMIT else {
        return;
    };
    let stopped = (0..PINNED_SWEEP)
        .filter(|&seed| {
            let game = random_game::<G>(seed, G::MOVE_LIMIT);
            G::outcome(&game.end).is_none()
        })
        .count();
    assert_eq!(
        stopped,
        pinned,
        "{stopped} of {PINNED_SWEEP} random games hit the limit of {} moves",
        G::MOVE_LIMIT
    );
}

/// Plays `moves`, each the canonical notation of a legal move, from `start`, and checks that the
/// game is over after the last one and not before; the position it ends in.
pub(crate) fn play_to_the_end<G: Subject>(start: &G::Position, moves: &[&str]) -> G::Position {
    let mut position = start.clone();
    for (ply, text) in moves.iter().enumerate() {
        assert!(G::outcome(&position).is_none(), "over before {text}");
        let mv = G::parse_move(&position, text)
            .unwrap_or_else(|e| panic!("`{text}` at ply {ply} should be legal: {e}"));
        assert_eq!(G::format_move(&position, &mv), *text, "canonical");
        position = G::play(&position, &mv);
    }
    assert!(
        G::outcome(&position).is_some(),
        "not over after the last move"
    );
    assert!(G::legal_moves(&position).is_empty());
    position
}

/// Runs every law for one game: `obeys_the_laws!(Game)` in the game's tests, whose type
/// implements [`Subject`].
macro_rules! obeys_the_laws {
    ($game:ident) => {
        mod engine_laws {
            use proptest::prelude::*;

            use crate::rules::laws::{self, Subject};

            type G = super::$game;

            proptest! {
                #![proptest_config(ProptestConfig::with_cases(<G as Subject>::CASES))]

                #[test]
                fn random_games_obey_the_laws(seed in any::<u64>()) {
                    laws::random_games_obey_the_laws::<G>(seed)?;
                }

                #[test]
                fn any_text_is_read_without_panic(text in "\\PC{0,40}") {
                    laws::any_text_is_read_without_panic::<G>(&text)?;
                }

                #[test]
                fn near_miss_text_is_read_without_panic(
                    position in <G as Subject>::NEAR_MISS_POSITION.strategy(),
                    mv in <G as Subject>::NEAR_MISS_MOVE.strategy(),
                ) {
                    laws::near_miss_text_is_read_without_panic::<G>(&position, &mv)?;
                }

                #[test]
                fn mutated_text_is_read_without_panic(seed in any::<u64>(), edits in laws::edits()) {
                    laws::mutated_text_is_read_without_panic::<G>(seed, &edits)?;
                }
            }

            proptest! {
                #![proptest_config(ProptestConfig::with_cases(<G as Subject>::READING.games))]

                #[test]
                fn the_fast_rules_agree_with_the_naive_reading(seed in any::<u64>()) {
                    laws::the_fast_rules_agree_with_the_naive_reading::<G>(seed)?;
                }
            }

            proptest! {
                #![proptest_config(ProptestConfig::with_cases(<G as Subject>::DRAWN.games))]

                #[test]
                fn every_position_of_a_random_game_is_drawn_whole(seed in any::<u64>()) {
                    laws::every_position_of_a_random_game_is_drawn_whole::<G>(seed)?;
                }
            }

            #[test]
            fn options_are_normalised_and_starts_load() {
                laws::options_are_normalised_and_starts_load::<G>();
            }

            #[test]
            fn the_naive_reading_agrees_on_the_hand_made_positions() {
                laws::the_naive_reading_agrees_on_the_hand_made_positions::<G>();
            }

            #[test]
            fn random_games_end_or_hit_the_limit() {
                laws::random_games_end_or_hit_the_limit::<G>();
            }
        }
    };
}

pub(crate) use obeys_the_laws;

/// The shorthands the tests of `$game`, a game with no options to choose, write their cases
/// with: called once at the top of the game's tests, so that `parse`, `play`, `illegal` and the
/// like read the same for every game and mean that file's game.
macro_rules! shorthands {
    ($game:ident) => {
        #[allow(
            unused_imports,
            reason = "the game's own module may bring it in already"
        )]
        use $crate::rules::game::Game as _;

        type Position = <$game as $crate::rules::game::Game>::Position;
        type Move = <$game as $crate::rules::game::Game>::Move;

        /// The game's only options.
        fn options() -> <$game as $crate::rules::game::Game>::Options {
            Default::default()
        }

        fn start() -> Position {
            $game::start(&options())
        }

        fn parse(text: &str) -> Position {
            $game::parse_position(text, &options())
                .unwrap_or_else(|e| panic!("`{text}` should parse: {e}"))
        }

        fn parse_error(text: &str) -> $crate::rules::errors::PositionError {
            match $game::parse_position(text, &options()) {
                Ok(position) => panic!(
                    "`{text}` should be refused, but reads as `{}`",
                    $game::format_position(&position)
                ),
                Err(e) => e,
            }
        }

        /// The legal moves in their canonical notation.
        fn legal(position: &Position) -> Vec<String> {
            $game::legal_moves(position)
                .iter()
                .map(|mv| $game::format_move(position, mv))
                .collect()
        }

        /// The legal move `text` names, read leniently.
        fn mv(position: &Position, text: &str) -> Move {
            $game::parse_move(position, text)
                .unwrap_or_else(|e| panic!("`{text}` should be legal: {e}"))
        }

        fn play(position: &Position, text: &str) -> Position {
            $game::play(position, &mv(position, text))
        }

        /// What is wrong with the way `text` is written.
        fn syntax_error(position: &Position, text: &str) -> String {
            match $game::parse_move(position, text) {
                Err($crate::rules::errors::MoveError::Syntax { message }) => message,
                other => panic!("`{text}` should be a syntax error, got {other:?}"),
            }
        }

        /// Why the move `text` is illegal.
        fn illegal(position: &Position, text: &str) -> String {
            match $game::parse_move(position, text) {
                Err($crate::rules::errors::MoveError::Illegal { message }) => message,
                other => panic!("`{text}` should be illegal, got {other:?}"),
            }
        }

        /// The game is over in `position`, won by `winner` for `reason`.
        fn assert_won(
            position: &Position,
            winner: $crate::rules::side::Side,
            reason: $crate::rules::outcome::EndReason,
        ) {
            let outcome = $game::outcome(position).expect("the game should be over");
            assert_eq!((outcome.winner, outcome.reason), (Some(winner), reason));
            assert!($game::legal_moves(position).is_empty());
        }
    };
}

pub(crate) use shorthands;

/// `text` contains `part`, or the failure shows both.
pub(crate) fn assert_contains(text: &str, part: &str) {
    assert!(text.contains(part), "`{text}` should contain `{part}`");
}

/// Plays `moves` (written in lower case, as a lenient reader may get them) from the start with
/// the default options through the engine, each read back as its canonical notation; the
/// canonical position reached.
pub(crate) fn play_through_engine<G: Subject>(moves: &[&str]) -> String {
    let engine = engine::<G>();
    let options = serde_json::Value::Null;
    let mut position = engine.start_position(&options).unwrap();
    for text in moves {
        let played = engine
            .play(&position, &options, &text.to_lowercase())
            .unwrap_or_else(|e| panic!("{text}: {e:?}"));
        assert_eq!(played.notation, *text);
        position = played.after.position;
    }
    position
}
