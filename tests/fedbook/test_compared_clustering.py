"""The clustering half of "Forgetting, compared": the output schema, independence from n_jobs, exactness words, and
an audit that can fail (a MUFC whose unlearn only reports shows a canary gap; MUFC does not)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fedbook.compared import clustering as compared
from hypothesis import given
from hypothesis import strategies as st

from fedlib.base import UnlearningReport
from fedlib.unlearn import MUFC

#: One small dataset, every system: a few seconds a run.
TINY = compared.Scale(
    rows={"Celltype": 300}, n_shadows=8, n_targets=8, n_sequence=2, n_exactness=6, n_init=1, n_bootstrap=200
)

#: Times: not compared between runs.
SECONDS = ["forget seconds", "retrain seconds", "sequence seconds"]


@pytest.fixture(scope="module")
def tiny():
    return compared.compare_clustering(TINY, seed=0, n_jobs=1, datasets=("Celltype",))


def test_frames_have_the_shared_schema(tiny):
    assert list(tiny.systems.columns) == list(compared.SYSTEM_COLUMNS)
    assert list(tiny.attacks.columns) == list(compared.ATTACK_COLUMNS)
    assert tiny.systems["system"].tolist() == [s.name for s in compared.SYSTEMS]
    assert (tiny.systems["domain"] == "clustering").all() and (tiny.systems["quality"] == "loss ratio").all()
    assert set(tiny.systems["claim"]) <= {"exact", "approximate"}
    assert tiny.systems["data"].str.contains("300 rows").all()
    # every (system, attack, stage), with and without canaries; the gap only after forgetting
    assert len(tiny.attacks) == len(compared.SYSTEMS) * 3 * 3 * 2
    after = tiny.attacks["stage"] == "after"
    assert tiny.attacks.loc[after, ["gap", "gap low", "gap high"]].notna().all().all()
    assert tiny.attacks.loc[~after, "gap"].isna().all()
    assert ((tiny.attacks["AUC low"] <= tiny.attacks["AUC"]) & (tiny.attacks["AUC"] <= tiny.attacks["AUC high"])).all()
    roc = tiny.roc("Celltype", "MUFC")
    assert set(roc["stage"]) == set(compared.STAGES) and roc["TPR"].between(0, 1).all()


def test_results_do_not_depend_on_the_number_of_jobs(tiny):
    two = compared.compare_clustering(TINY, seed=0, n_jobs=2, datasets=("Celltype",))
    pd.testing.assert_frame_equal(tiny.systems.drop(columns=SECONDS), two.systems.drop(columns=SECONDS))
    pd.testing.assert_frame_equal(tiny.attacks, two.attacks)


def test_exact_methods_are_bit_identical_and_the_twin_is_secfc(tiny):
    words = tiny.systems.set_index("system")["exactness"]
    for name in ("MUFC retrained", "K-FED retrained", "SecFC retrained", "K-means++ seeding"):
        assert words[name] == "bit-identical", name
    # MUFC couples its clients and aggregate to retraining bit for bit; its server centres in distribution only
    assert words["MUFC"].startswith("bit-identical; server centers: same distribution")
    assert words["DC-KM"].startswith("same distribution")  # no coupling: tested in distribution
    assert (tiny.systems["claim"] == "exact").all()
    assert tiny.checks["passed"].all() and len(tiny.checks) == 1


def test_canaries_are_seen_before_forgetting_and_not_after(tiny):
    canaries = tiny.attacks[tiny.attacks["canaries"]].set_index(["system", "attack", "stage"])["AUC"]
    for system in ("MUFC", "SecFC retrained"):
        assert canaries[(system, "LiRA online", "before")] > 0.9
        assert canaries[(system, "LiRA online", "after")] < 0.7


class DoesNothingMUFC(MUFC):
    """Broken on purpose: ``unlearn`` reports the client forgotten and keeps every model as it was."""

    def unlearn(self, samples=None, *, clients=None, **options):
        return UnlearningReport(forgotten_clients=tuple(np.atleast_1d(clients).tolist()), server_refit=True, rounds=1)


def does_nothing(settings, random_state):
    return DoesNothingMUFC(
        settings.n_clusters, gamma=settings.gamma, aggregation="plaintext", server_n_init=settings.n_init,
        random_state=random_state,
    )  # fmt: skip


def test_the_canary_gap_catches_an_unlearn_that_only_reports():
    systems = (compared.SYSTEMS[0], compared.System("does nothing", does_nothing))
    scale = compared.Scale(rows={"Celltype": 300}, n_shadows=8, n_targets=12, n_sequence=2, n_exactness=6, n_init=1)
    result = compared.compare_clustering(scale, seed=1, datasets=("Celltype",), systems=systems)
    gaps = result.attacks[result.attacks["canaries"] & (result.attacks["stage"] == "after")].set_index(
        ["system", "attack"]
    )
    for attack in compared.ATTACKS:
        broken, mufc = gaps.loc[("does nothing", attack)], gaps.loc[("MUFC", attack)]
        assert broken["gap"] > 0.2 and broken["gap low"] > 0, attack  # the canaries are still there
        assert mufc["gap low"] <= 0 <= mufc["gap high"], attack  # no more than retraining shows
    words = result.systems.set_index("system")["exactness"]
    # the auditor names the client it asked to forget: a model that still holds it fails the bitwise check
    assert words["does nothing"] == "differs bit for bit (still holds forgotten clients)"


@given(st.integers(2, 40), st.integers(2, 30), st.sampled_from([0.25, 0.5]), st.integers(0, 100))
def test_balanced_design_holds_as_many_in_every_run_and_each_candidate_as_often(n_runs, n, fraction, seed):
    m = int(np.floor(fraction * n + 1e-9))
    if not 1 <= m <= n - 1:
        with pytest.raises(ValueError):
            compared.balanced_design(n_runs, n, fraction, random_state=seed)
        return
    design = compared.balanced_design(n_runs, n, fraction, random_state=seed)
    assert design.shape == (n_runs, n) and (design.sum(axis=1) == m).all()
    per_candidate = design.sum(axis=0)
    assert per_candidate.max() - per_candidate.min() <= 1
