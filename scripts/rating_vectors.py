#!/usr/bin/env python3
"""Independent reference vectors for src/rating/{glicko2,fibs}.rs.

Written separately from the Rust code, straight from the formulas:
  * Glickman, "Example of the Glicko-2 system" (2013): steps 1-8, Illinois
    root finding with epsilon = 0.000001, scale 173.7178;
  * the Lichess variant of step 6: phi* = sqrt(phi^2 + t * sigma'^2), where t
    is the number of elapsed rating periods (days * 0.21436), phi* capped at
    the maximum deviation (500 / 173.7178) before step 7, and for a
    player without games phi' = sqrt(phi^2 + t * sigma^2); deviation clamped
    to [45, 500], volatility capped at 0.1;
  * the FIBS rating formula.

The volatility root found by Illinois is cross-checked against plain
bisection, so a bug shared by both implementations of Illinois would show.

Run: python3 scripts/rating_vectors.py   (prints the constants pasted into the Rust tests)
"""

import math
from dataclasses import dataclass, replace

SCALE = 173.7178
EPSILON = 0.000001


@dataclass(frozen=True)
class Player:
    rating: float
    rd: float
    vol: float


@dataclass(frozen=True)
class Config:
    tau: float
    rd_floor: float
    rd_ceiling: float
    vol_ceiling: float
    periods_per_day: float


LICHESS = Config(tau=0.75, rd_floor=45.0, rd_ceiling=500.0, vol_ceiling=0.1,
                 periods_per_day=0.21436)
GLICKMAN = Config(tau=0.5, rd_floor=0.0, rd_ceiling=350.0,
                  vol_ceiling=float("inf"), periods_per_day=1.0)


def volatility_objective(delta, phi, v, tau, sigma):
    a = math.log(sigma ** 2)

    def f(x):
        ex = math.exp(x)
        top = ex * (delta ** 2 - phi ** 2 - v - ex)
        bottom = 2.0 * (phi ** 2 + v + ex) ** 2
        return top / bottom - (x - a) / tau ** 2

    return a, f


def bracket(delta, phi, v, tau, sigma):
    a, f = volatility_objective(delta, phi, v, tau, sigma)
    if delta ** 2 > phi ** 2 + v:
        return a, math.log(delta ** 2 - phi ** 2 - v)
    k = 1
    while f(a - k * tau) < 0:
        k += 1
    return a, a - k * tau


def illinois_volatility(delta, phi, v, tau, sigma):
    _, f = volatility_objective(delta, phi, v, tau, sigma)
    A, B = bracket(delta, phi, v, tau, sigma)
    fA, fB = f(A), f(B)
    while abs(B - A) > EPSILON:
        C = A + (A - B) * fA / (fB - fA)
        fC = f(C)
        if fC * fB <= 0:
            A, fA = B, fB
        else:
            fA = fA / 2
        B, fB = C, fC
    return math.exp(A / 2)


def bisection_volatility(delta, phi, v, tau, sigma):
    _, f = volatility_objective(delta, phi, v, tau, sigma)
    lo, hi = sorted(bracket(delta, phi, v, tau, sigma))
    for _ in range(200):
        mid = (lo + hi) / 2
        # f is decreasing in x, so the root lies where f changes sign.
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    x = (lo + hi) / 2
    return math.exp(x / 2)


def fenced(cfg, rating, rd, vol):
    return Player(rating, min(max(rd, cfg.rd_floor), cfg.rd_ceiling),
                  min(vol, cfg.vol_ceiling))


def glicko2_period(cfg, me, games, t):
    """games: list of (Player opponent, score). t: elapsed rating periods."""
    mu = (me.rating - 1500.0) / SCALE
    phi = me.rd / SCALE
    if not games:
        grown = math.sqrt(phi ** 2 + t * me.vol ** 2) * SCALE
        return fenced(cfg, me.rating, grown, me.vol)

    terms = []
    for opp, score in games:
        mu_j = (opp.rating - 1500.0) / SCALE
        phi_j = opp.rd / SCALE
        g_j = 1.0 / math.sqrt(1.0 + 3.0 * phi_j ** 2 / math.pi ** 2)
        e_j = 1.0 / (1.0 + math.exp(-g_j * (mu - mu_j)))
        terms.append((g_j, e_j, score))

    v = 1.0 / sum(g * g * e * (1.0 - e) for g, e, _ in terms)
    improvement = sum(g * (s - e) for g, e, s in terms)
    delta = v * improvement

    sigma_new = illinois_volatility(delta, phi, v, cfg.tau, me.vol)
    check = bisection_volatility(delta, phi, v, cfg.tau, me.vol)
    # Illinois stops once its bracket in x = ln(sigma^2) is within EPSILON,
    # so sigma itself is only good to about sigma * EPSILON / 2.
    assert abs(sigma_new - check) <= sigma_new * EPSILON, (sigma_new, check)

    phi_star = min(math.sqrt(phi ** 2 + t * sigma_new ** 2), cfg.rd_ceiling / SCALE)
    phi_new = 1.0 / math.sqrt(1.0 / phi_star ** 2 + 1.0 / v)
    mu_new = mu + phi_new ** 2 * improvement
    return fenced(cfg, mu_new * SCALE + 1500.0, phi_new * SCALE, sigma_new)


