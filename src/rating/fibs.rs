//! The FIBS (First Internet Backgammon Server) rating formula.
//!
//! Longer matches let skill show more, so the match length n enters through
//! √n both in the winning chance and in the size of the change. New players
//! move fast (K up to 5) until they have played enough points to be
//! established (K = 1).
//!
//! All finite inputs are accepted without panicking; a NaN rating is not a
//! meaningful input and gives NaN results.

/// Rating of a player who has never played.
pub const INITIAL_RATING: f64 = 1500.0;

/// Experience (match points played) from which a player's K factor is 1.
pub const ESTABLISHED_EXPERIENCE: u32 = 400;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fibs {
    pub rating: f64,
    /// Sum of the lengths of all rated matches played.
    pub experience: u32,
}

impl Fibs {
    pub const NEW_PLAYER: Fibs = Fibs {
        rating: INITIAL_RATING,
        experience: 0,
    };

    pub fn new_player() -> Fibs {
        Fibs::NEW_PLAYER
    }

    pub fn is_established(&self) -> bool {
        self.experience >= ESTABLISHED_EXPERIENCE
    }

    /// K: how strongly this player's rating reacts to a match.
    fn change_factor(&self) -> f64 {
        (5.0 - f64::from(self.experience) / 100.0).max(1.0)
    }
}

/// The chance that the lower-rated player wins a match of `length` points,
/// given the absolute rating difference; 0.5 for equal ratings.
pub fn underdog_winning_chance(rating_difference: f64, length: u32) -> f64 {
    let root_length = f64::from(length.max(1)).sqrt();
    // An infinite power (difference beyond ~10^300) gives a chance of 0, which
    // is the right limit, so no special case is needed.
    1.0 / (10f64.powf(rating_difference.abs() * root_length / 2000.0) + 1.0)
}

