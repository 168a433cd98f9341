"""Flower's simulation engine starts Ray, which writes PYTHONPATH and other variables into this process's
environment and leaves them there: every Flower run of these tests restores the environment afterwards, so that
later tests in the same worker (e.g. a fresh virtual environment's ``pip list``) see the environment they would
have seen."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

import pytest


@pytest.fixture(scope="session")
def restored_environment():
    """The context manager :func:`_restored_environment`."""
    return _restored_environment


@contextmanager
def _restored_environment():
    """Run a block, then put ``os.environ`` and ``sys.path`` back as they were."""
    environ, path = dict(os.environ), list(sys.path)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(environ)
        sys.path[:] = path
