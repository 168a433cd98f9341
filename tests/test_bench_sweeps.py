"""benchmarks/bench_sweeps.py's split of a build by chapter, from executed notebooks and the sweep log."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import nbformat
import pytest

BENCH = Path(__file__).parents[1] / "benchmarks" / "bench_sweeps.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_sweeps", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _executed(path: Path, seconds: float) -> None:
    notebook = nbformat.v4.new_notebook(metadata={"papermill": {"duration": seconds}})
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)


def test_a_chapter_counts_the_sweeps_of_its_latest_execution_only(tmp_path):
    src = tmp_path / "paper" / "src"
    _executed(src / "notebooks" / "a" / "one.ipynb", 100.0)
    _executed(src / "notebooks" / "b" / "two.ipynb", 10.0)
    _executed(src / "notebooks" / "b" / "two.partial.ipynb", 5.0)  # an unfinished execution is not a chapter
    records = [
        {"chapter": "notebooks/a/one.md", "run": "old", "jobs": 9, "seconds": 500.0, "job_seconds": 999.0},
        {"chapter": "notebooks/a/one.md", "run": "new", "jobs": 4, "seconds": 60.0, "job_seconds": 100.0},
        {"chapter": "notebooks/a/one.md", "run": "new", "jobs": 2, "seconds": 20.0, "job_seconds": 20.0},
        {"chapter": "notebooks/b/two.md", "run": None, "jobs": 1, "seconds": 1.0, "job_seconds": 1.0},
    ]
    (src.parent / "sweeps.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    split = load_bench().book_split(src).set_index("chapter")
    one = split.loc["notebooks/a/one.md"]
    assert (one["seconds"], one["in sweeps"], one["jobs"], one["jobs' seconds"]) == (100.0, 80.0, 6, 120.0)
    assert one["with 2 workers ≥"] == pytest.approx(100.0 - 80.0 + 120.0 / 2)
    assert split.loc["notebooks/b/two.md", "in sweeps"] == 1.0
    assert list(split.index) == ["notebooks/a/one.md", "notebooks/b/two.md", "whole book"]
    assert split.loc["whole book", "seconds"] == 110.0


def test_with_w_workers_no_sweep_ends_before_its_longest_job(tmp_path):
    src = tmp_path / "paper" / "src"
    _executed(src / "notebooks" / "a" / "one.ipynb", 1000.0)
    records = [  # a sweep of one 400 s job and 100 s of small ones; one of 64 equal 1 s jobs
        {"chapter": "notebooks/a/one.md", "run": "r", "jobs": 11, "seconds": 420.0, "job_seconds": 500.0,
         "longest_job_seconds": 400.0},
        {"chapter": "notebooks/a/one.md", "run": "r", "jobs": 64, "seconds": 40.0, "job_seconds": 64.0,
         "longest_job_seconds": 1.0},
    ]  # fmt: skip
    (src.parent / "sweeps.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    one = load_bench().book_split(src, workers=(2, 32)).set_index("chapter").loc["notebooks/a/one.md"]
    outside = 1000.0 - 460.0
    # the long job bounds the first sweep at any W; the second is bounded by its jobs' seconds over W
    assert one["with 2 workers ≥"] == pytest.approx(outside + 400.0 + 64.0 / 2)
    assert one["with 32 workers ≥"] == pytest.approx(outside + 400.0 + 64.0 / 32)
