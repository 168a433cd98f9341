"""Drivers of the learning-and-unlearning chapter of Liu et al. (tiny scale)."""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pandas as pd
import pytest
from fedbook.secagg_fu import learning as experiments

from fedlib.learn import LocalSGD


@pytest.fixture(scope="module")
def images():
    return experiments.load_federated_images("MNIST", n_clients=24, per_client=5, n_test=100, random_state=0)


@pytest.fixture(scope="module")
def design():
    table = experiments.design_table(24)
    table.loc[0, ["k", "degree m"]] = [12, 4]  # ParGen's k exceeds N = 24: a hand-made 2-cluster row
    return table


def test_images_are_dealt_evenly_and_reproducibly(images):
    assert images.n_clients == 24 and all(len(u) == 5 for u in images.clients)
    assert np.unique(np.concatenate(images.clients)).size == 120
    assert images.X.shape == (120, 1, 28, 28) and images.X_test.shape == (100, 1, 28, 28)
    again = experiments.load_federated_images("MNIST", n_clients=24, per_client=5, n_test=100, random_state=0)
    np.testing.assert_array_equal(again.X, images.X)
    with pytest.raises(ValueError, match="clients x"):
        experiments.load_federated_images("MNIST", n_clients=1000, per_client=100, n_test=100)


def test_design_table_has_the_global_baseline_and_the_printed_k():
    table = experiments.design_table(200)
    assert table["setting"].iloc[-1] == experiments.GLOBAL and table["k"].iloc[-1] == 200
    assert table.loc[table["setting"] == "γ=0.1, δ=0.1", "k"].item() == 41  # the printed ParGen's k (paper: 60)
    assert table["k corrected"].iloc[0].startswith("infeasible")


@pytest.mark.parametrize("sizes", [[10], [3, 4], [5, 5, 6]])
@pytest.mark.parametrize("tau", [1, 2, 3])
def test_expected_retrained_matches_enumeration(sizes, tau):
    cluster_of = np.repeat(np.arange(len(sizes)), sizes)
    n = cluster_of.size
    sizes = np.asarray(sizes)
    batch, sequential = [], []
    for order in itertools.permutations(range(n), tau):
        hit = cluster_of[list(order)]
        batch.append(sizes[np.unique(hit)].sum() - tau)
        sequential.append(sum(sizes[c] - (hit[: j + 1] == c).sum() for j, c in enumerate(hit)))
    assert experiments.expected_retrained(sizes, tau, "batch") == pytest.approx(np.mean(batch))
    assert experiments.expected_retrained(sizes, tau, "sequential") == pytest.approx(np.mean(sequential))


def test_abort_probability_matches_the_protocol_on_the_complete_graph():
    from fedlib.secagg import SecAggConfig

    k, t, rate = 20, 14, 0.25
    config = SecAggConfig.for_cluster(k, degree=None, threshold_rate=0.7, vector_length=1, share_holders="all",
                                      threshold=t)  # fmt: skip
    alive = np.random.default_rng(0).random((20_000, k)) >= rate
    measured = 1.0 - config.completes_without(~alive).mean()
    assert experiments.abort_probability(k, t, rate) == pytest.approx(measured, abs=0.01)


def test_round_abort_probability_counts_split_survivors_on_a_harary_graph():
    from fedlib.secagg import SecAggConfig

    k, t, rate = 20, 14, 0.25
    predicted = experiments.round_abort_probability(
        k, degree=4, threshold_rate=0.7, threshold=t, share_holders="all", dropout=rate, random_state=1
    )
    rng = np.random.default_rng(2)
    completed = 0
    for _ in range(40):  # a fresh seating per batch, as every round seats its clients anew
        config = SecAggConfig.for_cluster(k, degree=4, threshold_rate=0.7, vector_length=1, share_holders="all",
                                          threshold=t, random_state=rng)  # fmt: skip
        completed += int(config.completes_without(rng.random((500, k)) < rate).sum())
    assert predicted == pytest.approx(1.0 - completed / 20_000, abs=0.015)
    # Requirement 2 alone misses the rounds whose survivors fall apart
    assert predicted > experiments.abort_probability(k, t, rate) + 0.05
    complete = experiments.round_abort_probability(
        k, degree=None, threshold_rate=0.7, threshold=t, share_holders="all", dropout=rate, random_state=1
    )
    assert complete == pytest.approx(experiments.abort_probability(k, t, rate), abs=0.015)
    assert experiments.round_abort_probability(
        k, degree=4, threshold_rate=0.7, threshold=k + 1, share_holders="all", dropout=rate
    ) == 1.0
    assert experiments.round_abort_probability(
        k, degree=4, threshold_rate=0.7, threshold=t, share_holders="all", dropout=0.0
    ) == 0.0


