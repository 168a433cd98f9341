"""Drivers of the SecFC chapter: tables beside the paper, exactness runs, the worked example, timing sweeps."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fedbook import secfc as experiments
from fedbook import verdict
from fedbook.papers import secfc as paper


@pytest.fixture(scope="module")
def small_mixture():
    return experiments.gaussian_problem(4, 1.0, n_samples=400, random_state=0)


def test_published_tables_are_complete():
    for table, keys in [(paper.TABLE1, (4, 16)), (paper.TABLE2, (4, 16)), (paper.TABLE3, paper.MNIST_DIGITS)]:
        assert set(table) == set(experiments.METHODS)
        for cells in table.values():
            assert {key for key, _ in cells} == set(keys)
            assert all(0 <= mean <= 100 and std >= 0 for mean, std in cells.values())
    # The centralized column does not depend on k' in the paper either.
    assert len({v for v in paper.TABLE1["Centralized Lloyd"].values()}) == 2


def test_accuracy_trials_and_table(small_mixture):
    trials = experiments.accuracy_trials(small_mixture, n_clients=10, k_primes=(1, 2, 4), n_runs=2, random_state=3)
    assert set(trials["method"]) == {*experiments.METHODS, experiments.SAME_INIT}
    assert len(trials) == 2 * 3 * 4
    secfc = trials[trials["method"] == "SecFC"]
    assert secfc["identical"].eq(1.0).all()
    # SecFC's accuracy does not depend on the split (Theorem 1): one value per run.
    assert secfc.groupby("run")["accuracy"].nunique().eq(1).all()
    # Float Lloyd from SecFC's start shares its seeds, so the seeding flag agrees run by run.
    same = trials[trials["method"] == experiments.SAME_INIT]
    assert same["seeds hit every cluster"].tolist() == secfc["seeds hit every cluster"].tolist()
    side = experiments.beside_paper(trials, paper.TABLE1, 4)
    assert set(side["method"]) == set(experiments.METHODS)
    assert set(side["verdict"]) <= {"matches", "lower", "higher", "inconclusive"}
    assert np.allclose(side["difference"], side["mean"] - side["paper mean"])
    assert side["ours"].str.endswith("(2 runs)").all()
    wide = experiments.wide_table(side)
    assert list(wide.index) == list(experiments.METHODS) and list(wide.columns) == [1, 2, 4]


def test_trials_do_not_depend_on_the_number_of_processes(small_mixture):
    args = dict(n_clients=10, k_primes=(2, 4), n_runs=2, random_state=1)
    serial = experiments.accuracy_trials(small_mixture, **args).drop(columns="seconds")
    parallel = experiments.accuracy_trials(small_mixture, n_jobs=2, **args).drop(columns="seconds")
    pd.testing.assert_frame_equal(serial, parallel)


def test_one_run_is_marked_and_not_judged(small_mixture):
    trials = experiments.accuracy_trials(small_mixture, n_clients=10, k_primes=(4,), n_runs=1, random_state=0)
    side = experiments.beside_paper(trials, paper.TABLE1, 4)
    assert (side["verdict"] == "one run").all() and side["ours"].str.endswith("(1 run)").all()
    ours_parts = [cell.split(" vs ")[0] for cell in experiments.wide_table(side).to_numpy().ravel()]
    assert all(part.endswith("(1 run)") and "±" not in part for part in ours_parts)


def test_compare_verdicts():
    slack, margin = experiments.VERDICT_SLACK, experiments.VERDICT_MARGIN
    assert verdict((96.0, 0.1), (96.3, 0.1), slack=slack, margin=margin) == "matches"
    assert verdict((50.0, 1.0), (96.3, 0.1), slack=slack, margin=margin) == "lower"
    assert verdict((99.0, 0.0), (75.0, 0.1), slack=slack, margin=margin) == "higher"
    # The case: a wide error bar over three runs does not make a 25-point gap a match.
    assert verdict((75.2, 17.5), (100.0, 0.0), slack=slack, margin=margin, n_ours=3, n_published=10) == "lower"
    assert verdict((85.0, 17.5), (100.0, 0.0), slack=slack, margin=margin, n_ours=3, n_published=10) == ("inconclusive")


def test_seeding_study_compares_plain_and_greedy(small_mixture):
    table = experiments.seeding_study(small_mixture, n_seeds=10, random_state=0)
    assert len(table) == 2 and (table["seedings"] == 10).all()
    assert table["seeds in k different clusters (%)"].between(0, 100).all()
    # A run whose seeds found every cluster of these separated Gaussians is exact.
    assert table["runs at 100% (%)"].iloc[0] >= table["seeds in k different clusters (%)"].iloc[0] - 1e-9


def test_segment_leakage_decodes_every_partial_distance(small_mixture):
    table = experiments.segment_leakage(small_mixture.X[:200], 4, n_segments=3, n_clients=11, random_state=0)
    assert len(table) == 3 and table["decoded = plaintext partial d'"].all()
    assert table["share of d' (%)"].sum() == pytest.approx(100.0)


def test_exactness_runs_cover_every_configuration(small_mixture):
    frame = experiments.exactness_runs(small_mixture.X[:150], 4, [(5, 1, 2, 5), (9, 2, 2, 9), (7, 1, 1, 4)])
    assert frame["identical at every iteration"].all() and frame["final d' identical"].all()
    assert frame["threshold 2ℓ+2t-1"].tolist() == [5, 7, 3]


def test_float_vs_quantized_converges_with_scale(small_mixture):
    frame = experiments.float_vs_quantized(small_mixture.X, small_mixture.y, 4, [1e-2, 1e3])
    assert frame.loc[frame["λ"] == 1e3, "labels differing"].item() == 0
    # Matching never counts more differences than the raw comparison.
    assert (frame["labels differing"] <= frame["labels differing (raw)"]).all()


def test_differences_are_counted_after_matching():
    a = np.array([0, 0, 1, 1, 2])
    assert experiments._differing_after_matching(a, np.array([1, 1, 0, 0, 2])) == 0
    assert experiments._differing_after_matching(a, np.array([1, 1, 0, 2, 2])) == 1


def test_worked_example_decodes_the_plaintext():
    example = experiments.worked_example(random_state=5)
    assert example.decoded_equals_plaintext
    assert example.shares.shape == (4, 5)
    assert int(example.weights["weight w_r"].sum()) % example.code.prime == 1  # weights sum to ℓ = 1


def test_timing_sweep_shape():
    frame = experiments.timing_sweep("n_clients", [5, 7])
    assert frame["t"].tolist() == [2, 3]
    assert (frame[["client s/iter", "server s/iter", "k-FED total s"]] > 0).all().all()
    assert (frame["slowest client s/iter"] >= frame["client s/iter"]).all()
    assert np.allclose(frame["SecFC s/iter"], frame["slowest client s/iter"] + frame["server s/iter"])
    assert (frame["k-FED wall s"] >= frame["k-FED total s"]).all()
    with pytest.raises(ValueError, match="parameter"):
        experiments.timing_sweep("n_iterations", [1])


def test_rotated_mnist_has_four_rotations():
    data = experiments.rotated_mnist(2)
    assert data.n_clusters == 4 and data.X.shape[1] == 784
    assert np.bincount(data.y).min() >= len(data.y) // 4 - 1


def test_label_readings_give_a_ceiling_per_setting():
    data = experiments.gaussian_problem(4, 20.0, n_samples=300, random_state=0)
    trials = experiments.accuracy_trials(data, n_clients=10, k_primes=(4,), n_runs=1, methods=("Centralized Lloyd",))
    table = experiments.label_readings({(20.0, 4): experiments.AccuracyTable(data, trials, None)})
    ceiling = table.loc["nearest true centre = generating component (%)", "σ = 20, k = 4"]
    assert 25.0 < ceiling <= 100.0
    assert table.loc["paper, centralized (%)", "σ = 20, k = 4"] == paper.TABLE2["Centralized Lloyd"][(4, 4)][0]
