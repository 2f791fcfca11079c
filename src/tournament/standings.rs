//! Final and running tables of an event.

use std::cmp::Reverse;
use std::collections::HashMap;

use super::{Entrant, Outcome, Played};

/// Which tie-break chain applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum System {
    RoundRobin,
    Swiss,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub id: String,
    pub place: u32,
    pub points: f64,
    pub played: u32,
    pub won: u32,
    pub drawn: u32,
    pub lost: u32,
    pub byes: u32,
    pub buchholz: f64,
    pub sonneborn_berger: f64,
}

/// Every score and tie-break is kept in quarter points so that comparisons are
/// exact integer comparisons (half of a half point is the finest grain).
const QUARTERS_PER_WIN: i64 = 4;
const QUARTERS_PER_DRAW: i64 = 2;

#[derive(Default)]
struct Tally {
    points: i64,
    played: u32,
    won: u32,
    drawn: u32,
    lost: u32,
    byes: u32,
    buchholz: i64,
    sonneborn_berger: i64,
}

/// A finished game between two entrants, with White's score in quarters.
struct Finished {
    white: usize,
    black: usize,
    white_score: i64,
}

/// `byes`: (player id, round) of every bye given.
///
/// Games or byes naming someone who is not an entrant are ignored, as are
/// unfinished games: neither can be attributed to a row of this table.
pub fn standings(
    system: System,
    entrants: &[Entrant],
    games: &[Played],
    byes: &[(String, u32)],
) -> Vec<Row> {
    let mut index_of: HashMap<&str, usize> = HashMap::new();
    for (index, entrant) in entrants.iter().enumerate() {
        index_of.entry(entrant.id.as_str()).or_insert(index);
    }

    let finished: Vec<Finished> = games
        .iter()
        .filter_map(|game| {
            let outcome = game.outcome?;
            let white = *index_of.get(game.white.as_str())?;
            let black = *index_of.get(game.black.as_str())?;
            if white == black {
                return None;
            }
            let white_score = match outcome {
                Outcome::WhiteWon => QUARTERS_PER_WIN,
                Outcome::Drawn => QUARTERS_PER_DRAW,
                Outcome::BlackWon => 0,
            };
            Some(Finished {
                white,
                black,
                white_score,
            })
        })
        .collect();

    let mut tallies: Vec<Tally> = entrants.iter().map(|_| Tally::default()).collect();
    for (id, _round) in byes {
        if let Some(&index) = index_of.get(id.as_str()) {
            tallies[index].points += QUARTERS_PER_WIN;
            tallies[index].byes += 1;
        }
    }
    for game in &finished {
        for (me, score) in [
            (game.white, game.white_score),
            (game.black, QUARTERS_PER_WIN - game.white_score),
        ] {
            let tally = &mut tallies[me];
            tally.points += score;
            tally.played += 1;
            match score {
                QUARTERS_PER_WIN => tally.won += 1,
                QUARTERS_PER_DRAW => tally.drawn += 1,
                _ => tally.lost += 1,
            }
        }
    }

    // Tie-breaks need everyone's final points, hence a second pass.
    let points: Vec<i64> = tallies.iter().map(|tally| tally.points).collect();
    for game in &finished {
        for (me, opponent, score) in [
            (game.white, game.black, game.white_score),
            (game.black, game.white, QUARTERS_PER_WIN - game.white_score),
        ] {
            let tally = &mut tallies[me];
            tally.buchholz += points[opponent];
            // Points are whole halves, so halving them stays on the quarter grid.
            tally.sonneborn_berger += points[opponent] * score / QUARTERS_PER_WIN;
        }
    }

    let mut order: Vec<usize> = (0..entrants.len()).collect();
    match system {
        System::Swiss => order.sort_by_key(|&i| {
            (
                Reverse(tallies[i].points),
                Reverse(tallies[i].buchholz),
                Reverse(tallies[i].sonneborn_berger),
                entrants[i].seed,
            )
        }),
        System::RoundRobin => {
            let primary_key = |i: usize| {
                (
                    Reverse(tallies[i].points),
                    Reverse(tallies[i].sonneborn_berger),
                    Reverse(tallies[i].won),
                )
            };
            order.sort_by_key(|&i| primary_key(i));
            let mut start = 0;
            while start < order.len() {
                let key = primary_key(order[start]);
                let end = start
                    + order[start..]
                        .iter()
                        .take_while(|&&i| primary_key(i) == key)
                        .count();
                if end - start > 1 {
                    let tied = &mut order[start..end];
                    let head_to_head = head_to_head_scores(tied, &finished);
                    tied.sort_by_key(|&i| (Reverse(head_to_head[&i]), entrants[i].seed));
                }
                start = end;
            }
        }
    }

    let as_points = |quarters: i64| quarters as f64 / QUARTERS_PER_WIN as f64;
    order
        .iter()
        .enumerate()
        .map(|(position, &i)| {
            let tally = &tallies[i];
            Row {
                id: entrants[i].id.clone(),
                place: position as u32 + 1,
                points: as_points(tally.points),
                played: tally.played,
                won: tally.won,
                drawn: tally.drawn,
                lost: tally.lost,
                byes: tally.byes,
                buchholz: as_points(tally.buchholz),
                sonneborn_berger: as_points(tally.sonneborn_berger),
            }
        })
        .collect()
}

