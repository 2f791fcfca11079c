//! Glicko-2, following Glickman's "Example of the Glicko-2 system" (2013
//! version, Illinois algorithm for the volatility), with the elapsed-time
//! handling of Lichess.
//!
//! # Elapsed time (the Lichess way)
//!
//! Glickman treats time in whole rating periods: a player who played in the
//! period gets `φ* = sqrt(φ² + σ'²)` in step 6, one who did not gets
//! `sqrt(φ² + σ²)`. Lichess rates every game as its own period and scales the
//! uncertainty growth by the real time since the player's last game, counted
//! in (fractional) rating periods `t`:
//!
//! * player with games: step 6 is `φ* = sqrt(φ² + t·σ'²)`, using the NEW
//!   volatility `σ'` of step 5; steps 3–5 still use the old `φ`, not a grown
//!   one. This is what lila's `calculateNewRD(phi, sigma', elapsedRatingPeriods)`
//!   does, and with `t = 1` it is exactly Glickman's step 6.
//! * player without games: `φ' = sqrt(φ² + t·σ²)` with the OLD volatility.
//!
//! The grown φ* is capped at `deviation_max` before step 7 (lila caps only
//! the final result); the final deviation is then clamped to
//! `[deviation_min, deviation_max]` and the volatility to `volatility_max`.
//!
//! There is no floor on `t`: `t = 0` (two games in the same instant) means no
//! growth at all, which keeps `t = 1` exactly Glickman's example.
//!
//! # Accepted input
//!
//! All finite inputs are accepted without panicking; NaN and infinities are
//! not meaningful inputs but cannot make the code loop forever. Scores are
//! clamped into `[0, 1]`, negative elapsed time counts as zero. If the update
//! would produce a non-finite number (only for absurd inputs, such as ratings
//! near the limits of `f64` or a volatility of 1e300), the games are ignored
//! and only the idle-time growth is applied, so results stay finite.

/// Conversion factor between the Glicko scale and the internal μ/φ scale
/// (Glickman's 400 / ln 10, as printed in the paper).
pub const GLICKO2_SCALE: f64 = 173.7178;

/// Deviation at and above which a rating is too uncertain to be shown as
/// settled (Lichess marks such ratings with a question mark).
pub const PROVISIONAL_DEVIATION: f64 = 110.0;

/// Centre of the Glicko scale, where μ = 0.
const GLICKO_CENTRE: f64 = 1500.0;

/// Glickman's convergence tolerance ε for the volatility root.
const VOLATILITY_TOLERANCE: f64 = 0.000_001;

/// Illinois needs only a handful of steps on sane inputs; the cap exists so
/// that NaN, infinities or degenerate settings cannot spin forever.
const MAX_ILLINOIS_STEPS: u32 = 200;

/// Same reason for the search of the lower bracket end (step 5.2), which
/// normally stops after one or two steps.
const MAX_BRACKET_STEPS: u32 = 1_000;

/// A player's rating on the Glicko scale (1500-centred).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Glicko2 {
    pub rating: f64,
    pub deviation: f64,
    pub volatility: f64,
}

impl Glicko2 {
    pub const fn new(rating: f64, deviation: f64, volatility: f64) -> Glicko2 {
        Glicko2 {
            rating,
            deviation,
            volatility,
        }
    }

    /// True while the deviation is still too large for the rating to be
    /// trusted; see [`PROVISIONAL_DEVIATION`].
    pub fn is_provisional(&self) -> bool {
        self.deviation >= PROVISIONAL_DEVIATION
    }

    /// The rating on Glickman's internal scale (μ).
    pub fn mu(&self) -> f64 {
        (self.rating - GLICKO_CENTRE) / GLICKO2_SCALE
    }

    /// The deviation on Glickman's internal scale (φ).
    pub fn phi(&self) -> f64 {
        self.deviation / GLICKO2_SCALE
    }
}

