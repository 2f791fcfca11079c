//! Championship ladder: leagues of up to ten players each play a double round
//! robin; the top two of a league go up and the bottom three go down.

use std::collections::HashSet;

pub const MAX_LEAGUE: usize = 10;
pub const MIN_LEAGUE: usize = 4;
pub const PROMOTED: usize = 2;
pub const RELEGATED: usize = 3;

/// How many places of a league at `level` (0 = top) of `levels`, with `players`
/// players, go up and down.
pub fn movement(level: usize, levels: usize, players: usize) -> (usize, usize) {
    let up = if level > 0 { PROMOTED.min(players) } else { 0 };
    let down = if level + 1 < levels {
        RELEGATED.min(players - up)
    } else {
        0
    };
    (up, down)
}

/// Edition 1: players already sorted strongest first, cut into ceil(n/10) leagues
/// of near-equal size (the upper leagues take the extra players). Empty input → no leagues.
pub fn first_edition(players: &[String]) -> Vec<Vec<String>> {
    split_evenly(players, players.len().div_ceil(MAX_LEAGUE))
}

/// The next edition. `previous[level]` = final standings of that league, best first
/// (level 0 = top). `continuing(id)` says whether a player stays (not opted out).
/// `newcomers` in order (strongest first).
pub fn next_edition(
    previous: &[Vec<String>],
    continuing: &dyn Fn(&str) -> bool,
    newcomers: &[String],
) -> Vec<Vec<String>> {
    let levels = previous.len();
    let mut relegated_into = vec![Vec::new(); levels];
    let mut stayed_in = vec![Vec::new(); levels];
    let mut promoted_into = vec![Vec::new(); levels];
    let mut placed: HashSet<&str> = HashSet::new();
    for (level, league) in previous.iter().enumerate() {
        let (up, down) = movement(level, levels, league.len());
        // Movement is decided on the full final table: a player who opts out still
        // held his place, so it does not pass to the one below him.
        for (place, id) in league.iter().enumerate() {
            if !continuing(id) || !placed.insert(id) {
                continue;
            }
            let destination = if place < up {
                &mut promoted_into[level - 1]
            } else if place >= league.len() - down {
                &mut relegated_into[level + 1]
            } else {
                &mut stayed_in[level]
            };
            destination.push(id.clone());
        }
    }

    let mut leagues: Vec<Vec<String>> = (0..levels)
        .map(|level| {
            let mut league = std::mem::take(&mut relegated_into[level]);
            league.append(&mut stayed_in[level]);
            league.append(&mut promoted_into[level]);
            league
        })
        .collect();
    if leagues.is_empty() {
        leagues.push(Vec::new());
    }
    let lowest = leagues.last_mut().expect("at least one level");
    for id in newcomers {
        if placed.insert(id) {
            lowest.push(id.clone());
        }
    }
    rebalance(leagues)
}

fn rebalance(mut leagues: Vec<Vec<String>>) -> Vec<Vec<String>> {
    leagues.retain(|league| !league.is_empty());

    let mut level = 0;
    while level < leagues.len() {
        if leagues[level].len() > MAX_LEAGUE {
            let overflow = leagues[level].split_off(MAX_LEAGUE);
            match leagues.get_mut(level + 1) {
                Some(next) => {
                    next.splice(0..0, overflow);
                }
                None => leagues.push(overflow),
            }
        }
        level += 1;
    }

    let mut level = 0;
    while level + 1 < leagues.len() {
        while leagues[level].len() < MIN_LEAGUE && level + 1 < leagues.len() {
            let pulled = leagues[level + 1].remove(0);
            leagues[level].push(pulled);
            if leagues[level + 1].is_empty() {
                leagues.remove(level + 1);
            }
        }
        level += 1;
    }

    if leagues.len() >= 2 && leagues[leagues.len() - 1].len() < MIN_LEAGUE {
        let last = leagues.pop().expect("two levels");
        let mut upper = leagues.pop().expect("two levels");
        upper.extend(last);
        if upper.len() <= MAX_LEAGUE {
            leagues.push(upper);
        } else {
            leagues.extend(split_evenly(&upper, 2));
        }
    }
    leagues
}