def test_replicate_seeds_start_with_the_chapters_seed_and_differ():
    seeds = experiments.replicate_seeds(7, 4)
    assert seeds[0] == 7 and len(set(seeds)) == 4 and seeds == experiments.replicate_seeds(7, 4)


def test_one_cluster_settings_are_not_clustered_ends():
    reps = pd.DataFrame({"setting": ["a", "b", "c", experiments.GLOBAL], "k": [10, 20, 60, 100], "s": [10, 5, 1, 1]})
    assert experiments.clustered_ends(reps) == (10, 20)
    assert experiments.clustered_ends(reps.iloc[1:]) is None
    verdicts = experiments.figure67_verdicts({"FEMNIST": reps.iloc[1:]})
    assert verdicts["verdict"].str.startswith("not testable").all()


def test_convergence_unlearning_and_exactness_end_to_end(images, design):
    local = LocalSGD(lr=0.05, batch_size=5)
    curves, systems = experiments.convergence(
        images, design.iloc[[0, -1]], rounds=2, secure=True, local=local, random_state=0
    )
    assert set(curves["setting"]) == {design["setting"].iloc[0], experiments.GLOBAL}
    assert systems[experiments.GLOBAL].n_clusters == 1 and systems[design["setting"].iloc[0]].n_clusters == 2
    summary = experiments.convergence_summary(curves, n_test=100)
    assert (summary["rounds to target"] <= 2).all()
    clustered = systems[design["setting"].iloc[0]]
    table = experiments.unlearning_table(systems, [0, 1], n_requests=2)
    timing = ["train seconds", "aggregate seconds"]
    pd.testing.assert_frame_equal(  # the same table from two processes
        table.drop(columns=timing),
        experiments.unlearning_table(systems, [0, 1], n_requests=2, n_jobs=2).drop(columns=timing))
    curves_2, _ = experiments.convergence(images, design.iloc[[0, -1]], rounds=2, secure=True, local=local,
                                          random_state=0, n_jobs=2)  # fmt: skip
    pd.testing.assert_frame_equal(curves.drop(columns="seconds"), curves_2.drop(columns="seconds"))
    assert table.loc[(experiments.GLOBAL, "sequential"), "clients retrained"] == 23 + 22
    assert table.loc[(experiments.GLOBAL, "batch"), "clients retrained"] == 22
    assert clustered.unlearned_ == []  # the table unlearned copies
    seeds = experiments.replicate_seeds(0, 2)
    rows = design.iloc[[0, -1]]
    done = {(name, 0): system for name, system in systems.items()}
    reps = experiments.seed_replicates(images, rows, seeds, rounds=2, local=local, requests=[0, 1], done=done)
    assert len(reps) == 4 and reps["seed"].tolist() == seeds * 2
    assert reps.loc[reps["seed"] == 0, "accuracy after"].isna().all()  # the chapter's systems: read, not unlearned
    assert reps.loc[reps["seed"] != 0, "accuracy after"].notna().all()
    again = experiments.seed_replicates(images, rows, seeds, rounds=2, local=local, requests=[0, 1], done=done,
                                        n_jobs=2)  # fmt: skip
    pd.testing.assert_frame_equal(reps.drop(columns="curve"), again.drop(columns="curve"))  # same on 2 processes
    after = experiments.first_seed_after(reps, table, 0)
    assert after["accuracy after"].notna().all()
    comparable = experiments.comparable_verdict(after, design["setting"].iloc[0], margin=1.0)
    assert comparable["verdict"][0].startswith("supported")  # any difference lies within a margin of 1
    check = experiments.exactness_check(clustered, 3, images.X)
    assert check["identical"] and check["other clusters unchanged"]
    report = copy.deepcopy(clustered).unlearn(clients=[3])
    row = experiments.report_row(report)
    assert list(row) == ["requests", "clusters retrained", "clients retrained", "rounds", "aborted rounds",
                         "train seconds", "aggregate seconds", "MB sent", "accuracy"]  # fmt: skip
    assert (row["requests"], row["clusters retrained"], row["rounds"]) == (1, 1, 2)
    assert row["clients retrained"] == len(report.clients_retrained) == 11
    assert row["MB sent"] == report.bytes_sent / 1e6 > 0 and row["accuracy"] == report.details["accuracy"]
    # a targeted sequence is refused past the cap floor(0.1 * 12) = 1
    events, _ = experiments.unlearning_run(clustered, clustered.clusters_[0][:2], mode="sequential")
    assert events["refused"].tolist()[0] == "" and "cap floor(zeta * k_i) = 1" in events["refused"].tolist()[1]
    table = experiments.dropout_table(clustered, n_patterns=2_000)
    assert table.columns.tolist() == ["cluster", "k_i", "t_i", "m", "dropout", "rounds", "aborted", "P(abort)",
                                      "predicted aborted", "Requirement 2 only"]  # fmt: skip
    assert (table["m"] == 4).all() and (table["predicted aborted"] == table["rounds"] * table["P(abort)"]).all()
    pd.testing.assert_frame_equal(table, experiments.dropout_table(clustered, n_patterns=2_000))  # seeded