/// Quarters each member of `group` scored in the finished games among the group.
fn head_to_head_scores(group: &[usize], finished: &[Finished]) -> HashMap<usize, i64> {
    let mut scores: HashMap<usize, i64> = group.iter().map(|&i| (i, 0)).collect();
    for game in finished {
        if scores.contains_key(&game.white) && scores.contains_key(&game.black) {
            *scores.get_mut(&game.white).unwrap() += game.white_score;
            *scores.get_mut(&game.black).unwrap() += QUARTERS_PER_WIN - game.white_score;
        }
    }
    scores
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entrant(id: &str, seed: u32) -> Entrant {
        Entrant {
            id: id.to_string(),
            rating: 2000.0 - seed as f64,
            seed,
        }
    }

    fn game(round: u32, white: &str, black: &str, outcome: Option<Outcome>) -> Played {
        Played {
            round,
            white: white.to_string(),
            black: black.to_string(),
            outcome,
            forfeit: false,
        }
    }

    fn ids(rows: &[Row]) -> Vec<&str> {
        rows.iter().map(|row| row.id.as_str()).collect()
    }

    fn row<'a>(rows: &'a [Row], id: &str) -> &'a Row {
        rows.iter().find(|row| row.id == id).unwrap()
    }

    /// X and Y finish level on points, Sonneborn–Berger and wins; X beat Y, so
    /// X must rank above Y even though Y holds the better seed.
    ///   X: beats Y, loses to Z, draws W  -> 1.5
    ///   Y: loses X, beats W, draws Z     -> 1.5
    ///   Z: beats X, draws Y, beats W     -> 2.5
    ///   W: loses Y, draws X, loses Z     -> 0.5
    /// SB X = 1.5 (Y) + 0.25 (half of W) = 1.75; SB Y = 0.5 (W) + 1.25 (half of Z) = 1.75.
    /// SB Z = 1.5 + 0.75 + 0.5 = 2.75; SB W = 0.75.
    /// Buchholz X = 1.5+2.5+0.5 = 4.5, Y = 4.5, Z = 3.5, W = 5.5.
    #[test]
    fn round_robin_head_to_head_beats_seed() {
        let entrants = [
            entrant("Y", 1),
            entrant("X", 2),
            entrant("Z", 3),
            entrant("W", 4),
        ];
        let games = [
            game(1, "X", "Y", Some(Outcome::WhiteWon)),
            game(1, "Z", "W", Some(Outcome::WhiteWon)),
            game(2, "Z", "X", Some(Outcome::WhiteWon)),
            game(2, "Y", "W", Some(Outcome::WhiteWon)),
            game(3, "W", "X", Some(Outcome::Drawn)),
            game(3, "Y", "Z", Some(Outcome::Drawn)),
            game(4, "W", "X", None),
        ];
        let rows = standings(System::RoundRobin, &entrants, &games, &[]);
        assert_eq!(ids(&rows), ["Z", "X", "Y", "W"]);
        assert_eq!(
            rows.iter().map(|row| row.place).collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );
        let expected = [
            ("X", 1.5, 1.75, 4.5, (3, 1, 1, 1)),
            ("Y", 1.5, 1.75, 4.5, (3, 1, 1, 1)),
            ("Z", 2.5, 2.75, 3.5, (3, 2, 1, 0)),
            ("W", 0.5, 0.75, 5.5, (3, 0, 1, 2)),
        ];
        for (id, points, sb, buchholz, (played, won, drawn, lost)) in expected {
            let row = row(&rows, id);
            assert_eq!(row.points, points, "{id}");
            assert_eq!(row.sonneborn_berger, sb, "{id}");
            assert_eq!(row.buchholz, buchholz, "{id}");
            assert_eq!(
                (row.played, row.won, row.drawn, row.lost),
                (played, won, drawn, lost)
            );
        }
    }

    #[test]
    fn round_robin_falls_back_to_seed_when_head_to_head_is_level() {
        let entrants = [entrant("B", 2), entrant("A", 1)];
        let games = [
            game(1, "A", "B", Some(Outcome::WhiteWon)),
            game(2, "B", "A", Some(Outcome::WhiteWon)),
        ];
        let rows = standings(System::RoundRobin, &entrants, &games, &[]);
        assert_eq!(ids(&rows), ["A", "B"]);
        // Double round robin: each win counts the opponent's full total once.
        assert_eq!(row(&rows, "A").sonneborn_berger, 1.0);
        assert_eq!(row(&rows, "A").buchholz, 2.0);
    }

    #[test]
    fn byes_score_but_feed_no_tie_break_and_forfeits_count() {
        let entrants = [entrant("A", 1), entrant("B", 2), entrant("C", 3)];
        let mut forfeited = game(1, "A", "B", Some(Outcome::BlackWon));
        forfeited.forfeit = true;
        let games = [forfeited, game(2, "C", "A", None)];
        let byes = [("C".to_string(), 1), ("ghost".to_string(), 1)];
        let rows = standings(System::Swiss, &entrants, &games, &byes);
        // B and C both have 1 point; B has Buchholz 0 (A scored nothing), C has 0 too
        // (a bye meets nobody); SB 0 for both, so seed decides.
        assert_eq!(ids(&rows), ["B", "C", "A"]);
        let c = row(&rows, "C");
        assert_eq!((c.points, c.byes, c.played, c.buchholz), (1.0, 1, 0, 0.0));
        assert_eq!(row(&rows, "A").buchholz, 1.0);
        assert_eq!(row(&rows, "A").lost, 1);
    }

    #[test]
    fn entrants_without_games_are_listed() {
        let entrants = [entrant("A", 1), entrant("B", 2)];
        let rows = standings(System::RoundRobin, &entrants, &[], &[]);
        assert_eq!(ids(&rows), ["A", "B"]);
        assert!(rows.iter().all(|row| row.points == 0.0 && row.played == 0));
    }
}
