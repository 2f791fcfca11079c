//! Checker moves in GNU Backgammon's notation: written as gnubg's `FormatMove` writes them, read
//! in every form gnubg reads, resolved against the legal moves by the position they lead to.

use super::board::{BAR, Play, Position};
use crate::rules::errors::MoveError;

fn point_name(point: u8) -> String {
    match point {
        25 => "bar".to_owned(),
        0 => "off".to_owned(),
        n => n.to_string(),
    }
}

/// gnubg's `FormatMove`: steps by decreasing source, one checker's consecutive steps joined (an
/// intermediate point is kept only where it hits), identical moves counted as `(n)`, and a `*`
/// after the first hit on each point.
pub fn format_play(position: &Position, play: &Play) -> String {
    let opp = position.side_board(position.on_roll.opponent());
    let is_blot = |point: u8| point > 0 && opp[usize::from(24 - point)] > 0;
    // Each chain is the list of points a checker visits.
    let mut chains: Vec<Vec<u8>> = play.steps().iter().map(|&(f, t)| vec![f, t]).collect();
    let mut live = vec![true; chains.len()];
    for i in 0..chains.len() {
        for j in i..chains.len() {
            if live[i] && live[j] && i != j && chains[i].last() == chains[j].first() {
                let next = chains[j][1];
                let end = chains[i].len() - 1;
                if is_blot(chains[i][end]) {
                    chains[i].push(next);
                } else {
                    chains[i][end] = next;
                }
                live[j] = false;
            }
        }
    }
    let chains: Vec<Vec<u8>> = chains
        .into_iter()
        .zip(live)
        .filter_map(|(chain, live)| live.then_some(chain))
        .collect();
    let mut grouped: Vec<(Vec<u8>, usize)> = Vec::new();
    for chain in chains {
        match grouped.iter_mut().find(|(c, _)| *c == chain) {
            Some((_, count)) => *count += 1,
            None => grouped.push((chain, 1)),
        }
    }
    let mut marked = 0u32;
    let mut out = String::new();
    for (chain, count) in grouped {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&point_name(chain[0]));
        for &point in &chain[1..] {
            out.push('/');
            out.push_str(&point_name(point));
            if is_blot(point) && marked & (1 << point) == 0 {
                out.push('*');
                marked |= 1 << point;
            }
        }
        if count > 1 {
            out.push_str(&format!("({count})"));
        }
    }
    out
}

/// One written piece of a move: a checker's path and how many checkers take it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub path: Vec<u8>,
    pub count: u8,
}

fn syntax(message: impl Into<String>) -> MoveError {
    MoveError::Syntax {
        message: message.into(),
    }
}

fn illegal(message: impl Into<String>) -> MoveError {
    MoveError::Illegal {
        message: message.into(),
    }
}

fn read_point(text: &str) -> Result<u8, MoveError> {
    match text {
        "bar" | "b" | "25" => Ok(25),
        "off" | "o" | "0" => Ok(0),
        _ => match text.parse::<u8>() {
            Ok(n @ 1..=24) => Ok(n),
            _ => Err(syntax(format!(
                "`{text}` is not a point: write 1-24, `bar` or `off`"
            ))),
        },
    }
}

/// Reads `24/18 13/11`, `bar/22*`, `8/5(2)`, `24/18/16`, `24-18`, commas, any case.
pub fn read_segments(text: &str) -> Result<Vec<Segment>, MoveError> {
    let lower = text.to_ascii_lowercase();
    let mut segments = Vec::new();
    for token in lower
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
    {
        let (body, count) = match token.strip_suffix(')') {
            Some(rest) => {
                let Some((body, n)) = rest.rsplit_once('(') else {
                    return Err(syntax(format!("`{token}`: a `)` without its `(`")));
                };
                match n.parse::<u8>() {
                    Ok(n @ 1..=4) => (body, n),
                    _ => {
                        return Err(syntax(format!(
                            "`{token}`: a repeat is written `(2)`, `(3)` or `(4)`"
                        )));
                    }
                }
            }
            None => (token, 1),
        };
        let mut path = Vec::new();
        for part in body.split(['/', '-']) {
            let part = part.trim_end_matches(['*', '!', '?']);
            if part.is_empty() {
                return Err(syntax(format!(
                    "`{token}`: every `/` joins two points, as in `24/18`"
                )));
            }
            path.push(read_point(part)?);
        }
        if path.len() < 2 {
            return Err(syntax(format!(
                "`{token}` is not a checker move; write from/to, as in `24/18`"
            )));
        }
        for pair in path.windows(2) {
            if pair[1] >= pair[0] {
                return Err(syntax(format!(
                    "`{token}`: checkers move towards your home board, from a higher point to a lower one (bar is 25, off is 0)"
                )));
            }
        }
        segments.push(Segment { path, count });
    }
    if segments.is_empty() {
        return Err(syntax("no move given"));
    }
    Ok(segments)
}

