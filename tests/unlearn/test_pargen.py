"""ParGen and clustered-FU theory (Liu et al., TDSC 2025, Alg. 1-2, Lemmas 1-4, Remark 1).

The code under test: fedlib/unlearn/_pargen.py (Alg. 2) and the modules beside it, _lemmas, _harary,
_requirements, _capacity, _clustering, _simulation and _retraining_cost.

Oracles: the printed formulas re-evaluated by a plain scalar loop, reference values computed independently
from the printed formulas, brute-force enumeration of subsets and circles, scipy.stats.hypergeom, exact fractions,
and MaskingGraph.is_connected for connectivity.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.stats import binomtest, hypergeom

from fedlib.exceptions import InfeasibleParameters
from fedlib.secagg import MaskingGraph, harary_graph
from fedlib.unlearn import (
    assign_clusters,
    balanced_cluster_sizes,
    balanced_threshold_rate,
    expected_retrained_batch,
    expected_retrained_sequential,
    f1_shamir_security,
    f2_shamir_correctness,
    f3_connectivity,
    f_batch_capacity,
    harary_connected,
    harary_degree,
    overflow_probability,
    pargen,
    r4_failure_probability,
    requirement_failure_probabilities,
    simulate_requirements,
    simulate_retraining,
    tau_batch_printed,
    tau_sequential_printed,
    unlearning_capacity_exact,
)

LN2 = math.log(2)
EXAMPLE = dict(gamma=0.1, delta=0.1, zeta=0.1, xi=0.7, sigma=40, eta=40)  # the paper's worked example, N = 200
N_GRID = (50, 100, 200, 300, 500, 1000, 2000, 5000, 10000)


def brute_min_k(f, limit=100_000):
    """min{k >= 1 : f(k) >= 0} by a plain scalar loop."""
    return next(k for k in range(1, limit) if f(k) >= 0)


def printed_ks(n, gamma, delta, zeta, xi, sigma, eta):
    """Alg. 2 lines 1-4 with Eqs. (3)-(5) typed from the paper, evaluated with the math module only."""
    f1 = lambda k: 2 * (gamma**2 + xi**2 - 2 * xi * gamma) * k + (math.log(k) - math.log(n) - sigma * LN2)  # noqa: E731
    f2 = lambda k: (  # noqa: E731
        2 * ((1 - delta) ** 2 + xi**2 - 2 * (xi + zeta) * delta + 2 * xi + 2 * zeta) * k
        + (math.log(k) - math.log(n) - eta * LN2)
    )
    f3 = lambda k: -math.log(k) * math.log(k * (gamma + delta + zeta)) + 2 * sigma * LN2  # noqa: E731
    return brute_min_k(f1), brute_min_k(f2), brute_min_k(f3) if gamma + delta + zeta > 0 else 1


# ---------------------------------------------------------------------------------------------------------------------
# ParGen, printed


def test_worked_example_printed_gives_41_not_the_papers_60():
    r = pargen(200, **EXAMPLE)
    assert (r.k1, r.k2, r.k3, r.k, r.n_clusters) == (41, 6, 1, 41, 4)
    assert r.cluster_sizes == (50, 50, 50, 50) and r.feasible and r.binding == "Lemma 1"
    assert r.tau_seq == 40 and r.tau_bat is None  # line 6: N²/k² − 2σ ln2 + 2 ln(N/k) < 0
    assert 200**2 / 41**2 - 80 * LN2 + 2 * math.log(200 / 41) == pytest.approx(-28.4869, abs=1e-4)
    assert (r.threshold, r.removal_cap, r.degree) == (29, 4, 4)  # ⌈0.7·41⌉, ⌊0.1·41⌋, ln 41 ≈ 3.7 -> 4


FIG4A = {  # (σ, η) -> k for N in N_GRID, γ, δ, ζ, ξ = 0.2, 0.2, 0.1, 0.7; computed from the printed formulas
    (20, 20): (29, 31, 32, 33, 34, 35, 36, 38, 39),
    (40, 40): (56, 57, 58, 59, 60, 62, 63, 65, 66),
    (60, 60): (83, 84, 85, 86, 87, 89, 90, 92, 93),
    (80, 80): (110, 111, 113, 113, 114, 116, 117, 119, 120),
}


@pytest.mark.parametrize(("sigma_eta", "expected"), FIG4A.items())
def test_figure_4a_grid_printed(sigma_eta, expected):
    sigma, eta = sigma_eta
    ks = tuple(pargen(n, gamma=0.2, delta=0.2, zeta=0.1, xi=0.7, sigma=sigma, eta=eta).k for n in N_GRID)
    assert ks == expected


@pytest.mark.parametrize(("sigma", "eta", "same_as"), [(40, 20, 40), (40, 80, 40), (20, 40, 20), (80, 40, 80)])
def test_figure_4a_eta_has_no_effect_under_the_printed_formulas(sigma, eta, same_as):
    ks = tuple(pargen(n, gamma=0.2, delta=0.2, zeta=0.1, xi=0.7, sigma=sigma, eta=eta).k for n in N_GRID)
    assert ks == FIG4A[(same_as, same_as)]


FIG4B = {  # (γ, δ) -> k, σ, η, ζ, ξ = 40, 40, 0.1, 0.7
    (0.1, 0.1): (39, 40, 41, 42, 42, 43, 44, 46, 46),
    (0.1, 0.2): (39, 40, 41, 42, 42, 43, 44, 46, 46),
    (0.1, 0.3): (39, 40, 41, 42, 42, 43, 44, 46, 46),
    (0.2, 0.1): (56, 57, 58, 59, 60, 62, 63, 65, 66),
    (0.2, 0.2): (56, 57, 58, 59, 60, 62, 63, 65, 66),
    (0.3, 0.1): (85, 88, 90, 91, 92, 95, 97, 99, 102),
}


@pytest.mark.parametrize(("gamma_delta", "expected"), FIG4B.items())
def test_figure_4b_grid_printed(gamma_delta, expected):
    gamma, delta = gamma_delta
    ks = tuple(pargen(n, gamma=gamma, delta=delta, zeta=0.1, xi=0.7, sigma=40, eta=40).k for n in N_GRID)
    assert ks == expected


@pytest.mark.parametrize("zeta", [0.05, 0.1, 0.15, 0.2])
def test_figure_4c_zeta_has_no_effect_under_the_printed_formulas(zeta):
    ks = tuple(pargen(n, gamma=0.1, delta=0.1, zeta=zeta, xi=0.7, sigma=40, eta=40).k for n in N_GRID)
    assert ks == FIG4B[(0.1, 0.1)]


FIG5 = {  # (γ, δ) -> (k, s, τ_seq, τ_bat) per N; None: infeasible or line 6 undefined
    (0.1, 0.1): [
        (39, 1, 5, None), (40, 2, 14, None), (41, 4, 40, None), (42, 7, 71, None), (42, 11, 152, 27),
        (43, 23, 417, 20), (44, 45, 1141, 19), (46, 108, 4219, 21), (46, 217, 11934, 21),
    ],
    (0.2, 0.1): [
        (56, 0, None, None), (57, 1, 8, None), (58, 3, 23, None), (59, 5, 42, None), (60, 8, 89, 137),
        (62, 16, 241, 47), (63, 31, 665, 41), (65, 76, 2511, 42), (66, 151, 6944, 43),
    ],
}  # fmt: skip


@pytest.mark.parametrize(("gamma_delta", "expected"), FIG5.items())
def test_figure_5_capacities_printed(gamma_delta, expected):
    gamma, delta = gamma_delta
    for n, row in zip(N_GRID, expected, strict=True):
        r = pargen(n, gamma=gamma, delta=delta, zeta=0.1, xi=0.7, sigma=40, eta=40)
        assert (r.k, r.n_clusters, r.tau_seq, r.tau_bat) == row, n


def test_remark_6_printed_clustering_is_infeasible_up_to_55_clients():
    feasible = [pargen(n, gamma=0.2, delta=0.1, zeta=0.1, xi=0.7, sigma=40, eta=40).feasible for n in range(1, 80)]
    assert feasible.index(True) + 1 == 56 and all(feasible[55:])
    r = pargen(50, gamma=0.2, delta=0.1, zeta=0.1, xi=0.7, sigma=40, eta=40)
    assert (r.k, r.n_clusters, r.cluster_sizes, r.tau_seq, r.tau_bat) == (56, 0, (), None, None)


@given(
    n=st.integers(10, 20000),
    gamma=st.floats(0.0, 0.4),
    margin=st.floats(0.1, 0.5),
    delta=st.floats(0.0, 0.4),
    zeta=st.floats(0.0, 0.3),
    sigma=st.integers(1, 80),
    eta=st.integers(1, 80),
)
def test_printed_searches_equal_a_scalar_loop_over_the_printed_formulas(n, gamma, margin, delta, zeta, sigma, eta):
    assume(gamma + delta + zeta < 1)  # Lemma 3's p = γ + δ + ζ must be a probability below 1
    xi = min(0.99, gamma + margin)
    if xi <= max(delta, zeta):
        with pytest.raises(InfeasibleParameters, match="Lemma 2 as printed requires"):
            pargen(n, gamma=gamma, delta=delta, zeta=zeta, xi=xi, sigma=sigma, eta=eta)
        return
    r = pargen(n, gamma=gamma, delta=delta, zeta=zeta, xi=xi, sigma=sigma, eta=eta)
    assert (r.k1, r.k2, r.k3) == printed_ks(n, gamma, delta, zeta, xi, sigma, eta)
    assert r.k == max(r.k1, r.k2, r.k3) and r.n_clusters == n // r.k
    if r.n_clusters:
        assert sum(r.cluster_sizes) == n and len(r.cluster_sizes) == r.n_clusters
        assert max(r.cluster_sizes) - min(r.cluster_sizes) <= 1 and min(r.cluster_sizes) >= r.k


@given(
    k=st.integers(1, 10**6),
    n=st.integers(1, 10**6),
    gamma=st.floats(0, 0.9),
    xi=st.floats(0.01, 1),
    sigma=st.floats(0, 100),
)
def test_f1_is_the_log_of_lemma_1s_union_bound(k, n, gamma, xi, sigma):
    """f1(k) >= 0 iff (N/k)·exp(−2(ξk − γk)²/k) <= 2^-σ: Lemma 1's proof, rearranged by hand."""
    log_bound = math.log(n / k) - 2 * (xi * k - gamma * k) ** 2 / k
    assert f1_shamir_security(k, n_clients=n, gamma=gamma, xi=xi, sigma=sigma) == pytest.approx(
        -(log_bound + sigma * LN2), rel=1e-9, abs=1e-6
    )