/// Cuts `players` in order into `parts` slices whose sizes differ by at most one,
/// the larger ones first.
fn split_evenly(players: &[String], parts: usize) -> Vec<Vec<String>> {
    if parts == 0 {
        return Vec::new();
    }
    let smaller = players.len() / parts;
    let larger_count = players.len() % parts;
    let mut rest = players;
    (0..parts)
        .map(|part| {
            let size = smaller + usize::from(part < larger_count);
            let (league, tail) = rest.split_at(size);
            rest = tail;
            league.to_vec()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(prefix: &str, count: usize) -> Vec<String> {
        (1..=count).map(|i| format!("{prefix}{i}")).collect()
    }

    fn sizes(leagues: &[Vec<String>]) -> Vec<usize> {
        leagues.iter().map(Vec::len).collect()
    }

    fn everyone_continues(_: &str) -> bool {
        true
    }

    #[test]
    fn movement_at_the_edges() {
        assert_eq!(movement(0, 1, 10), (0, 0));
        assert_eq!(movement(0, 3, 10), (0, 3));
        assert_eq!(movement(1, 3, 10), (2, 3));
        assert_eq!(movement(2, 3, 10), (2, 0));
        assert_eq!(movement(1, 3, 4), (2, 2));
        assert_eq!(movement(1, 3, 1), (1, 0));
    }

    #[test]
    fn first_edition_cuts_near_equal_leagues() {
        assert!(first_edition(&[]).is_empty());
        assert_eq!(sizes(&first_edition(&names("p", 12))), [6, 6]);
        assert_eq!(sizes(&first_edition(&names("p", 25))), [9, 8, 8]);
        assert_eq!(sizes(&first_edition(&names("p", 10))), [10]);
        assert_eq!(sizes(&first_edition(&names("p", 3))), [3]);
        let leagues = first_edition(&names("p", 12));
        assert_eq!(leagues[0], names("p", 6));
        assert_eq!(leagues[1][0], "p7");
    }

    #[test]
    fn two_leagues_of_six_exchange_places() {
        let previous = vec![names("a", 6), names("b", 6)];
        let next = next_edition(&previous, &everyone_continues, &[]);
        assert_eq!(
            next,
            [
                vec!["a1", "a2", "a3", "b1", "b2"],
                vec!["a4", "a5", "a6", "b3", "b4", "b5", "b6"],
            ]
        );
    }

    #[test]
    fn single_league_has_no_movement() {
        let previous = vec![names("a", 8)];
        let newcomers = names("n", 2);
        let next = next_edition(&previous, &everyone_continues, &newcomers);
        let mut expected = names("a", 8);
        expected.extend(newcomers);
        assert_eq!(next, [expected]);
    }

    #[test]
    fn newcomers_overflow_into_a_new_league() {
        let previous = vec![names("a", 10), names("b", 8)];
        let newcomers = names("n", 7);
        let next = next_edition(&previous, &everyone_continues, &newcomers);
        // Level 1 gets a8-a10, b3-b8 and n1-n7 = 16: ten stay, the last six form level 2.
        assert_eq!(sizes(&next), [9, 10, 6]);
        assert_eq!(next[0][7..], ["b1", "b2"]);
        assert_eq!(next[1][..3], ["a8", "a9", "a10"]);
        assert_eq!(next[2], ["n2", "n3", "n4", "n5", "n6", "n7"]);
    }

    #[test]
    fn opt_outs_pull_players_up_into_a_short_league() {
        let previous = vec![names("a", 6), names("b", 6)];
        let leaving = ["a1", "a2", "b1"];
        let continuing = |id: &str| !leaving.contains(&id);
        let next = next_edition(&previous, &continuing, &[]);
        // Level 0 would be a3 + b2 only; it pulls a4 and a5 from the front of level 1,
        // leaving a6 b3 b4 b5 b6.
        assert_eq!(
            next,
            [
                vec!["a3", "b2", "a4", "a5"],
                vec!["a6", "b3", "b4", "b5", "b6"],
            ]
        );
    }

    #[test]
    fn short_last_league_merges_or_splits() {
        let previous = vec![names("a", 6), names("b", 6)];
        let staying = ["a1", "a2", "a3", "a4", "a5", "a6", "b1"];
        let continuing = |id: &str| staying.contains(&id);
        // Level 0: a1-a3, b1 (4); level 1: a4-a6 (3) → merged into 7.
        let next = next_edition(&previous, &continuing, &[]);
        assert_eq!(next, [vec!["a1", "a2", "a3", "b1", "a4", "a5", "a6"]]);

        let previous = vec![names("a", 10), names("b", 4)];
        let staying = names("a", 10);
        let continuing = |id: &str| staying.iter().any(|s| s == id);
        // Level 0: a1-a7 (7); level 1: a8-a10 (3); 10 fits in one league.
        let next = next_edition(&previous, &continuing, &[]);
        assert_eq!(sizes(&next), [10]);

        let previous = vec![names("a", 10), names("b", 10)];
        let staying: Vec<String> = names("a", 10).into_iter().chain(names("b", 2)).collect();
        let continuing = |id: &str| staying.iter().any(|s| s == id);
        // Level 0: a1-a7, b1, b2 (9); level 1: a8-a10 (3): 12 split 6 + 6.
        let next = next_edition(&previous, &continuing, &[]);
        assert_eq!(
            next,
            [
                vec!["a1", "a2", "a3", "a4", "a5", "a6"],
                vec!["a7", "b1", "b2", "a8", "a9", "a10"],
            ]
        );
    }

    #[test]
    fn everyone_leaving_leaves_no_leagues() {
        let previous = vec![names("a", 6)];
        assert!(next_edition(&previous, &|_| false, &[]).is_empty());
        assert_eq!(
            next_edition(&[], &|_| false, &names("n", 3)),
            [names("n", 3)]
        );
    }

    /// Deterministic pseudo-random numbers (a linear congruential generator).
    struct Dice(u64);

    impl Dice {
        fn below(&mut self, bound: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % bound
        }
    }

    fn check_editions(seed: u64) {
        let mut dice = Dice(seed);
        let mut next_name = 0;
        let mut fresh = |count: u64| -> Vec<String> {
            (0..count)
                .map(|_| {
                    next_name += 1;
                    format!("p{next_name}")
                })
                .collect()
        };
        let first = fresh(dice.below(40));
        let mut leagues = first_edition(&first);
        check_shape(&leagues, first.len(), seed);
        for _edition in 0..12 {
            // Shuffle each league's final table a little and let some players go.
            for league in &mut leagues {
                for i in (1..league.len()).rev() {
                    let j = dice.below(i as u64 + 1) as usize;
                    league.swap(i, j);
                }
            }
            let leaving: Vec<String> = leagues
                .iter()
                .flatten()
                .filter(|_| dice.below(6) == 0)
                .cloned()
                .collect();
            let newcomers = fresh(dice.below(12));
            let continuing = |id: &str| !leaving.iter().any(|l| l == id);
            let next = next_edition(&leagues, &continuing, &newcomers);

            let mut expected: Vec<&String> = leagues
                .iter()
                .flatten()
                .filter(|id| continuing(id))
                .chain(&newcomers)
                .collect();
            let mut got: Vec<&String> = next.iter().flatten().collect();
            expected.sort();
            got.sort();
            assert_eq!(got, expected, "seed {seed}: everyone exactly once");
            check_shape(&next, expected.len(), seed);
            leagues = next;
        }
    }

    fn check_shape(leagues: &[Vec<String>], total: usize, seed: u64) {
        for league in leagues {
            assert!(league.len() <= MAX_LEAGUE, "seed {seed}: {leagues:?}");
            assert!(!league.is_empty(), "seed {seed}");
            if total >= MIN_LEAGUE {
                assert!(league.len() >= MIN_LEAGUE, "seed {seed}: {leagues:?}");
            }
        }
    }

    #[test]
    fn invariants_over_many_editions() {
        for seed in 0..200 {
            check_editions(seed);
        }
    }
}
