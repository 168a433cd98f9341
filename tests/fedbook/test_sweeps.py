"""The book's sweeps on joblib: the same numbers here, in joblib's processes and on a Dask cluster, even when a
worker dies in the middle of a sweep (its jobs rescheduled by Dask)."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time

import pandas as pd
import pytest
from fedbook import mufc, sweeps
from fedbook.knot import comparison
from joblib import delayed, parallel_config
from threadpoolctl import threadpool_info

from fedlib.exceptions import MissingDependencyError

if os.environ.get("CI"):  # .ci/run installs the extra (make test: requirements-dask.txt): never skipped there
    import distributed
else:
    distributed = pytest.importorskip("distributed")


def _threads() -> tuple[int, int]:
    import torch

    blas = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    return max(blas, default=1), torch.get_num_threads()


def test_run_jobs_returns_results_in_the_order_of_the_calls_whatever_the_cost_order():
    calls = [delayed(pow)(i, 2) for i in range(7)]  # a builtin: importable in loky's workers
    cost = [3, 1, 4, 1, 5, 9, 2]
    assert sweeps.run_jobs(calls, n_jobs=1, cost=cost) == [i * i for i in range(7)]
    assert sweeps.run_jobs(calls, n_jobs=2, cost=cost) == [i * i for i in range(7)]
    with pytest.raises(ValueError, match="one number per call"):
        sweeps.run_jobs(calls, cost=cost[:3])


def test_a_sweep_log_records_each_sweep_with_its_chapter_caller_and_seconds(tmp_path, monkeypatch):
    log = tmp_path / "sweeps.jsonl"
    monkeypatch.setenv("FEDBOOK_SWEEP_LOG", str(log))
    monkeypatch.setenv("FEDBOOK_CHAPTER", "notebooks/x/y.md")
    monkeypatch.setenv("FEDBOOK_CHAPTER_RUN", "run-1")
    sweeps.run_jobs([delayed(time.sleep)(pause) for pause in (0.01, 0.05, 0.01)], n_jobs=1)
    sweeps.run_jobs([delayed(pow)(2, 3)], n_jobs=1)
    first, second = (json.loads(line) for line in log.read_text().splitlines())
    assert first["chapter"] == "notebooks/x/y.md" and first["jobs"] == 3 and first["where"] == "local"
    assert first["run"] == second["run"] == "run-1"
    assert first["caller"].endswith(".test_a_sweep_log_records_each_sweep_with_its_chapter_caller_and_seconds")
    assert 0.07 <= first["job_seconds"] <= first["seconds"] and second["jobs"] == 1
    assert 0.05 <= first["longest_job_seconds"] < first["job_seconds"] - 0.02  # the 0.05 s job, not the sum


def test_every_job_runs_on_one_blas_thread_and_one_torch_thread_and_the_caller_keeps_its_own():
    import torch

    torch.set_num_threads(2)
    before = _threads()
    inside = sweeps.run_jobs([delayed(_threads)() for _ in range(2)], n_jobs=1)
    assert inside == [(1, 1), (1, 1)]
    assert _threads() == before


def test_without_a_scheduler_jobs_stay_on_this_machine(monkeypatch):
    monkeypatch.delenv(sweeps.SCHEDULER_VARIABLE, raising=False)
    engine = sweeps.connect()
    assert engine.kind == "local" and not sweeps.on_cluster()
    assert str(engine).startswith("sweeps run on this machine")


def test_a_named_scheduler_without_dask_installed_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(sweeps.SCHEDULER_VARIABLE, "tcp://127.0.0.1:1")
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(MissingDependencyError, match=r"requirements-dask\.txt"):
        sweeps.connect()
    assert sweeps.engine().kind == "local"


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes of one thread each, as `dask worker --nworkers 2 --nthreads 1` would start."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as local, distributed.Client(local) as client:  # fmt: skip
        yield local, client


def _knot_sweep(tiny_knot, n_jobs: int) -> list:
    task, data = tiny_knot
    plan = comparison.StudyPlan([task.name], fraction=comparison.LATE, methods=("FedAvg", "FedBuff", "KNOT"))
    return comparison.study_set([task], [data], [0, 1, 2], [plan], n_jobs=n_jobs)[0]


def _same_studies(one: list, other: list, same_run) -> None:
    for a, b in zip(one, other, strict=True):
        assert (a.task, a.erase_time, a.horizon) == (b.task, b.erase_time, b.horizon)
        for x, y in zip([a.pilot, *a.runs], [b.pilot, *b.runs], strict=True):
            same_run(x, y)


@pytest.fixture(scope="module")
def serial(tiny_knot):
    return _knot_sweep(tiny_knot, n_jobs=1)


def test_a_knot_sweep_on_a_two_worker_local_cluster_equals_the_serial_run(cluster, tiny_knot, serial, same_knot_run):
    _, client = cluster
    engine = sweeps.connect(client)
    try:
        assert engine.kind == "dask" and engine.workers == 2 and sweeps.on_cluster()
        on_dask = _knot_sweep(tiny_knot, n_jobs=1)  # n_jobs is the local processes; the cluster runs the jobs
    finally:
        sweeps.disconnect()
    assert not sweeps.on_cluster()
    _same_studies(serial, on_dask, same_knot_run)


def test_mufc_removal_sweep_on_the_cluster_equals_the_serial_run(cluster):
    problems = {"TCGA": mufc.prepare("TCGA", max_samples=400, n_init=2, random_state=0)}
    serial_runs, serial_dckm = mufc.removal_study(problems, n_removals=4, n_init=1, n_jobs=1, random_state=5)
    with parallel_config(backend="dask"):  # the same switch by hand, as a library user would write it
        assert sweeps.on_cluster()
        runs_, dckm = mufc.removal_study(problems, n_removals=4, n_init=1, n_jobs=1, random_state=5)
    assert list(serial_runs) == list(runs_) == ["TCGA"] and list(serial_dckm) == list(dckm)
    timing = [c for c in serial_runs["TCGA"].rounds.columns if "seconds" in c or c.startswith("retraining")]
    pd.testing.assert_frame_equal(
        serial_runs["TCGA"].rounds.drop(columns=timing), runs_["TCGA"].rounds.drop(columns=timing)
    )
    assert serial_dckm["TCGA"].shape == dckm["TCGA"].shape


def _busy_worker(client) -> str | None:
    """A worker that holds a job right now, if any."""
    return next((worker for worker, tasks in client.processing().items() if tasks), None)


def test_a_worker_killed_in_the_middle_of_a_sweep_changes_no_number(cluster, tiny_knot, serial, same_knot_run):
    _, client = cluster
    pids = client.run(os.getpid)  # worker address -> process id
    result: dict = {}

    def run() -> None:  # joblib's backend setting is per thread: this one connects too
        try:
            with parallel_config(backend="dask"):
                result["studies"] = _knot_sweep(tiny_knot, n_jobs=1)
        except BaseException as error:
            result["error"] = error

    sweep = threading.Thread(target=run)
    sweep.start()
    try:
        deadline, victim = time.monotonic() + 120, None
        while victim is None:  # the first worker seen holding a job
            assert sweep.is_alive() and time.monotonic() < deadline, f"no job seen in flight: {result}"
            victim = _busy_worker(client)
            time.sleep(0.02)
        os.kill(pids[victim], signal.SIGKILL)  # the worker dies with a job in flight
        killed_mid_sweep = sweep.is_alive()
    finally:
        sweep.join(timeout=600)
    assert not sweep.is_alive() and "error" not in result, result.get("error")
    assert killed_mid_sweep
    assert victim not in client.scheduler_info()["workers"]  # the nanny started a new worker in its place
    client.wait_for_workers(2, timeout=60)
    _same_studies(serial, result["studies"], same_knot_run)