/// Resolves written segments against the legal plays: the written move must leave the mover's
/// checkers where a legal play leaves them; among several such plays (which differ only in what
/// they hit on the way), the one hitting exactly the opponent's blots on the points written.
pub fn resolve(position: &Position, plays: &[Play], text: &str) -> Result<Play, MoveError> {
    let segments = read_segments(text)?;
    let mover = position.side_board(position.on_roll);
    let opp = position.side_board(position.on_roll.opponent());
    let mut net = [0i32; 25];
    let mut written_blots = 0u32;
    for segment in &segments {
        let (Some(&from), Some(&to)) = (segment.path.first(), segment.path.last()) else {
            continue;
        };
        let count = i32::from(segment.count);
        net[usize::from(from - 1)] -= count;
        if to > 0 {
            net[usize::from(to - 1)] += count;
        }
        for &point in &segment.path[1..] {
            if point > 0 && opp[usize::from(24 - point)] == 1 {
                written_blots |= 1 << point;
            }
        }
    }
    let mut after = [0u8; 25];
    for (i, slot) in after.iter_mut().enumerate() {
        let n = i32::from(mover[i]) + net[i];
        if n < 0 {
            let point = if i == BAR {
                "the bar".to_owned()
            } else {
                format!("point {}", i + 1)
            };
            return Err(illegal(format!(
                "you have {} checker{} on {point}, not enough for `{}`",
                mover[i],
                if mover[i] == 1 { "" } else { "s" },
                text.trim()
            )));
        }
        *slot = n as u8;
    }
    let candidates: Vec<&Play> = plays
        .iter()
        .filter(|play| position.mover_after(play) == after)
        .collect();
    match candidates.as_slice() {
        [] => Err(explain(position, plays, &segments, text)),
        [only] => Ok(**only),
        several => {
            let exact: Vec<&&Play> = several
                .iter()
                .filter(|play| position.hits(play) == written_blots)
                .collect();
            match exact.as_slice() {
                [only] => Ok(***only),
                _ => Err(MoveError::Ambiguous {
                    candidates: several
                        .iter()
                        .map(|play| format_play(position, play))
                        .collect(),
                }),
            }
        }
    }
}

/// Why a written move matches no legal play.
fn explain(position: &Position, plays: &[Play], segments: &[Segment], text: &str) -> MoveError {
    let mover = position.side_board(position.on_roll);
    let opp = position.side_board(position.on_roll.opponent());
    let [high, low] = position.dice;
    let roll = format!("{high}-{low}");
    let on_bar = mover[BAR];
    let from_bar: u8 = segments
        .iter()
        .filter(|s| s.path.first() == Some(&25))
        .map(|s| s.count)
        .sum();
    if on_bar > 0 && from_bar < on_bar && segments.iter().any(|s| s.path.first() != Some(&25)) {
        return illegal(format!(
            "you have {on_bar} checker{} on the bar: you must enter from the bar before moving any other checker",
            if on_bar == 1 { "" } else { "s" }
        ));
    }
    for segment in segments {
        for &point in &segment.path[1..] {
            if point > 0 && opp[usize::from(24 - point)] >= 2 {
                return illegal(format!(
                    "point {point} is closed: your opponent has {} checkers there",
                    opp[usize::from(24 - point)]
                ));
            }
        }
    }
    if segments.iter().any(|s| s.path.last() == Some(&0)) {
        let mut outside: i32 = mover[6..25].iter().map(|&n| i32::from(n)).sum();
        for segment in segments {
            let (Some(&from), Some(&to)) = (segment.path.first(), segment.path.last()) else {
                continue;
            };
            if from > 6 && to <= 6 {
                outside -= i32::from(segment.count);
            }
        }
        if outside > 0 {
            return illegal(format!(
                "bearing off is not allowed yet: {outside} of your checkers {} outside your home board",
                if outside == 1 { "is" } else { "are" }
            ));
        }
    }
    let max_steps = plays.first().map_or(0, |play| play.len);
    let pips: u32 = segments
        .iter()
        .map(|s| {
            let from = s.path.first().copied().unwrap_or(0);
            let to = s.path.last().copied().unwrap_or(0);
            u32::from(from - to) * u32::from(s.count)
        })
        .sum();
    let bears_off = segments.iter().any(|s| s.path.last() == Some(&0));
    let dice_total = if high == low {
        u32::from(high) * u32::from(max_steps)
    } else if max_steps == 2 {
        u32::from(high) + u32::from(low)
    } else {
        0
    };
    if !bears_off && dice_total > 0 && pips < dice_total {
        return illegal(if high == low {
            format!(
                "you must play as many of the four {high}s as can be played: {max_steps} can be"
            )
        } else {
            format!("you must use both dice of {roll}: a legal move plays both")
        });
    }
    if max_steps == 1 && high != low && !bears_off && pips == u32::from(low) {
        let larger = plays.iter().any(|play| {
            play.steps()
                .first()
                .is_some_and(|&(from, to)| from - to == high || to == 0)
        });
        if larger {
            return illegal(format!(
                "only one die can be played, so you must play the larger one, the {high}"
            ));
        }
    }
    illegal(format!("`{}` is not a legal move with {roll}", text.trim()))
}