def one_game(cfg, a, b, score_a, days_a, days_b):
    new_a = glicko2_period(cfg, a, [(b, score_a)], days_a * cfg.periods_per_day)
    new_b = glicko2_period(cfg, b, [(a, 1.0 - score_a)],
                           days_b * cfg.periods_per_day)
    return new_a, new_b


def show(label, p):
    print(f"    {label}: Glicko2 {{ rating: {p.rating!r}, "
          f"deviation: {p.rd!r}, volatility: {p.vol!r} }}")


def glicko2_vectors():
    print("== Glickman 2013 example (tau 0.5, t = 1)")
    me = Player(1500.0, 200.0, 0.06)
    opps = [(Player(1400.0, 30.0, 0.06), 1.0),
            (Player(1550.0, 100.0, 0.06), 0.0),
            (Player(1700.0, 300.0, 0.06), 0.0)]
    after = glicko2_period(GLICKMAN, me, opps, 1.0)
    show("glickman", after)
    print(f"    mu' = {(after.rating - 1500) / SCALE:.4f}, "
          f"phi' = {after.rd / SCALE:.4f}")

    print("== Lichess: Glickman's opponents as one period, t = 1")
    show("lichess_period", glicko2_period(LICHESS, me, opps, 1.0))

    print("== Lichess: upset sequence (games via one_game)")
    a = Player(1400.0, 80.0, 0.06)
    b = Player(1900.0, 50.0, 0.05)
    for i, (score_a, da, db) in enumerate([(1.0, 2.0, 1.0),
                                           (0.0, 3.0, 3.0),
                                           (1.0, 0.5, 7.0)]):
        a, b = one_game(LICHESS, a, b, score_a, da, db)
        show(f"upset game {i + 1} a", a)
        show(f"upset game {i + 1} b", b)

    print("== Lichess: draw sequence")
    c = Player(1800.0, 120.0, 0.07)
    d = Player(1600.0, 90.0, 0.065)
    for i, (score_c, dc, dd) in enumerate([(0.5, 10.0, 4.0),
                                           (0.5, 1.0, 1.0),
                                           (1.0, 2.0, 5.0)]):
        c, d = one_game(LICHESS, c, d, score_c, dc, dd)
        show(f"draw game {i + 1} c", c)
        show(f"draw game {i + 1} d", d)

    print("== Lichess: inactivity sequence")
    e = Player(1650.0, 70.0, 0.06)
    f = Player(1600.0, 100.0, 0.06)
    e, f = one_game(LICHESS, e, f, 1.0, 1.0, 1.0)
    show("idle game 1 e", e)
    show("idle game 1 f", f)
    idle = glicko2_period(LICHESS, e, [], 400.0 * LICHESS.periods_per_day)
    show("idle 400 days e (no game)", idle)
    e, f = one_game(LICHESS, e, f, 0.0, 400.0, 2.0)
    show("idle game 2 e (after 400 days)", e)
    show("idle game 2 f", f)

    print("== Lichess: newcomer's first game; days before it must not matter")
    for days in (0.0, 10000.0):
        n, o = one_game(LICHESS, Player(1500.0, 500.0, 0.09),
                        Player(1500.0, 60.0, 0.06), 1.0, days, 1.0)
        show(f"newcomer after {days} days", n)

    print("== Lichess: clamp at 500 after 400 idle days")
    g = Player(1500.0, 480.0, 0.09)
    raw = math.sqrt((480.0 / SCALE) ** 2
                    + 400.0 * LICHESS.periods_per_day * 0.09 ** 2) * SCALE
    print(f"    unclamped deviation = {raw!r}")
    show("clamped", glicko2_period(LICHESS, g, [], 400.0 * LICHESS.periods_per_day))


def fibs_match(winner, loser, n):
    """winner/loser: (rating, experience). Returns both after the match."""
    (rw, xw), (rl, xl) = winner, loser
    root_n = math.sqrt(n)
    diff = abs(rw - rl)
    underdog_chance = 1.0 / (10.0 ** (diff * root_n / 2000.0) + 1.0)
    favourite_won = rw >= rl
    loser_chance = underdog_chance if favourite_won else 1.0 - underdog_chance
    k_w = max(1.0, 5.0 - xw / 100.0)
    k_l = max(1.0, 5.0 - xl / 100.0)
    return ((rw + 4.0 * k_w * root_n * loser_chance, xw + n),
            (rl - 4.0 * k_l * root_n * loser_chance, xl + n))


def fibs_vectors():
    print("== FIBS")
    cases = [
        ("equal new players, 1 point", (1500.0, 0), (1500.0, 0), 1),
        ("1700/1000 beats 1500/0, 7 points", (1700.0, 1000), (1500.0, 0), 7),
        ("upset: 1500/0 beats 1700/1000, 7 points", (1500.0, 0), (1700.0, 1000), 7),
        ("established 1620/800 beats 1580/450, 5 points", (1620.0, 800), (1580.0, 450), 5),
        ("established upset 1580/450 beats 1620/800, 5 points", (1580.0, 450), (1620.0, 800), 5),
        ("mid experience 1550/250 beats 1450/120, 3 points", (1550.0, 250), (1450.0, 120), 3),
    ]
    for label, w, l, n in cases:
        nw, nl = fibs_match(w, l, n)
        print(f"    {label}: winner {nw[0]!r} ({nw[0] - w[0]!r}), exp {nw[1]}; "
              f"loser {nl[0]!r} ({nl[0] - l[0]!r}), exp {nl[1]}")


if __name__ == "__main__":
    glicko2_vectors()
    fibs_vectors()
