"""The asynchronous simulator (Plato's semantics, as KNOT ran them): clock, buffer, sync special case, rollback."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from fedlib.exceptions import UnlearningRequestError
from fedlib.learn import LocalSGD, fedavg_weights, train_clients
from fedlib.learn._async import AsyncFederatedTrainer, pareto_training_times
from fedlib.learn._local import _ROUND, _child
from fedlib.utils import root_sequence


@pytest.fixture(scope="module")
def task():
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 2, (3, 5)).astype(np.float32)
    y = rng.integers(0, 3, 300)
    X = (centres[y] + rng.normal(0, 1, (300, 5))).astype(np.float32)
    clients = np.array_split(np.arange(240), 12)
    times = pareto_training_times(12, random_state=1)
    return X[:240], y[:240], clients, times, (X[240:], y[240:])


#: Options of ``fit`` (the data); the rest are the constructor's hyper-parameters.
FIT_OPTIONS = ("training_times", "cluster_labels", "test_data", "start_time")


def make(task, **options):
    """A fitted trainer that has not aggregated yet."""
    X, y, clients, times, test = task
    options = {**dict(training_times=times, test_data=test, concurrency=6, buffer=3,
                      local=LocalSGD(lr=0.1, batch_size=10), random_state=5, method="loop"), **options}  # fmt: skip
    fit = {key: options.pop(key) for key in FIT_OPTIONS if key in options}
    return AsyncFederatedTrainer("softmax", **options).fit(X, y, parts=clients, **fit)


def test_same_seed_same_bits_and_the_clock_only_moves_forward(task):
    a, b = make(task).run(rounds=6), make(task).run(rounds=6)
    np.testing.assert_array_equal(a.params_, b.params_)
    times = [r.time for r in a.history_]
    assert times == [r.time for r in b.history_] and times == sorted(times)
    assert all(r.clients.size == 3 for r in a.history_)
    assert max(r.staleness.max() for r in a.history_) >= 1  # with M < P some results are stale
    assert a.history_[-1].best > 0.6


def test_buffer_equal_to_concurrency_is_synchronous_fedavg(task):
    X, y, clients, times, _ = task
    trainer = make(task, buffer=6, test_data=None).run(rounds=3)
    # the reference: every round draws P clients, waits for the slowest and averages their models
    root = root_sequence(5)
    select = np.random.default_rng(_child(root, _ROUND))
    params, clock = trainer.checkpoints_[0][0].copy(), 0.0
    for r in range(1, 4):
        chosen = np.sort(select.choice(np.arange(12), size=6, replace=False))
        out = train_clients(trainer.model_, params, X, y, [clients[k] for k in chosen], config=trainer.local,
                            round_index=r, client_ids=chosen, random_state=root, method="loop")  # fmt: skip
        w = fedavg_weights(out.n_samples)
        params = np.einsum("i,id->d", w / w.sum(), out.params).astype(np.float32)
        clock += times[chosen].max()
        record = trainer.history_[r - 1]
        assert sorted(record.clients.tolist()) == chosen.tolist() and (record.staleness == 0).all()
        assert record.time == pytest.approx(clock)
    np.testing.assert_array_equal(trainer.params_[0], params)


def test_erasure_rolls_back_only_the_erasing_clients_cluster(task):
    labels = np.arange(12) % 2
    trainer = make(task, cluster_labels=labels).run(rounds=5)
    other = trainer.params_[1].copy()
    victim = int(np.flatnonzero((labels == 0) & (trainer.first_selected_ > 0))[0])
    first = int(trainer.first_selected_[victim])
    in_flight = [item.client for item in trainer._queues[0] if item.cluster == 0]
    report = trainer.unlearn(clients=[victim])
    assert report.details["clusters"] == (0,) and report.exact and report.forgotten_clients == (victim,)
    expected = trainer.checkpoints_[0][max(v for v in trainer.checkpoints_[0] if v <= first - 1)]
    np.testing.assert_array_equal(trainer.params_[0], expected)
    np.testing.assert_array_equal(trainer.params_[1], other)
    trainer.run(rounds=6)
    discarded = np.concatenate([r.discarded for r in trainer.history_[5:]])
    assert set(in_flight) <= set(discarded.tolist())  # results from the pre-rollback model are dropped
    later = [k for r in trainer.history_[5:] for k in r.clients.tolist() if k not in in_flight]
    assert victim not in later  # never selected again


def test_per_cluster_scheduling_keeps_the_other_clusters_bit_identical(task):
    labels = np.arange(12) % 3
    erased = make(task, cluster_labels=labels, schedule="per_cluster", concurrency=9, buffer=6)
    erased.run(rounds=6)
    victim = int(np.flatnonzero((labels == 0) & (erased.first_selected_ > 0))[0])
    assert erased.unlearn(clients=[victim]).details["clusters"] == (0,)
    erased.run(rounds=12)
    plain = make(task, cluster_labels=labels, schedule="per_cluster", concurrency=9, buffer=6).run(rounds=18)
    for n in (1, 2):
        common = sorted(set(erased.checkpoints_[n]) & set(plain.checkpoints_[n]))
        assert len(common) >= 4
        for version in common:
            np.testing.assert_array_equal(erased.checkpoints_[n][version], plain.checkpoints_[n][version])
    assert any(not np.array_equal(erased.checkpoints_[0][v], plain.checkpoints_[0][v])
               for v in set(erased.checkpoints_[0]) & set(plain.checkpoints_[0]))  # fmt: skip


def test_forgetting_twice_or_unknown_clients_raises(task):
    trainer = make(task).run(rounds=2)
    trainer.unlearn(clients=[0, 1])
    with pytest.raises(UnlearningRequestError, match="already forgotten"):
        trainer.unlearn(clients=[1])
    with pytest.raises(UnlearningRequestError, match="not held"):
        trainer.unlearn(clients=[12])
    with pytest.raises(UnlearningRequestError, match="more than once"):
        trainer.unlearn(clients=[3, 3])
    with pytest.raises(UnlearningRequestError, match="cannot unlearn samples"):
        trainer.unlearn([3])
    assert trainer.unlearned_ == [0, 1]


def test_a_scikit_learn_estimator_not_fitted_until_fit(task):
    trainer = AsyncFederatedTrainer("softmax", concurrency=4, buffer=2, local=LocalSGD(lr=0.1))
    assert clone(trainer).get_params() == trainer.get_params() and trainer.get_params()["buffer"] == 2
    for call in (lambda: trainer.run(rounds=1), lambda: trainer.unlearn(clients=[0]), lambda: trainer.profile()):
        with pytest.raises(NotFittedError):
            call()
    fitted = make(task)
    assert fitted.n_features_in_ == 5 and fitted.round_ == 0 and fitted.time_ == 0.0


def test_options_are_checked(task):
    with pytest.raises(ValueError, match="buffer"):
        make(task, buffer=7)
    with pytest.raises(ValueError, match="training_times"):
        make(task, training_times=np.ones(3))
    with pytest.raises(ValueError, match="needs an end"):
        make(task).run()


def test_fedbuff_aggregation_with_staleness_scaling_moves_by_scaled_deltas(task):
    trainer = make(task, aggregation="fedbuff", staleness_scaling=True, server_lr=0.5).run(rounds=4)
    assert np.isfinite(trainer.params_).all()
    assert trainer.time_to(0.0) == trainer.history_[0].time and np.isnan(trainer.time_to(2.0))


def test_pareto_times_follow_plato():
    times = pareto_training_times(5000, random_state=1)
    assert times.min() >= 20.0 and times.max() <= 50.0
    assert np.mean(times == 50.0) > 0.02  # the cap binds: Lomax(1) exceeds 30 with probability 1/31


def test_until_runs_what_is_due_and_stops_the_clock_there(task):
    trainer = make(task)
    due = trainer.next_time()
    trainer.run(until=due - 1e-9)
    assert trainer.round_ == 0 and trainer.time_ == pytest.approx(due - 1e-9)
    trainer.run(until=due)
    assert trainer.round_ == 1 and trainer.history_[0].time == due
    later = trainer.next_time()
    trainer.run(until=later + 0.5)
    assert all(r.time <= later + 0.5 for r in trainer.history_) and trainer.time_ == later + 0.5


def test_unlearning_without_rollback_keeps_models_and_drops_the_clients(task):
    trainer = make(task).run(rounds=4)
    before = trainer.params_.copy()
    victim = int(trainer.history_[0].clients[0])
    report = trainer.unlearn(clients=[victim], rollback=False)
    assert report.details["clusters"] == () and not report.exact and not report.server_refit
    np.testing.assert_array_equal(trainer.params_, before)
    trainer.run(rounds=6)
    later = trainer.history_[4:]
    assert all(victim not in np.setdiff1d(r.clients, r.discarded) for r in later)


def test_replace_model_moves_the_clock_and_discards_results_in_flight(task):
    trainer = make(task).run(rounds=3)
    in_flight = {item.client for queue in trainer._queues for item in queue}
    new = np.zeros_like(trainer.params_[0])
    clock = trainer.time_
    record = trainer.replace_model(0, new, seconds=7.5)
    assert record.time == trainer.time_ == clock + 7.5 and record.clients.size == 0
    np.testing.assert_array_equal(trainer.params_[0], new)
    trainer.run(rounds=3)
    discarded = set(np.concatenate([r.discarded for r in trainer.history_[4:]]).tolist())
    assert discarded and discarded <= in_flight
    with pytest.raises(ValueError, match="shape"):
        trainer.replace_model(0, new[:-1])


def test_stored_updates_every_interval_are_the_clients_local_updates(task):
    trainer = make(task, store_updates=2).run(rounds=5)
    assert [s.round_index for s in trainer.stored_updates_] == [1, 3, 5]
    first = trainer.stored_updates_[0]
    assert sorted(first.clients.tolist()) == sorted(trainer.history_[0].clients.tolist())
    out = train_clients(trainer.model_, trainer.checkpoints_[0][0], task[0], task[1],
                        [task[2][k] for k in first.clients], config=trainer.local, round_index=1,
                        client_ids=first.clients, random_state=5, method="loop")  # fmt: skip
    np.testing.assert_array_equal(first.updates, out.deltas)


def test_set_clusters_and_profile_only_before_training(task):
    trainer = make(task)
    profile = trainer.profile()
    assert trainer.time_ == pytest.approx(task[3].max()) and profile.disparity.shape == (12,)
    trainer.set_clusters(np.arange(12) % 3)
    assert trainer.n_clusters_ == 3 and trainer.params_.shape[0] == 3
    trainer.run(rounds=1)
    with pytest.raises(RuntimeError, match="before the first aggregation"):
        trainer.set_clusters(np.zeros(12))
    with pytest.raises(RuntimeError, match="before the first aggregation"):
        trainer.profile()


def test_local_updates_fraction_trains_on_a_subset(task):
    trainer = make(task)
    start = trainer.params_[0]
    full = trainer.local_updates(start, [0, 1])
    half = trainer.local_updates(start, [0, 1], fraction=0.5)
    assert full.n_samples.tolist() == [20, 20] and half.n_samples.tolist() == [10, 10]
    again = trainer.local_updates(start, [0, 1], fraction=0.5)
    np.testing.assert_array_equal(half.params, again.params)
    with pytest.raises(ValueError, match="client_ids"):
        trainer.local_updates(start, [12])


def test_perplexity_metric_lower_is_better():
    from fedlib.learn._async import AsyncRound

    record = AsyncRound(1, 1.0, np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), np.array([30.0, 12.0, np.nan]),
                        0.0, np.zeros(0), 0.0, 0.0, metric="perplexity")  # fmt: skip
    assert record.best == 12.0 and record.reached(12.5) and not record.reached(11.0)


# -- refused inputs (each would hang, crash late or silently break exact unlearning) ----------------------------------


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    X, y = rng.random((80, 6), dtype=np.float32), rng.integers(0, 3, 80)
    return X, y, np.array_split(np.arange(80), 8), np.arange(5.0, 45.0, 5.0)


def small_fit(small, trainer=None, **fit):
    X, y, parts, times = small
    fit = {"parts": parts, "training_times": times, **fit}
    trainer = trainer or AsyncFederatedTrainer("softmax", concurrency=4, buffer=2, random_state=0)
    return trainer.fit(fit.pop("X", X), fit.pop("y", y), **fit)


@pytest.mark.parametrize("until", [float("nan"), float("inf"), -float("inf")])
def test_run_refuses_an_until_that_never_ends(small, until):
    trainer = small_fit(small)
    with pytest.raises(ValueError, match="until"):
        trainer.run(until=until)
    with pytest.raises(ValueError, match="until"):
        small_fit(small, until=until)
    trainer.run(rounds=2, until=float("inf"))  # bounded by rounds: allowed
    assert trainer.round_ == 2


def test_fit_refuses_clients_whose_rows_overlap(small):
    from fedlib.unlearn import FedEraser

    with pytest.raises(ValueError, match="parts overlap"):
        small_fit(small, parts=[np.arange(40)] * 8)
    with pytest.raises(ValueError, match="overlap"):
        small_fit(small, parts=[np.arange(10), np.arange(9, 20)], training_times=[1.0, 2.0],
                  trainer=AsyncFederatedTrainer("softmax", concurrency=2, buffer=1))  # fmt: skip
    with pytest.raises(ValueError, match="overlap"):
        small_fit(small, parts=[np.arange(40)] * 8, trainer=FedEraser(concurrency=4, buffer=2))
    small_fit(small, parts=[np.array([3, 3, 4])] + [np.arange(10 * k, 10 * k + 10) for k in range(1, 8)])  # one owner


@pytest.mark.parametrize(
    ("case", "error"),
    [
        ({"y": -1}, "labels"),  # a label below 0
        ({"y": 3, "n_classes": 3}, "n_classes"),  # a label >= n_classes
        ({"n_classes": 0}, "n_classes"),
        ({"n_classes": 1.5}, "n_classes"),
        ({"test_y": 3, "n_classes": 3}, "test"),
        ({"test_y": -1}, "test"),
        ({"test_width": 5}, "test"),
        ({"test_rows": 3}, "test"),
    ],
)
def test_fit_refuses_labels_and_test_data_out_of_range_before_training(small, case, error):
    X, y, _, _ = small
    y, X_test, y_test = y.copy(), X[:10].copy(), y[:10].copy()
    if "y" in case:
        y[7] = case["y"]
    if "test_y" in case:
        y_test[4] = case["test_y"]
    if "test_width" in case:
        X_test = X_test[:, : case["test_width"]]
    if "test_rows" in case:
        y_test = y_test[: case["test_rows"]]
    trainer = AsyncFederatedTrainer("softmax", concurrency=4, buffer=2, n_classes=case.get("n_classes"))
    with pytest.raises((ValueError, TypeError), match=error):
        small_fit(small, trainer, y=y, test_data=(X_test, y_test), rounds=2)
    assert not hasattr(trainer, "history_") or not trainer.history_


@pytest.mark.parametrize(
    ("labels", "kind"),
    [
        ([0.7, 1.2, 0, 0, 1, 1, 0, 1], ValueError),
        (["0", "1", "0", "0", "1", "1", "0", "1"], TypeError),
        ([0, 2, 0, 0, 2, 2, 0, 2], ValueError),  # cluster 1 would be empty
        ([0, 1, 0, 0, 1, 1, 0, -1], ValueError),
        ([0, 1, 0], ValueError),
    ],
)
def test_cluster_labels_must_be_whole_numbers_without_gaps(small, labels, kind):
    with pytest.raises(kind, match="cluster_labels"):
        small_fit(small, cluster_labels=labels)
    trainer = small_fit(small)
    with pytest.raises(kind, match="cluster_labels"):
        trainer.set_clusters(labels)
    small_fit(small, cluster_labels=[0.0, 1.0, 0, 0, 1, 1, 0, 1])  # whole floats pass, as before


@pytest.mark.parametrize("bad", [float("inf"), float("nan"), 0.0, -1.0])
def test_fit_refuses_training_times_that_are_not_positive_and_finite(small, bad):
    times = np.arange(5.0, 45.0, 5.0)
    times[3] = bad
    with pytest.raises(ValueError, match="training_times"):
        small_fit(small, training_times=times)


def test_unlearn_rollback_must_be_a_bool(small):
    trainer = small_fit(small, rounds=3)
    before = trainer.params_.copy()
    with pytest.raises(TypeError, match="rollback"):
        trainer.unlearn(clients=[int(trainer.history_[0].clients[0])], rollback="no")
    assert trainer.unlearned_ == []  # nothing changed
    np.testing.assert_array_equal(trainer.params_, before)
    trainer.unlearn(clients=[int(trainer.history_[0].clients[0])], rollback=np.bool_(False))


@pytest.mark.parametrize("lr", [float("inf"), float("nan"), 0.0])
def test_server_lr_must_be_positive_and_finite(small, lr):
    trainer = AsyncFederatedTrainer("softmax", concurrency=4, buffer=2, aggregation="fedbuff", server_lr=lr)
    with pytest.raises(ValueError, match="server_lr"):
        small_fit(small, trainer)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_replace_model_refuses_non_finite_parameters(small, bad):
    trainer = small_fit(small, rounds=2)
    params = trainer.params_[0].copy()
    params[1] = bad
    with pytest.raises(ValueError, match="params"):
        trainer.replace_model(0, params)
    assert trainer.round_ == 2


def test_stored_updates_are_every_interval_th_aggregation_of_each_cluster(task):
    """Issue 19, item 11: under the global schedule each cluster keeps its own 1st, 3rd, 5th, ... aggregation."""
    labels = np.arange(12) % 3
    trainer = make(task, cluster_labels=labels, store_updates=2, buffer=2).run(rounds=14)
    for n in range(3):
        own = [r.round_index for r in trainer.history_ if n in r.clusters.tolist()]  # cluster n's aggregations
        kept = [s.round_index for s in trainer.stored_updates_ if s.cluster == n]
        assert kept == own[::2], (n, own, kept)
