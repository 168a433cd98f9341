"""Speed ratios (fedlib/bench.py) against a fake clock: medians of interleaved rounds, relative to the reference."""

from __future__ import annotations

import types

import numpy as np
import pytest

from fedlib import bench
from fedlib.bench import speed_ratios


class FakeClock:
    """``perf_counter`` that moves only when a candidate runs, by the durations it is given."""

    def __init__(self) -> None:
        self.now = 0.0
        self.calls: list[str] = []

    def perf_counter(self) -> float:
        return self.now

    def candidate(self, name: str, durations: list[float]):
        remaining = list(durations)

        def run() -> None:
            self.calls.append(name)
            self.now += remaining.pop(0)

        return run


@pytest.fixture
def clock(monkeypatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(bench, "time", types.SimpleNamespace(perf_counter=fake.perf_counter))
    return fake


def test_ratios_are_median_reference_over_median_candidate(clock):
    # first duration of each list is the warm-up, which must not count
    a = [100.0, 4.0, 4.0, 50.0, 4.0, 4.0]  # median of the timed rounds: 4
    b = [100.0, 1.0, 2.0, 2.0, 0.5, 9.0]  # median: 2
    c = [0.0, 8.0, 8.0, 8.0, 8.0, 8.0]  # median: 8
    ratios = speed_ratios(
        {"a": clock.candidate("a", a), "b": clock.candidate("b", b), "c": clock.candidate("c", c)},
        reference="a",
        repeat=5,
    )
    medians = {name: float(np.median(d[1:])) for name, d in (("a", a), ("b", b), ("c", c))}
    assert ratios == {name: medians["a"] / medians[name] for name in "abc"}
    assert ratios == {"a": 1.0, "b": 2.0, "c": 0.5}


def test_calls_are_one_warm_up_each_then_interleaved_rounds(clock):
    candidates = {name: clock.candidate(name, [1.0] * 4) for name in ("x", "y")}
    speed_ratios(candidates, reference="y", repeat=3)
    assert clock.calls == ["x", "y"] + ["x", "y"] * 3


def test_unknown_reference_raises_before_running_anything(clock):
    with pytest.raises(KeyError, match="reference 'z' is not among the candidates"):
        speed_ratios({"a": clock.candidate("a", [1.0])}, reference="z")
    assert clock.calls == []


def test_real_clock_gives_the_reference_exactly_one():
    ratios = speed_ratios({"a": lambda: sum(range(1000)), "b": lambda: None}, reference="a", repeat=3)
    assert ratios["a"] == 1.0 and set(ratios) == {"a", "b"}
