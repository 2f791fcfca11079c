//! The boards as pictures (`src/board/`): for every game, over positions reached by random legal
//! moves, the SVG is well-formed XML with its text alternative, and it draws exactly the pieces
//! of the position; each game's start renders to PNG; `docs/boards/*.svg` are what the code
//! draws now (`KURYR_BLESS=1 cargo test --test boards` rewrites them).

use std::collections::BTreeMap;

use kuryr::board;
use kuryr::rules::backgammon::{self, Backgammon};
use kuryr::rules::{Game, GameKind, Side};
use serde_json::Value;

/// A small deterministic generator (xorshift), so that a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn start(kind: GameKind, rng: &mut Rng) -> String {
    let engine = kind.engine().unwrap();
    if engine.opening_roll() {
        let white = 1 + rng.below(6) as u8;
        let black = if white == 6 {
            1 + rng.below(5) as u8
        } else {
            white + 1
        };
        engine
            .start_position_for_opening(&Value::Null, white, black)
            .unwrap()
    } else {
        engine.start_position(&Value::Null).unwrap()
    }
}

/// One step of a game: a roll where one is due, else a random legal move; `None` at the end.
fn step(kind: GameKind, position: &str, rng: &mut Rng) -> Option<String> {
    let engine = kind.engine().unwrap();
    let loaded = engine.load(position, &Value::Null).unwrap();
    if loaded.outcome().is_some() {
        return None;
    }
    if let Some(count) = loaded.roll_due() {
        let dice: Vec<u8> = (0..count).map(|_| 1 + rng.below(6) as u8).collect();
        return Some(loaded.apply_roll(&dice).unwrap().canonical());
    }
    let moves = loaded.legal_moves();
    if moves.is_empty() {
        return None;
    }
    let mv = &moves[rng.below(moves.len())];
    Some(loaded.play(mv).unwrap().1.canonical())
}

