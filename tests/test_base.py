"""The report of a training or unlearning request (fedlib/base.py): one record for every method that forgets.

And the one verb's method-specific options, passed on to the method once the request is checked.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib.base import UnlearningMixin, UnlearningReport
from fedlib.exceptions import UnlearningRequestError

times = st.floats(0, 1e4)
ids = st.lists(st.integers(0, 10**6), unique=True, max_size=5).map(lambda v: tuple(sorted(v)))


@given(times, times, times)
def test_seconds_are_client_plus_server_without_aggregation(client, aggregation, server):
    """MUFC times a federated run as slowest client plus server; secure aggregation is reported apart."""
    report = UnlearningReport(
        clients_retrained=(0, 2),
        server_refit=True,
        client_seconds=client,
        aggregation_seconds=aggregation,
        server_seconds=server,
    )
    assert report.seconds == client + server


def test_reports_are_frozen_records():
    report = UnlearningReport((3,), (), (0,), False, 1, 0.5, 0.25, 0.125, 64, False, {"left": ()})
    assert report == UnlearningReport((3,), (), (0,), False, 1, 0.5, 0.25, 0.125, 64, False, {"left": ()})
    assert dataclasses.astuple(report) == ((3,), (), (0,), False, 1, 0.5, 0.25, 0.125, 64, False, {"left": ()})
    assert [f.name for f in dataclasses.fields(report)] == [
        "forgotten_samples",
        "forgotten_clients",
        "clients_retrained",
        "server_refit",
        "rounds",
        "client_seconds",
        "aggregation_seconds",
        "server_seconds",
        "bytes_sent",
        "exact",
        "details",
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.server_refit = True
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.seconds = 1.0


def test_defaults_describe_a_request_that_cost_nothing():
    report = UnlearningReport()
    assert report.forgotten_samples == report.forgotten_clients == report.clients_retrained == ()
    assert report.server_refit is False and report.exact is True
    assert report.rounds == 0 and report.bytes_sent == 0 and report.details == {}
    assert report.client_seconds == report.aggregation_seconds == report.server_seconds == report.seconds == 0.0
    assert UnlearningReport().details is not report.details  # each report its own mapping


@given(ids, ids)
def test_forgotten_says_what_was_forgotten(samples, clients):
    text = UnlearningReport(forgotten_samples=samples, forgotten_clients=clients).forgotten
    expected = [f"samples {samples}"] * bool(samples) + [f"clients {clients}"] * bool(clients)
    assert text == ("; ".join(expected) or "nothing (training)")


def test_forgotten_text():
    assert UnlearningReport(forgotten_samples=(3,), client_seconds=0.002).forgotten == "samples (3,)"
    assert UnlearningReport(forgotten_clients=(1, 4)).forgotten == "clients (1, 4)"
    both = UnlearningReport(forgotten_samples=(2, 5), forgotten_clients=(0,))
    assert both.forgotten == "samples (2, 5); clients (0,)"
    assert UnlearningReport(clients_retrained=(0, 1), server_refit=True).forgotten == "nothing (training)"


class _WithOption(UnlearningMixin):
    """A method that forgets rows 0..4 and takes one option, recording what reaches ``_unlearn``."""

    unlearns = frozenset({"samples"})

    def __init__(self):
        self.calls = []

    def _check_fitted_for_unlearning(self):
        pass

    def _held_samples(self):
        return np.arange(5)

    def _held_clients(self):
        return np.empty(0, dtype=np.int64)

    def _unlearn(self, samples, clients, *, flag=False):
        self.calls.append((samples.tolist(), clients.tolist(), flag))
        return UnlearningReport(forgotten_samples=tuple(samples.tolist()), details={"flag": flag})


def test_options_reach_the_method_after_the_request_is_checked():
    method = _WithOption()
    assert method.unlearn([3, 1], flag=True).details == {"flag": True}
    assert method.unlearn([2]).details == {"flag": False}
    assert method.calls == [([1, 3], [], True), ([2], [], False)]
    with pytest.raises(UnlearningRequestError, match="not held"):  # the request's checks come first
        method.unlearn([9], flag=True)
    with pytest.raises(UnlearningRequestError, match="cannot unlearn clients"):
        method.unlearn(clients=[0], flag=True)
    with pytest.raises(TypeError, match="no_such_option"):
        method.unlearn([4], no_such_option=1)
    assert len(method.calls) == 2
