"""FedEraser (Liu et al., IWQoS 2021) on the asynchronous trainer: replay, calibration, charged time."""

from __future__ import annotations

import numpy as np
import pytest

from fedlib.exceptions import UnlearningRequestError
from fedlib.learn import LocalSGD, fedavg_mean, fedavg_weights, pareto_training_times
from fedlib.unlearn import FedEraser


@pytest.fixture(scope="module")
def task():
    rng = np.random.default_rng(1)
    centres = rng.normal(0, 2, (3, 5)).astype(np.float32)
    y = rng.integers(0, 3, 300)
    X = (centres[y] + rng.normal(0, 1, (300, 5))).astype(np.float32)
    return X[:240], y[:240], np.array_split(np.arange(240), 12), pareto_training_times(12, random_state=2)


def make(task, **options):
    """A fitted FedEraser that has not aggregated yet."""
    X, y, clients, times = task
    options = {**dict(concurrency=6, buffer=3, local=LocalSGD(lr=0.1, batch_size=10, epochs=2), random_state=3,
                      method="loop", interval=2), **options}  # fmt: skip
    return FedEraser("softmax", **options).fit(X, y, parts=clients, training_times=times)


def test_first_step_replays_stored_updates_and_later_steps_keep_their_lengths(task):
    trainer = make(task).run(rounds=6)
    victim = int(trainer.history_[0].clients[0])
    stored = list(trainer.stored_updates_)
    initial = trainer.checkpoints_[0][0].copy()
    clock = trainer.time_
    report = trainer.unlearn(clients=[victim])
    assert report.details["replayed"] == {0: tuple(s.round_index for s in stored)} and report.rounds == len(stored)
    assert not report.exact and report.forgotten_clients == (victim,) and report.bytes_sent > 0
    # step 1 by hand: the initial model plus the weighted stored updates of the others
    keep = stored[0].clients != victim
    w = fedavg_weights(stored[0].n_samples[keep])
    step1 = (initial + (w / w.sum()) @ stored[0].updates[keep].astype(np.float64)).astype(np.float32)
    assert not np.array_equal(step1, initial)
    # the charged time: r * slowest calibrating client of every later step
    expected = sum(0.5 * task[3][s.clients[s.clients != victim]].max() for s in stored[1:])
    assert report.details["simulated_seconds"][0] == pytest.approx(expected)
    assert trainer.time_ == pytest.approx(clock + expected)
    assert victim in trainer.unlearned_


def test_calibrated_update_has_the_stored_length(task):
    # with ratio r and E = 2 epochs the calibration trains one epoch; a single stored step after the first
    trainer = make(task).run(rounds=3)
    victim = int(trainer.history_[0].clients[0])
    stored = list(trainer.stored_updates_)
    assert len(stored) == 2
    trainer.unlearn(clients=[victim])
    keep0 = stored[0].clients != victim
    w0 = fedavg_weights(stored[0].n_samples[keep0])
    after1 = (trainer.checkpoints_[0][0] + (w0 / w0.sum()) @ stored[0].updates[keep0].astype(np.float64)).astype(
        np.float32
    )
    keep1 = stored[1].clients != victim
    w1 = fedavg_weights(stored[1].n_samples[keep1])
    move = trainer.params_[0].astype(np.float64) - after1
    # the move is a weighted sum of vectors of the stored lengths: it cannot be longer than their weighted sum
    bound = (w1 / w1.sum()) @ np.linalg.norm(stored[1].updates[keep1].astype(np.float64), axis=1)
    assert np.linalg.norm(move) <= bound * (1 + 1e-5) and np.linalg.norm(move) > 0


def test_same_seed_same_bits_and_errors(task):
    a, b = make(task).run(rounds=5), make(task).run(rounds=5)
    victim = int(a.history_[0].clients[0])
    a.unlearn(clients=[victim])
    b.unlearn(clients=[victim])
    np.testing.assert_array_equal(a.params_, b.params_)
    with pytest.raises(UnlearningRequestError, match="already forgotten"):
        a.unlearn(clients=[victim])
    with pytest.raises(ValueError, match="interval"):
        make(task, interval=0)
    with pytest.raises(ValueError, match="ratio"):
        make(task, ratio=1.5).run(rounds=2).unlearn(clients=[0])
    assert "store_updates" not in a.get_params() and a.get_params()["interval"] == 2


def test_a_client_that_never_took_part_changes_nothing(task):
    trainer = make(task, concurrency=2, buffer=1).run(rounds=1)
    idle = int(np.flatnonzero(trainer.first_selected_ < 0)[0])
    before = trainer.params_.copy()
    report = trainer.unlearn(clients=[idle])
    assert report.details["clusters"] == () and report.rounds == 0 and not report.server_refit
    np.testing.assert_array_equal(trainer.params_, before)


def test_a_first_stored_round_of_forgotten_clients_only_leaves_every_applied_round_calibrated(task):
    # one result per aggregation: the cluster's first stored round (trained from the initial model) holds the
    # victim alone and is skipped; the next stored round was trained from models that had seen the victim, so
    # it is calibrated like every later one (Liu et al. 2021: only step 1 starts from the initial model)
    trainer = make(task, concurrency=4, buffer=1).run(rounds=6)
    stored = list(trainer.stored_updates_)
    (victim,) = stored[0].clients.tolist()
    applied = [s for s in stored if not np.isin(s.clients, [victim]).all()]
    assert applied[0] is stored[1] and len(applied) >= 2 and victim not in stored[1].clients
    initial, clock, d = trainer.checkpoints_[0][0].copy(), trainer.time_, trainer.params_.shape[1]
    report = trainer.unlearn(clients=[victim])
    assert report.details["replayed"] == {0: tuple(s.round_index for s in applied)} and report.rounds == len(applied)
    calibrated = sum(int((s.clients != victim).sum()) for s in applied)
    assert report.details["calibrating_clients"] == {0: calibrated}
    assert report.bytes_sent == calibrated * d * 4
    expected = sum(0.5 * task[3][s.clients[s.clients != victim]].max() for s in applied)
    assert report.details["simulated_seconds"][0] == pytest.approx(expected)
    assert trainer.time_ == pytest.approx(clock + expected)
    # by hand: every applied round takes its stored lengths in the direction of training from the rebuilt model
    steps = [initial]
    for s in applied:
        keep = s.clients != victim
        fresh = trainer.local_updates(steps[-1], s.clients[keep], local=LocalSGD(lr=0.1, batch_size=10, epochs=1),
                                      round_index=s.round_index, random_state=3)  # fmt: skip
        direction = fresh.deltas.astype(np.float64)
        lengths = np.linalg.norm(s.updates[keep].astype(np.float64), axis=1) / np.linalg.norm(direction, axis=1)
        steps.append((steps[-1] + fedavg_mean(direction * lengths[:, None], s.n_samples[keep])).astype(np.float32))
    np.testing.assert_array_equal(trainer.params_[0], steps[-1])
    raw = (initial + fedavg_mean(applied[0].updates.astype(np.float64), applied[0].n_samples)).astype(np.float32)
    assert not np.allclose(raw, steps[1])  # applying the first replayed round raw would give another model