/// Rates one match. A `length` of 0 is meaningless and counted as a 1-point
/// (money game) match rather than rejected, so a bad length can never stop a
/// finished match from being recorded.
///
/// Returns the winner's and the loser's ratings after the match.
pub fn rate_match(winner: Fibs, loser: Fibs, length: u32) -> (Fibs, Fibs) {
    let length = length.max(1);
    let root_length = f64::from(length).sqrt();
    let underdog_chance = underdog_winning_chance(winner.rating - loser.rating, length);
    // The surprise of the result: how likely the other outcome was.
    let loser_would_have_won = if winner.rating >= loser.rating {
        underdog_chance
    } else {
        1.0 - underdog_chance
    };
    let stake = 4.0 * root_length * loser_would_have_won;
    let winner_after = Fibs {
        rating: winner.rating + winner.change_factor() * stake,
        experience: winner.experience.saturating_add(length),
    };
    let loser_after = Fibs {
        rating: loser.rating - loser.change_factor() * stake,
        experience: loser.experience.saturating_add(length),
    };
    (winner_after, loser_after)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn assert_close(actual: f64, expected: f64, what: &str) {
        assert!(
            (actual - expected).abs() <= 1e-9,
            "{what}: got {actual}, expected {expected}"
        );
    }

    fn player(rating: f64, experience: u32) -> Fibs {
        Fibs { rating, experience }
    }

    /// Checks one match against the numbers printed by scripts/rating_vectors.py.
    fn check(
        winner: Fibs,
        loser: Fibs,
        length: u32,
        expected_winner_rating: f64,
        expected_loser_rating: f64,
    ) {
        let (winner_after, loser_after) = rate_match(winner, loser, length);
        assert_close(winner_after.rating, expected_winner_rating, "winner");
        assert_close(loser_after.rating, expected_loser_rating, "loser");
        assert_eq!(winner_after.experience, winner.experience + length);
        assert_eq!(loser_after.experience, loser.experience + length);
    }

    #[test]
    fn equal_new_players_in_a_money_game() {
        check(Fibs::new_player(), Fibs::new_player(), 1, 1510.0, 1490.0);
    }

    #[test]
    fn experienced_favourite_beats_newcomer_over_seven_points() {
        check(
            player(1700.0, 1000),
            player(1500.0, 0),
            7,
            1703.7277595615176,
            1481.3612021924118,
        );
    }

    #[test]
    fn newcomer_upsets_experienced_favourite_over_seven_points() {
        check(
            player(1500.0, 0),
            player(1700.0, 1000),
            7,
            1534.2762284137036,
            1693.1447543172592,
        );
    }

    #[test]
    fn established_players_over_five_points() {
        check(
            player(1620.0, 800),
            player(1580.0, 450),
            5,
            1624.2420806980374,
            1575.7579193019626,
        );
        check(
            player(1580.0, 450),
            player(1620.0, 800),
            5,
            1584.7021912119617,
            1615.2978087880383,
        );
    }

    #[test]
    fn partly_experienced_players_over_three_points() {
        // K = 2.5 for the winner, 3.8 for the loser.
        check(
            player(1550.0, 250),
            player(1450.0, 120),
            3,
            1557.7996345627305,
            1438.1445554646498,
        );
    }

    #[test]
    fn zero_length_counts_as_one_point() {
        let a = player(1600.0, 50);
        let b = player(1540.0, 700);
        assert_eq!(rate_match(a, b, 0), rate_match(a, b, 1));
    }

    #[test]
    fn equal_ratings_give_even_chances() {
        assert_eq!(underdog_winning_chance(0.0, 9), 0.5);
    }

    #[test]
    fn established_from_four_hundred_points() {
        assert!(!player(1500.0, ESTABLISHED_EXPERIENCE - 1).is_established());
        assert!(player(1500.0, ESTABLISHED_EXPERIENCE).is_established());
        assert_eq!(player(1500.0, ESTABLISHED_EXPERIENCE).change_factor(), 1.0);
    }

    #[test]
    fn extreme_inputs_stay_finite_and_do_not_overflow() {
        let (w, l) = rate_match(player(f64::MAX, u32::MAX), player(-f64::MAX, 0), u32::MAX);
        assert!(w.rating.is_finite() && l.rating.is_finite());
        assert_eq!(w.experience, u32::MAX);
        assert_eq!(l.experience, u32::MAX);
        let (w, l) = rate_match(player(-f64::MAX, 0), player(f64::MAX, 0), u32::MAX);
        assert!(w.rating.is_finite() && l.rating.is_finite());
    }

    fn arbitrary_player() -> impl Strategy<Value = Fibs> {
        (-1e6..1e6f64, 0..5_000u32).prop_map(|(rating, experience)| player(rating, experience))
    }

    proptest! {
        #[test]
        fn a_win_never_lowers_the_winner_nor_raises_the_loser(
            winner in arbitrary_player(),
            loser in arbitrary_player(),
            length in 0..64u32,
        ) {
            let (winner_after, loser_after) = rate_match(winner, loser, length);
            prop_assert!(winner_after.rating >= winner.rating);
            prop_assert!(loser_after.rating <= loser.rating);
            prop_assert!(winner_after.rating.is_finite() && loser_after.rating.is_finite());
            prop_assert_eq!(winner_after.experience, winner.experience + length.max(1));
            prop_assert_eq!(loser_after.experience, loser.experience + length.max(1));
        }

        #[test]
        fn with_equal_k_the_winners_gain_is_the_losers_loss(
            winner_rating in 0.0..3000.0f64,
            loser_rating in 0.0..3000.0f64,
            experience in 0..1_000u32,
            length in 1..64u32,
        ) {
            let (winner_after, loser_after) = rate_match(
                player(winner_rating, experience),
                player(loser_rating, experience),
                length,
            );
            let gain = winner_after.rating - winner_rating;
            let loss = loser_rating - loser_after.rating;
            prop_assert!((gain - loss).abs() <= 1e-9, "gain {} loss {}", gain, loss);
        }

        #[test]
        fn any_finite_input_gives_finite_output(
            winner_rating in proptest::num::f64::NORMAL | proptest::num::f64::ZERO,
            loser_rating in proptest::num::f64::NORMAL | proptest::num::f64::ZERO,
            winner_experience in any::<u32>(),
            loser_experience in any::<u32>(),
            length in any::<u32>(),
        ) {
            let (winner_after, loser_after) = rate_match(
                player(winner_rating, winner_experience),
                player(loser_rating, loser_experience),
                length,
            );
            prop_assert!(winner_after.rating.is_finite() && loser_after.rating.is_finite());
        }
    }
}
