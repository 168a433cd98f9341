"""Exactness checks (fedlib/audit/_exactness.py): bit for bit against the coupled retraining, and in distribution.

Every check here can fail: a tampered model, a shortcut that does not redraw, a lazy server, a default
quantization step computed with the forgotten rows, and a model that keeps the forgotten point are each caught.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.exceptions import NotFittedError

from fedlib.audit._exactness import (
    N_PERMUTATIONS,
    BitwiseCheck,
    ExactnessTest,
    _chi_square,
    _energy_distance,
    _energy_permutation_test,
    _remaining,
    check_bitwise,
    exactness_test,
    model_distance,
)
from fedlib.base import UnlearningReport
from fedlib.cluster import KMeans
from fedlib.data import make_blobs
from fedlib.learn import AsyncFederatedTrainer, LocalSGD
from fedlib.unlearn import (
    MUFC,
    ClusteredUnlearning,
    DCKMeans,
    FedEraser,
    KMeansPlusPlus,
    Retrain,
    shortcut_unlearn_kmeans_plusplus,
)

X_BLOBS, _ = make_blobs((40, 40, 40), 2, cluster_std=0.1, random_state=0)
#: Three clients, each holding rows of every blob.
PARTS = [np.arange(0, 120, 3), np.arange(1, 120, 3), np.arange(2, 120, 3)]

#: Six points where the forgotten point 0 has a near twin (point 1): the audit's data (fedlib.unlearn._audit).
X_LINE = np.array([[0.0], [0.05], [1.65], [2.05], [3.05], [4.9]])


def seed_ids(model: MUFC, client: int) -> list[int]:
    state = model._clients[client]
    return state.ids[state.seeds].tolist()


def centres_on_the_line(model) -> tuple:
    """The seeds as a set of coordinates: comparable between a model that forgot and one fitted on the rest."""
    return tuple(sorted(model.cluster_centers_.ravel().tolist()))


def sorted_server_centres(model) -> np.ndarray:
    return np.sort(model.server_centers_, axis=0).ravel()


class NearestReplacement(KMeansPlusPlus):
    """A wrong shortcut: a forgotten seed moves to its nearest remaining point, and nothing is redrawn."""

    def _unlearn(self, samples, clients):
        rows = np.searchsorted(self._ids, samples)
        seeds = shortcut_unlearn_kmeans_plusplus(self._X, self._seeds, rows, strategy="nearest_replacement")
        keep = np.ones(self._ids.size, dtype=bool)
        keep[rows] = False
        self._X, self._ids, self._weights, self._keys = (
            a[keep] for a in (self._X, self._ids, self._weights, self._keys)
        )
        self._seeds = seeds
        self._publish()
        return UnlearningReport(forgotten_samples=tuple(samples.tolist()), exact=False)


class KeepsTheData(MUFC):
    """A wrong method: it reports the rows forgotten and changes nothing."""

    def _unlearn(self, samples, clients):
        return UnlearningReport(forgotten_samples=tuple(samples.tolist()), exact=False)


# ------------------------------------------------------------------------------------------------ bit for bit


def test_kmeans_plusplus_is_its_retraining_after_every_removal_and_a_tampered_model_is_not():
    model = KMeansPlusPlus(4, random_state=1).fit(X_BLOBS)
    rng = np.random.default_rng(0)
    reseeded = 0
    for step in range(12):
        pool = model.seed_indices_ if step % 3 == 0 else model._held_samples()
        reseeded += model.unlearn([int(rng.choice(pool))]).details["reseeded"]
        check = check_bitwise(model)
        assert check.identical and check.n_arrays == 2 and check.max_abs_difference == 0.0, str(check)
    assert reseeded >= 4 and check.differing == () and check.unchecked == ()
    assert str(check).startswith("KMeansPlusPlus: identical (2 arrays")
    assert check.summary() == {
        "method": "KMeansPlusPlus", "bit for bit": True, "arrays": 2, "max |difference|": 0.0, "differing": "-",
    }  # fmt: skip
    model.cluster_centers_[1, 0] = np.nextafter(model.cluster_centers_[1, 0], np.inf)  # one ulp
    check = check_bitwise(model)
    assert not check.identical and check.differing == ("cluster_centers",) and 0 < check.max_abs_difference < 1e-12
    assert "differs in cluster_centers" in str(check) and check.summary()["differing"] == "cluster_centers"


def test_a_shortcut_is_not_its_retraining():
    model = NearestReplacement(3, random_state=0).fit(X_BLOBS)
    model.unlearn(model.seed_indices_[:1])  # the first seed: every later draw depended on it
    check = check_bitwise(model)
    assert not check.identical and set(check.differing) == {"seed_indices", "cluster_centers"}
    assert check.max_abs_difference >= 1.0  # another row, another blob


def test_inverse_cdf_seeding_and_methods_without_coupling_refuse_the_check():
    seeding = KMeansPlusPlus(3, race_keys=False, random_state=0).fit(X_LINE)
    seeding.unlearn([0])
    with pytest.raises(NotImplementedError, match="race_keys=False"):
        check_bitwise(seeding)
    leaves = DCKMeans(3, random_state=0).fit(X_BLOBS, parts=PARTS)
    leaves.unlearn([5])
    with pytest.raises(NotImplementedError, match="DCKMeans promises no bitwise coupling"):
        check_bitwise(leaves)
    assert set(leaves._model_state()) == {"leaf 0 centers", "leaf 1 centers", "leaf 2 centers", "server centers"}
    with pytest.raises(NotImplementedError, match="random_state=None"):
        check_bitwise(Retrain(KMeans(3, n_init=1)).fit(X_LINE))
    with pytest.raises(NotFittedError):
        check_bitwise(KMeansPlusPlus(3))
    with pytest.raises(TypeError, match="UnlearningMixin"):
        check_bitwise(KMeans(3, random_state=0).fit(X_LINE))


@pytest.mark.parametrize("client_lloyd", [False, True], ids=["seeds", "client Lloyd"])
def test_mufc_clients_and_aggregate_are_their_retraining_and_never_read_the_forgotten_rows(client_lloyd):
    model = MUFC(
        4, gamma=0.1, client_lloyd=client_lloyd, aggregation="plaintext", server_update="strict", random_state=2
    ).fit(X_BLOBS, parts=PARTS)
    rng = np.random.default_rng(1)
    reseeded = 0
    for step in range(10):
        client = int(rng.integers(3))
        pool = seed_ids(model, client) if step % 3 == 0 else model.client_ids(client)
        reseeded += bool(model.unlearn([int(rng.choice(pool))]).clients_retrained)
        assert check_bitwise(model).identical
    model.unlearn(clients=[1])
    masked = 0
    for state in model._clients:  # the rows a client masked out are never read by the retraining
        if state is not None:
            state.X[~state.alive] = np.nan
            masked += int((~state.alive).sum())
    check = check_bitwise(model)
    assert check.identical, str(check)
    assert check.n_arrays == 2 * 2 + 3 and check.unchecked == ("server centers",) and reseeded >= 3
    assert masked >= 1 or client_lloyd  # with client Lloyd every removal retrains the client: nothing stays masked


def test_mufc_lazy_server_keeps_a_stale_aggregate_as_its_report_says():
    model = MUFC(4, gamma=0.1, aggregation="plaintext", server_update="lazy", random_state=2).fit(X_BLOBS, parts=PARTS)
    victim = next(int(i) for i in model.client_ids(0) if int(i) not in seed_ids(model, 0))
    report = model.unlearn([victim])
    check = check_bitwise(model)
    assert not report.exact and not check.identical and check.differing == ("aggregate counts",)
    assert check.max_abs_difference == 1.0  # the forgotten row still counted in its bin
    report = model.unlearn(seed_ids(model, 2)[:1])  # a re-seeding aggregates again
    assert report.exact and check_bitwise(model).identical


def test_mufc_default_gamma_quantizes_with_the_forgotten_rows():
    """gamma=None is 1/sqrt(n) of the data at fit: retraining on fewer rows quantizes with a larger step."""
    model = MUFC(4, aggregation="plaintext", server_update="strict", random_state=2).fit(X_BLOBS, parts=PARTS)
    model.unlearn(clients=[1])
    check = check_bitwise(model)
    assert not check.identical and {"grid step", "aggregate cells"} <= set(check.differing)
    assert not any(name.startswith("client") for name in check.differing)  # the clients' models are exact


def test_mufc_default_gamma_is_caught_even_where_cells_and_counts_coincide():
    """One row fewer changes 1/sqrt(n) by a hair: the cells and counts can stay the same, the step does not."""
    model = MUFC(4, aggregation="plaintext", server_update="strict", random_state=2).fit(X_BLOBS, parts=PARTS)
    victim = next(int(i) for i in model.client_ids(0) if int(i) not in seed_ids(model, 0))
    report = model.unlearn([victim])
    check = check_bitwise(model)
    assert not report.exact and not check.identical and "grid step" in check.differing


def test_retrain_is_its_refit_and_never_reads_the_forgotten_rows():
    model = Retrain(MUFC(3, aggregation="plaintext", random_state=0)).fit(X_BLOBS.copy(), parts=PARTS)
    model.unlearn([3, 40, 77], clients=[2])
    model._X[[3, 40, 77]] = np.nan
    model._X[PARTS[2]] = np.nan
    check = check_bitwise(model)
    assert check.identical and "server centers" in model._model_state() and check.unchecked == ()
    plain = Retrain(KMeans(3, n_init=2, random_state=0)).fit(X_BLOBS)
    plain.unlearn([0, 1, 2])
    assert check_bitwise(plain).identical and set(plain._model_state()) == {
        "cluster_centers_", "labels_", "seed_indices_",
    }  # fmt: skip
    plain.estimator_.cluster_centers_[0] += 1.0
    assert check_bitwise(plain).differing == ("cluster_centers_",)


def _softmax_task():
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 1.5, (2, 4))
    y = rng.integers(0, 2, 120)
    X = (centres[y] + rng.normal(0, 1, (120, 4))).astype(np.float32)
    return X, y, np.array_split(np.arange(120), 24)


@pytest.mark.parametrize("secure", [False, True], ids=["plain", "secure"])
def test_clustered_unlearning_is_every_cluster_trained_from_scratch(secure):
    X, y, clients = _softmax_task()
    local = LocalSGD(lr=0.1, batch_size=5)
    fu = ClusteredUnlearning(
        "softmax", cluster_size=8, rounds=2, local=local, secure=secure, threshold_rate=0.5, random_state=3
    ).fit(X.copy(), y, parts=clients)
    gone = [int(fu.clusters_[1][0]), int(fu.clusters_[2][3])]
    fu.unlearn(clients=gone[:1])
    fu.unlearn(clients=gone[1:])
    fu._X[np.concatenate([fu.parts_[u] for u in gone])] = np.nan
    check = check_bitwise(fu)
    assert check.identical and check.n_arrays == 3, str(check)
    assert check_bitwise(fu, clients=gone).identical
    fu.trainers_[0].params_[0] += 1e-6  # a cluster no request touched
    assert check_bitwise(fu).differing == ("cluster 0",)


class _ReportsOnly(ClusteredUnlearning):
    """Forgets nothing: its ``unlearn`` only writes a report (what an audit must catch)."""

    def _unlearn(self, samples, clients, **options):
        return UnlearningReport(forgotten_clients=tuple(clients.tolist()))


def test_a_method_that_only_reports_is_caught_when_the_auditor_names_the_request():
    """The retraining is computed from what the model says it holds: without the request the check cannot see
    that nothing was forgotten; with it, it can."""
    X, y, clients = _softmax_task()
    fu = _ReportsOnly("softmax", cluster_size=8, rounds=2, secure=False, random_state=3).fit(X, y, parts=clients)
    fu.unlearn(clients=[5])
    assert check_bitwise(fu).identical  # the bookkeeping agrees with itself
    check = check_bitwise(fu, clients=[5])
    assert not check.identical and check.differing == ("still holds forgotten clients",)


# ------------------------------------------------------------------------------------------------ distances


def test_model_distance_is_relative_and_needs_the_same_arrays():
    a = {"params": np.array([3.0, 4.0]), "ids": np.array([1, 2])}
    assert model_distance(a, a) == 0.0
    assert model_distance({"params": np.array([3.0, 4.0])}, {"params": np.array([0.0, 0.0])}) == np.inf
    assert model_distance({"w": np.zeros(2)}, {"w": np.zeros(2)}) == 0.0
    with pytest.raises(ValueError, match="different arrays"):
        model_distance(a, {"other": np.zeros(2)})
    with pytest.raises(ValueError, match="shape"):
        model_distance(a, {"params": np.zeros(3)})
    one = KMeansPlusPlus(3, random_state=0).fit(X_BLOBS)
    other = KMeansPlusPlus(3, random_state=1).fit(X_BLOBS)
    assert model_distance(one, one) == 0.0 and model_distance(one, other) > 0.0
    fitted = KMeans(3, random_state=0).fit(X_BLOBS)
    assert model_distance(fitted, {"cluster_centers_": fitted.cluster_centers_}) == 0.0


def test_federaser_and_rollback_models_are_measured_by_distance():
    X, y, clients = _softmax_task()
    options = dict(concurrency=8, buffer=4, local=LocalSGD(lr=0.1, batch_size=5), random_state=0)
    fit = dict(training_times=np.linspace(1.0, 4.0, 24), rounds=8)
    eraser = FedEraser("softmax", **options).fit(X, y, parts=clients, **fit)
    knot = AsyncFederatedTrainer("softmax", **options).fit(X, y, parts=clients, **fit)
    assert model_distance(eraser, knot) == 0.0  # the same training
    victim = int(eraser.history_[0].clients[0])
    assert not eraser.unlearn(clients=[victim]).exact and knot.unlearn(clients=[victim]).exact
    assert set(eraser._model_state()) == {"params"} and 0.0 < model_distance(eraser, knot) < 1.0
    with pytest.raises(NotImplementedError, match="FedEraser promises no bitwise coupling"):
        check_bitwise(eraser)


# ------------------------------------------------------------------------------------------------ in distribution


def test_remaining_data_is_retrains_renumbering():
    request = dict(samples=[0, 5, 40, 41], clients=[1])
    keep, parts, _, _ = _remaining(len(X_BLOBS), PARTS, **request)
    fresh = MUFC(3, aggregation="plaintext", random_state=7).fit(X_BLOBS[keep], parts=parts)
    retrain = Retrain(MUFC(3, aggregation="plaintext", random_state=7)).fit(X_BLOBS, parts=PARTS)
    retrain.unlearn(**request)
    expected = retrain._model_state()
    assert fresh._model_state().keys() == expected.keys()
    for name, array in fresh._model_state().items():
        np.testing.assert_array_equal(array, expected[name])
    # a client emptied by the request leaves the partition, as in Retrain
    keep, parts, _, _ = _remaining(6, [[0, 1], [2], [3, 4, 5]], samples=[2, 4], clients=None)
    assert keep.tolist() == [True, True, False, True, False, True] and [p.tolist() for p in parts] == [[0, 1], [2, 3]]


def test_seeding_that_redraws_passes_and_a_shortcut_fails_the_chi_square_test():
    build = {
        "exact": lambda seed: KMeansPlusPlus(3, random_state=seed),
        "shortcut": lambda seed: NearestReplacement(3, random_state=seed),
    }
    results = {
        name: exactness_test(b, X_LINE, samples=[0], statistic=centres_on_the_line, n_runs=1000, random_state=0)
        for name, b in build.items()
    }
    assert all(r.test == "chi-square" and r.n_runs == 1000 and len(r.unlearned) == 1000 for r in results.values())
    assert results["exact"].pvalue > 0.01 and results["shortcut"].pvalue < 0.01, {k: str(r) for k, r in results.items()}


def test_strict_mufc_passes_and_a_model_keeping_the_point_fails_the_energy_test():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 0.05, (30, 2)), [[3.0, 0.0]], rng.normal(0, 0.05, (30, 2)) + 1.0])
    parts = [np.arange(31), np.arange(31, 61)]  # client 0 holds an outlier, row 30
    options = dict(gamma=0.1, aggregation="plaintext", server_update="strict")
    results = {
        name: exactness_test(
            lambda seed, cls=cls: cls(2, **options, random_state=seed),
            X,
            parts=parts,
            samples=[30],
            statistic=sorted_server_centres,
            n_runs=120,
            random_state=0,
        )
        for name, cls in (("exact", MUFC), ("keeps", KeepsTheData))
    }
    exact, keeps = results["exact"], results["keeps"]
    assert exact.test == keeps.test == "energy permutation" and exact.unlearned.shape == (120, 4)
    assert exact.pvalue > 0.01 and keeps.pvalue < 0.01, (str(exact), str(keeps))
    assert keeps.pvalue == 1 / (N_PERMUTATIONS + 1) and keeps.statistic > 10 * exact.statistic


def test_dc_kmeans_without_a_bitwise_coupling_passes_in_distribution():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 0.05, (30, 2)), [[3.0, 0.0]], rng.normal(0, 0.05, (30, 2)) + 1.0])
    parts = [np.arange(31), np.arange(31, 61)]
    result = exactness_test(
        lambda seed: DCKMeans(2, random_state=seed), X, parts=parts, samples=[30],
        statistic=sorted_server_centres, n_runs=100, random_state=0,
    )  # fmt: skip
    assert result.test == "energy permutation" and result.pvalue > 0.01, str(result)


def test_results_do_not_depend_on_the_number_of_jobs():
    def run(n_jobs):
        return exactness_test(
            lambda seed: KMeansPlusPlus(3, random_state=seed), X_LINE, samples=[0],
            statistic=centres_on_the_line, n_runs=40, random_state=5, n_jobs=n_jobs,
        )  # fmt: skip

    one, two = run(1), run(2)
    assert (one.pvalue, one.statistic, one.unlearned, one.retrained) == (
        two.pvalue, two.statistic, two.unlearned, two.retrained,
    )  # fmt: skip
    continuous = [
        exactness_test(
            lambda seed: KMeansPlusPlus(3, random_state=seed), X_BLOBS, samples=[0, 1],
            statistic=lambda m: np.sort(m.cluster_centers_, axis=0), n_runs=20, random_state=5, n_jobs=n_jobs,
        )
        for n_jobs in (1, 2)
    ]  # fmt: skip
    assert continuous[0].pvalue == continuous[1].pvalue and continuous[0].statistic == continuous[1].statistic
    np.testing.assert_array_equal(continuous[0].unlearned, continuous[1].unlearned)
    assert isinstance(continuous[0], ExactnessTest) and "runs per sample" in str(continuous[0])


def test_bad_requests_and_statistics_are_refused():
    build = lambda seed: KMeansPlusPlus(2, random_state=seed)  # noqa: E731
    with pytest.raises(ValueError, match="nothing to forget"):
        exactness_test(build, X_LINE, statistic=centres_on_the_line, n_runs=2)
    with pytest.raises(ValueError, match="parts"):
        exactness_test(build, X_LINE, clients=[0], statistic=centres_on_the_line, n_runs=2)
    with pytest.raises(ValueError, match="rows of X"):
        exactness_test(build, X_LINE, samples=[6], statistic=centres_on_the_line, n_runs=2)
    with pytest.raises(TypeError, match="hashable"):
        exactness_test(build, X_LINE, samples=[0], statistic=lambda m: [1], n_runs=2)
    with pytest.raises(ValueError, match="NaN"):
        exactness_test(build, X_LINE, samples=[0], statistic=lambda m: np.nan, n_runs=2)
    calls = iter(range(10**6))
    with pytest.raises(TypeError, match="real arrays for some"):
        exactness_test(
            build, X_LINE, samples=[0], statistic=lambda m: 1.0 if next(calls) % 2 else "a", n_runs=2, n_jobs=1
        )


# ------------------------------------------------------------------------------------------------ the tests' algebra

samples_2d = arrays(
    np.float64, st.tuples(st.integers(2, 12), st.integers(1, 3)), elements=st.floats(-1e3, 1e3, allow_nan=False)
)


@given(samples_2d)
def test_the_energy_distance_of_a_sample_and_itself_is_zero(a):
    scale = 1.0 + np.abs(a).max()
    assert _energy_distance(a, a) == pytest.approx(0.0, abs=1e-9 * scale)


@given(samples_2d, samples_2d, st.integers(0, 2**32 - 1))
def test_the_energy_distance_is_symmetric_and_the_p_value_lies_in_zero_one(a, b, seed):
    if a.shape[1] != b.shape[1]:
        b = np.resize(b, (b.shape[0], a.shape[1]))
    ab, ba = _energy_distance(a, b), _energy_distance(b, a)
    assert ab >= 0.0 and ab == pytest.approx(ba, rel=1e-9, abs=1e-9 * (1.0 + np.abs(np.vstack([a, b])).max()))
    energy, pvalue = _energy_permutation_test(a, b, 99, np.random.default_rng(seed))
    assert energy == pytest.approx(ab, rel=1e-12, abs=1e-12) and 0.0 < pvalue <= 1.0
    assert (pvalue * 100) == pytest.approx(round(pvalue * 100))  # (1 + count) / (1 + 99)


def test_far_apart_samples_get_the_smallest_p_value_and_equal_ones_p_one():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, (50, 2)), rng.normal(5, 1, (50, 2))
    assert _energy_permutation_test(a, b, 199, rng)[1] == 1 / 200
    assert _energy_permutation_test(a[:1].repeat(5, 0), a[:1].repeat(7, 0), 199, rng) == (0.0, 1.0)
    assert _chi_square(["x"] * 5, ["x"] * 5) == (0.0, 1.0)
    assert _chi_square(["x"] * 50, ["y"] * 50)[1] < 1e-10


def test_the_report_types_are_frozen():
    check = BitwiseCheck("M", True, 1, 0.0, ())
    with pytest.raises(AttributeError):
        check.identical = False  # type: ignore[misc]
