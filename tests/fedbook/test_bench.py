"""Speed ratios (book/fedbook/bench.py) against a fake clock: medians of interleaved rounds, against the reference."""

from __future__ import annotations

import types

import numpy as np
import pytest
from fedbook import bench
from fedbook.bench import speed_ratios


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


def test_random_sparse_clients_have_k_distinct_bins_on_the_whole_grid():
    clients = bench.random_sparse_clients(6, 5, n_bins=2**784, n_samples=600, random_state=0)
    assert len(clients) == 6
    for c in clients:
        assert len(c) == 5 and all(1 <= j <= 2**784 for j in c) and sum(c.values()) == 100
    assert max(j for c in clients for j in c) > 2**700  # drawn over the whole grid, not below 2**62
    assert clients == bench.random_sparse_clients(6, 5, n_bins=2**784, n_samples=600, random_state=0)
    with pytest.raises(ValueError, match="distinct bins"):
        bench.random_sparse_clients(1, 5, n_bins=4, n_samples=10)


@pytest.mark.parametrize("time_roots", [True, False])
def test_scma_round_timings_decode_the_plain_sum(time_roots):
    clients = bench.random_sparse_clients(4, 3, n_bins=10**60, n_samples=400, random_state=1)
    t = bench.scma_round_timings(clients, n_samples=400, n_bins=10**60, n_clusters=3, time_roots=time_roots)
    assert (t.n_clients, t.n_clusters, t.support, t.roots_measured) == (4, 3, 12, time_roots)
    assert t.prime_bits == 200  # the next prime above 10**60 has 200 bits
    stages = [t.params, t.masks, t.encode, t.aggregate, t.locator, t.roots, t.magnitudes, t.check]
    assert all(s >= 0 for s in stages) and t.encode_slowest <= t.encode
    assert t.decode == pytest.approx(t.locator + t.roots + t.magnitudes + t.check)
    assert t.total == pytest.approx(sum(stages))


def test_hashed_round_timings_decode_the_plain_sum_stage_by_stage():
    from fedbook.bench import hashed_scma_round_timings, random_sparse_clients

    clients = random_sparse_clients(4, 5, n_bins=15**784, n_samples=400, random_state=2)
    t = hashed_scma_round_timings(clients, n_samples=400, n_bins=15**784, n_clusters=5, random_state=3)
    assert (t.n_clients, t.n_clusters, t.support, t.prime_bits) == (4, 5, 20, 62)
    stages = (t.params, t.masks, t.encode, t.aggregate, t.locator, t.roots, t.counts, t.check, t.table)
    assert all(s >= 0.0 for s in stages) and t.total == pytest.approx(sum(stages))