@given(
    k=st.integers(1, 10**5),
    n=st.integers(1, 10**5),
    delta=st.floats(0, 0.3),
    zeta=st.floats(0, 0.3),
    xi=st.floats(0.01, 0.39),
    eta=st.floats(0, 100),
)
def test_f2_printed_squares_the_wrong_sign_and_drops_terms_corrected_is_the_right_bound(k, n, delta, zeta, xi, eta):
    """Lemma 2's proof squares δk − k − t − q (= −(k − δk + t + q)) and Eq. (4) then drops 2ξζ + ζ².

    The corrected Eq. (4') is the log of the union bound (N/k)·exp(−2(k − δk − t − q)²/k) <= 2^-η.
    """
    t, q = xi * k, zeta * k
    tail = math.log(k / n) - eta * LN2
    printed = f2_shamir_correctness(k, n_clients=n, delta=delta, zeta=zeta, xi=xi, eta=eta)
    sign_error = 2 * (delta * k - k - t - q) ** 2 / k + tail
    assert printed + 2 * (2 * xi * zeta + zeta**2) * k == pytest.approx(sign_error, rel=1e-9, abs=1e-6)
    corrected = f2_shamir_correctness(k, n_clients=n, delta=delta, zeta=zeta, xi=xi, eta=eta, variant="corrected")
    assert corrected == pytest.approx(2 * (k - delta * k - t - q) ** 2 / k + tail, rel=1e-9, abs=1e-6)


