"""Shared fixtures: seeds, and the real datasets when the mirror or cache has them."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("fedlib", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("fedlib")

SEEDS = [0, 1, 2, 3, 4]


@pytest.fixture(params=SEEDS)
def global_random_seed(request) -> int:
    """Run a test under several seeds, so that a pass is not the luck of one."""
    return request.param


@pytest.fixture
def rng(global_random_seed) -> np.random.Generator:
    return np.random.default_rng(global_random_seed)


def load_real(name: str):
    """A real dataset, or skip when its file cannot be had here (never in CI, where the mirror exists)."""
    from fedlib import data
    from fedlib.exceptions import DataUnavailableError

    try:
        return data.load(name)
    except DataUnavailableError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"{name} not available: {exc}")
