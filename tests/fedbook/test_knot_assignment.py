"""Drivers of the KNOT assignment chapter (book/fedbook/knot/assignment.py): profiles, tables, verdicts."""

from __future__ import annotations

import math
import sys

import numpy as np
import pandas as pd
import pytest
from fedbook.knot import assignment as experiments
from fedbook.papers import knot as paper
from scipy.stats import spearmanr

from fedlib.cluster import lexmin_assignment
from fedlib.learn import pareto_training_times


def synthetic_clients(n_clients: int, seed: int = 0) -> experiments.ProfiledClients:
    rng = np.random.default_rng(seed)
    S = rng.uniform(0.15, 0.6, n_clients)
    return experiments.ProfiledClients(
        times=pareto_training_times(n_clients, random_state=seed),
        disparity=S,
        similarity=1.0 - S + rng.normal(0, 0.02, n_clients),
        n_samples=np.full(n_clients, 50),
        label_skew=rng.random(n_clients),
        source="synthetic",
        is_standin=True,
    )


@pytest.fixture(scope="module")
def profiled():
    return experiments.profile_mnist(20, n_images=1500, random_state=0)


def test_profile_mnist_gives_both_disparities_from_one_round(profiled):
    assert profiled.n_clients == 20
    assert profiled.n_samples.sum() == 1500 and profiled.n_samples.min() >= 10
    for values in (profiled.disparity, profiled.similarity):
        assert values.shape == (20,) and ((0 <= values) & (values <= 1)).all()
    assert spearmanr(profiled.disparity, profiled.similarity).statistic < -0.5  # mirrored axes (different rounds)
    assert (profiled.times >= 20.0).all() and (profiled.times <= 50.0).all()  # Plato's latency model
    assert "Dirichlet(5)" in profiled.source and "lenet5" in profiled.source
    again = experiments.profile_mnist(20, n_images=1500, random_state=0)
    np.testing.assert_array_equal(again.disparity, profiled.disparity)
    frame = profiled.frame()
    assert list(frame.columns)[:2] == ["T_k (s)", "S_k (paper, corrected)"] and len(frame) == 20
    summary = experiments.feature_summary(profiled)
    assert summary["S min"] == pytest.approx(profiled.disparity.min())
    assert summary["anchors S̃ above every S_k"] == int((np.arange(1, 6) / 5 > profiled.disparity.max()).sum())


def test_assign_clients_settings():
    clients = synthetic_clients(40)
    inst = experiments.assign_clients(clients.times, clients.disparity)
    assert (
        inst.assignment.sizes.min() >= 4 and inst.assignment.sizes.max() <= 20 and (inst.lower, inst.upper) == (4, 20)
    )
    assert inst.D.max() == paper.RATING_LEVELS and inst.T_anchor[0] == clients.times.min()
    order = inst.client_order()
    assert sorted(order.tolist()) == list(range(40)) and (np.diff(inst.labels[order]) >= 0).all()
    balanced = experiments.assign_clients(clients.times, clients.disparity, c2="plato")
    assert balanced.assignment.sizes.tolist() == [8] * 5
    intended = experiments.assign_clients(clients.times, clients.similarity, anchors="code", a=1.0, c2="plato",
                                          method="plato_min")  # fmt: skip
    published = experiments.assign_clients(clients.times, clients.similarity, anchors="code", a=1.0, c2="plato",
                                           method="plato_max")  # fmt: skip
    rows = np.arange(40)
    assert published.d[rows, published.labels].sum() > intended.d[rows, intended.labels].sum()
    assert published.d[rows, published.labels].sum() == pytest.approx(
        max(published.d[rows, lab].sum() for lab in [published.labels, intended.labels, balanced.labels])
    )


