"""FedEraser (Liu et al., IWQoS 2021) on the asynchronous trainer: replay, calibration, charged time."""

from __future__ import annotations

import numpy as np
import pytest

from fedlib.learn import AsyncFederatedTrainer, LocalSGD, fedavg_weights, pareto_training_times
from fedlib.unlearn import federaser


@pytest.fixture(scope="module")
def task():
    rng = np.random.default_rng(1)
    centres = rng.normal(0, 2, (3, 5)).astype(np.float32)
    y = rng.integers(0, 3, 300)
    X = (centres[y] + rng.normal(0, 1, (300, 5))).astype(np.float32)
    return X[:240], y[:240], np.array_split(np.arange(240), 12), pareto_training_times(12, random_state=2)


def make(task, **options):
    X, y, clients, times = task
    defaults = dict(training_times=times, concurrency=6, buffer=3, local=LocalSGD(lr=0.1, batch_size=10, epochs=2),
                    random_state=3, method="loop", store_updates=2)  # fmt: skip
    return AsyncFederatedTrainer("softmax", X, y, clients, **{**defaults, **options})


def test_first_step_replays_stored_updates_and_later_steps_keep_their_lengths(task):
    trainer = make(task).run(rounds=6)
    victim = int(trainer.history_[0].clients[0])
    stored = list(trainer.stored_updates_)
    initial = trainer.checkpoints_[0][0].copy()
    clock = trainer.time_
    (report,) = federaser(trainer, [victim], ratio=0.5)
    assert report.rounds.tolist() == [s.round_index for s in stored]
    # step 1 by hand: the initial model plus the weighted stored updates of the others
    keep = stored[0].clients != victim
    w = fedavg_weights(stored[0].n_samples[keep])
    step1 = (initial + (w / w.sum()) @ stored[0].updates[keep].astype(np.float64)).astype(np.float32)
    assert not np.array_equal(step1, initial)
    # the charged time: r * slowest calibrating client of every later step
    expected = sum(0.5 * task[3][s.clients[s.clients != victim]].max() for s in stored[1:])
    assert report.simulated_seconds == pytest.approx(expected) and trainer.time_ == pytest.approx(clock + expected)
    np.testing.assert_array_equal(trainer.params_[0], report.params)
    assert victim in trainer.erased_


def test_calibrated_update_has_the_stored_length(task):
    # with ratio r and E = 2 epochs the calibration trains one epoch; a single stored step after the first
    trainer = make(task).run(rounds=3)
    victim = int(trainer.history_[0].clients[0])
    stored = list(trainer.stored_updates_)
    assert len(stored) == 2
    (report,) = federaser(trainer, [victim])
    keep0 = stored[0].clients != victim
    w0 = fedavg_weights(stored[0].n_samples[keep0])
    after1 = (trainer.checkpoints_[0][0] + (w0 / w0.sum()) @ stored[0].updates[keep0].astype(np.float64)).astype(
        np.float32
    )
    keep1 = stored[1].clients != victim
    w1 = fedavg_weights(stored[1].n_samples[keep1])
    move = report.params.astype(np.float64) - after1
    # the move is a weighted sum of vectors of the stored lengths: it cannot be longer than their weighted sum
    bound = (w1 / w1.sum()) @ np.linalg.norm(stored[1].updates[keep1].astype(np.float64), axis=1)
    assert np.linalg.norm(move) <= bound * (1 + 1e-5) and np.linalg.norm(move) > 0


def test_same_seed_same_bits_and_errors(task):
    a, b = make(task).run(rounds=5), make(task).run(rounds=5)
    victim = int(a.history_[0].clients[0])
    np.testing.assert_array_equal(federaser(a, [victim])[0].params, federaser(b, [victim])[0].params)
    with pytest.raises(ValueError, match="already erased"):
        federaser(a, [victim])
    with pytest.raises(ValueError, match="store_updates"):
        federaser(make(task, store_updates=None).run(rounds=2), [0])


def test_a_client_that_never_took_part_changes_nothing(task):
    trainer = make(task, concurrency=2, buffer=1).run(rounds=1)
    idle = int(np.flatnonzero(trainer.first_selected_ < 0)[0])
    before = trainer.params_.copy()
    assert federaser(trainer, [idle]) == []
    np.testing.assert_array_equal(trainer.params_, before)