/// System constants and limits of one rating pool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Glicko2Settings {
    /// τ: how much the volatility may change per period.
    pub tau: f64,
    /// Rating given to a player who has never played.
    pub initial: Glicko2,
    /// Results are never more certain than this, so ratings keep moving.
    pub deviation_min: f64,
    /// Results are never less certain than a brand-new player.
    pub deviation_max: f64,
    /// Caps volatility so that one streak cannot make a rating erratic.
    pub volatility_max: f64,
    /// Rating periods per day of real time, for [`Glicko2Settings::rate_game`].
    pub periods_per_day: f64,
}

/// The settings Lichess uses for its rating pools.
pub const LICHESS: Glicko2Settings = Glicko2Settings {
    tau: 0.75,
    initial: Glicko2::new(1500.0, 500.0, 0.09),
    deviation_min: 45.0,
    deviation_max: 500.0,
    volatility_max: 0.1,
    periods_per_day: 0.21436,
};

/// The settings of Glickman's worked example: τ = 0.5 and no limit that the
/// example would hit. 350 is the deviation of an unrated player in Glicko, and
/// Glickman's paper does not tie periods to days, so one period per day is an
/// arbitrary choice that only matters for [`Glicko2Settings::rate_game`].
pub const GLICKMAN_EXAMPLE: Glicko2Settings = Glicko2Settings {
    tau: 0.5,
    initial: Glicko2::new(1500.0, 350.0, 0.06),
    deviation_min: 0.0,
    deviation_max: 350.0,
    volatility_max: f64::INFINITY,
    periods_per_day: 1.0,
};

/// What a rating period's games say about a player, on the internal scale.
struct PeriodEvidence {
    /// v: estimated variance of the rating based only on the games.
    variance: f64,
    /// Σ g(φj)·(sj − Ej): how much better than expected the player scored.
    score_surplus: f64,
}

impl Glicko2Settings {
    /// A newcomer's rating.
    pub fn new_player(&self) -> Glicko2 {
        self.initial
    }

    /// Rates one period for `player`.
    ///
    /// `results` holds each opponent's rating before the period and the
    /// player's score against them (1 win, 0.5 draw, 0 loss).
    /// `elapsed_periods` is the time since the player's previous rated game,
    /// in rating periods; see the module docs for how it is used.
    /// Without games only the deviation grows (rating and volatility stay).
    pub fn rate(
        &self,
        player: Glicko2,
        results: &[(Glicko2, f64)],
        elapsed_periods: f64,
    ) -> Glicko2 {
        // `max` also turns NaN into 0, so bad time input means "no time".
        let elapsed_periods = elapsed_periods.max(0.0);
        let idle = self.idle(player, elapsed_periods);
        if results.is_empty() {
            return idle;
        }
        match self.rate_with_games(player, results, elapsed_periods) {
            Some(rated) => rated,
            None => idle,
        }
    }

    /// Rates one game as one rating period for both players.
    ///
    /// `score_a` is A's score (B scores `1 − score_a`). `days_since_a` and
    /// `days_since_b` are the days since each player's previous rated game,
    /// converted with [`Glicko2Settings::periods_per_day`]. For a player
    /// without a previous game any value (0 is natural) gives the same result,
    /// because their deviation is already at `deviation_max` and the growth is
    /// clamped back to it. Both updates use the opponent's rating before the
    /// game.
    pub fn rate_game(
        &self,
        a: Glicko2,
        b: Glicko2,
        score_a: f64,
        days_since_a: f64,
        days_since_b: f64,
    ) -> (Glicko2, Glicko2) {
        let score_a = clamp_score(score_a);
        let new_a = self.rate(a, &[(b, score_a)], days_since_a * self.periods_per_day);
        let new_b = self.rate(
            b,
            &[(a, 1.0 - score_a)],
            days_since_b * self.periods_per_day,
        );
        (new_a, new_b)
    }

    /// A period without games: only the uncertainty grows, with the old
    /// volatility.
    fn idle(&self, player: Glicko2, elapsed_periods: f64) -> Glicko2 {
        let phi = player.phi();
        let grown_phi =
            (phi * phi + elapsed_periods * player.volatility * player.volatility).sqrt();
        self.within_limits(Glicko2 {
            rating: player.rating,
            deviation: grown_phi * GLICKO2_SCALE,
            volatility: player.volatility,
        })
    }

