"""What a cluster buys: the book's sweeps on this machine's cores and on a two-worker Dask cluster, measured.

    python benchmarks/bench_sweeps.py [--scale paper] [--overhead-jobs 400] [--book _build/paper/src]

1. Scheduling overhead. ``--overhead-jobs`` empty jobs (``pow(i, 2)``) through ``fedbook.sweeps.run_jobs``:
   one after another in this process, on joblib's two loky processes, and on a ``distributed.LocalCluster`` of
   two workers with one thread each (``dask worker --nworkers 2 --nthreads 1`` on one machine). Milliseconds
   per job.
2. One chapter's sweep at ``--scale``: MUFC's Tables 1 and 2 (``fedbook.mufc.table_trials`` on the seven
   datasets, the MUFC training chapter's settings), serially (``n_jobs=1``), on two loky processes
   (``n_jobs=2``, what ``make book`` does) and on the two-worker LocalCluster, each from the same prepared
   problems. The three tables must be equal in every column but the seconds (checked; the benchmark fails
   otherwise); it prints each time and the speed-ups over the serial run measured in this run. The cluster's
   jobs ship their data to the workers, which the loky processes read from memory-mapped files.
3. A whole book by chapter. With ``--book DIR`` (the ``src`` folder of an executed build, e.g.
   ``_build/paper/src`` after ``FEDBOOK_SWEEP_LOG=_build/paper/sweeps.jsonl make book SCALE=paper``), each
   chapter's wall time as Papermill recorded it, the part of it spent in sweeps (from the log beside
   ``DIR``, ``../sweeps.jsonl``, which ``fedbook.sweeps.run_jobs`` writes when ``FEDBOOK_SWEEP_LOG`` names it;
   a chapter executed again counts its latest execution's sweeps), the sweeps' jobs' seconds added up, and
   what the chapter would take with W workers: the time outside the sweeps plus, for each sweep, its jobs'
   seconds over W or its longest job, whichever is longer (a lower bound: it ignores shipping data; logs
   written before the longest job was recorded give the jobs' seconds over W alone).

On a 2-core machine the cluster and loky can at most halve the serial time; what this measures is how close
each gets, and the price per job, so that a reader can judge a bigger cluster from the book's split.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
from fedbook import mufc, sweeps
from fedbook.papers import mufc as paper
from joblib import delayed

#: The MUFC training chapter's settings by scale (notebooks/mufc/training.md), for Tables 1 and 2.
TABLE_SETTINGS = {
    "ci": dict(max_samples=2000, n_trials=1, n_init=3),
    "default": dict(max_samples=None, n_trials=5, n_init=10),
    "paper": dict(max_samples=None, n_trials=5, n_init=10),
}


#: Where a sweep runs: a label, ``n_jobs``, and whether on the LocalCluster.
WAYS = (("serial", 1, False), ("loky, 2 processes", 2, False), ("Dask, 2 workers", 1, True))


def overhead(n_jobs_total: int, client) -> dict[str, float]:
    """Milliseconds per empty job: here, on two loky processes, and on the cluster."""
    calls = [delayed(pow)(i, 2) for i in range(n_jobs_total)]
    out = {}
    for label, n_jobs, on_cluster in WAYS:
        if on_cluster:
            sweeps.connect(client)
        try:
            sweeps.run_jobs(calls[:20], n_jobs=n_jobs)  # warm-up: the pool or the cluster's connections
            began = time.perf_counter()
            results = sweeps.run_jobs(calls, n_jobs=n_jobs)
            out[label] = 1e3 * (time.perf_counter() - began) / n_jobs_total
        finally:
            if on_cluster:
                sweeps.disconnect()
        assert results == [i * i for i in range(n_jobs_total)]
    return out


def _without_seconds(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=[c for c in frame.columns if "seconds" in c])


def table_sweep(scale: str, client) -> pd.DataFrame:
    """MUFC Tables 1-2 trials three ways; the seconds of each and the speed-up over the serial run."""
    settings = TABLE_SETTINGS[scale]
    rng = np.random.default_rng(0)
    problems = mufc.prepare_all(paper.DATASETS, max_samples=settings["max_samples"], n_init=settings["n_init"],
                                random_state=rng)  # fmt: skip
    state = rng.bit_generator.state
    rows, tables = [], {}
    for label, n_jobs, on_cluster in WAYS:
        rng.bit_generator.state = state  # every way draws the same trial seeds
        if on_cluster:
            sweeps.connect(client)
        try:
            began = time.perf_counter()
            tables[label] = mufc.table_trials(problems, n_trials=settings["n_trials"], n_init=settings["n_init"],
                                              n_jobs=n_jobs, random_state=rng)  # fmt: skip
            seconds = time.perf_counter() - began
        finally:
            if on_cluster:
                sweeps.disconnect()
        rows.append({"where": label, "seconds": seconds, "jobs": len(tables[label])})
    reference = _without_seconds(tables["serial"])
    for table in tables.values():
        pd.testing.assert_frame_equal(_without_seconds(table), reference)  # the same numbers wherever they ran
    frame = pd.DataFrame(rows)
    frame["speed-up over serial"] = frame["seconds"].iloc[0] / frame["seconds"]
    return frame


def book_split(src: Path, workers=(2, 8, 32)) -> pd.DataFrame:
    """Each executed chapter's time, its sweeps' share, and a lower bound on its time with W workers.

    The log keeps every execution's sweeps; a chapter's share comes from its latest execution's (the one whose
    notebook is in ``src``), so that rebuilding a chapter does not count its sweeps twice.
    """
    log = src.parent / "sweeps.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    rows = []
    for path in sorted(src.glob("notebooks/**/*.ipynb")):
        if path.name.endswith((".partial.ipynb", ".failed.ipynb")):
            continue
        chapter = path.relative_to(src).with_suffix(".md").as_posix()
        seconds = float(nbformat.read(path, as_version=4).metadata.get("papermill", {}).get("duration") or np.nan)
        mine = [r for r in records if r.get("chapter") == chapter]
        latest = mine[-1].get("run") if mine else None
        mine = [r for r in mine if r.get("run") == latest]
        in_sweeps = sum(r["seconds"] for r in mine)
        job_seconds = sum(r["job_seconds"] for r in mine)
        row = {"chapter": chapter, "seconds": seconds, "in sweeps": in_sweeps, "jobs": sum(r["jobs"] for r in mine),
               "jobs' seconds": job_seconds}  # fmt: skip
        for w in workers:  # no sweep ends before its longest job, nor before W workers have done all its jobs
            shared = sum(max(r["job_seconds"] / w, r.get("longest_job_seconds", 0.0)) for r in mine)
            row[f"with {w} workers ≥"] = seconds - in_sweeps + shared
        rows.append(row)
    frame = pd.DataFrame(rows)
    if len(frame):
        total = frame.drop(columns="chapter").sum(numeric_only=True)
        frame.loc[len(frame)] = {"chapter": "whole book", **total.to_dict()}
    return frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", default="paper", choices=sorted(TABLE_SETTINGS))
    parser.add_argument("--overhead-jobs", type=int, default=400)
    parser.add_argument("--book", type=Path, help="an executed build's src folder, e.g. _build/paper/src")
    parser.add_argument("--skip-sweep", action="store_true", help="only the overhead and the book's split")
    args = parser.parse_args()
    os.environ.setdefault("FEDLIB_PROGRESS", "0")  # the sweeps' bars would interleave with the tables
    import distributed

    pd.set_option("display.width", 160)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:  # fmt: skip
        print(f"scheduling overhead, {args.overhead_jobs} empty jobs (ms per job):")
        for label, ms in overhead(args.overhead_jobs, client).items():
            print(f"  {label:20s} {ms:8.2f}")
        if not args.skip_sweep:
            print(f"\nMUFC Tables 1-2 trials at scale={args.scale!r} (fedbook.mufc.table_trials, 7 datasets):")
            print(table_sweep(args.scale, client).to_string(index=False, float_format=lambda x: f"{x:.2f}"))
            print("the three tables are equal in every column but the seconds")
    if args.book:
        split = book_split(args.book)
        if split.empty:
            print(f"\nno executed chapters under {args.book}")
        else:
            print(f"\nthe book under {args.book}, by chapter (seconds):")
            print(split.to_string(index=False, float_format=lambda x: f"{x:.0f}"))


if __name__ == "__main__":
    main()
