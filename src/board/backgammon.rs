//! Backgammon seen by White, as GNU Backgammon shows player 0: White's home board at the bottom
//! right, the points numbered as White's notation counts them (1–24, Black's own numbers, 25 − n,
//! beside them in grey). Each point holds its checkers, five at most drawn and the count on the
//! fifth beyond that; the bar holds each side's checkers in the half where they come back in;
//! the tray on the right holds the borne-off checkers (White's below, Black's above); the dice of
//! the side on roll lie in the right half; the cube lies on the bar, in the middle while nobody
//! owns it, or at its owner's side.
//!
//! A point's polygon and the checkers on it carry `data-square`, White's number, and
//! `data-square-black`, Black's (25 − n), since each side writes its moves in its own numbers;
//! the bar and the tray are cells too (`bar`, `off`), for a move to name by a click.

use super::pieces::{About, colours, open_piece};
use super::svg::Svg;
use crate::rules::Side;
use crate::rules::backgammon::{Position, summary};

const POINT: f64 = 40.0;
const CHECKER: f64 = 36.0;
const STACK: u8 = 5;
const BAR: f64 = 44.0;
const TRAY: f64 = 56.0;
const FRAME: f64 = 12.0;
const HEAD: f64 = 30.0;
const BAND: f64 = 34.0;
const SIDE: f64 = 16.0;
const FOOT: f64 = 24.0;
/// Between the tips of the top and the bottom points.
const GAP: f64 = 56.0;

const POINT_LEN: f64 = CHECKER * STACK as f64;
const HALF: f64 = 6.0 * POINT;
const INNER_H: f64 = 2.0 * POINT_LEN + GAP;
const LEFT: f64 = SIDE + FRAME;
const TOP: f64 = HEAD + BAND + FRAME;
const WIDTH: f64 = LEFT + 2.0 * HALF + BAR + FRAME + TRAY + FRAME + SIDE;
const HEIGHT: f64 = TOP + INNER_H + FRAME + BAND + 3.0 * FOOT;

/// The x of the middle of White's point `p` (1–24) and whether it hangs from the top.
fn point_place(p: usize) -> (f64, bool) {
    let right = LEFT + HALF + BAR;
    let (half_left, index, top) = match p {
        1..=6 => (right, 6 - p, false),
        7..=12 => (LEFT, 12 - p, false),
        13..=18 => (LEFT, p - 13, true),
        _ => (right, p - 19, true),
    };
    (half_left + (index as f64 + 0.5) * POINT, top)
}

fn checker(svg: &mut Svg, side: Side, x: f64, y: f64, text: &str) {
    let (fill, stroke, ink) = colours(side);
    svg.circle(
        x,
        y,
        CHECKER / 2.0 - 1.0,
        &[
            ("fill", fill.to_owned()),
            ("stroke", stroke.to_owned()),
            ("stroke-width", "1.5".to_owned()),
        ],
    );
    if !text.is_empty() {
        svg.label(
            x,
            y,
            15.0,
            text,
            &[("fill", ink.to_owned()), ("font-weight", "bold".to_owned())],
        );
    }
}

/// A stack of `count` checkers from `(x, y)` going down (`dir` 1) or up (-1).
fn stack(svg: &mut Svg, side: Side, x: f64, y: f64, dir: f64, count: u8) {
    for slot in 0..count.min(STACK) {
        let cy = y + dir * (f64::from(slot) + 0.5) * CHECKER;
        let text = if slot == STACK - 1 && count > STACK {
            count.to_string()
        } else {
            String::new()
        };
        checker(svg, side, x, cy, &text);
    }
}

fn die(svg: &mut Svg, side: Side, x: f64, y: f64, value: u8) {
    let (fill, stroke, ink) = colours(side);
    let size = 34.0;
    svg.open(
        "g",
        &[
            ("class", "die".to_owned()),
            ("data-value", value.to_string()),
        ],
    );
    svg.rect(
        x - size / 2.0,
        y - size / 2.0,
        size,
        size,
        &[
            ("rx", "5".to_owned()),
            ("fill", fill.to_owned()),
            ("stroke", stroke.to_owned()),
            ("stroke-width", "1.5".to_owned()),
        ],
    );
    for &(dx, dy) in super::pieces::pips(value) {
        svg.circle(x + dx * 9.0, y + dy * 9.0, 3.2, &[("fill", ink.to_owned())]);
    }
    svg.close();
}

