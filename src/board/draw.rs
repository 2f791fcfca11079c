//! Which drawing a game's position gets, and the last move outlined on it.

use serde_json::Value;

use super::pieces::About;
use super::svg::{escape, num};
use super::{backgammon, cubulus, grid, lukaszewicz, suluc};
use crate::rules::{Game, GameKind, OptionsError, PositionError, cheversi};

/// The SVG of `position` (any form the game's parser accepts) under `options` (`null`: the
/// defaults).
pub fn svg(kind: GameKind, position: &str, options: &Value) -> Result<String, PositionError> {
    let engine = kind
        .engine()
        .ok_or_else(|| PositionError::new(format!("{kind} cannot be drawn")))?;
    let loaded = engine.load(position, options)?;
    let about = About::of(engine.name(), loaded.as_ref());
    match kind {
        GameKind::Cubulus => Ok(cubulus::draw(
            &typed::<crate::rules::cubulus::Cubulus>(position, options)?,
            &about,
        )),
        GameKind::Cheversi => Ok(grid::cheversi(
            &typed::<cheversi::Cheversi>(position, options)?,
            &about,
        )),
        GameKind::Suluc => Ok(suluc::draw(
            &typed::<crate::rules::suluc::Suluc>(position, options)?,
            &about,
        )),
        GameKind::Nubulus => Ok(lukaszewicz::nubulus(
            &typed::<crate::rules::lukaszewicz::Nubulus>(position, options)?,
            &about,
        )),
        GameKind::Prosterno => Ok(lukaszewicz::prosterno(
            &typed::<crate::rules::lukaszewicz::Prosterno>(position, options)?,
            &about,
        )),
        GameKind::Basileus => Ok(lukaszewicz::basileus(
            &typed::<crate::rules::lukaszewicz::Basileus>(position, options)?,
            &about,
        )),
        GameKind::Backgammon => Ok(backgammon::draw(
            &typed::<crate::rules::backgammon::Backgammon>(position, options)?,
            &about,
        )),
    }
}

/// The SVG of `position` with the last move marked: every square (or point) whose pieces differ
/// from `previous`'s, the position before the move, gets an outline (`class="changed"`), drawn
/// over the board. Works alike for every game, from what the drawings say of their pieces
/// (`data-square`, `data-side`, `data-piece`) and where their squares are (`class="cell"`).
pub fn svg_marked(
    kind: GameKind,
    position: &str,
    previous: Option<&str>,
    options: &Value,
) -> Result<String, PositionError> {
    let now = svg(kind, position, options)?;
    let Some(previous) = previous else {
        return Ok(now);
    };
    let before = svg(kind, previous, options)?;
    let changed = changed_squares(&pieces_of(&before), &pieces_of(&now));
    Ok(mark_squares(now, &changed))
}

/// The value of the attribute `name` in one element's text, as written (escaped).
fn attribute<'a>(element: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = element.find(&key)? + key.len();
    let len = element[at..].find('"')?;
    Some(&element[at..at + len])
}

/// What stands on each square: the sides and tokens of the pieces drawn there.
fn pieces_of(svg: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut pieces = std::collections::BTreeMap::<String, Vec<String>>::new();
    for line in svg
        .lines()
        .filter(|line| line.starts_with("<g class=\"piece\""))
    {
        let (Some(square), Some(side), Some(piece)) = (
            attribute(line, "data-square"),
            attribute(line, "data-side"),
            attribute(line, "data-piece"),
        ) else {
            continue;
        };
        for one in squares_in(square) {
            pieces
                .entry(one.to_owned())
                .or_default()
                .push(format!("{side}:{piece}"));
        }
    }
    for tokens in pieces.values_mut() {
        tokens.sort();
    }
    pieces
}

/// The squares a `data-square` names: one, or several for a piece that spans them.
fn squares_in(value: &str) -> impl Iterator<Item = &str> {
    value
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|part| !part.is_empty())
}

/// The squares whose pieces differ between two positions.
fn changed_squares(
    before: &std::collections::BTreeMap<String, Vec<String>>,
    now: &std::collections::BTreeMap<String, Vec<String>>,
) -> std::collections::BTreeSet<String> {
    before
        .keys()
        .chain(now.keys())
        .filter(|square| before.get(*square) != now.get(*square))
        .cloned()
        .collect()
}

