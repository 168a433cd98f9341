"""Where a chapter's independent jobs run: this machine's cores, or a Dask cluster.

Every sweep of the book (a seed, a dataset, a setting, a shadow model of the audit) is an independent job that
draws its randomness from its own spawned seed, submitted through :func:`run_jobs` to :class:`joblib.Parallel`.
joblib runs the jobs on the backend that is active: by default its process pool on this machine (loky), and,
after :func:`connect` to a Dask scheduler, on that cluster's workers through joblib's ``"dask"`` backend, which
also carries the jobs that ``fedlib`` itself submits through joblib (the membership-inference shadows, the
exactness test). Nothing here schedules anything itself.

The switch is Dask's own environment variable: ``DASK_SCHEDULER_ADDRESS=tcp://host:8786 make book SCALE=paper``
makes every chapter's setup cell connect to that scheduler (:func:`connect` reads the variable); without it the
book runs on the local cores, and Dask need not be installed (``requirements-dask.txt``, fedlib's extra
``[dask]``).

The numbers do not depend on where a job ran. Each job gets its seed before any job starts, and runs with one
BLAS thread and one torch thread wherever it is (:func:`run_jobs` sets both around each job): a matrix product's
blocking, and so its last bits, can change with the number of threads, and a Dask worker's threads, a loky
process and this process otherwise differ in it. A job whose worker dies is run again from the same seed on
another worker (Dask reschedules it), so a lost worker changes no number either (``tests/fedbook/test_sweeps.py``
kills one in the middle of a sweep).
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from joblib import Parallel, parallel_config
from joblib.parallel import get_active_backend

from fedlib.exceptions import MissingDependencyError
from fedlib.utils import progress

__all__ = ["SCHEDULER_VARIABLE", "Engine", "connect", "disconnect", "engine", "on_cluster", "run_jobs"]

# Dask warns when a job carries a large argument in its task; a job's own data (one split, one plan) must travel
# with it whatever is done, and what several jobs share is sent once (``shared``), so the hint is noise here.
_DASK_LARGE = "Large object of size"

_LOG_VARIABLE = "FEDBOOK_SWEEP_LOG"

#: The environment variable that names a Dask scheduler (Dask's own: ``distributed.Client()`` reads it too).
SCHEDULER_VARIABLE = "DASK_SCHEDULER_ADDRESS"

# loky replaces a worker whose memory grew (workers that train torch models do) and warns; it resubmits the
# jobs, so no result changes, and the notice would only clutter a chapter's page.
_LOKY_RESTART = "A worker stopped while some jobs were given"


@dataclass(frozen=True)
class Engine:
    """Where :func:`run_jobs` sends jobs: this machine (``kind="local"``) or a Dask cluster (``kind="dask"``).

    Attributes
    ----------
    kind : str
        ``"local"`` (joblib's processes on this machine) or ``"dask"``.
    workers : int
        Processes that run jobs: the local cores, or the cluster's workers.
    threads : int
        Jobs that can run at once (local cores, or the workers' threads in all).
    address : str or None
        The scheduler's address.
    dashboard : str or None
        The Dask dashboard's address, where the cluster's progress shows.
    """

    kind: str
    workers: int
    threads: int
    address: str | None = None
    dashboard: str | None = None

    def __str__(self) -> str:
        if self.kind == "local":
            return f"sweeps run on this machine's {self.threads} cores (joblib; {SCHEDULER_VARIABLE} names a cluster)"
        where = f"sweeps run on the Dask cluster at {self.address}: {self.workers} workers, {self.threads} threads"
        return where + (f"; dashboard {self.dashboard}" if self.dashboard else "")


_session: dict[str, Any] = {"stack": None, "engine": None}


def _local() -> Engine:
    cores = os.cpu_count() or 1
    return Engine("local", workers=cores, threads=cores)


def connect(address=None, *, timeout: float = 30.0) -> Engine:
    """Send this Python session's joblib jobs to a Dask scheduler, or keep them local when none is named.

    Called once in each chapter's setup cell. With ``address`` (or ``$DASK_SCHEDULER_ADDRESS``) it opens a
    :class:`distributed.Client` and makes joblib's ``"dask"`` backend the session's default
    (:func:`joblib.parallel_config`), until :func:`disconnect`; without one it leaves joblib's default.

    Parameters
    ----------
    address : str or distributed.Client, optional
        ``tcp://host:8786``, a scheduler file's cluster, or a client already made (a test's ``LocalCluster``);
        default: the variable ``DASK_SCHEDULER_ADDRESS``, and none when it is unset or empty.
    timeout : float, default=30.0
        Seconds to wait for the scheduler, and for a first worker when a sweep starts.

    Returns
    -------
    Engine
        Where the jobs will run (printed by the chapters).

    Raises
    ------
    MissingDependencyError
        If a scheduler is named but ``distributed`` is not installed.
    OSError
        If the scheduler cannot be reached within ``timeout``.
    """
    disconnect()
    if address is None:
        address = os.environ.get(SCHEDULER_VARIABLE, "").strip() or None
    if address is None:
        _session["engine"] = _local()
        return _session["engine"]
    try:
        import distributed
    except ImportError as error:
        raise MissingDependencyError(
            f"{SCHEDULER_VARIABLE} names a Dask scheduler ({address}) but dask.distributed is not installed: "
            "pip install -r requirements-dask.txt (or fedlib's extra [dask])."
        ) from error
    stack = ExitStack()
    if isinstance(address, distributed.Client):
        client = address
    else:
        client = distributed.Client(address, timeout=timeout, set_as_default=True)
        stack.callback(client.close)
    stack.enter_context(parallel_config(backend="dask", wait_for_workers_timeout=timeout))
    _session["stack"] = stack
    info = client.scheduler_info()
    workers = info.get("workers", {})
    _session["engine"] = Engine(
        "dask",
        workers=len(workers),
        threads=sum(int(w.get("nthreads", 1)) for w in workers.values()),
        address=info.get("address", str(address)),
        dashboard=client.dashboard_link,
    )
    return _session["engine"]


def disconnect() -> None:
    """Undo :func:`connect`: joblib's default backend again, and the client closed if :func:`connect` made it."""
    stack = _session["stack"]
    _session["stack"] = None
    _session["engine"] = None
    if stack is not None:
        stack.close()


def engine() -> Engine:
    """Where jobs run now: the cluster after :func:`connect`, else this machine.

    Returns
    -------
    Engine
        The engine :func:`connect` set up, or the local one.
    """
    return _session["engine"] or _local()


def _one_thread(function: Callable, /, *args, **kwargs) -> tuple[Any, float]:
    """``function(*args, **kwargs)`` with one BLAS thread and one torch thread, wherever it runs; and its seconds."""
    from threadpoolctl import threadpool_limits

    torch_threads = None
    try:
        import torch
    except ImportError:  # torch comes with fedlib's "learn" extra; jobs without it need no limit
        torch = None
    if torch is not None:
        torch_threads = torch.get_num_threads()
        torch.set_num_threads(1)
    began = time.perf_counter()
    try:
        with threadpool_limits(1, user_api="blas"):
            return function(*args, **kwargs), time.perf_counter() - began
    finally:
        if torch is not None:
            torch.set_num_threads(torch_threads)


def run_jobs(
    calls: Iterable[tuple[Callable, Sequence, dict]],
    *,
    n_jobs: int | None = 1,
    cost: Sequence[float] | None = None,
    desc: str | None = None,
    shared: Sequence = (),
) -> list:
    """Run independent jobs through :class:`joblib.Parallel`; the results in the order of ``calls``.

    Parameters
    ----------
    calls : iterable of (callable, args, kwargs)
        The jobs, as :func:`joblib.delayed` makes them; each must draw its randomness from its own arguments.
    n_jobs : int or None, default=1
        Local processes (joblib's meaning; ``-1`` all cores); ignored on a Dask cluster, which runs as many
        jobs at once as its workers have threads. With 1 and no cluster the jobs run here, one after another.
    cost : sequence of float, optional
        A rough cost per call: the costliest are dispatched first, one at a time, so that no long job starts
        last while the other processes idle (longest processing time first). The results do not depend on it.
    desc : str, optional
        The progress bar's label; default: the calling function's name. The bar (tqdm) counts finished jobs
        and shows interactively, never in the rendered book (``FEDLIB_PROGRESS=0``); on a cluster the Dask
        dashboard shows the workers' progress too.
    shared : sequence, optional
        Large arguments that many calls share (a dataset object): on a Dask cluster they are sent to every
        worker once, before the jobs (joblib's ``scatter``), rather than with each job. Arrays passed directly
        are shared without it (joblib's dask backend scatters them; loky memory-maps them).

    Returns
    -------
    list
        ``[function(*args, **kwargs) for function, args, kwargs in calls]``, each run with one BLAS thread and
        one torch thread.

    Notes
    -----
    With the variable ``FEDBOOK_SWEEP_LOG`` naming a file, each call appends one JSON line to it: the chapter
    and the execution of it (``FEDBOOK_CHAPTER`` and ``FEDBOOK_CHAPTER_RUN``, set by ``tools/run_chapter.py``),
    the caller, the number of jobs, where they ran, the wall-clock seconds of the whole sweep, the seconds of
    its jobs added up and those of its longest job (``benchmarks/bench_sweeps.py`` reads it to split a
    chapter's time into what a cluster can share and what it cannot).
    """
    calls = list(calls)
    if cost is not None and len(cost) != len(calls):
        raise ValueError(f"cost must give one number per call ({len(calls)}), got {len(cost)}.")
    order = list(range(len(calls))) if cost is None else sorted(range(len(calls)), key=lambda i: -cost[i])
    began = time.perf_counter()
    # The job's own arguments stay its top-level arguments, so that joblib's dask backend can scatter them.
    jobs = ((_one_thread, (calls[i][0], *calls[i][1]), calls[i][2]) for i in order)
    caller = sys._getframe(1)
    caller_name = f"{caller.f_globals.get('__name__')}.{caller.f_code.co_name}"
    with ExitStack() as stack:
        stack.enter_context(warnings.catch_warnings())
        warnings.filterwarnings("ignore", message=_LOKY_RESTART, category=UserWarning)
        warnings.filterwarnings("ignore", message=_DASK_LARGE, category=UserWarning)
        if shared and on_cluster():
            stack.enter_context(parallel_config(backend="dask", scatter=list(shared)))
        parallel = Parallel(n_jobs=n_jobs, batch_size=1 if cost is not None else "auto", return_as="generator")
        bar = progress(parallel(jobs), desc=desc or caller_name.rsplit(".", 1)[-1], total=len(calls), leave=False)
        results = list(bar)
    out: list = [None] * len(calls)
    for i, (result, _) in zip(order, results, strict=True):
        out[i] = result
    log = os.environ.get(_LOG_VARIABLE)
    if log:
        record = {
            "chapter": os.environ.get("FEDBOOK_CHAPTER"),
            "run": os.environ.get("FEDBOOK_CHAPTER_RUN"),
            "caller": caller_name,
            "jobs": len(calls),
            "where": "dask" if on_cluster() else "local",
            "n_jobs": n_jobs,
            "seconds": time.perf_counter() - began,
            "job_seconds": float(sum(seconds for _, seconds in results)),
            "longest_job_seconds": float(max((seconds for _, seconds in results), default=0.0)),
        }
        with open(log, "a", encoding="utf-8") as file:
            file.write(json.dumps(record) + "\n")
    return out


def on_cluster() -> bool:
    """Whether joblib's active backend is Dask (after :func:`connect`, or inside ``parallel_config("dask")``).

    Returns
    -------
    bool
        True when jobs go to a Dask cluster.
    """
    backend, _ = get_active_backend()
    return type(backend).__name__ == "DaskDistributedBackend"
