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
