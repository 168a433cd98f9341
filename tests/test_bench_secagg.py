"""benchmarks/bench_secagg.py at toy size: ours and Flower's SecAgg+ side by side, both sums checked, ratios printed."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[1] / "benchmarks" / "bench_secagg.py"
TOY = ["--clients", "10", "--params", "50", "--neighbours", "4", "--threshold", "3", "--repeat", "2"]
#: A row of the side-by-side table: dropouts, three medians each, three ratios, Flower's error and its bound.
ROW = re.compile(
    r"^\s*(\d+)% \|(?: +[\d.]+s){3} \|(?: +[\d.]+s){3} \| +([\d.]+)x +([\d.]+)x +([\d.]+)x "
    r"\| max \|error\| (\S+) <= (\S+)$",
    re.MULTILINE,
)


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_secagg", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def flower():
    """Flower is installed by ``make test``: in CI its absence fails, elsewhere it skips."""
    if importlib.util.find_spec("flwr") is None:
        if os.environ.get("CI"):
            pytest.fail("Flower is missing: make test installs requirements-flower.txt")
        pytest.skip("Flower is not installed (pip install -r requirements-flower.txt)")


def test_prints_measured_ratios_to_flower_and_checks_its_sum(flower, capsys):
    load_bench().main(TOY)
    out = capsys.readouterr().out
    rows = ROW.findall(out)
    assert [r[0] for r in rows] == ["0", "10"], out
    for _, *ratios, error, bound in rows:
        assert all(float(r) > 0 for r in ratios)
        assert float(error) <= float(bound)
    assert "Flower 1.42" in out and "num_shares=5, reconstruction_threshold=3" in out


def test_a_wrong_flower_sum_fails_loudly(flower, monkeypatch):
    bench = load_bench()
    run = bench.FlowerSecAggPlus.run

    def off_by_a_dropped_update(self, dropped, seed):
        timings, total = run(self, dropped, seed)
        return timings, total + self.updates[0] * (len(dropped) > 0)

    monkeypatch.setattr(bench.FlowerSecAggPlus, "run", off_by_a_dropped_update)
    with pytest.raises(AssertionError, match="Flower's secure sum differs from the plain sum of the survivors"):
        bench.main(TOY)


def test_without_flower_says_so_and_prints_our_table(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "flwr", None)  # import flwr -> ImportError
    load_bench().main([*TOY[:-1], "1"])
    out = capsys.readouterr().out
    assert "Flower is not installed (pip install -r requirements-flower.txt)" in out
    assert re.search(r"^\s+10% +[\d.]+s", out, re.MULTILINE) and "Flower / ours" not in out


def test_odd_neighbours_skip_flower_with_the_reason(capsys):
    load_bench().main(["--clients", "10", "--params", "50", "--neighbours", "5", "--threshold", "3", "--repeat", "1"])
    out = capsys.readouterr().out
    if importlib.util.find_spec("flwr") is not None:
        assert "--neighbours 5 is odd: Flower's SecAgg+ ring has even degree" in out
    assert re.search(r"^\s+10% +[\d.]+s", out, re.MULTILINE) and "Flower / ours" not in out