def test_method_table_sets_every_solver_against_the_exact_lexmin():
    clients = synthetic_clients(60)
    table = experiments.method_table(clients)
    assert list(table.index) == [row[0] for row in experiments.METHOD_ROWS]
    lex = table.loc["lexmin_flow (exact, ours)"]
    assert lex["sorted D vs lexmin"] == "equal"
    assert table.loc["network_simplex (exact, cross-check)", "sorted D vs lexmin"] == "equal"
    minsum = table.loc["minsum_flow (min Σ D)"]
    assert minsum["sum D"] <= lex["sum D"] and minsum["sorted D vs lexmin"] in ("equal", "worse")
    assert table.loc["paper_lp (the paper's λ-LP in float64, GLOP)", "status"] == "no solution (GLOP status 4)"
    solved = table[table["status"] == "solved"]
    assert set(solved["sorted D vs lexmin"]) <= {"equal", "worse"}  # nothing beats the exact lexmin
    assert table.loc["lexmin_flow, balanced c2 = K/N", "c2"] == "12 (K/N)" and lex["c2"] == "6 (K/(2N))"
    published = table.loc["Plato's LP as published (max Σ d, c2 = K/N)"]
    assert published["largest D"][0] > table.loc["Plato's LP as intended (min Σ d, c2 = K/N)", "largest D"][0]


def test_lemma_table_real_counterexample_and_integer_agreement():
    table = experiments.lemma_table(n_pairs=500, random_state=0)
    counter, reals, integers = table.iloc[0], table.iloc[1], table.iloc[2]
    assert counter["disagreements"] == 1 and counter["φ(α)"] > counter["φ(β)"]
    assert counter["φ(α)"] == pytest.approx(2 * 2**0.5)
    assert reals["disagreements"] > 0 and reals["example"]
    assert integers["pairs"] == 4**6 and integers["disagreements"] == 0


def test_tu_table_passes_knots_matrix_and_fails_the_control():
    table = experiments.tu_table(20, n_samples=200, random_state=0)
    knot = table[table["matrix"] == "KNOT's A"]
    control = table[table["matrix"] != "KNOT's A"]
    assert knot["all in {−1, 0, 1}"].all() and (knot["|det| ≥ 2"] == 0).all()
    exhaustive = control[control["check"] == "exhaustive"].iloc[0]
    assert not exhaustive["all in {−1, 0, 1}"] and exhaustive["largest |det|"] >= 2
    assert table.loc[0, "submatrices"] == 8007 and table.loc[4, "shape"] == "50 × 100"


def test_brute_force_table_agrees():
    table = experiments.brute_force_table(n_instances=5, n_clients=6, n_clusters=2, levels=9, random_state=0)
    assert len(table) == 5
    assert (
        table[["lexmin_flow = brute force", "network_simplex = brute force", "minsum_flow = smallest sum"]].all().all()
    )


def test_overflow_and_float_weights():
    K = experiments.overflow_clients(5, 100)
    assert K == 242  # (5K)^100 > 1.797...e308 first at 5K = 1210
    limit = int(sys.float_info.max)
    assert (K * 5) ** 100 > limit >= ((K - 1) * 5) ** 100
    assert experiments.overflow_clients(1, 100) == 1210
    table = experiments.float_weights_table([100, K - 1, K])
    assert np.isinf(table.loc[K, "(KN)^100 in float64"]) and np.isfinite(table.loc[K - 1, "(KN)^100 in float64"])
    assert "paper_lp" not in table
    solved = experiments.float_weights_table([K], solve=True)
    assert solved.loc[K, "paper_lp"] == "overflow: weights past float64"
    assert table.loc[100, "first D with (KN)^D + 1 == (KN)^D"] == 6  # 500^6 > 2^53 > 500^5
    assert table.loc[100, "digits of (K+1)^100, exact"] == len(str(101**100))
    resolution = int(table.loc[100, "resolution Δ (levels)"])
    top = 500.0**100
    assert top + 100 * 500.0 ** (100 - resolution) == top and top + 100 * 500.0 ** (101 - resolution) != top



def test_float64_levels_counts_the_levels_a_double_tells_apart():
    """Well below the overflow, a float64 sum of the paper's costs sees only the top few of the 101 rating levels."""
    assert experiments.float64_levels(100, base=500) == 7  # 500^7 > 100·2^53 > 500^6
    assert experiments.float64_levels(241, base=241 * 5) == 6  # the largest K whose costs fit
    assert experiments.float64_levels(100, base=101) == 10  # the exact solver's base does not rescue doubles
    for K in (40, 100, 241):
        levels = experiments.float64_levels(K, base=5 * K)
        top = float(5 * K) ** 100
        assert top + K * float(5 * K) ** (101 - levels) != top  # the lowest level told apart changes the sum
        assert top + K * float(5 * K) ** (100 - levels) == top  # the next one does not
        bound = 1 + math.floor(math.log(K * 2.0**53) / math.log(5 * K))  # a double carries 53 bits
        assert abs(levels - bound) <= 1
    table = experiments.float_weights_table([40, 100, 241, 1000])
    assert all(experiments.float64_levels(K, base=5 * K) == table.loc[K, "resolution Δ (levels)"] for K in table.index)