def test_f2_corrected_refuses_a_threshold_above_what_remains():
    with pytest.raises(InfeasibleParameters, match=r"ξ \+ ζ \+ δ = 1.1 >= 1"):
        f2_shamir_correctness(50, n_clients=200, delta=0.2, zeta=0.1, xi=0.8, eta=40, variant="corrected")


# ---------------------------------------------------------------------------------------------------------------------
# ParGen, corrected


def test_worked_example_corrected_is_infeasible_and_names_the_bound():
    with pytest.raises(InfeasibleParameters, match=r"k = 1293 > N = 200.*Remark 6"):
        pargen(200, **EXAMPLE, variant="corrected")
    assert issubclass(InfeasibleParameters, ValueError)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (dict(xi=0.1), r"ξ = 0.1 <= γ = 0.1.*Lemma 1 requires ξ > γ"),
        (dict(xi=0.8), r"ξ \+ ζ \+ δ = 1 >= 1.*requires ξ \+ ζ \+ δ < 1"),
        (dict(delta=0.25), r"ξ \+ ζ \+ δ = 1.05 >= 1"),
    ],
)
def test_corrected_conditions_raise_with_the_bound(overrides, message):
    with pytest.raises(InfeasibleParameters, match=message):
        pargen(1000, **{**EXAMPLE, **overrides}, variant="corrected")


def test_corrected_k2_is_1293_by_a_scalar_loop_over_eq_4_prime():
    k2 = brute_min_k(lambda k: 2 * (1 - 0.1 - 0.7 - 0.1) ** 2 * k + math.log(k / 200) - 40 * LN2)
    assert k2 == 1293


