"""Fixtures shared by the tests of the book's drivers."""

from __future__ import annotations

import dataclasses

import pytest


@pytest.fixture(scope="module")
def tiny_knot():
    """A KNOT task small enough for a study in seconds (8 clients of 15 MNIST images), and its data."""
    from fedbook.knot import tasks

    from fedlib.learn import LocalSGD

    task = dataclasses.replace(
        tasks.tasks("ci")["MNIST"], n_clients=8, concurrency=4, buffer=2, per_client=15, test_size=100,
        target=0.4, erased=(1, 2), local=LocalSGD(lr=0.05, batch_size=10, epochs=1, momentum=0.9),
    )  # fmt: skip
    return task, tasks.prepare(task, random_state=0)


@pytest.fixture(scope="session")
def same_knot_run():
    """``check(a, b)``: two KNOT runs agree in every field but the wall-clock seconds, curves bit for bit."""
    import numpy as np
    from fedbook.knot import runs

    wall_clock = {"wall_seconds", "train_seconds", "eval_seconds", "overhead_seconds", "curve"}

    def check(a, b) -> None:
        for field in dataclasses.fields(runs.Run):
            if field.name not in wall_clock:
                x, y = getattr(a, field.name), getattr(b, field.name)
                assert x == y or (x != x and y != y), field.name  # NaN equals NaN here
        for name in ("times", "best", "scores"):
            np.testing.assert_array_equal(getattr(a.curve, name), getattr(b.curve, name))

    return check