    /// Steps 3–8 of Glickman's procedure with the Lichess step 6; `None` when
    /// the inputs are too extreme for the arithmetic to stay finite.
    fn rate_with_games(
        &self,
        player: Glicko2,
        results: &[(Glicko2, f64)],
        elapsed_periods: f64,
    ) -> Option<Glicko2> {
        let mu = player.mu();
        let phi = player.phi();
        let evidence = period_evidence(mu, results)?;
        let delta = evidence.variance * evidence.score_surplus;
        let new_volatility =
            new_volatility(player.volatility, phi, evidence.variance, delta, self.tau);
        // Capping the grown uncertainty before step 7 (not only the result)
        // keeps a long absence from making the next game count more than a
        // newcomer's first game, and makes the absence length irrelevant for
        // a player already at the cap.
        let phi_star = (phi * phi + elapsed_periods * new_volatility * new_volatility)
            .sqrt()
            .min(self.deviation_max / GLICKO2_SCALE);
        let new_phi = 1.0 / (1.0 / (phi_star * phi_star) + 1.0 / evidence.variance).sqrt();
        let new_mu = mu + new_phi * new_phi * evidence.score_surplus;
        let rated = Glicko2 {
            rating: new_mu * GLICKO2_SCALE + GLICKO_CENTRE,
            deviation: new_phi * GLICKO2_SCALE,
            volatility: new_volatility,
        };
        let finite =
            rated.rating.is_finite() && rated.deviation.is_finite() && rated.volatility.is_finite();
        finite.then(|| self.within_limits(rated))
    }

    fn within_limits(&self, rating: Glicko2) -> Glicko2 {
        // `max`/`min` rather than `clamp`: `clamp` panics when the limits are
        // NaN or crossed, and settings are plain public data.
        Glicko2 {
            rating: rating.rating,
            deviation: rating
                .deviation
                .max(self.deviation_min)
                .min(self.deviation_max),
            volatility: rating.volatility.min(self.volatility_max),
        }
    }
}

fn clamp_score(score: f64) -> f64 {
    // Constant, ordered bounds: `clamp` cannot panic here. A NaN score stays
    // NaN and ends in the idle fallback.
    score.clamp(0.0, 1.0)
}

/// g(φ): discounts an opponent's result by how uncertain their rating is.
fn opponent_weight(opponent_phi: f64) -> f64 {
    1.0 / (1.0 + 3.0 * opponent_phi * opponent_phi / (std::f64::consts::PI * std::f64::consts::PI))
        .sqrt()
}

/// E(μ, μj, φj): the score the model expects against this opponent.
fn expected_score(mu: f64, opponent_mu: f64, weight: f64) -> f64 {
    1.0 / (1.0 + (-weight * (mu - opponent_mu)).exp())
}

/// Steps 3 and 4 (without multiplying Δ out). `None` when the games carry no
/// information, i.e. every result was certain under the model; Glicko-2's v
/// would be infinite there.
fn period_evidence(mu: f64, results: &[(Glicko2, f64)]) -> Option<PeriodEvidence> {
    let mut information = 0.0;
    let mut score_surplus = 0.0;
    for (opponent, score) in results {
        let weight = opponent_weight(opponent.phi());
        let expected = expected_score(mu, opponent.mu(), weight);
        information += weight * weight * expected * (1.0 - expected);
        score_surplus += weight * (clamp_score(*score) - expected);
    }
    // Written so that NaN also takes the `None` branch.
    if information > 0.0 && information.is_finite() {
        Some(PeriodEvidence {
            variance: 1.0 / information,
            score_surplus,
        })
    } else {
        None
    }
}