@pytest.mark.parametrize(
    ("n", "k", "s"), [(200, 116, 1), (500, 120, 4), (1000, 122, 8), (2000, 125, 16), (5000, 129, 38), (10000, 131, 76)]
)
def test_corrected_design_at_the_balanced_threshold_rate(n, k, s):
    xi = balanced_threshold_rate(0.1, 0.1, 0.1)
    assert xi == 0.45
    r = pargen(n, gamma=0.1, delta=0.1, zeta=0.1, xi=xi, sigma=40, eta=40, variant="corrected")
    assert (r.k, r.n_clusters, r.k3) == (k, s, None)
    assert r.k1 == r.k2 or abs(r.k1 - r.k2) <= 1  # equal margins: Lemma 1 and Eq. (4') need the same k
    # the capacity is the exact one for the round-robin sizes
    caps = [math.floor(Fraction(1, 10) * size) for size in r.cluster_sizes]
    assert r.tau_seq == r.tau_bat == unlearning_capacity_exact(r.cluster_sizes, caps, 40)
    # the degree meets the union bound over all clusters: s·k_max·p^{m/2} <= 2^-40, or is the complete graph
    k_big = max(r.cluster_sizes)
    assert r.degree >= k_big - 1 or math.log(s * k_big) + r.degree / 2 * math.log(0.3) <= -40 * LN2


@given(n=st.integers(2, 5000), gamma=st.floats(0.0, 0.3), delta=st.floats(0.0, 0.3), zeta=st.floats(0.0, 0.3),
       sigma=st.integers(1, 60), eta=st.integers(1, 60))  # fmt: skip
def test_corrected_k_is_minimal_for_lemma_1_and_eq_4_prime(n, gamma, delta, zeta, sigma, eta):
    if gamma + delta + zeta >= 0.95:
        return
    xi = (1 - delta - zeta + gamma) / 2
    try:
        r = pargen(n, gamma=gamma, delta=delta, zeta=zeta, xi=xi, sigma=sigma, eta=eta, variant="corrected")
    except InfeasibleParameters as exc:
        assert "> N" in str(exc)
        return
    f1 = lambda k: 2 * (xi - gamma) ** 2 * k + math.log(k / n) - sigma * LN2  # noqa: E731
    f2 = lambda k: 2 * (1 - delta - xi - zeta) ** 2 * k + math.log(k / n) - eta * LN2  # noqa: E731
    assert (r.k1, r.k2) == (brute_min_k(f1), brute_min_k(f2))
    assert r.k <= n and r.tau_seq >= 0


# ---------------------------------------------------------------------------------------------------------------------
# Lemma 3 and the Harary degree


def test_printed_eq_5_holds_for_every_small_k_and_so_never_binds():
    values = f3_connectivity(np.arange(1, 4000), gamma=0.1, delta=0.1, zeta=0.1, sigma=40)
    last = int(np.flatnonzero(values >= 0)[-1]) + 1
    assert last == 3206 and np.all(values[:last] >= 0) and np.all(values[last:] < 0)


@pytest.mark.parametrize("p", [0.14, 0.2, 0.3, 0.6])
def test_lemma_3s_own_bound_with_m_ln_k_is_unsatisfiable_above_e_minus_2(p):
    """k·p^{(ln k)/2} <= 2^-σ has no solution for p >= e^-2 ≈ 0.135; 'derived' says the same."""
    ks = np.arange(1, 100_000)
    assert not np.any(np.log(ks) + np.log(ks) / 2 * math.log(p) <= -10 * LN2)
    assert not np.any(f3_connectivity(ks, gamma=p / 3, delta=p / 3, zeta=p / 3, sigma=10, variant="derived") >= 0)


