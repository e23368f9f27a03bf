"""Online policy selectors (scheduler.studies.online.selectors) on hand-made cost sequences.

Every expected choice is derived here from the definitions (cumulative simulated cost,
discounted bandit estimate, UCB index), never read back from the implementation; the statistical
checks use binomial / uniform standard deviations with a 4-sigma margin and fixed seeds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.core.errors import ConfigurationError
from scheduler.policies import STUDY_POLICIES
from scheduler.studies.online.selectors import (
    SELECTORS,
    PeriodFeedback,
    Selector,
    make_selector,
    parse_spec,
)

P2 = ("FCFS", "SPF")
P3 = ("FCFS", "SPF", "LPF")
P4 = ("FCFS", "SPF", "LPF", "SQF")


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def fb(
    policy: str, wait_s: float = 0.0, jobs: int = 1, costs: Sequence[float] | None = None
) -> PeriodFeedback:
    """A feedback; ``costs`` are the simulated waits w(t; P) in set order."""
    simulated = None if costs is None else np.asarray(costs, dtype=float)
    return PeriodFeedback(policy, wait_s, jobs, simulated)


def run_costs(selector: Selector, costs: Sequence[Sequence[float]]) -> list[str]:
    """Feed simulated cost vectors period by period; the choices of periods 0..len(costs)."""
    choices = []
    for t, vector in enumerate(costs):
        policy = selector.choose(t)
        choices.append(policy)
        selector.observe(t, fb(policy, 1.0, 1, vector))
    choices.append(selector.choose(len(costs)))
    return choices


def run_bandit(
    selector: Selector, live: Sequence[tuple[float, int]], policies: Sequence[str]
) -> list[str]:
    """Feed ``live[t] = (w_t, n_t)`` whatever the choice; choices of periods 0..len(live)."""
    choices = []
    for t, (wait_s, jobs) in enumerate(live):
        policy = selector.choose(t)
        assert policy in policies
        choices.append(policy)
        selector.observe(t, fb(policy, wait_s, jobs))
    choices.append(selector.choose(len(live)))
    return choices


def play(
    selector: Selector,
    mean_wait_s: Callable[[int], Sequence[float]],
    periods: int,
    env: np.random.Generator,
    scale: float = 3600.0,
) -> np.ndarray:
    """A synthetic stochastic workload: policy i has per-job mean wait ``mean_wait_s(t)[i]``
    hours (log-normal noise, 20-59 finished jobs per period). Returns the chosen indices."""
    chosen = np.empty(periods, dtype=np.int64)
    for t in range(periods):
        policy = selector.choose(t)
        index = selector.policies.index(policy)
        jobs = int(env.integers(20, 60))
        per_job_s = mean_wait_s(t)[index] * env.lognormal(0.0, 0.3) * scale
        selector.observe(t, fb(policy, per_job_s * jobs, jobs))
        chosen[t] = index
    return chosen


def within_binomial(successes: int, trials: int, p: float, sigmas: float = 4.0) -> bool:
    return abs(successes - trials * p) <= sigmas * math.sqrt(trials * p * (1 - p))


# -- fixed, random ------------------------------------------------------------------------------


def test_fixed_always_returns_its_policy() -> None:
    selector = make_selector("fixed:spf", STUDY_POLICIES, rng=rng())
    assert selector.name == "fixed:SPF"
    assert not selector.needs_simulation
    for t in range(50):
        assert selector.choose(t) == "SPF"
        selector.observe(t, fb("SPF", 100.0 * t, t))
    assert [entry["policy"] for entry in selector.history] == ["SPF"] * 50


def test_fixed_accepts_a_known_policy_outside_the_set() -> None:
    selector = make_selector("fixed:WFP3", P3, rng=rng())
    assert selector.choose(0) == "WFP3"


def test_random_shares_are_uniform_and_seeded() -> None:
    periods = 6000
    selector = make_selector("random", P3, rng=rng(7))
    choices = []
    for t in range(periods):
        choices.append(selector.choose(t))
        selector.observe(t, fb(choices[-1]))
    for policy in P3:
        assert within_binomial(choices.count(policy), periods, 1 / 3), policy

    def sequence(seed: int) -> list[str]:
        again = make_selector("random", P3, rng=rng(seed))
        out = []
        for t in range(200):
            out.append(again.choose(t))
            again.observe(t, fb(out[-1]))
        return out

    assert sequence(7) == choices[:200]
    assert sequence(8) != choices[:200]


# -- full simulated feedback --------------------------------------------------------------------


def test_full_picks_the_cheapest_policy_after_one_period() -> None:
    selector = make_selector("full", P3, rng=rng())
    assert selector.needs_simulation
    choices = run_costs(selector, [[3, 1, 2], [3, 1, 2]])
    assert choices == ["FCFS", "SPF", "SPF"]


def test_full_minimises_the_sum_not_the_last_period() -> None:
    # A = FCFS, B = SPF: period 1 favours A (1 < 5), the sum favours B (5 < 11).
    choices = run_costs(make_selector("full", P2, rng=rng()), [[10, 0], [1, 5]])
    assert choices[2] == "SPF"
    assert choices[1] == "SPF"  # after period 0 alone, B (0) is already cheaper


def test_full_discount_changes_the_choice() -> None:
    costs = [[0.0, 10.0], [8.0, 0.0]]
    # W(P) = sum_{t<2} lambda^(1-t) w(t; P)
    plain = [0.0 + 8.0, 10.0 + 0.0]  # lambda = 1: (8, 10) -> FCFS
    halved = [0.5 * 0.0 + 8.0, 0.5 * 10.0 + 0.0]  # lambda = 0.5: (8, 5) -> SPF
    one = make_selector("full", P2, rng=rng())
    half = make_selector("full(discount=0.5)", P2, rng=rng())
    assert run_costs(one, costs)[2] == "FCFS"
    assert run_costs(half, costs)[2] == "SPF"
    assert one.history[2]["cumulative"] == plain
    assert half.history[2]["cumulative"] == halved
    keyword = make_selector("full", P2, rng=rng(), discount=0.5)
    assert keyword.name == "full(discount=0.5)"
    assert run_costs(keyword, costs)[2] == "SPF"


def test_full_ties_go_to_the_first_policy_in_set_order() -> None:
    assert run_costs(make_selector("full", ("LPF", "SPF", "FCFS"), rng=rng()), [[5, 2, 2]])[1] == (
        "SPF"
    )
    assert run_costs(make_selector("full", ("LPF", "FCFS", "SPF"), rng=rng()), [[4, 4, 4]])[1] == (
        "LPF"
    )


def test_full_period_zero_runs_the_initial_policy() -> None:
    assert make_selector("full", ("SPF", "FCFS"), rng=rng()).choose(0) == "FCFS"
    inline = make_selector("full(initial=lpf)", P3, rng=rng())
    assert inline.name == "full(initial=LPF)"
    assert inline.choose(0) == "LPF"
    assert make_selector("noisy", P3, rng=rng(), initial="spf").choose(0) == "SPF"
    assert inline.history[0]["cumulative"] is None


@settings(max_examples=60, deadline=None)
@given(
    costs=st.lists(st.lists(st.integers(0, 20), min_size=3, max_size=3), min_size=1, max_size=12),
    discount=st.sampled_from([1.0, 0.5, 0.25]),
)
def test_full_is_the_argmin_of_the_discounted_sum(costs: list[list[int]], discount: float) -> None:
    """Integer costs and power-of-two discounts: the sums are exact, ties are real ties."""
    selector = make_selector("full", P3, rng=rng(), discount=discount)
    choices = run_costs(selector, costs)
    assert choices[0] == "FCFS"
    for T in range(1, len(costs) + 1):
        W = [sum(discount ** (T - 1 - t) * costs[t][p] for t in range(T)) for p in range(3)]
        assert choices[T] == P3[W.index(min(W))]  # list.index: the first minimum


# -- noisy simulated feedback -------------------------------------------------------------------


def noisy_run(seed: int, periods: int, spec: str = "noisy") -> tuple[Selector, np.ndarray]:
    env = rng(1234)
    true = env.uniform(100.0, 110.0, size=(periods, 3))  # close costs: the noise matters
    selector = make_selector(spec, P3, rng=rng(seed))
    run_costs(selector, true.tolist())
    return selector, true


def test_noisy_costs_are_true_costs_times_uniform_factors() -> None:
    periods = 2000
    selector, true = noisy_run(3, periods)
    assert selector.name == "noisy(low=0.8,high=1.2)"
    recorded = np.array([entry["costs"] for entry in selector.history[:periods]])
    ratios = recorded / true
    assert ratios.min() >= 0.8 * (1 - 1e-12)
    assert ratios.max() <= 1.2 * (1 + 1e-12)
    assert np.ptp(ratios) > 0.3  # really drawn, per policy and period
    assert not np.allclose(ratios[:, 0], ratios[:, 1])
    sd_mean = (0.4 / math.sqrt(12)) / math.sqrt(ratios.size)  # U[0.8, 1.2]
    assert abs(ratios.mean() - 1.0) <= 4 * sd_mean
    np.testing.assert_allclose(np.array([e["factors"] for e in selector.history[:periods]]), ratios)


def test_noisy_is_deterministic_per_seed() -> None:
    first, _ = noisy_run(5, 100)
    again, _ = noisy_run(5, 100)
    other, _ = noisy_run(6, 100)
    assert [e["costs"] for e in first.history[:100]] == [e["costs"] for e in again.history[:100]]
    assert [e["policy"] for e in first.history] == [e["policy"] for e in again.history]
    assert [e["costs"] for e in first.history[:100]] != [e["costs"] for e in other.history[:100]]


def test_noisy_choice_is_the_argmin_of_the_cumulated_noisy_costs() -> None:
    periods = 300
    selector, true = noisy_run(9, periods)
    W = np.zeros(3)
    for T in range(1, periods + 1):
        W += np.array(selector.history[T - 1]["costs"])
        assert selector.history[T]["policy"] == P3[int(np.argmin(W))]
    # ... which differs from the noise-free choice at least once (the noise is not inert)
    exact = make_selector("full", P3, rng=rng())
    exact_choices = run_costs(exact, true.tolist())
    assert exact_choices != [entry["policy"] for entry in selector.history]
    # a degenerate noise range is the full selector
    flat, _ = noisy_run(9, periods, "noisy(low=1,high=1)")
    assert [entry["policy"] for entry in flat.history] == exact_choices


# -- epsilon-greedy bandit ----------------------------------------------------------------------


def test_bandit_as_published_has_no_forced_round() -> None:
    """#16 (9): eq. 6.8-6.9 have no round of untried policies: with no data on any policy the
    greedy policy is ``initial`` (FCFS), then the lowest estimate among the policies with data;
    the untried ones (no estimate, +inf) are only reached by exploration."""
    selector = make_selector("bandit(eps=0)", P4, rng=rng())
    live = [(500.0, 5), (400.0, 5), (300.0, 5)]  # whatever runs, FCFS is the only one with data
    choices = run_bandit(selector, live, P4)
    assert choices == ["FCFS"] * 4
    assert selector.history[1]["estimates"][0] == 100.0
    assert all(math.isnan(x) for x in selector.history[3]["estimates"][1:])
    assert selector.history[3]["estimates"][0] == pytest.approx(1200.0 / 15)
    # the no-data choice is online.initial
    started = make_selector("bandit(eps=0, initial=LPF)", P4, rng=rng())
    assert started.name == "bandit(eps=0,initial=LPF)"
    assert run_bandit(started, [(10.0, 1)], P4) == ["LPF", "LPF"]


def test_bandit_forced_round_tries_untried_policies_first_in_set_order() -> None:
    selector = make_selector("bandit(eps=0, forced=1)", P4, rng=rng())
    assert selector.name == "bandit(eps=0,forced=1)"
    assert make_selector("bandit(eps=0)", P4, rng=rng(), forced_round=True).name == selector.name
    # the first policy tried looks perfect (no wait at all), yet the untried ones come first
    live = [(0.0, 5), (500.0, 5), (400.0, 5), (300.0, 5)]
    choices = run_bandit(selector, live, P4)
    assert choices[:4] == list(P4)
    assert choices[4] == "FCFS"  # estimates (0, 100, 80, 60): greedy
    assert selector.history[4]["estimates"] == [0.0, 100.0, 80.0, 60.0]
    assert all(math.isnan(x) for x in selector.history[0]["estimates"])


def test_bandit_estimate_has_a_discounted_numerator_and_a_plain_count() -> None:
    lam = 0.5
    # (policy, w_t in s, n_t): per-job means 10, 8, 6
    log = [("FCFS", 100.0, 10), ("SPF", 40.0, 5), ("FCFS", 60.0, 10)]

    def estimate(T: int, policy: str) -> float:
        """sum_{t<T, P_t=P} lam^(T-1-t) w_t / sum_{t<T, P_t=P} n_t."""
        mine = [(t, w, n) for t, (p, w, n) in enumerate(log[:T]) if p == policy]
        return sum(lam ** (T - 1 - t) * w for t, w, _ in mine) / sum(n for _, _, n in mine)

    assert [estimate(2, "FCFS"), estimate(2, "SPF")] == [5.0, 8.0]  # -> FCFS
    assert [estimate(3, "FCFS"), estimate(3, "SPF")] == [4.25, 4.0]  # -> SPF
    # Alternatives that choose otherwise: undiscounted (10, 8) -> SPF at T=2, and a discounted
    # denominator too (85/12.5 = 6.8, 20/2.5 = 8) -> FCFS at T=3. (The forced round makes
    # period 1 run SPF.)
    selector = make_selector("bandit(eps=0, discount=0.5, forced=1)", P2, rng=rng())
    assert selector.name == "bandit(eps=0,discount=0.5,forced=1)"
    choices = run_bandit(selector, [(w, n) for _, w, n in log], P2)
    assert choices == ["FCFS", "SPF", "FCFS", "SPF"]
    assert selector.history[2]["estimates"] == [5.0, 8.0]
    assert selector.history[3]["estimates"] == [4.25, 4.0]


@pytest.mark.parametrize("forced", [0, 1])
def test_bandit_policy_without_finished_jobs_has_no_estimate_and_never_looks_best(
    forced: int,
) -> None:
    """#16 (9): a policy that ran while no job finished used to get the estimate 0 and look
    best; it has no data (NaN, +inf), and a zero-count period never makes an estimate of 0."""
    selector = make_selector(f"bandit(eps=0,forced={forced})", P2, rng=rng())
    choices = run_bandit(selector, [(0.0, 0), (50.0, 5), (30.0, 5)], P2)
    if forced:  # FCFS ran first without a finished job, SPF in the round: SPF from then on
        assert choices == ["FCFS", "SPF", "SPF", "SPF"]
        assert math.isnan(selector.history[2]["estimates"][0])
        assert selector.history[2]["estimates"][1] == 10.0
    else:  # no data anywhere after period 0: the initial policy FCFS again, then its data
        assert choices == ["FCFS", "FCFS", "FCFS", "FCFS"]
        assert all(math.isnan(x) for x in selector.history[1]["estimates"])
        assert selector.history[2]["estimates"][0] == 10.0  # 50 s / 5 jobs, not (0 + 50) / 5
        assert math.isnan(selector.history[3]["estimates"][1])
    for entry in selector.history:
        assert 0.0 not in entry["estimates"]


def bandit_shares(epsilon: float, periods: int, seed: int = 11) -> tuple[Selector, np.ndarray]:
    selector = make_selector("bandit", P3, rng=rng(seed), epsilon=epsilon)
    play(selector, lambda t: [1.0, 2.0, 3.0], periods + 3, rng(seed + 1))
    return selector, np.array([P3.index(e["policy"]) for e in selector.history])


def greedy_from_estimates(entry: dict) -> int:
    """The published greedy choice: the lowest estimate among the policies with one, else the
    initial policy (FCFS, index 0)."""
    estimates = np.array(entry["estimates"])
    if np.isnan(estimates).all():
        return 0
    return int(np.nanargmin(estimates))


def test_bandit_explores_with_probability_epsilon() -> None:
    periods, k, eps = 5000, 3, 0.3
    selector, _ = bandit_shares(eps, periods)
    after = selector.history[k:]
    non_greedy = sum(P3.index(e["policy"]) != greedy_from_estimates(e) for e in after)
    # a uniform exploration pick coincides with the greedy policy 1 time in k
    assert within_binomial(non_greedy, periods, eps * (k - 1) / k)
    assert within_binomial(sum(e["explored"] for e in after), periods, eps)
    assert all(e["greedy"] == P3[greedy_from_estimates(e)] for e in after)


def test_bandit_with_epsilon_one_is_uniform() -> None:
    periods = 3000
    _, chosen = bandit_shares(1.0, periods)
    for index in range(3):
        assert within_binomial(int((chosen == index).sum()), periods + 3, 1 / 3)


def test_bandit_with_epsilon_zero_never_explores() -> None:
    selector, chosen = bandit_shares(0.0, 1000)
    assert all(P3.index(e["policy"]) == greedy_from_estimates(e) for e in selector.history)
    assert not any(e["explored"] for e in selector.history)
    # no exploration and no forced round: the initial policy FCFS (here the best) throughout
    assert (chosen == 0).all()


def test_bandit_is_deterministic_per_seed() -> None:
    _, first = bandit_shares(0.3, 300, seed=4)
    _, again = bandit_shares(0.3, 300, seed=4)
    _, other = bandit_shares(0.3, 300, seed=5)
    assert first.tolist() == again.tolist()
    assert first.tolist() != other.tolist()


# -- UCB, sliding-window UCB, Thompson ----------------------------------------------------------


def naive_ucb(live: Callable[[int, int], tuple[float, int]], periods: int) -> list[int]:
    """UCB1 on raw per-job mean waits (no normalisation), for comparison."""
    sums, counts, out = np.zeros(3), np.zeros(3), []
    for t in range(periods):
        if (counts == 0).any():
            i = int(np.flatnonzero(counts == 0)[0])
        else:
            i = int(np.argmin(sums / counts - np.sqrt(2 * math.log(counts.sum()) / counts)))
        wait_s, jobs = live(t, i)
        sums[i] += wait_s / jobs
        counts[i] += 1
        out.append(i)
    return out


def test_ucb_choices_do_not_depend_on_the_unit_of_the_waits() -> None:
    periods = 600
    env = rng(21)
    per_job = np.array([1.0, 1.3, 1.6]) * env.lognormal(0.0, 0.4, size=(periods, 3))
    jobs = env.integers(1, 30, size=(periods, 3))

    def live(t: int, i: int, factor: float = 1.0) -> tuple[float, int]:
        return float(per_job[t, i] * jobs[t, i] * factor), int(jobs[t, i])

    for spec in ("ucb", "swucb(window=30)", "thompson"):
        small = make_selector(spec, P3, rng=rng(2))
        large = make_selector(spec, P3, rng=rng(2))
        for t in range(periods):
            a, b = small.choose(t), large.choose(t)
            assert a == b, (spec, t)
            i = P3.index(a)
            small.observe(t, fb(a, *live(t, i)))
            large.observe(t, fb(b, *live(t, i, 1000.0)))
    # without normalisation the exploration term does not scale with the waits: choices change
    assert naive_ucb(live, periods) != naive_ucb(lambda t, i: live(t, i, 1000.0), periods)


def test_ucb_index_by_hand() -> None:
    selector = make_selector("ucb", P2, rng=rng())
    assert selector.name == "ucb(c=1)"
    # FCFS: per-job mean 10 s; SPF: 30 s; FCFS: 20 s / 2 jobs = 10 s
    choices = run_bandit(selector, [(10.0, 1), (30.0, 1), (20.0, 2)], P2)
    x1 = 10 / 10  # running mean of per-job means: 10
    x2 = 30 / ((10 + 30) / 2)  # 1.5
    x3 = 10 / ((10 + 30 + 10) / 3)  # 0.6
    index2 = [x1 - math.sqrt(2 * math.log(2) / 1), x2 - math.sqrt(2 * math.log(2) / 1)]
    index3 = [(x1 + x3) / 2 - math.sqrt(2 * math.log(3) / 2), x2 - math.sqrt(2 * math.log(3))]
    assert choices == ["FCFS", "SPF", "FCFS", "FCFS"]
    assert [e["x"] for e in selector.history[:3]] == pytest.approx([x1, x2, x3])
    assert selector.history[2]["index"] == pytest.approx(index2)
    assert selector.history[3]["index"] == pytest.approx(index3)
    assert selector.history[3]["counts"] == [2, 1]
    # the exploration weight c multiplies the confidence term
    c = 0.1
    low = make_selector("ucb(c=0.1)", P2, rng=rng())
    run_bandit(low, [(10.0, 1), (30.0, 1), (20.0, 2)], P2)
    expected = [
        (x1 + x3) / 2 - c * math.sqrt(2 * math.log(3) / 2),
        x2 - c * math.sqrt(2 * math.log(3)),
    ]
    assert low.history[3]["index"] == pytest.approx(expected)


def test_ucb_ignores_periods_without_finished_jobs() -> None:
    selector = make_selector("ucb", P3, rng=rng())
    choices = run_bandit(selector, [(0.0, 0), (0.0, 0), (50.0, 5), (10.0, 1), (30.0, 3)], P3)
    # FCFS stays untried while it finishes no job
    assert choices[:6] == ["FCFS", "FCFS", "FCFS", "SPF", "LPF", choices[5]]
    assert selector.history[0]["x"] is None
    assert selector.history[5]["counts"] == [1, 1, 1]


@pytest.mark.parametrize("spec", ["ucb", "thompson", "swucb(window=200)"])
def test_untried_first_then_the_best_arm_dominates(spec: str) -> None:
    selector = make_selector(spec, P3, rng=rng(3))
    chosen = play(selector, lambda t: [2.0, 1.0, 3.0], 2000, rng(4))
    assert chosen[:3].tolist() == [0, 1, 2]
    assert (chosen == 1).mean() > 0.7


def test_swucb_forgets_observations_that_left_the_window() -> None:
    # per-job means: FCFS 30, SPF 10, LPF 20 -> x = 1, 0.5, 1
    live = [(30.0, 1), (10.0, 1), (20.0, 1)]
    plain = make_selector("ucb", P3, rng=rng())
    windowed = make_selector("swucb(window=2)", P3, rng=rng())
    assert windowed.name == "swucb(window=2)"
    assert run_bandit(plain, live, P3)[3] == "SPF"  # all tried: the smallest index
    assert run_bandit(windowed, live, P3)[3] == "FCFS"  # FCFS left the window: untried again
    assert windowed.history[3]["counts"] == [0, 1, 1]


def test_swucb_adapts_to_a_change_faster_than_ucb() -> None:
    """A neglected bad policy becomes the best one: plain UCB sampled it rarely and early, its
    confidence term grows like sqrt(ln N) only, so it keeps the old leader; the window forgets."""
    change, after = 1000, 300

    def means(t: int) -> list[float]:
        return [1.0, 2.0, 3.0] if t < change else [1.0, 2.0, 0.3]

    shares = {"ucb": [], "swucb(window=100)": []}
    for seed in (0, 1, 2):
        for spec, share in shares.items():
            chosen = play(make_selector(spec, P3, rng=rng(seed)), means, change + after, rng(seed))
            share.append(float((chosen[-after:] == 2).mean()))
    assert min(shares["swucb(window=100)"]) > 0.5
    assert np.mean(shares["swucb(window=100)"]) > np.mean(shares["ucb"])


def test_thompson_is_deterministic_per_seed() -> None:
    def chosen(seed: int) -> list[int]:
        selector = make_selector("thompson", P3, rng=rng(seed))
        return play(selector, lambda t: [1.0, 1.1, 1.2], 200, rng(99)).tolist()

    assert chosen(1) == chosen(1)
    assert chosen(1) != chosen(2)


# -- specs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "options", "name"),
    [
        ("FULL", {}, "full"),
        ("full(discount=0.9)", {}, "full(discount=0.9)"),
        ("Full( Discount = 0.9 , initial = spf )", {}, "full(discount=0.9,initial=SPF)"),
        ("noisy", {}, "noisy(low=0.8,high=1.2)"),
        ("noisy", {"noise": (0.9, 1.1)}, "noisy(low=0.9,high=1.1)"),
        ("noisy(low=0.5)", {}, "noisy(low=0.5,high=1.2)"),
        ("bandit", {}, "bandit(eps=0.1)"),
        ("Bandit(EPS=0.3)", {}, "bandit(eps=0.3)"),
        ("bandit(epsilon=0.25,discount=0.5)", {}, "bandit(eps=0.25,discount=0.5)"),
        ("bandit", {"epsilon": 0.3}, "bandit(eps=0.3)"),
        ("bandit(forced=1)", {}, "bandit(eps=0.1,forced=1)"),
        ("bandit(forced=true, initial=spf)", {}, "bandit(eps=0.1,initial=SPF,forced=1)"),
        ("bandit(forced=0)", {"forced_round": True}, "bandit(eps=0.1)"),  # inline wins
        ("bandit(eps=0.2)", {"epsilon": 0.3}, "bandit(eps=0.2)"),  # inline wins
        ("ucb(c=0.5)", {}, "ucb(c=0.5)"),
        ("UCB", {"exploration": 2}, "ucb(c=2)"),
        ("swucb(window=10)", {}, "swucb(window=10)"),
        ("swucb", {}, "swucb(window=20)"),
        ("swucb(window=10,c=0.5)", {}, "swucb(window=10,c=0.5)"),
        ("random", {}, "random"),
        ("Thompson", {}, "thompson"),
        ("fixed:lpf", {}, "fixed:LPF"),
        (" FIXED : fcfs ", {}, "fixed:FCFS"),
    ],
)
def test_spec_names_are_canonical_and_round_trip(spec: str, options: dict, name: str) -> None:
    selector = make_selector(spec, P3, rng=rng(), **options)
    assert selector.name == name
    assert make_selector(selector.name, P3, rng=rng()).name == name
    assert name.split("(")[0].split(":")[0] in SELECTORS.names()


def test_inline_options_reach_the_selector() -> None:
    assert make_selector("full(discount=0.9)", P3, rng=rng()).discount == 0.9
    assert make_selector("bandit(eps=0.3)", P3, rng=rng()).epsilon == 0.3
    assert make_selector("ucb(c=0.5)", P3, rng=rng()).exploration == 0.5
    assert make_selector("swucb(window=10)", P3, rng=rng()).window == 10
    noisy = make_selector("noisy(low=0.9,high=1.0)", P3, rng=rng())
    assert (noisy.low, noisy.high) == (0.9, 1.0)
    flags = {
        name: make_selector(name, P3, rng=rng()).needs_simulation
        for name in SELECTORS.names()
        if name != "fixed"
    }
    assert flags == {
        "random": False,
        "full": True,
        "noisy": True,
        "bandit": False,
        "ucb": False,
        "swucb": False,
        "thompson": False,
    }
    assert make_selector("bandit", ("SPF", "LPF"), rng=rng(), initial="lpf").policies == (
        "SPF",
        "LPF",
    )
    assert make_selector("random", ["spf", "Lpf"], rng=rng()).policies == ("SPF", "LPF")


@pytest.mark.parametrize(
    ("spec", "options", "named"),
    [
        ("foo", {}, "foo"),
        ("bandit(gamma=1)", {}, "gamma"),
        ("random(eps=0.1)", {}, "eps"),
        ("ucb(window=3)", {}, "window"),
        ("bandit(eps=1.5)", {}, "epsilon"),
        ("bandit(eps=-0.1)", {}, "epsilon"),
        ("bandit(eps=abc)", {}, "epsilon"),
        ("bandit(eps=0.1,epsilon=0.2)", {}, "twice"),
        ("bandit(eps=0.3", {}, "malformed"),
        ("bandit(eps)", {}, "eps"),
        ("bandit(forced=2)", {}, "forced_round"),
        ("bandit(forced=yes)", {}, "forced_round"),
        ("bandit(initial=LQF)", {}, "LQF"),
        ("bandit", {"initial": "SQF"}, "no policy has data"),
        ("full(discount=0)", {}, "discount"),
        ("full(discount=1.5)", {}, "discount"),
        ("full(discount=nan)", {}, "discount"),
        ("noisy(low=0,high=1)", {}, "noise"),
        ("noisy(low=1.3,high=1.2)", {}, "noise"),
        ("swucb(window=0)", {}, "window"),
        ("swucb(window=2.5)", {}, "window"),
        ("ucb(c=-1)", {}, "exploration"),
        ("fixed:NOPE", {}, "NOPE"),
        ("fixed", {}, "fixed:P"),
        ("full(initial=LQF)", {}, "LQF"),
        ("full", {"initial": "NOPE"}, "NOPE"),
        ("bandit", {"epsilon": 2.0}, "epsilon"),
        ("full", {"discount": 0.0}, "discount"),
        ("noisy", {"noise": (0.5, 0.4)}, "noise"),
        ("noisy", {"noise": (0.9,)}, "noise"),
        ("swucb", {"window": 0}, "window"),
        ("ucb", {"exploration": -0.5}, "exploration"),
        ("", {}, "malformed"),
    ],
)
def test_bad_specs_and_values_are_configuration_errors(
    spec: str, options: dict, named: str
) -> None:
    with pytest.raises(ConfigurationError, match=named):
        make_selector(spec, P3, rng=rng(), **options)


@pytest.mark.parametrize(
    ("policies", "named"),
    [
        ((), "empty"),
        (("FCFS", "fcfs"), "FCFS"),
        (("FCFS", "NOPE"), "NOPE"),
        ("FCFS", "sequence"),
    ],
)
def test_bad_policy_sets_are_configuration_errors(policies: Sequence[str], named: str) -> None:
    with pytest.raises(ConfigurationError, match=named):
        make_selector("random", policies, rng=rng())


def test_the_rng_must_be_a_generator() -> None:
    with pytest.raises(ConfigurationError, match="Generator"):
        make_selector("random", P3, rng=np.random.RandomState(0))  # type: ignore[arg-type]


# -- call order and feedback checks -------------------------------------------------------------


@pytest.mark.parametrize(
    "calls",
    [
        [("choose", 1)],
        [("observe", 0)],
        [("choose", 0), ("choose", 0)],
        [("choose", 0), ("choose", 1)],
        [("choose", 0), ("observe", 1)],
        [("choose", 0), ("observe", 0), ("observe", 0)],
        [("choose", 0), ("observe", 0), ("choose", 0)],
        [("choose", 0), ("observe", 0), ("choose", 2)],
        [("choose", -1)],
        [("choose", 0.0)],
    ],
)
@pytest.mark.parametrize("spec", ["fixed:FCFS", "full", "bandit"])
def test_out_of_order_calls_are_configuration_errors(spec: str, calls: list) -> None:
    selector = make_selector(spec, P3, rng=rng())
    *valid, (last, period) = calls
    for method, t in valid:
        if method == "choose":
            selector.choose(t)
        else:
            selector.observe(t, fb(selector.history[-1]["policy"], costs=[1, 2, 3]))
    with pytest.raises(ConfigurationError):
        if last == "choose":
            selector.choose(period)
        else:
            policy = selector.history[-1]["policy"] if selector.history else "FCFS"
            selector.observe(period, fb(policy, costs=[1, 2, 3]))


def test_bad_feedback_is_rejected_and_leaves_the_state_unchanged() -> None:
    selector = make_selector("full", P3, rng=rng())
    assert selector.choose(0) == "FCFS"
    with pytest.raises(ConfigurationError, match="SPF"):
        selector.observe(0, fb("SPF", costs=[1, 2, 3]))
    with pytest.raises(ConfigurationError, match="simulated_wait_s"):
        selector.observe(0, fb("FCFS"))
    with pytest.raises(ConfigurationError, match="2 entries"):
        selector.observe(0, fb("FCFS", costs=[1, 2]))
    with pytest.raises(ConfigurationError, match="PeriodFeedback"):
        selector.observe(0, (0, 1.0, 1))  # type: ignore[arg-type]
    selector.observe(0, fb("fcfs", costs=[3, 1, 2]))  # case-insensitive policy name
    assert selector.choose(1) == "SPF"
    assert selector.history[0]["costs"] == [3.0, 1.0, 2.0]


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (("FCFS", -1.0, 1), "live_wait_s"),
        (("FCFS", math.nan, 1), "live_wait_s"),
        (("FCFS", "x", 1), "live_wait_s"),
        (("FCFS", 1.0, -1), "live_jobs"),
        (("FCFS", 1.0, 1.5), "live_jobs"),
        (("FCFS", 1.0, True), "live_jobs"),
        (("FCFS", 1.0, 1, np.ones((2, 2))), "simulated_wait_s"),
        (("FCFS", 1.0, 1, np.array([1.0, -1.0])), "simulated_wait_s"),
        (("FCFS", 1.0, 1, np.array([1.0, np.inf])), "simulated_wait_s"),
        ((3, 1.0, 1), "policy"),
    ],
)
def test_period_feedback_validates_its_fields(arguments: tuple, named: str) -> None:
    with pytest.raises(ConfigurationError, match=named):
        PeriodFeedback(*arguments)


def test_period_feedback_keeps_a_read_only_copy() -> None:
    costs = np.array([1.0, 2.0])
    feedback = PeriodFeedback("FCFS", 5, np.int64(2), costs)
    costs[0] = 99.0
    assert feedback.simulated_wait_s is not None
    assert feedback.simulated_wait_s.tolist() == [1.0, 2.0]
    assert not feedback.simulated_wait_s.flags.writeable
    assert isinstance(feedback.live_wait_s, float) and feedback.live_jobs == 2


# -- history ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ("fixed:SPF", None),
        ("random", None),
        ("full", "costs"),
        ("noisy", "costs"),
        ("bandit", "estimates"),
        ("ucb", "estimates"),
        ("swucb", "estimates"),
        ("thompson", "samples"),
    ],
)
def test_history_has_one_entry_per_period(spec: str, key: str | None) -> None:
    selector = make_selector(spec, P3, rng=rng(1))
    env = rng(2)
    choices = []
    for t in range(12):
        choices.append(selector.choose(t))
        costs = env.uniform(1.0, 2.0, size=3)
        selector.observe(t, fb(choices[-1], float(env.uniform(0, 100)), 3, costs))
        entry = selector.history[t]
        assert entry["period"] == t and entry["policy"] == choices[-1]
        assert entry["live_jobs"] == 3
        if key == "costs":
            assert len(entry["costs"]) == 3
            if spec == "full":
                assert entry["costs"] == costs.tolist()
            else:
                assert entry["costs"] != costs.tolist()
        elif key is not None:
            assert len(entry[key]) == 3
    assert len(selector.history) == 12
    assert [entry["policy"] for entry in selector.history] == choices


def test_registry_holds_one_entry_per_kind_in_display_order() -> None:
    assert SELECTORS.names() == (
        "fixed", "random", "full", "noisy", "bandit", "ucb", "swucb", "thompson",
    )  # fmt: skip
    thesis = {name for name, kind in SELECTORS.items() if kind.thesis}
    assert thesis == {"fixed", "random", "full", "noisy", "bandit"}
    for name, kind in SELECTORS.items():
        assert kind.name == name and kind.description
        spec = "fixed:SPF" if name == "fixed" else name
        selector = make_selector(spec, P3, rng=rng())
        assert selector.needs_simulation == kind.needs_simulation
        assert set(kind.options.values()) <= {
            "discount", "epsilon", "low", "high", "initial", "window", "exploration",
            "forced_round",
        }  # fmt: skip


def test_a_registered_kind_is_understood_by_the_specs() -> None:
    kind = SELECTORS["random"]
    SELECTORS.add("lucky", replace(kind, name="lucky", options={"eps": "epsilon"}), "test")
    try:
        assert parse_spec("Lucky(eps=0.5)") == ("lucky", {"epsilon": "0.5"})
        assert make_selector("lucky", P2, rng=rng()).name == "random"
    finally:
        SELECTORS.remove("lucky")
    with pytest.raises(ConfigurationError, match="unknown selector 'lucky'"):
        parse_spec("lucky")