def test_float_blind_swap_is_invisible_in_float64_only():
    clients = synthetic_clients(80, seed=2)
    inst = experiments.assign_clients(clients.times, clients.disparity)
    swap = experiments.float_blind_swap(inst)
    assert list(swap.index) == ["lexmin", "swapped"]
    assert swap.loc["swapped", "sorted D vs lexmin"] == "worse"
    assert swap.loc["swapped", "float64 excess over lexmin"] == 0.0
    assert swap.loc["swapped", "log10 exact excess over lexmin"] > 0
    exact = swap["exact Σ (KN)^D"]
    assert exact["swapped"] - exact["lexmin"] == swap.loc["swapped", "exact excess over lexmin"] > 0
    assert swap.loc["lexmin", "exact excess over lexmin"] == 0
    swapped = swap.loc["swapped"]
    assert swapped["float64 Σ equals the lexmin's"] and not swapped["exact Σ equals the lexmin's"]
    before, after = swap.loc["lexmin", "their ratings D"], swap.loc["swapped", "their ratings D"]
    assert sorted(after, reverse=True) != sorted(before, reverse=True)
    tiny = experiments.assign_clients(clients.times[:6], clients.disparity[:6], n_clusters=2)
    assert experiments.float_blind_swap(tiny).empty  # with (KN)^D exact in float64 nothing hides


def test_float_lp_table_small_levels_solve_and_the_papers_fail():
    table = experiments.float_lp_table(synthetic_clients(30), (3, paper.RATING_LEVELS))
    assert table.loc[3, "float LP"] == "solved" and table.loc[3, "same sorted ratings as lexmin"]
    assert table.loc[paper.RATING_LEVELS, "float LP"].startswith("no solution")


def test_objective_forms_agree():
    clients = synthetic_clients(30)
    inst = experiments.assign_clients(clients.times, clients.disparity)
    forms = experiments.objective_forms(inst)
    assert forms.nunique() == 1 and isinstance(forms.iloc[0], int)


def test_timing_and_verdicts():
    timing = experiments.timing_table((50, 200), disparity_pool=[0.2, 0.4], simplex_max=50, repeat=1)
    assert set(timing["method"]) == {"lexmin_flow", "minsum_flow", "network_simplex"}
    assert len(timing) == 5  # network simplex only at K = 50
    verdicts = experiments.solve_time_verdicts(timing)
    assert verdicts.loc[200, "network_simplex"] == "not run" and verdicts.loc[50, "lexmin_flow"].startswith("yes")
    slow = pd.DataFrame({"K": [100], "method": ["lexmin_flow"], "seconds": [2.5]})
    assert experiments.solve_time_verdicts(slow).loc[100, "lexmin_flow"] == "no (2.5 s)"


def test_variants_table_compares_with_the_papers_setting():
    clients = synthetic_clients(50)
    instances = experiments.variant_instances(clients)
    assert list(instances) == list(experiments.VARIANTS)
    table = experiments.variants_table(clients, instances)
    assert table.iloc[0]["same cluster as the paper's"] == 1.0
    assert table.loc[experiments.TIME_ONLY, "same cluster as time only"] == 1.0
    raw = table.loc["Plato's weights a = b = 1 (raw seconds)"]
    assert raw["same cluster as time only"] >= 0.9  # seconds swamp a disparity in [0, 1]
    assert table.loc["balanced clusters c2 = K/N (Plato)", "sizes"] == [10] * 5
    published = table.loc["Plato as published (all four, max Σ d)"]
    assert published["fastest cluster: mean T_k (s)"] > table.iloc[0]["fastest cluster: mean T_k (s)"]


def test_lexmin_of_the_worked_instance_is_the_library_call(profiled):
    inst = experiments.assign_clients(profiled.times, profiled.disparity)
    direct = lexmin_assignment(inst.D, lower=paper.c2(20, 5), upper=paper.c3(20, 5))
    np.testing.assert_array_equal(inst.assignment.sorted_ratings, direct.sorted_ratings)