@pytest.mark.parametrize(
    ("k", "p", "expected"),
    [(60, 0.3, 54), (60, 0.2, 40), (100, 0.2, 42), (100, 0.3, 54), (200, 0.2, 42), (200, 0.3, 56), (50, 0.2, 40)],
)
def test_corrected_degree_is_the_smallest_even_m_meeting_the_union_bound(k, p, expected):
    m = harary_degree(k, p, 40, "corrected")
    assert m == expected
    assert Fraction(k) * Fraction(repr(p)) ** (m // 2) <= Fraction(1, 2**40)
    assert Fraction(k) * Fraction(repr(p)) ** (m // 2 - 1) > Fraction(1, 2**40)


def test_degree_caps_at_the_complete_graph_and_printed_is_ln_k():
    assert harary_degree(50, 0.3, 40, "corrected") == 50  # 54 needed, >= k − 1: plain SecAgg
    assert harary_degree(51, 0.3, 40, "corrected") == 50
    assert [harary_degree(k, 0.3, 40) for k in (1, 3, 10, 41, 60, 1000)] == [2, 2, 2, 4, 4, 6]
    assert harary_degree(60, 0.3, 40, "corrected", n_clusters=4) > harary_degree(60, 0.3, 40, "corrected")
    with pytest.raises(ValueError, match="p="):
        harary_degree(60, 1.0, 40, "corrected")


def ring_graph(k, m):
    """H(k, m) for even m, built from its definition with vertex j at circle position j."""
    return MaskingGraph(
        tuple(np.array(sorted({(j + o) % k for o in range(-m // 2, m // 2 + 1)} - {j})) for j in range(k))
    )


@pytest.mark.parametrize(("k", "m"), [(5, 2), (7, 2), (8, 4), (9, 4), (10, 6), (11, 4)])
def test_circular_run_criterion_equals_graph_connectivity_on_every_subset(k, m):
    masks = np.array(list(itertools.product([False, True], repeat=k)))
    graph = ring_graph(k, m)
    expected = [graph.is_connected(~mask) for mask in masks]
    assert harary_connected(masks, m).tolist() == expected


@pytest.mark.parametrize("seed", range(4))
def test_circular_run_criterion_matches_harary_graph_with_its_permuted_labels(seed):
    k, m = 30, 6
    graph = harary_graph(k, m, random_state=seed)
    at_position = np.random.default_rng(seed).permutation(k)  # harary_graph's first draw: who sits where
    assert set(graph.neighbors[at_position[0]].tolist()) == set(at_position[[1, 2, 3, -1, -2, -3]].tolist())
    rng = np.random.default_rng(100 + seed)
    for _ in range(300):
        removed_clients = rng.random(k) < rng.uniform(0.1, 0.7)
        on_circle = removed_clients[at_position]
        assert harary_connected(on_circle, m).item() == graph.is_connected(~removed_clients)


def test_harary_connected_rejects_odd_degree_below_complete():
    with pytest.raises(ValueError, match="odd"):
        harary_connected(np.zeros(10, dtype=bool), 3)
    assert harary_connected(np.ones((2, 6), dtype=bool), 5).tolist() == [True, True]  # complete graph


# ---------------------------------------------------------------------------------------------------------------------
# Lemmas 4.1 and 4.2 as printed


def test_printed_capacities_and_eq_9_behave_as_documented():
    assert tau_sequential_printed(1000, 43, 40) == 417
    assert tau_sequential_printed(1000, 43, 80) > tau_sequential_printed(1000, 43, 40)  # grows with σ
    values = f_batch_capacity(np.array([1, 20, 1000]), n_clients=1000, k=43, zeta=0.1, sigma=40)
    np.testing.assert_allclose(values, [-30.71, -29.47, 58.57], atol=0.005)  # easier to meet as τ grows
    assert tau_batch_printed(1000, 60, 0.1, 40) == 43
    lhs = f_batch_capacity(43, n_clients=1000, k=60, zeta=0.1, sigma=40)  # line 6 does not solve Eq. (9)
    assert lhs == pytest.approx(5.07 - 30.54, abs=0.01) and lhs < 0


def test_substituted_eq_9_allows_19_requests_whose_exact_risk_is_2_percent():
    taus = np.arange(1, 100)  # τ < Nζ, where (9') is meaningful
    ok = f_batch_capacity(taus, n_clients=1000, k=43, zeta=0.1, sigma=40, variant="substituted") >= 0
    assert taus[ok].max() == 19 and ok[:19].all()
    sizes = balanced_cluster_sizes(1000, 43)
    assert float(r4_failure_probability(sizes, [s // 10 for s in sizes], 19)) == pytest.approx(0.0209, abs=5e-4)


# ---------------------------------------------------------------------------------------------------------------------
# exact probabilities


def brute_overflow(sizes, caps, n_drawn):
    """Enumerate every n_drawn-subset of the clients; count those that overfill some cluster."""
    cluster_of = [c for c, size in enumerate(sizes) for _ in range(size)]
    bad = total = 0
    for subset in itertools.combinations(range(len(cluster_of)), n_drawn):
        counts = [0] * len(sizes)
        for u in subset:
            counts[cluster_of[u]] += 1
        bad += any(c > cap for c, cap in zip(counts, caps, strict=True))
        total += 1
    return Fraction(bad, total)


@given(data=st.data(), sizes=st.lists(st.integers(1, 5), min_size=1, max_size=4))
def test_overflow_probability_equals_enumeration(data, sizes):
    caps = data.draw(st.lists(st.integers(-1, 5), min_size=len(sizes), max_size=len(sizes)))
    n_drawn = data.draw(st.integers(0, sum(sizes)))
    assert overflow_probability(sizes, caps, n_drawn) == brute_overflow(sizes, caps, n_drawn)


@given(k1=st.integers(1, 60), k2=st.integers(1, 60), data=st.data())
def test_overflow_probability_for_two_clusters_equals_hypergeom(k1, k2, data):
    n = k1 + k2
    n_drawn = data.draw(st.integers(0, n))
    c1, c2 = data.draw(st.integers(0, k1)), data.draw(st.integers(0, k2))
    x = np.arange(0, n_drawn + 1)
    pmf = hypergeom.pmf(x, n, n_drawn, k1)  # X clients of the draw fall into cluster 1
    expected = float(pmf[(x > c1) | (n_drawn - x > c2)].sum())
    assert float(overflow_probability([k1, k2], [c1, c2], n_drawn)) == pytest.approx(expected, abs=1e-12)


def test_requirement_risks_at_the_worked_example():
    risks = requirement_failure_probabilities([50] * 4, gamma=0.1, delta=0.1, zeta=0.1, xi=0.7)
    assert risks["R1"].exact == 0 and risks["R1"].union_bound == 0  # 20 adversaries, t = 35
    # R2: more than 50 − 35 − 5 = 10 of the 20 dropouts in one cluster; two clusters cannot both overflow,
    # so the union bound is exact
    expected = 4 * hypergeom.sf(10, 200, 20, 50)
    assert risks["R2"].caps == (10,) * 4 and risks["R2"].n_drawn == 20
    assert float(risks["R2"].exact) == pytest.approx(expected, rel=1e-12)
    assert risks["R2"].union_bound == pytest.approx(0.00956, abs=5e-6)
    assert risks["R2"].log2_exact == pytest.approx(-6.7, abs=0.01)
    assert risks["R4"].exact == 0


def test_requirement_risks_keep_tiny_probabilities_exact():
    risks = requirement_failure_probabilities([200] * 5, gamma=0.1, delta=0.1, zeta=0.1, xi=0.45, tau=3)
    r1 = risks["R1"]
    assert 0 < r1.exact < Fraction(1, 2**40)  # 1 − float would round this to 0
    one_cluster = hypergeom.sf(r1.caps[0], 1000, 100, 200)
    assert r1.exact <= 5 * Fraction(one_cluster) * (1 + Fraction(1, 10**6))
    assert r1.log2_exact == pytest.approx(math.log2(float(r1.exact)), abs=1e-9)
    assert risks["R2 (realised Q)"].n_drawn == 103


@pytest.mark.parametrize(("n", "expected"), [(200, 5), (500, 4), (1000, 4), (2000, 4), (5000, 4)])
def test_exact_capacity_of_the_printed_designs(n, expected):
    r = pargen(n, **EXAMPLE)
    caps = [math.floor(Fraction(1, 10) * size) for size in r.cluster_sizes]
    capacity = unlearning_capacity_exact(r.cluster_sizes, caps, 40)
    assert capacity == expected
    assert r4_failure_probability(r.cluster_sizes, caps, capacity) <= Fraction(1, 2**40)
    assert r4_failure_probability(r.cluster_sizes, caps, capacity + 1) > Fraction(1, 2**40)
    assert r.tau_seq >= 8 * capacity  # the printed Eq. (7) promises far more


@given(sizes=st.lists(st.integers(1, 5), min_size=1, max_size=3), cap=st.integers(0, 3), sigma=st.floats(0.1, 12))
def test_exact_capacity_is_the_last_tau_within_the_risk_by_enumeration(sizes, cap, sigma):
    capacity = unlearning_capacity_exact(sizes, cap, sigma)
    within = [brute_overflow(sizes, [cap] * len(sizes), t) <= 2**-sigma for t in range(sum(sizes) + 1)]
    assert capacity == (within.index(False) - 1 if False in within else sum(sizes))


def test_exact_capacity_rejects_negative_caps():
    with pytest.raises(ValueError, match="caps must be >= 0"):
        unlearning_capacity_exact([5, 5], [-1, 2], 10)


# ---------------------------------------------------------------------------------------------------------------------
# clustering (Alg. 1 lines 2-3)


@pytest.mark.parametrize("leftovers", ["random", "round_robin"])
@given(n=st.integers(1, 300), data=st.data())
def test_assign_clusters_partitions_the_clients(leftovers, n, data):
    k = data.draw(st.integers(1, n))
    seed = data.draw(st.integers(0, 2**32 - 1))
    clusters = assign_clusters(n, k, leftovers=leftovers, random_state=seed)
    assert len(clusters) == n // k
    assert sorted(np.concatenate(clusters).tolist()) == list(range(n))
    assert all(len(c) >= k for c in clusters)
    if leftovers == "round_robin":
        sizes = [len(c) for c in clusters]
        assert max(sizes) - min(sizes) <= 1
    again = assign_clusters(n, k, leftovers=leftovers, random_state=seed)
    assert all(np.array_equal(a, b) for a, b in zip(clusters, again, strict=True))


def test_random_leftovers_stack_as_independent_uniform_picks():
    """N = 11, k = 3: two leftovers join the same of the 3 clusters with probability 1/3 (Alg. 1 line 3)."""
    trials = 3000
    stacked = sum(max(len(c) for c in assign_clusters(11, 3, random_state=seed)) == 5 for seed in range(trials))
    assert binomtest(stacked, trials, 1 / 3).pvalue > 1e-3
    assert all(
        max(len(c) for c in assign_clusters(11, 3, leftovers="round_robin", random_state=s)) == 4 for s in range(200)
    )


def test_every_pair_of_clients_shares_a_cluster_equally_often():
    counts = np.zeros((9, 9))
    for seed in range(3000):
        for c in assign_clusters(9, 3, random_state=seed):
            counts[np.ix_(c, c)] += 1
    off = counts[~np.eye(9, dtype=bool)] / 3000
    assert np.all(np.abs(off - 2 / 8) < 0.04)  # a client's 2 cluster-mates are a uniform pair of the other 8


def test_assign_clusters_refuses_k_above_n():
    with pytest.raises(InfeasibleParameters, match="Remark 6"):
        assign_clusters(50, 56)
    with pytest.raises(TypeError):
        assign_clusters(50.0, 5)


# ---------------------------------------------------------------------------------------------------------------------
# Monte Carlo of R1-R4


def exact_r3_failure_by_enumeration(n, k, m, n_removed):
    """N divisible by k, uniform placement: R3 fails iff some block of k circle positions splits H(k, m)."""
    graph = ring_graph(k, m)
    bad = total = 0
    for removed in itertools.combinations(range(n), n_removed):
        flags = np.zeros(n, dtype=bool)
        flags[list(removed)] = True
        bad += any(not graph.is_connected(~flags[c * k : (c + 1) * k]) for c in range(n // k))
        total += 1
    return bad / total


def test_monte_carlo_r3_matches_enumeration():
    # N = 14, k = 7 (two rings), 1 adversary, 2 dropouts, 1 unlearned: 4 removed of 14
    table = simulate_requirements(
        14, 7, gamma=0.1, delta=0.15, zeta=0.2, xi=0.5, tau=1, degree=2, n_trials=20000, random_state=1
    )
    expected = exact_r3_failure_by_enumeration(14, 7, 2, 4)
    assert 0.2 < expected < 0.9
    row = table.loc["R3"]
    assert binomtest(int(row["failures"]), int(row["trials"]), expected).pvalue > 1e-3


def test_monte_carlo_matches_the_exact_probabilities():
    n, k, tau = 240, 24, 10
    rates = dict(gamma=0.3, delta=0.2, zeta=0.1, xi=0.55)
    table = simulate_requirements(n, k, **rates, tau=tau, degree=8, n_trials=20000, random_state=0)
    exact = requirement_failure_probabilities([k] * (n // k), **rates, tau=tau)
    for name in ("R1", "R2", "R2 (realised Q)", "R4"):
        p = float(exact[name].exact)
        assert 0.01 < p < 0.99, (name, p)  # observable
        row = table.loc[name]
        assert binomtest(int(row["failures"]), int(row["trials"]), p).pvalue > 1e-3, (name, p, row["rate"])
        assert row["ci_low"] <= row["rate"] <= row["ci_high"]
    assert table.loc["R1 ∨ R3 ∨ R4", "failures"] >= table.loc[["R1", "R3", "R4"], "failures"].max()


def test_monte_carlo_is_reproducible_and_checks_its_inputs():
    kwargs = dict(gamma=0.1, delta=0.1, zeta=0.1, xi=0.7, tau=5, degree=4, n_trials=300)
    a = simulate_requirements(100, 30, **kwargs, random_state=3)
    b = simulate_requirements(100, 30, **kwargs, random_state=3)
    assert a.equals(b)
    with pytest.raises(ValueError, match="even"):
        simulate_requirements(100, 30, **{**kwargs, "degree": 5})
    with pytest.raises(ValueError, match="exceed N"):
        simulate_requirements(100, 30, **{**kwargs, "tau": 90})


# ---------------------------------------------------------------------------------------------------------------------
# Remark 1: clients retrained


def paper_model_expectations(s, k, tau):
    """Every request hits one of s clusters uniformly and independently (the paper's model), by enumeration."""
    n = s * k
    pre = batch = Fraction(0)
    for sequence in itertools.product(range(s), repeat=tau):
        weight = Fraction(1, s**tau)
        removed = [0] * s
        for c in sequence:
            pre += weight * (k - removed[c])
            removed[c] += 1
        batch += weight * (k * len(set(sequence)) - tau)
    return n, pre, batch


@pytest.mark.parametrize(("s", "k", "tau"), [(3, 4, 1), (3, 4, 3), (4, 5, 4), (2, 6, 5)])
def test_remark_1_formulas_against_the_papers_model(s, k, tau):
    n, pre, batch = paper_model_expectations(s, k, tau)
    assert expected_retrained_sequential(n, k, tau, formula="pre_removal") == pytest.approx(float(pre))
    assert expected_retrained_sequential(n, k, tau, formula="post_removal") == pytest.approx(float(pre) - tau)
    assert expected_retrained_batch(n, k, tau) == pytest.approx(float(batch))


def test_printed_e_seq_is_wrong_and_can_be_negative():
    assert expected_retrained_sequential(200, 60, 22) == pytest.approx(-34.45)
    assert expected_retrained_sequential(1000, 50, 20) == pytest.approx(20.025)
    assert expected_retrained_sequential(1000, 50, 20, formula="post_removal") == pytest.approx(970.5)
    assert expected_retrained_batch(1000, 50, 20) == pytest.approx(621.514, abs=1e-3)


def test_distinct_client_sequences_against_enumeration():
    """N = 8, k = 2 (four clusters): average over every ordered sequence of τ distinct clients."""
    clusters = [0, 0, 1, 1, 2, 2, 3, 3]
    for tau in range(1, 6):
        totals = []
        for sequence in itertools.permutations(range(8), tau):
            removed = [0] * 4
            total = 0
            for u in sequence:
                total += 2 - removed[clusters[u]]
                removed[clusters[u]] += 1
            totals.append(total)
        expected = expected_retrained_sequential(8, 2, tau, formula="pre_removal", requests="clients")
        assert expected == pytest.approx(np.mean(totals))
    with pytest.raises(ValueError, match="paper's model"):
        expected_retrained_sequential(8, 2, 3, requests="clients")


def test_batch_without_replacement_against_enumeration():
    clusters = [0, 0, 0, 1, 1, 1, 2, 2, 2]  # N = 9, k = 3
    for tau in range(0, 6):
        values = [
            sum(3 for c in set(clusters[u] for u in subset)) - tau for subset in itertools.combinations(range(9), tau)
        ]
        assert expected_retrained_batch(9, 3, tau, requests="clients") == pytest.approx(np.mean(values))


@pytest.mark.parametrize(("n", "k", "tau"), [(1000, 50, 20), (200, 50, 10), (1000, 50, 5)])
def test_simulated_retraining_matches_the_exact_expectations(n, k, tau):
    sim = simulate_retraining(n, k, tau, n_trials=3000, random_state=0)
    pre = expected_retrained_sequential(n, k, tau, formula="pre_removal", requests="clients")
    batch = expected_retrained_batch(n, k, tau, requests="clients")
    mean, sem = sim.mean(), sim.sem()
    assert abs(mean["sequential, pre-removal"] - pre) <= 4 * sem["sequential, pre-removal"] + 1e-9
    assert abs(mean["sequential, post-removal"] - (pre - tau)) <= 4 * sem["sequential, post-removal"] + 1e-9
    assert abs(mean["batch"] - batch) <= 4 * sem["batch"] + 1e-9
    # the printed closed form is far off, the corrected one within 1%
    assert abs(mean["sequential, post-removal"] - expected_retrained_sequential(n, k, tau)) > 100 or tau < 10
    assert mean["sequential, post-removal"] == pytest.approx(
        expected_retrained_sequential(n, k, tau, formula="post_removal"), rel=0.01
    )


def test_simulated_retraining_counts_leftover_clusters():
    sim = simulate_retraining(10, 3, 10, n_trials=50, leftovers="round_robin", random_state=0)
    # every client requested: sequentially each request retrains the then-current cluster: 4+3+2+1 + 2·(3+2+1)
    assert (sim["sequential, pre-removal"] == 22).all() and (sim["batch"] == 0).all()