/// The pieces drawn: (side, data-square, data-piece) of every `g.piece`, sorted.
fn drawn(doc: &roxmltree::Document) -> Vec<(String, String, String)> {
    let mut out: Vec<_> = doc
        .descendants()
        .filter(|node| node.attribute("class") == Some("piece"))
        .map(|node| {
            (
                node.attribute("data-side").unwrap().to_owned(),
                node.attribute("data-square").unwrap().to_owned(),
                node.attribute("data-piece").unwrap().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Checks the root, its text alternative, and that the drawn pieces are the position's.
fn check(kind: GameKind, position: &str) {
    let svg = board::svg(kind, position, &Value::Null).unwrap();
    let doc = roxmltree::Document::parse(&svg)
        .unwrap_or_else(|e| panic!("{kind} `{position}`: not XML: {e}\n{svg}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(root.attribute("role"), Some("img"));
    let labels = root.attribute("aria-labelledby").unwrap();
    for id in labels.split_whitespace() {
        let node = doc
            .descendants()
            .find(|node| node.attribute("id") == Some(id))
            .unwrap_or_else(|| panic!("no element #{id}"));
        assert!(node.text().is_some_and(|text| !text.trim().is_empty()));
    }
    let desc = doc
        .descendants()
        .find(|node| node.has_tag_name("desc"))
        .unwrap();
    let diagram = kind
        .engine()
        .unwrap()
        .diagram(position, &Value::Null)
        .unwrap();
    assert_eq!(desc.text().unwrap(), diagram.as_str());

    let pieces = drawn(&doc);
    if kind == GameKind::Backgammon {
        check_backgammon(position, &doc, &pieces);
        return;
    }
    // The position string lists every piece: its tokens are what must be drawn.
    let board = position.split(';').next().unwrap();
    let mut expected: Vec<String> = board
        .split_whitespace()
        .skip(1)
        .map(str::to_owned)
        .collect();
    expected.sort();
    let mut got: Vec<String> = pieces
        .iter()
        .map(|(side, _, piece)| match side.as_str() {
            "white" => piece.clone(),
            _ => format!("({piece})"),
        })
        .collect();
    got.sort();
    assert_eq!(got, expected, "{kind} `{position}`");
    for (_, square, piece) in &pieces {
        // Each piece stands on the square (or squares) its token names.
        let squares: String = square.split_whitespace().collect();
        if kind != GameKind::Suluc || !piece.starts_with('L') {
            assert!(
                piece.contains(&squares),
                "{kind}: {piece} drawn on {square}"
            );
        }
    }
    if kind == GameKind::Cubulus {
        check_dice(&doc);
    }
}

/// Every Cubulus die shows its top's pips and, at its bottom edge, the face the token names
/// towards row 1.
fn check_dice(doc: &roxmltree::Document) {
    for node in doc
        .descendants()
        .filter(|node| node.attribute("class") == Some("piece"))
    {
        let piece = node.attribute("data-piece").unwrap();
        let digits: Vec<u32> = piece
            .chars()
            .take_while(char::is_ascii_digit)
            .filter_map(|c| c.to_digit(10))
            .collect();
        if digits.len() != 2 {
            continue;
        }
        let pips = node
            .descendants()
            .filter(|n| n.attribute("class") == Some("pip"))
            .count();
        assert_eq!(pips as u32, digits[0], "{piece}");
        let faces: Vec<(f64, u32)> = node
            .descendants()
            .filter(|n| n.attribute("class") == Some("face"))
            .map(|n| {
                (
                    n.attribute("y").unwrap().parse().unwrap(),
                    n.text().unwrap().parse().unwrap(),
                )
            })
            .collect();
        assert_eq!(faces.len(), 4, "{piece}");
        // The lowest label (largest y) is the south face.
        let south = faces.iter().max_by(|a, b| a.0.total_cmp(&b.0)).unwrap().1;
        assert_eq!(south, digits[1], "{piece}");
        let mut all: Vec<u32> = faces.iter().map(|f| f.1).collect();
        all.push(digits[0]);
        all.push(7 - digits[0]);
        all.sort();
        assert_eq!(all, [1, 2, 3, 4, 5, 6], "{piece}");
    }
}

fn check_backgammon(
    position: &str,
    doc: &roxmltree::Document,
    pieces: &[(String, String, String)],
) {
    let typed = Backgammon::parse_position(position, &Default::default()).unwrap();
    let mut expected = BTreeMap::new();
    for side in Side::BOTH {
        let board = typed.side_board(side);
        for p in 1..=24usize {
            let count = match side {
                Side::White => board[p - 1],
                Side::Black => board[24 - p],
            };
            if count > 0 {
                expected.insert((side.name().to_owned(), p.to_string()), count.to_string());
            }
        }
        if board[24] > 0 {
            expected.insert(
                (side.name().to_owned(), "bar".to_owned()),
                board[24].to_string(),
            );
        }
        if typed.borne_off(side) > 0 {
            expected.insert(
                (side.name().to_owned(), "off".to_owned()),
                typed.borne_off(side).to_string(),
            );
        }
    }
    let got: BTreeMap<_, _> = pieces
        .iter()
        .map(|(side, square, count)| ((side.clone(), square.clone()), count.clone()))
        .collect();
    assert_eq!(got.len(), pieces.len(), "a point drawn twice");
    assert_eq!(got, expected, "{position}");
    // Black writes its moves with its own numbers: every point, and every checker on one, says
    // which that is, and Black's own board has those checkers on it.
    let black = typed.side_board(Side::Black);
    let mut cells = Vec::new();
    for node in doc.descendants().filter(|n| n.has_attribute("data-square")) {
        let square = node.attribute("data-square").unwrap();
        let class = node.attribute("class").unwrap_or_default();
        let Ok(white_number) = square.parse::<usize>() else {
            assert_eq!(node.attribute("data-square-black"), None, "{square}");
            if class == "cell" {
                cells.push(square.to_owned());
            }
            continue;
        };
        let black_number: usize = node
            .attribute("data-square-black")
            .unwrap_or_else(|| panic!("point {square} without Black's number"))
            .parse()
            .unwrap();
        assert_eq!(black_number, 25 - white_number, "{position}");
        if class == "cell" {
            cells.push(square.to_owned());
        } else if node.attribute("data-side") == Some("black") {
            let count: u8 = node.attribute("data-piece").unwrap().parse().unwrap();
            assert_eq!(
                black[black_number - 1],
                count,
                "{position}: Black's {black_number}"
            );
        }
    }
    cells.sort();
    let mut every: Vec<String> = (1..=24).map(|p: u8| p.to_string()).collect();
    every.extend(["bar".to_owned(), "off".to_owned()]);
    every.sort();
    assert_eq!(cells, every, "a cell for every point, the bar and the tray");
    let summary = backgammon::summary(&typed);
    let dice: Vec<u8> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("die"))
        .map(|n| n.attribute("data-value").unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        dice,
        summary.dice.map(Vec::from).unwrap_or_default(),
        "{position}"
    );
    let cube = doc
        .descendants()
        .find(|n| n.attribute("class") == Some("cube"))
        .map(|n| {
            (
                n.attribute("data-value").unwrap().parse::<u32>().unwrap(),
                n.attribute("data-owner").unwrap().to_owned(),
            )
        });
    assert_eq!(
        cube,
        summary
            .cube
            .map(|c| (c.value, c.owner.map_or("centre", Side::name).to_owned())),
        "{position}"
    );
}

#[test]
fn every_game_draws_every_piece_of_random_positions() {
    for (n, kind) in GameKind::ALL.into_iter().enumerate() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (n as u64 + 1));
        let mut checked = 0;
        // Random games of Backgammon often end early (a double passed): play until enough
        // positions are seen.
        for _game in 0..40 {
            if checked >= 300 {
                break;
            }
            let mut position = start(kind, &mut rng);
            check(kind, &position);
            for _ply in 0..60 {
                match step(kind, &position, &mut rng) {
                    Some(next) => position = next,
                    None => break,
                }
                check(kind, &position);
                checked += 1;
            }
        }
        assert!(checked >= 300, "{kind}: only {checked} positions");
    }
}

#[test]
fn every_start_renders_as_png() {
    let mut rng = Rng(7);
    for kind in GameKind::ALL {
        let svg = board::svg(kind, &start(kind, &mut rng), &Value::Null).unwrap();
        let png = board::png::render(&svg).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{kind}");
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
        assert!(
            (300..2000).contains(&width) && (300..2000).contains(&height),
            "{kind}: {width}×{height}"
        );
        assert!(png.len() > 5_000, "{kind}: {} bytes", png.len());
    }
}

#[test]
fn bad_positions_are_errors_not_panics() {
    for kind in GameKind::ALL {
        assert!(board::svg(kind, "not a position", &Value::Null).is_err());
        assert!(board::svg(kind, "", &Value::Null).is_err());
    }
}

/// The pictures in `docs/boards/`: each game's start and a position after some random moves.
#[test]
fn docs_boards_are_what_the_code_draws() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/boards");
    let bless = std::env::var_os("KURYR_BLESS").is_some();
    let mut stale = Vec::new();
    for kind in GameKind::ALL {
        let mut rng = Rng(2024);
        let first = start(kind, &mut rng);
        let mut position = first.clone();
        for _ in 0..24 {
            match step(kind, &position, &mut rng) {
                Some(next) => position = next,
                None => break,
            }
        }
        for (name, position) in [
            (kind.id().to_owned(), &first),
            (format!("{}-midgame", kind.id()), &position),
        ] {
            let svg = board::svg(kind, position, &Value::Null).unwrap();
            let path = dir.join(format!("{name}.svg"));
            if bless {
                std::fs::write(&path, &svg).unwrap();
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(svg.as_str()) {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale (rewrite with KURYR_BLESS=1): {stale:?}"
    );
}