pub fn draw(position: &Position, about: &About) -> String {
    let mut svg = Svg::new(WIDTH, HEIGHT, &about.title, &about.diagram);
    let info = summary(position);
    svg.rect(0.0, 0.0, WIDTH, HEIGHT, &[("fill", "#ffffff".to_owned())]);
    svg.label(
        WIDTH / 2.0,
        HEAD / 2.0,
        15.0,
        &about.status,
        &[("class", "status".to_owned())],
    );
    // The frame, the two halves, the bar and the tray.
    let wood = [("fill", "#6b4a2b".to_owned())];
    svg.rect(
        SIDE,
        TOP - FRAME,
        WIDTH - 2.0 * SIDE,
        INNER_H + 2.0 * FRAME,
        &wood,
    );
    let felt = [("fill", "#2e6b4a".to_owned())];
    svg.rect(LEFT, TOP, HALF, INNER_H, &felt);
    svg.rect(LEFT + HALF + BAR, TOP, HALF, INNER_H, &felt);
    let tray_x = LEFT + 2.0 * HALF + BAR + FRAME;
    svg.rect(
        tray_x,
        TOP,
        TRAY,
        INNER_H,
        &[
            ("fill", "#4f3620".to_owned()),
            ("class", "cell".to_owned()),
            ("data-square", "off".to_owned()),
        ],
    );
    svg.rect(
        LEFT + HALF,
        TOP,
        BAR,
        INNER_H,
        &[
            ("fill", "#6b4a2b".to_owned()),
            ("class", "cell".to_owned()),
            ("data-square", "bar".to_owned()),
        ],
    );

    // The points and their numbers.
    svg.open("g", &[("class", "points".to_owned())]);
    for p in 1..=24usize {
        let (x, top) = point_place(p);
        let colour = if p % 2 == 0 { "#c8553d" } else { "#efe4c6" };
        let (base, tip) = if top {
            (TOP, TOP + POINT_LEN)
        } else {
            (TOP + INNER_H, TOP + INNER_H - POINT_LEN)
        };
        svg.polygon(
            &[(x - POINT / 2.0, base), (x + POINT / 2.0, base), (x, tip)],
            &[
                ("fill", colour.to_owned()),
                ("class", "cell".to_owned()),
                ("data-square", p.to_string()),
                ("data-square-black", (25 - p).to_string()),
            ],
        );
        let (number_y, black_y) = if top {
            (TOP - FRAME - BAND * 0.62, TOP - FRAME - BAND * 0.22)
        } else {
            (
                TOP + INNER_H + FRAME + BAND * 0.3,
                TOP + INNER_H + FRAME + BAND * 0.72,
            )
        };
        svg.label(
            x,
            number_y,
            13.0,
            &p.to_string(),
            &[
                ("fill", "#222222".to_owned()),
                ("class", "coordinate".to_owned()),
            ],
        );
        svg.label(
            x,
            black_y,
            9.0,
            &(25 - p).to_string(),
            &[
                ("fill", "#888888".to_owned()),
                ("class", "coordinate black".to_owned()),
            ],
        );
    }
    svg.close();

    let white = position.side_board(Side::White);
    let black = position.side_board(Side::Black);
    for p in 1..=24usize {
        let (x, top) = point_place(p);
        let (y, dir) = if top {
            (TOP, 1.0)
        } else {
            (TOP + INNER_H, -1.0)
        };
        for (side, count) in [(Side::White, white[p - 1]), (Side::Black, black[24 - p])] {
            if count > 0 {
                svg.open(
                    "g",
                    &[
                        ("class", "piece".to_owned()),
                        ("data-side", side.name().to_owned()),
                        ("data-square", p.to_string()),
                        ("data-piece", count.to_string()),
                        ("data-square-black", (25 - p).to_string()),
                    ],
                );
                stack(&mut svg, side, x, y, dir, count);
                svg.close();
            }
        }
    }
    // The bar: White comes back in at the top (Black's home board), Black at the bottom.
    let bar_x = LEFT + HALF + BAR / 2.0;
    for (side, y, dir) in [(Side::White, TOP, 1.0), (Side::Black, TOP + INNER_H, -1.0)] {
        let count = position.side_board(side)[24];
        if count > 0 {
            open_piece(&mut svg, side, "bar", &count.to_string());
            stack(&mut svg, side, bar_x, y, dir, count);
            svg.close();
        }
    }
    // Borne off: slabs in the tray, White's from the bottom, Black's from the top.
    for (side, base, dir) in [(Side::White, TOP + INNER_H, -1.0), (Side::Black, TOP, 1.0)] {
        let count = position.borne_off(side);
        if count == 0 {
            continue;
        }
        let (fill, stroke, _) = colours(side);
        open_piece(&mut svg, side, "off", &count.to_string());
        for slot in 0..count {
            let y = base + dir * (f64::from(slot) * 9.0 + 9.0);
            svg.rect(
                tray_x + 6.0,
                y.min(y - dir * 8.0),
                TRAY - 12.0,
                8.0,
                &[
                    ("fill", fill.to_owned()),
                    ("stroke", stroke.to_owned()),
                    ("stroke-width", "1".to_owned()),
                ],
            );
        }
        let label_y = base + dir * (f64::from(count) * 9.0 + 20.0);
        svg.label(
            tray_x + TRAY / 2.0,
            label_y,
            13.0,
            &count.to_string(),
            &[("fill", "#ffffff".to_owned())],
        );
        svg.close();
    }
    // The dice of the side on roll.
    if let Some([a, b]) = info.dice {
        let side = position.turn_side();
        let x = LEFT + HALF + BAR + HALF / 2.0;
        let y = TOP + INNER_H / 2.0;
        die(&mut svg, side, x - 24.0, y, a);
        die(&mut svg, side, x + 24.0, y, b);
    }
    // The cube.
    if let Some(cube) = info.cube {
        let y = match cube.owner {
            None => TOP + INNER_H / 2.0,
            Some(Side::White) => TOP + INNER_H - 22.0,
            Some(Side::Black) => TOP + 22.0,
        };
        let owner = cube.owner.map_or("centre", Side::name);
        svg.open(
            "g",
            &[
                ("class", "cube".to_owned()),
                ("data-value", cube.value.to_string()),
                ("data-owner", owner.to_owned()),
            ],
        );
        svg.rect(
            bar_x - 18.0,
            y - 18.0,
            36.0,
            36.0,
            &[
                ("rx", "4".to_owned()),
                ("fill", "#f6f6f6".to_owned()),
                ("stroke", "#000000".to_owned()),
                ("stroke-width", "1.5".to_owned()),
            ],
        );
        svg.label(
            bar_x,
            y,
            16.0,
            &cube.value.to_string(),
            &[
                ("fill", "#000000".to_owned()),
                ("font-weight", "bold".to_owned()),
            ],
        );
        svg.close();
    }

    let foot = TOP + INNER_H + FRAME + BAND;
    let cube = match info.cube {
        None if info.crawford => "Crawford game, no cube".to_owned(),
        None => "no cube".to_owned(),
        Some(cube) => match cube.owner {
            None => format!("cube {} in the centre", cube.value),
            Some(owner) => format!("cube {}, owned by {owner}", cube.value),
        },
    };
    let dice = match info.dice {
        Some([a, b]) => format!("dice {a}-{b}"),
        None => "no dice rolled".to_owned(),
    };
    svg.label(
        WIDTH / 2.0,
        foot + FOOT * 0.4,
        13.0,
        &format!(
            "White ○ pips {}, off {} · Black ● pips {}, off {}",
            info.pips[0],
            position.borne_off(Side::White),
            info.pips[1],
            position.borne_off(Side::Black)
        ),
        &[("class", "note".to_owned())],
    );
    let score = if info.match_length > 0 {
        format!(
            " · match to {}: White {}, Black {}",
            info.match_length, info.score[0], info.score[1]
        )
    } else {
        String::new()
    };
    svg.label(
        WIDTH / 2.0,
        foot + FOOT * 1.4,
        13.0,
        &format!("{dice} · {cube}{score}"),
        &[("class", "note".to_owned())],
    );
    svg.label(
        WIDTH / 2.0,
        foot + FOOT * 2.4,
        11.0,
        "Points numbered for White; Black's numbers in grey",
        &[("class", "note".to_owned()), ("fill", "#555555".to_owned())],
    );
    svg.finish()
}