/// Outlines the cells of `changed`, drawn last so that nothing covers them.
fn mark_squares(svg: String, changed: &std::collections::BTreeSet<String>) -> String {
    if changed.is_empty() {
        return svg;
    }
    let mut marks = String::from("<g class=\"changed\" pointer-events=\"none\">\n");
    for line in svg.lines().filter(|line| line.contains(" class=\"cell\"")) {
        let Some(square) = attribute(line, "data-square") else {
            continue;
        };
        if !changed.contains(square) {
            continue;
        }
        let outline = " fill=\"none\" stroke=\"#f2a900\" stroke-width=\"4\"";
        let square = escape(square);
        if line.starts_with("<rect ") {
            let (Some(x), Some(y), Some(w), Some(h)) = (
                attribute(line, "x").and_then(|v| v.parse::<f64>().ok()),
                attribute(line, "y").and_then(|v| v.parse::<f64>().ok()),
                attribute(line, "width").and_then(|v| v.parse::<f64>().ok()),
                attribute(line, "height").and_then(|v| v.parse::<f64>().ok()),
            ) else {
                continue;
            };
            marks.push_str(&format!(
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"{outline} data-changed=\"{square}\"/>\n",
                num(x + 2.0),
                num(y + 2.0),
                num(w - 4.0),
                num(h - 4.0)
            ));
        } else if line.starts_with("<polygon ")
            && let Some(points) = attribute(line, "points")
        {
            marks.push_str(&format!(
                "<polygon points=\"{points}\"{outline} data-changed=\"{square}\"/>\n"
            ));
        }
    }
    marks.push_str("</g>\n");
    match svg.rfind("</svg>") {
        Some(end) => format!("{}{marks}{}", &svg[..end], &svg[end..]),
        None => svg,
    }
}

/// A position of `G`, read with its options as the engines read them.
fn typed<G: Game>(position: &str, options: &Value) -> Result<G::Position, PositionError> {
    let options: G::Options = if options.is_null() {
        G::Options::default()
    } else {
        serde_json::from_value(options.clone())
            .map_err(|e| PositionError::new(format!("invalid options for {}: {e}", G::NAME)))?
    };
    G::validate_options(&options).map_err(|OptionsError(e)| PositionError::new(e))?;
    G::parse_position(position, &options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_squares_a_move_changed_are_outlined() {
        let kind = GameKind::Cheversi;
        let engine = kind.engine().unwrap();
        let start = engine.start_position(&Value::Null).unwrap();
        let next = engine
            .legal_moves_with_positions(&start, &Value::Null)
            .unwrap()
            .remove(0);
        let marked = svg_marked(kind, &next.position, Some(&start), &Value::Null).unwrap();
        assert!(marked.contains("data-changed="), "{marked}");
        let unmarked = svg_marked(kind, &start, None, &Value::Null).unwrap();
        assert!(!unmarked.contains("data-changed="));
        let same = svg_marked(kind, &start, Some(&start), &Value::Null).unwrap();
        assert!(!same.contains("data-changed="));
    }

    #[test]
    fn a_backgammon_move_outlines_the_points_it_changed() {
        let kind = GameKind::Backgammon;
        let engine = kind.engine().unwrap();
        let start = engine
            .start_position_for_opening(&Value::Null, 3, 1)
            .unwrap();
        let next = engine
            .legal_moves_with_positions(&start, &Value::Null)
            .unwrap()
            .into_iter()
            .find(|mv| mv.notation == "8/5 6/5")
            .expect("the usual 3-1");
        let marked = svg_marked(kind, &next.position, Some(&start), &Value::Null).unwrap();
        let outlined: Vec<&str> = marked
            .match_indices("data-changed=\"")
            .map(|(at, key)| {
                let rest = &marked[at + key.len()..];
                &rest[..rest.find('"').unwrap()]
            })
            .collect();
        assert_eq!(outlined, ["5", "6", "8"], "{marked}");
        assert!(marked.contains("<polygon points="));
    }
}