/// Step 5: the new volatility σ', the root of Glickman's f found with the
/// Illinois variant of regula falsi.
fn new_volatility(volatility: f64, phi: f64, variance: f64, delta: f64, tau: f64) -> f64 {
    let log_old_variance = (volatility * volatility).ln();
    let phi_squared = phi * phi;
    let delta_squared = delta * delta;
    let f = |x: f64| {
        let exp_x = x.exp();
        let spread = phi_squared + variance + exp_x;
        exp_x * (delta_squared - phi_squared - variance - exp_x) / (2.0 * spread * spread)
            - (x - log_old_variance) / (tau * tau)
    };

    // `side_a` and `side_b` are the paper's A and B: the root always lies
    // between them, and `side_b` is the newest estimate.
    let mut side_a = log_old_variance;
    let mut side_b = if delta_squared > phi_squared + variance {
        (delta_squared - phi_squared - variance).ln()
    } else {
        let mut steps_down = 1;
        while f(log_old_variance - f64::from(steps_down) * tau) < 0.0
            && steps_down < MAX_BRACKET_STEPS
        {
            steps_down += 1;
        }
        log_old_variance - f64::from(steps_down) * tau
    };
    let mut f_a = f(side_a);
    let mut f_b = f(side_b);

    let mut steps = 0;
    while (side_b - side_a).abs() > VOLATILITY_TOLERANCE && steps < MAX_ILLINOIS_STEPS {
        let candidate = side_a + (side_a - side_b) * f_a / (f_b - f_a);
        let f_candidate = f(candidate);
        // `<=` (not `<`): with `<`, an exact root f(C) = 0 would halve f_a
        // forever without shrinking the bracket.
        if f_candidate * f_b <= 0.0 {
            side_a = side_b;
            f_a = f_b;
        } else {
            // Illinois: halving the stale end's value stops regula falsi from
            // creeping towards the root from one side only.
            f_a /= 2.0;
        }
        side_b = candidate;
        f_b = f_candidate;
        steps += 1;
    }
    (side_a / 2.0).exp()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn assert_close(actual: f64, expected: f64, tolerance: f64, what: &str) {
        assert!(
            (actual - expected).abs() <= tolerance,
            "{what}: got {actual}, expected {expected} ± {tolerance}"
        );
    }

    fn assert_rating(actual: Glicko2, expected: Glicko2) {
        assert_close(actual.rating, expected.rating, 1e-6, "rating");
        assert_close(actual.deviation, expected.deviation, 1e-6, "deviation");
        assert_close(actual.volatility, expected.volatility, 1e-9, "volatility");
    }

    fn glickman_player() -> Glicko2 {
        Glicko2::new(1500.0, 200.0, 0.06)
    }

    fn glickman_results() -> [(Glicko2, f64); 3] {
        [
            (Glicko2::new(1400.0, 30.0, 0.06), 1.0),
            (Glicko2::new(1550.0, 100.0, 0.06), 0.0),
            (Glicko2::new(1700.0, 300.0, 0.06), 0.0),
        ]
    }

    fn days(d: f64) -> f64 {
        d * LICHESS.periods_per_day
    }

    #[test]
    fn glickman_example_intermediate_values() {
        let player = glickman_player();
        let evidence = period_evidence(player.mu(), &glickman_results()).expect("informative");
        let delta = evidence.variance * evidence.score_surplus;
        // The paper carries g and E rounded to 4 decimals, which moves v and
        // Δ in the 4th decimal (unrounded: 1.77898, -0.48393).
        assert_close(evidence.variance, 1.7785, 0.001, "v");
        assert_close(delta, -0.4834, 0.001, "Δ");
        let sigma = new_volatility(
            player.volatility,
            player.phi(),
            evidence.variance,
            delta,
            0.5,
        );
        assert_close(sigma, 0.05999, 0.00001, "σ'");
    }

    #[test]
    fn glickman_example_result() {
        let after = GLICKMAN_EXAMPLE.rate(glickman_player(), &glickman_results(), 1.0);
        // The paper rounds μ' and φ' to 4 decimals before converting back, so
        // its 1464.06 is the unrounded 1464.0507 plus that rounding error.
        assert_close(after.mu(), -0.2069, 0.00005, "μ'");
        assert_close(after.phi(), 0.8722, 0.00005, "φ'");
        assert_close(after.rating, 1464.06, 0.01, "rating");
        assert_close(after.deviation, 151.52, 0.005, "deviation");
        assert_close(after.volatility, 0.05999, 0.00001, "volatility");
        // Full precision, from scripts/rating_vectors.py.
        assert_rating(
            after,
            Glicko2::new(1464.0506705393013, 151.51652412385727, 0.059995984286488495),
        );
    }

    // Expected values in the following tests come from scripts/rating_vectors.py,
    // an independent Python implementation of the same formulas.

    #[test]
    fn lichess_one_period_with_glickman_opponents() {
        let after = LICHESS.rate(glickman_player(), &glickman_results(), 1.0);
        assert_rating(
            after,
            Glicko2::new(1464.0506798614226, 151.5165044787692, 0.05999096598469106),
        );
    }

    #[test]
    fn lichess_upset_sequence() {
        let mut a = Glicko2::new(1400.0, 80.0, 0.06);
        let mut b = Glicko2::new(1900.0, 50.0, 0.05);
        let games = [(1.0, 2.0, 1.0), (0.0, 3.0, 3.0), (1.0, 0.5, 7.0)];
        let expected = [
            (
                Glicko2::new(1434.2615769851207, 79.8590739241815, 0.06002438593426344),
                Glicko2::new(1886.8299849556633, 50.054761625350196, 0.05001364260542442),
            ),
            (
                Glicko2::new(1431.6979246042154, 79.75012131499868, 0.06002260368160286),
                Glicko2::new(1887.8802963802577, 50.40001228667526, 0.050012604481249195),
            ),
            (
                Glicko2::new(1464.9525987200823, 79.29646818339694, 0.060045718564182886),
                Glicko2::new(1874.225377584834, 51.36906208726347, 0.05002556482627732),
            ),
        ];
        for ((score_a, days_a, days_b), (expected_a, expected_b)) in games.into_iter().zip(expected)
        {
            (a, b) = LICHESS.rate_game(a, b, score_a, days_a, days_b);
            assert_rating(a, expected_a);
            assert_rating(b, expected_b);
        }
    }

    #[test]
    fn lichess_draw_sequence() {
        let mut c = Glicko2::new(1800.0, 120.0, 0.07);
        let mut d = Glicko2::new(1600.0, 90.0, 0.065);
        let games = [(0.5, 10.0, 4.0), (0.5, 1.0, 1.0), (1.0, 2.0, 5.0)];
        let expected = [
            (
                Glicko2::new(1781.098224539872, 116.50828429124518, 0.06999471931318588),
                Glicko2::new(1610.383722802142, 88.63086764906492, 0.06499574560127978),
            ),
            (
                Glicko2::new(1765.7773900390748, 112.02480499967513, 0.06998826479573743),
                Glicko2::new(1619.1411735622519, 86.7780384712761, 0.06499057980141061),
            ),
            (
                Glicko2::new(1785.6316570571582, 107.93473827779637, 0.06998306433074923),
                Glicko2::new(1606.8035685194639, 85.51925675660065, 0.06498659159217123),
            ),
        ];
        for ((score_c, days_c, days_d), (expected_c, expected_d)) in games.into_iter().zip(expected)
        {
            (c, d) = LICHESS.rate_game(c, d, score_c, days_c, days_d);
            assert_rating(c, expected_c);
            assert_rating(d, expected_d);
        }
    }

    #[test]
    fn lichess_long_inactivity_sequence() {
        let e = Glicko2::new(1650.0, 70.0, 0.06);
        let f = Glicko2::new(1600.0, 100.0, 0.06);
        let (e, f) = LICHESS.rate_game(e, f, 1.0, 1.0, 1.0);
        assert_rating(
            e,
            Glicko2::new(1661.2560017051967, 68.92411904632375, 0.059998256550833545),
        );
        assert_rating(
            f,
            Glicko2::new(1577.5126832723013, 96.44476441430703, 0.05999802759154828),
        );

        let idle = LICHESS.rate(e, &[], days(400.0));
        assert_rating(
            idle,
            Glicko2::new(1661.2560017051967, 118.59700970647563, 0.059998256550833545),
        );
        assert!(idle.is_provisional() && !e.is_provisional());

        let (e, f) = LICHESS.rate_game(e, f, 0.0, 400.0, 2.0);
        assert_rating(
            e,
            Glicko2::new(1618.133847599174, 113.02652174822067, 0.0600016434061289),
        );
        assert_rating(
            f,
            Glicko2::new(1607.758734825871, 93.47178509866427, 0.06000120703292098),
        );
    }

    #[test]
    fn lichess_inactivity_is_clamped_at_max_deviation() {
        // Unclamped, scripts/rating_vectors.py gives 501.357487442304.
        let after = LICHESS.rate(Glicko2::new(1500.0, 480.0, 0.09), &[], days(400.0));
        assert_eq!(after, Glicko2::new(1500.0, 500.0, 0.09));
    }

    #[test]
    fn no_games_and_no_time_changes_nothing() {
        let player = Glicko2::new(1723.0, 81.0, 0.06);
        assert_eq!(LICHESS.rate(player, &[], 0.0), player);
        assert_eq!(LICHESS.rate(player, &[], -3.0), player);
    }

    #[test]
    fn new_players_are_provisional_and_days_do_not_matter_for_them() {
        let newcomer = LICHESS.new_player();
        assert!(newcomer.is_provisional());
        let opponent = Glicko2::new(1500.0, 60.0, 0.06);
        let (soon, _) = LICHESS.rate_game(newcomer, opponent, 1.0, 0.0, 1.0);
        let (late, _) = LICHESS.rate_game(newcomer, opponent, 1.0, 10_000.0, 1.0);
        assert_eq!(soon, late);
        assert_rating(
            soon,
            Glicko2::new(1735.7300743070443, 288.743292652057, 0.08999450510937422),
        );
        assert!(!Glicko2::new(1500.0, PROVISIONAL_DEVIATION - 0.01, 0.06).is_provisional());
        assert!(Glicko2::new(1500.0, PROVISIONAL_DEVIATION, 0.06).is_provisional());
    }

    #[test]
    fn degenerate_inputs_terminate_and_stay_finite() {
        let sane = Glicko2::new(1500.0, 100.0, 0.06);
        let cases = [
            (Glicko2::new(1500.0, 100.0, 0.0), sane),
            (
                Glicko2::new(1e300, 100.0, 0.06),
                Glicko2::new(-1e300, 100.0, 0.06),
            ),
            (Glicko2::new(1500.0, 1e300, 0.06), sane),
            (
                Glicko2::new(1500.0, 0.0, 1e300),
                Glicko2::new(1500.0, 1e300, 0.06),
            ),
            (Glicko2::new(-1e300, 0.0, 1e-300), sane),
        ];
        let mut zero_tau = LICHESS;
        zero_tau.tau = 0.0;
        for settings in [LICHESS, GLICKMAN_EXAMPLE, zero_tau] {
            for (player, opponent) in cases {
                for score in [0.0, 0.5, 1.0] {
                    let after = settings.rate(player, &[(opponent, score)], 1e300);
                    assert!(
                        after.rating.is_finite(),
                        "{player:?} {opponent:?} {after:?}"
                    );
                    assert!(
                        after.deviation.is_finite(),
                        "{player:?} {opponent:?} {after:?}"
                    );
                    assert!(
                        after.volatility.is_finite(),
                        "{player:?} {opponent:?} {after:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn non_finite_inputs_do_not_hang() {
        let nan = Glicko2::new(f64::NAN, f64::NAN, f64::NAN);
        let inf = Glicko2::new(f64::INFINITY, f64::INFINITY, f64::INFINITY);
        let sane = Glicko2::new(1500.0, 100.0, 0.06);
        for (player, opponent) in [(nan, sane), (sane, nan), (inf, sane), (sane, inf)] {
            let _ = LICHESS.rate(player, &[(opponent, f64::NAN)], f64::NAN);
            let _ = LICHESS.rate_game(player, opponent, 1.0, f64::INFINITY, f64::NAN);
        }
    }

    fn arbitrary_rating() -> impl Strategy<Value = Glicko2> {
        (0.0..3500.0, 45.0..500.0, 0.01..0.1)
            .prop_map(|(rating, deviation, volatility)| Glicko2::new(rating, deviation, volatility))
    }

    fn arbitrary_score() -> impl Strategy<Value = f64> {
        prop_oneof![Just(0.0), Just(0.5), Just(1.0)]
    }

    /// One step of a player's history: an idle stretch, or a game after some
    /// days against some opponent.
    fn arbitrary_event() -> impl Strategy<Value = (Option<(Glicko2, f64)>, f64)> {
        (
            proptest::option::of((arbitrary_rating(), arbitrary_score())),
            0.0..2000.0,
        )
    }

    proptest! {
        #[test]
        fn limits_hold_and_rating_stays_finite_over_any_history(
            start in arbitrary_rating(),
            events in proptest::collection::vec(arbitrary_event(), 1..40),
        ) {
            let mut player = start;
            for (game, days_idle) in events {
                player = match game {
                    Some((opponent, score)) => {
                        LICHESS.rate_game(player, opponent, score, days_idle, 1.0).0
                    }
                    None => LICHESS.rate(player, &[], days(days_idle)),
                };
                prop_assert!((45.0..=500.0).contains(&player.deviation), "{player:?}");
                prop_assert!(player.volatility <= 0.1, "{player:?}");
                prop_assert!(player.rating.is_finite(), "{player:?}");
            }
        }

        #[test]
        fn deviation_grows_weakly_with_inactivity(
            player in arbitrary_rating(),
            opponent in arbitrary_rating(),
            score in arbitrary_score(),
            shorter in 0.0..3000.0f64,
            extra in 0.0..3000.0f64,
        ) {
            let longer = shorter + extra;
            let idle_short = LICHESS.rate(player, &[], days(shorter));
            let idle_long = LICHESS.rate(player, &[], days(longer));
            prop_assert!(player.deviation <= idle_short.deviation);
            prop_assert!(idle_short.deviation <= idle_long.deviation);
            let played_short = LICHESS.rate(player, &[(opponent, score)], days(shorter));
            let played_long = LICHESS.rate(player, &[(opponent, score)], days(longer));
            prop_assert!(played_short.deviation <= played_long.deviation);
        }

        #[test]
        fn a_win_never_lowers_the_winner_and_never_raises_the_loser(
            winner in arbitrary_rating(),
            loser in arbitrary_rating(),
            days_winner in 0.0..1000.0f64,
            days_loser in 0.0..1000.0f64,
        ) {
            let (winner_after, loser_after) =
                LICHESS.rate_game(winner, loser, 1.0, days_winner, days_loser);
            prop_assert!(winner_after.rating >= winner.rating);
            prop_assert!(loser_after.rating <= loser.rating);
            // And the same through the general entry point, seen from the loser.
            let (loser_again, winner_again) =
                LICHESS.rate_game(loser, winner, 0.0, days_loser, days_winner);
            prop_assert_eq!(loser_again, loser_after);
            prop_assert_eq!(winner_again, winner_after);
        }

        #[test]
        fn any_finite_input_gives_finite_output(
            rating in proptest::num::f64::NORMAL | proptest::num::f64::ZERO,
            deviation in proptest::num::f64::NORMAL | proptest::num::f64::ZERO,
            volatility in proptest::num::f64::NORMAL | proptest::num::f64::ZERO,
            opponent_rating in proptest::num::f64::NORMAL | proptest::num::f64::ZERO,
            opponent_deviation in proptest::num::f64::NORMAL | proptest::num::f64::ZERO,
            score in proptest::num::f64::NORMAL | proptest::num::f64::ZERO,
            periods in proptest::num::f64::NORMAL | proptest::num::f64::ZERO,
        ) {
            let player = Glicko2::new(rating, deviation, volatility);
            let opponent = Glicko2::new(opponent_rating, opponent_deviation, 0.06);
            for settings in [LICHESS, GLICKMAN_EXAMPLE] {
                let after = settings.rate(player, &[(opponent, score)], periods);
                prop_assert!(after.rating.is_finite(), "{after:?}");
                prop_assert!(after.deviation.is_finite(), "{after:?}");
                prop_assert!(after.volatility.is_finite(), "{after:?}");
            }
        }
    }
}
