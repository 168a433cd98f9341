"""MUFC's removal studies on several processes: the draws are planned first, so every n_jobs gives the same runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fedbook import mufc as experiments

from fedlib.data import Dataset
from fedlib.unlearn import MUFC


@pytest.fixture(scope="module")
def problems():
    return {name: experiments.prepare(name, max_samples=500, n_init=2, random_state=i)
            for i, name in enumerate(["TCGA", "TMI"])}  # fmt: skip


def _without_seconds(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=[c for c in frame.columns if "seconds" in c or c.startswith("retraining")])


def test_planned_requests_are_the_requests_the_model_would_draw(problems):
    problem = problems["TCGA"]
    for batch_size in (1, 7):
        drawn, planned = np.random.default_rng(3), np.random.default_rng(3)
        model = MUFC(problem.n_clusters, aggregation="plaintext", server_n_init=1, random_state=0)
        model.fit(problem.X, parts=problem.parts)
        plan = experiments._plan_random_requests(problem.parts, problem.n_clusters, 12, batch_size, planned)
        for request in plan:
            client, ids = experiments._pick_removal(model, "random", batch_size, drawn)
            assert client == request.client and np.array_equal(ids, request.ids)
            model.unlearn(ids)
        assert drawn.random() == planned.random()  # both streams were left at the same place


def test_a_planned_sequence_takes_what_removal_run_and_dckm_take_from_the_stream(problems):
    problem = problems["TCGA"]
    one_after_other = np.random.default_rng(11)
    run = experiments.removal_run(problem, n_removals=3, server_n_init=1, n_retrain_timings=1,
                                  random_state=one_after_other)  # fmt: skip
    experiments.dckm_removal_seconds(problem, run.rounds, root_n_init=1, random_state=one_after_other)
    planned = np.random.default_rng(11)
    experiments._plan_sequence(problem, planned, n_removals=3, server_n_init=1, n_retrain_timings=1, dckm=True)
    assert one_after_other.random() == planned.random()


def test_removal_adversarial_and_batch_studies_do_not_depend_on_n_jobs(problems):
    results = {}
    for n_jobs in (1, 2):
        rng = np.random.default_rng(5)
        runs, dckm = experiments.removal_study(problems, n_removals=4, n_init=1, n_jobs=n_jobs, random_state=rng)
        adversarial, adversarial_dckm = experiments.adversarial_study(
            problems, ["TMI", "TCGA"], n_removals=3, n_init=1, n_phi_updates=1, n_jobs=n_jobs, random_state=rng
        )
        batches = experiments.batch_study(problems, ["TCGA", "TMI"], batch_sizes=(3, 6), n_requests=3, n_trials=2,
                                          n_init=1, n_jobs=n_jobs, random_state=rng)  # fmt: skip
        results[n_jobs] = (runs, dckm, adversarial, adversarial_dckm, batches, rng.random())
    (r1, d1, a1, ad1, b1, next1), (r2, d2, a2, ad2, b2, next2) = results[1], results[2]
    assert next1 == next2
    for one, two in ((r1, r2), (a1, a2)):
        assert list(one) == list(two)
        for name in one:
            pd.testing.assert_frame_equal(_without_seconds(one[name].rounds), _without_seconds(two[name].rounds))
    assert list(a1) == ["TMI", "TCGA"] and a1["TMI"].rounds["loss ratio (updated phi*)"].notna().sum() == 1
    for one, two in ((d1, d2), (ad1, ad2)):
        assert list(one) == list(two) and all(one[n].shape == two[n].shape for n in one)
    pd.testing.assert_frame_equal(_without_seconds(b1), _without_seconds(b2))
    assert len(b1) == 2 * 2 * 2 * 3



def test_sequences_give_the_same_bits_here_and_on_workers():
    """On wide data a matrix product's rounding depends on the BLAS threads: a sequence computes on one thread
    wherever it runs, and phi^* is recomputed here, so n_jobs changes nothing."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 1000)) + rng.integers(0, 4, size=(2000, 1)) * 0.5
    parts = [np.sort(p) for p in np.array_split(rng.permutation(2000), 8)]
    dataset = Dataset(name="wide", X=X, y=np.zeros(2000, dtype=np.int64), n_clusters=4, source="test")
    problem = experiments.FederatedProblem("TMI", dataset, X, parts, 4, None, 1.0, np.zeros(2000, dtype=np.int64))
    one, two = [
        experiments.adversarial_study(
            {"TMI": problem}, ["TMI"], n_removals=2, n_init=2, n_phi_updates=1, n_jobs=n_jobs, random_state=1
        )[0]["TMI"].rounds
        for n_jobs in (1, 2)
    ]
    pd.testing.assert_frame_equal(_without_seconds(one), _without_seconds(two))