def test_unlearning_table_is_unlearning_run_in_each_mode(images, design):
    """Retraining every cluster as its own job, out of order, reports what unlearning one request after another
    reports: the same clusters, clients, aborted rounds, bytes and accuracies, and the same refusals."""
    local = LocalSGD(lr=0.05, batch_size=5)
    _, systems = experiments.convergence(images, design.iloc[[0, -1]], rounds=2, secure=True, local=local,
                                         random_state=3)  # fmt: skip
    clustered = systems[design["setting"].iloc[0]]
    first, second = clustered.clusters_[0][:2]
    requests = [int(first), int(clustered.clusters_[1][0]), int(second)]  # the third passes cluster 0's cap
    table = experiments.unlearning_table(systems, requests, n_requests=3, n_jobs=2)
    timing = ["train seconds", "aggregate seconds"]
    for name, system in systems.items():
        for mode in ("sequential", "batch"):
            events, _ = experiments.unlearning_run(system, requests, mode=mode)
            expected = experiments.unlearning_summary(events, system, 3)
            got = table.loc[(name, mode)]
            for column, value in expected.items():
                if column not in timing:
                    assert got[column] == pytest.approx(value, nan_ok=True), (name, mode, column)
    assert table.loc[(design["setting"].iloc[0], "sequential"), "refused"] == 1
    assert table.loc[(design["setting"].iloc[0], "batch"), "refused"] == 1
    assert table.loc[(experiments.GLOBAL, "sequential"), "retrainings"] == 3
    assert clustered.unlearned_ == []  # the table unlearned copies


def test_femnist_clients_are_writers_with_their_own_images():
    femnist = experiments.load_federated_images("FEMNIST", n_clients=10, per_client=30, n_test=200, random_state=0)
    assert femnist.n_clients == 10 and all(1 <= len(u) <= 30 for u in femnist.clients)
    rows = np.concatenate(femnist.clients)
    np.testing.assert_array_equal(np.sort(rows), np.arange(femnist.X.shape[0]))  # every image to exactly one client
    if femnist.is_standin:
        pytest.skip("FEMNIST sample not available: the stand-in has no writers")
    assert 0 < femnist.X_test.shape[0] <= 200 and femnist.y.max() < 62
    with pytest.raises(ValueError, match="writers"):
        experiments.load_federated_images("FEMNIST", n_clients=500, per_client=30, n_test=10)


def test_secure_against_plain_separates_rounding_from_aborted_rounds(images, design):
    """The plain sum never aborts: a cluster whose secure round aborted differs by a whole skipped update, the
    others by fixed-point rounding alone. Seed 1 at 15% dropouts aborts one round of cluster 0 only (seating and
    dropouts are seeded, so this holds whatever keys the OS gives)."""
    local = LocalSGD(lr=0.05, batch_size=5)
    runs = {secure: experiments.build_system(images, design.iloc[0], rounds=3, secure=secure, local=local,
                                             dropout=0.15, random_state=1)
            for secure in (True, False)}  # fmt: skip
    out = experiments.secure_against_plain(runs[True], runs[False])
    assert [[r.aborted for r in t.history_] for t in runs[True].trainers_] == [[False, True, False], [False] * 3]
    assert out["aborted rounds"] == 1
    assert out["max rounding difference"] < 1e-6 < 1e-3 < out["max parameter difference"]
