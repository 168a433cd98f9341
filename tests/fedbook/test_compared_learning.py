"""The learning half of "Forgetting, compared" at a tiny size: the schema, n_jobs, the checks, and a broken system."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fedbook.compared.learning import (
    ATTACK_COLUMNS,
    ATTACKS,
    RETRAINING,
    STAGES,
    SYSTEM_COLUMNS,
    SYSTEMS,
    LearningScale,
    LearningSystem,
    attack_table,
    compare_learning,
    default_systems,
    prepare_task,
)

from fedlib.base import UnlearningReport
from fedlib.learn import LocalSGD
from fedlib.unlearn import ClusteredUnlearning

#: Six writers of the FEMNIST sample, a few rounds, four shadows per procedure, two runs of KNOT's exactness test;
#: many copies of each canary, so that FedAvg over every client memorises them at this size.
TINY = LearningScale(
    datasets=("FEMNIST",), n_clients=6, per_client=20, n_test=80, n_candidates=30, repeats=6, hidden=16, rounds=3,
    local=LocalSGD(lr=0.2, batch_size=16, epochs=2), cluster_size=3, dropout=0.1, threshold_rate=0.6,
    knot_clusters=2, concurrency=3, buffer=2, async_rounds=3, finetune_rounds=1, rapid_rounds=1, n_shadows=4,
    n_sequence=2, exactness_runs=2, n_bootstrap=200,
)  # fmt: skip

BROKEN = "forgets nothing"

#: Columns that time the run on this machine: the only ones allowed to differ between two runs.
SECONDS = ["forget seconds", "retrain seconds", "sequence seconds"]


class ForgetsNothing(ClusteredUnlearning):
    """FedAvg whose ``unlearn`` only writes a report: the client's data stays in the model."""

    def _unlearn(self, samples, clients, **options) -> UnlearningReport:
        return UnlearningReport(forgotten_clients=tuple(clients.tolist()), exact=True)


def build_broken(task, seed) -> ForgetsNothing:
    scale = task.scale
    return ForgetsNothing(
        task.model(), cluster_size=len(task.parts), rounds=scale.rounds, local=scale.local, secure=False,
        random_state=seed,
    )  # fmt: skip


@pytest.fixture(scope="module")
def sequential():
    systems = {**default_systems(), BROKEN: LearningSystem(BROKEN, build_broken, "synchronous", "FedAvg", "FedAvg",
                                                           "distance")}  # fmt: skip
    return compare_learning(TINY, 0, n_jobs=1, systems=systems)


@pytest.fixture(scope="module")
def parallel():
    return compare_learning(TINY, 0, n_jobs=2)


def test_frames_have_the_shared_schema(sequential):
    systems, attacks = sequential.systems, sequential.attacks
    assert list(systems.columns[: len(SYSTEM_COLUMNS)]) == list(SYSTEM_COLUMNS)
    assert list(attacks.columns) == list(ATTACK_COLUMNS)
    assert list(systems["system"]) == [*SYSTEMS, BROKEN] and (systems["domain"] == "learning").all()
    assert set(systems["claim"]) <= {"exact", "approximate"} and (systems["quality"] == "test accuracy").all()
    quality = systems[["quality before", "quality after", "quality retrained"]].to_numpy()
    assert ((quality >= 0) & (quality <= 1)).all()
    assert (systems["n_sequence"] == TINY.n_sequence).all() and (systems["retrain seconds"] > 0).all()
    # one row per (system, attack, stage) on the canaries, and the loss attack's control on ordinary data
    assert len(attacks) == len(systems) * len(STAGES) * (len(ATTACKS) + 1)
    assert attacks.groupby(["system", "attack", "stage", "canaries"]).size().eq(1).all()
    control = attacks[~attacks["canaries"]]
    assert set(control["attack"]) == {"loss threshold"} and set(control["stage"]) == set(STAGES)
    after = attacks["stage"] == "after"
    assert attacks.loc[after, ["gap", "gap low", "gap high"]].notna().all().all()
    assert attacks.loc[~after, ["gap", "gap low", "gap high"]].isna().all().all()
    assert (attacks["members"] == TINY.n_candidates // 2).where(attacks["canaries"], True).all()
    table = attack_table(sequential)
    assert list(table.columns[:3]) == list(STAGES) and len(table) == len(systems) * len(ATTACKS)


def test_results_do_not_depend_on_the_number_of_jobs(sequential, parallel):
    mine = sequential.systems[sequential.systems["system"] != BROKEN].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine.drop(columns=SECONDS), parallel.systems.drop(columns=SECONDS))
    attacks = sequential.attacks[sequential.attacks["system"] != BROKEN].reset_index(drop=True)
    pd.testing.assert_frame_equal(attacks, parallel.attacks)
    pd.testing.assert_frame_equal(
        sequential.curves[sequential.curves["system"] != BROKEN].reset_index(drop=True), parallel.curves
    )
    for key, shadows in parallel.shadows.items():
        np.testing.assert_array_equal(shadows.scores, sequential.shadows[key].scores)


def test_exactness_is_computed_by_the_audit(sequential):
    words = sequential.systems.set_index("system")["exactness"]
    assert words[RETRAINING] == "bit-identical"
    assert words["Liu et al. (clustered)"] == "bit-identical"
    assert words["fine-tuning"].startswith("approximate: ") and "from retrained" in words["fine-tuning"]
    assert words["KNOT"].startswith(("same distribution (p = ", "differs ("))
    knot = sequential.exactness.set_index("system").loc["KNOT"]
    assert knot["runs"] == TINY.exactness_runs and 0 < knot["p-value"] <= 1 and knot["detectable shift (sd)"] > 1


def test_a_broken_unlearning_shows_a_canary_gap_and_retraining_shows_none(sequential):
    attacks = sequential.attacks[sequential.attacks["canaries"] & (sequential.attacks["stage"] == "after")]
    gaps = attacks.set_index(["system", "attack"])
    for attack in ATTACKS:  # retraining's reference is its own model after forgetting: zero by construction
        assert tuple(gaps.loc[(RETRAINING, attack), ["gap", "gap low", "gap high"]]) == (0.0, 0.0, 0.0)
    for attack in ("loss threshold", "LiRA online"):  # the model still holds the canaries: the gap is resolved
        gap = gaps.loc[(BROKEN, attack)]
        assert gap["gap low"] > 0, gap
    broken = sequential.systems.set_index("system").loc[BROKEN]
    assert broken["quality after"] == broken["quality before"]


def test_the_task_puts_the_member_canaries_at_the_forgotten_client_only():
    task = prepare_task("FEMNIST", TINY, 3)
    X, y, parts = task.with_canaries(task.member)
    added = len(X) - len(task.X)
    assert added == task.member.sum() * TINY.repeats
    assert [len(p) for p in parts] == [len(p) + added * (c == task.forgotten) for c, p in enumerate(task.parts)]
    np.testing.assert_array_equal(y[len(task.X) :], np.repeat(task.planted[task.member], TINY.repeats))
    assert task.member.sum() == TINY.n_candidates // 2 and task.sequence[0] == task.forgotten
    again = prepare_task("FEMNIST", TINY, 3)
    np.testing.assert_array_equal(again.candidates, task.candidates)
    assert again.forgotten == task.forgotten
