"""The MUFC experiment drivers: dataset preparation, trial tables, verdicts, SCMA cost."""

from __future__ import annotations

import numpy as np
import pytest

from fedlib.experiments import mufc as experiments
from fedlib.experiments import verdict as fedlib_verdict
from fedlib.papers import mufc as paper


def test_prepare_standin_follows_the_paper_protocol():
    problem = experiments.prepare("TCGA", n_init=2, random_state=0)
    assert problem.kind == "stand-in"
    assert problem.X.shape == (1904, 57) and len(problem.parts) == paper.N_CLIENTS["TCGA"]
    assert problem.k_prime == 2 and np.max(np.abs(problem.X)) <= 1.0
    assert sum(len(p) for p in problem.parts) == len(problem.X)


def test_loss_ratio_trials_has_every_method_and_trial():
    problem = experiments.prepare("TCGA", max_samples=600, n_init=2, random_state=0)
    frame = experiments.loss_ratio_trials(problem, n_trials=2, server_n_init=2, random_state=0)
    assert sorted(frame["method"].unique()) == ["DC-KM", "K-FED", "MUFC"]
    assert len(frame) == 6 and (frame["loss ratio"] > 0.9).all()


@pytest.mark.parametrize(
    ("ours", "theirs", "verdict"),
    [((1.14, 0.01), (1.14, 0.03), "matches"), ((1.0, 0.0), (1.46, 0.01), "lower"), ((2.0, 0.0), (1.2, 0.0), "higher")],
)
def test_verdict_with_mufc_slack(ours, theirs, verdict):
    assert fedlib_verdict(ours, theirs, slack=experiments.VERDICT_SLACK) == verdict


def test_scma_round_cost_is_exact_and_reports_bits():
    cost = experiments.scma_round_cost(n_clients=4, n_clusters=3, n_bins=10**30, n_samples=400, random_state=0)
    assert cost.scma_bits == 2 * 3 * 4 * cost.prime_bits
    assert cost.dense_bits > cost.scma_bits


def test_paper_tables_cover_every_dataset():
    for table in [*paper.TABLE1.values(), paper.TABLE2_MUFC, paper.SPEEDUP_NO_RETRAIN]:
        assert set(table) == set(paper.DATASETS)


def test_removal_run_records_every_round_and_retraining():
    problem = experiments.prepare("TCGA", max_samples=600, n_init=2, random_state=0)
    run = experiments.removal_run(problem, n_removals=6, server_n_init=2, n_retrain_timings=2, random_state=0)
    assert len(run.rounds) == 6 and run.retrain_seconds > 0 and run.retrain_lloyd_seconds > 0
    assert run.accumulated_speedup > 0
    adversarial = experiments.removal_run(problem, n_removals=3, kind="adversarial", server_n_init=2, random_state=0)
    assert len(adversarial.rounds) == 3


def test_retrain_probability_is_mean_k_over_client_size():
    parts = [np.arange(10), np.arange(10, 30), np.arange(30, 33)]  # the last client is too small to pick
    assert experiments.retrain_probability(parts, 4) == pytest.approx((4 / 10 + 4 / 20) / 2)
    assert np.isnan(experiments.retrain_probability([np.arange(3)], 4))


def test_dckm_times_the_same_requests_and_small_clients_are_detected():
    problem = experiments.prepare("TCGA", max_samples=600, n_init=2, random_state=0)
    run = experiments.removal_run(problem, n_removals=4, server_n_init=2, n_retrain_timings=1, random_state=1)
    seconds = experiments.dckm_removal_seconds(problem, run.rounds, root_n_init=2, random_state=0)
    assert seconds.shape == (4,) and (seconds > 0).all()
    assert experiments.has_removable_clients(problem)


def test_mean_round_speedup_is_at_least_the_accumulated_one_for_equal_baselines():
    import pandas as pd

    run = experiments.RemovalRun(
        rounds=pd.DataFrame({"seconds": [0.001, 0.001, 1.0], "reseeded": [False, False, True]}),
        retrain_seconds=1.0,
        retrain_lloyd_seconds=1.0,
        train_seconds=1.0,
    )
    assert run.mean_round_speedup == pytest.approx((1000 + 1000 + 1) / 3)
    assert run.accumulated_speedup == pytest.approx(3 / 1.002)
    assert run.no_retrain_speedups.tolist() == [1000.0, 1000.0]
