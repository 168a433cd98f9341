"""The cost record of a training or removal request (fedlib/unlearn/_report.py)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib.unlearn import RemovalReport

times = st.floats(0, 1e4)


@given(times, times, times)
def test_seconds_are_client_plus_server_without_aggregation(client, aggregation, server):
    """MUFC times a federated run as slowest client plus server; secure aggregation is reported apart."""
    report = RemovalReport((0, 2), True, client, aggregation, server)
    assert report.seconds == client + server


def test_reports_are_frozen_records():
    report = RemovalReport((), False, 0.5, 0.25, 0.125)
    assert report == RemovalReport((), False, 0.5, 0.25, 0.125)
    assert dataclasses.astuple(report) == ((), False, 0.5, 0.25, 0.125)
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.server_refit = True
