"""Drivers of the SecFC chapter: tables beside the paper, exactness runs, the worked example, timing sweeps."""

from __future__ import annotations

import numpy as np
import pytest

from fedlib.experiments import secfc as experiments
from fedlib.experiments import verdict
from fedlib.papers import secfc as paper


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
    assert set(trials["method"]) == set(experiments.METHODS)
    assert len(trials) == 2 * 3 * 3
    secfc = trials[trials["method"] == "SecFC"]
    assert secfc["identical"].eq(1.0).all()
    # SecFC's accuracy does not depend on the split (Theorem 1): one value per run.
    assert secfc.groupby("run")["accuracy"].nunique().eq(1).all()
    side = experiments.beside_paper(trials, paper.TABLE1, 4)
    assert set(side["verdict"]) <= {"matches", "lower", "higher"}
    wide = experiments.wide_table(side)
    assert list(wide.index) == list(experiments.METHODS) and list(wide.columns) == [1, 2, 4]


def test_compare_verdicts():
    slack = experiments.VERDICT_SLACK
    assert verdict((96.0, 0.1), (96.3, 0.1), slack=slack) == "matches"
    assert verdict((50.0, 1.0), (96.3, 0.1), slack=slack) == "lower"
    assert verdict((99.0, 0.0), (75.0, 0.1), slack=slack) == "higher"


def test_exactness_runs_cover_every_configuration(small_mixture):
    frame = experiments.exactness_runs(small_mixture.X[:150], 4, [(5, 1, 2, 5), (9, 2, 2, 9), (7, 1, 1, 4)])
    assert frame["identical at every iteration"].all() and frame["final d' identical"].all()
    assert frame["threshold 2ℓ+2t-1"].tolist() == [5, 7, 3]


def test_float_vs_quantized_converges_with_scale(small_mixture):
    frame = experiments.float_vs_quantized(small_mixture.X, small_mixture.y, 4, [1e-2, 1e3])
    assert frame.loc[frame["λ"] == 1e3, "labels differing"].item() == 0


def test_worked_example_decodes_the_plaintext():
    example = experiments.worked_example(random_state=5)
    assert example.decoded_equals_plaintext
    assert example.shares.shape == (4, 5)
    assert int(example.weights["weight w_r"].sum()) % example.code.prime == 1  # weights sum to ℓ = 1


def test_timing_sweep_shape():
    frame = experiments.timing_sweep("n_clients", [5, 7])
    assert frame["t"].tolist() == [2, 3]
    assert (frame[["client s/iter", "server s/iter", "k-FED total s"]] > 0).all().all()
    with pytest.raises(ValueError, match="parameter"):
        experiments.timing_sweep("n_iterations", [1])


def test_rotated_mnist_has_four_rotations():
    data = experiments.rotated_mnist(2)
    assert data.n_clusters == 4 and data.X.shape[1] == 784
    assert np.bincount(data.y).min() >= len(data.y) // 4 - 1
