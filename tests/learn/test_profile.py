"""KNOT's client profile (Su & Li 2023, Sec. IV-A): the disparity against the profiling round's consensus."""

from __future__ import annotations

import numpy as np
import pytest

from fedlib.learn import LocalSGD, get_flat, make_model, train_clients
from fedlib.learn._profile import profile_clients


@pytest.fixture(scope="module")
def task():
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 2, (3, 6)).astype(np.float32)
    y = rng.integers(0, 3, 240)
    X = (centres[y] + rng.normal(0, 1, (240, 6))).astype(np.float32)
    y_flipped = y.copy()
    y_flipped[200:] = (y[200:] + 1) % 3  # the last client's labels disagree with everyone else's
    return X, y_flipped, np.array_split(np.arange(240), 6)


def test_disparity_is_half_one_minus_the_cosine_with_the_consensus(task):
    X, y, clients = task
    model = make_model("softmax", 3, input_shape=(6,), random_state=0)
    omega0 = get_flat(model)
    local = LocalSGD(lr=0.1, batch_size=8)
    profile = profile_clients(model, omega0, X, y, clients, training_times=np.arange(1.0, 7.0), local=local,
                              random_state=2, method="loop")  # fmt: skip
    out = train_clients(model, omega0, X, y, clients, config=local, round_index=0, random_state=2, method="loop")
    consensus = out.params.mean(axis=0) - omega0  # equal client sizes: the FedAvg weights are equal
    cos = out.deltas @ consensus / (np.linalg.norm(out.deltas, axis=1) * np.linalg.norm(consensus))
    np.testing.assert_allclose(profile.disparity, (1 - cos) / 2, atol=1e-6)
    assert profile.disparity.argmax() == 5  # the client with disagreeing labels is the least representative
    plato = profile_clients(model, omega0, X, y, clients, training_times=np.arange(1.0, 7.0), local=local,
                            variant="plato", random_state=2, method="loop")  # fmt: skip
    assert plato.disparity.argmin() == 5  # the code's similarity mirrors the axis
    with pytest.raises(ValueError, match="one time per client"):
        profile_clients(model, omega0, X, y, clients, training_times=[1.0])
