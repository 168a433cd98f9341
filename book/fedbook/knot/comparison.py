"""KNOT's Table II and Fig. 6(c), the 54% of asynchronous training, and early erasure: studies over seeds.

A study of one task runs a pilot (FedBuff without erasure, the chapter's seed) to fix the erasure time,
a fraction of the pilot's time to target, and the horizon; then every method and seed trains, erases
and retrains (:func:`fedbook.knot.runs.runs_with_erasure`). The tables put the paper's numbers
(:mod:`fedbook.papers.knot`) beside ours with computed verdicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from joblib import delayed

from fedbook._verdict import WITHIN_NOISE, compare_to_noise
from fedbook._verdict import verdict as verdict_rule
from fedbook.knot.runs import (
    METHODS,
    Run,
    parallel_map,
    run_without_erasure,
    runs_with_erasures,
)
from fedbook.knot.tasks import Task, TaskData
from fedbook.papers import knot as paper
from fedbook.sweeps import run_jobs
from fedlib.learn import pareto_training_times

#: Late erasure (the paper's setting, by its results): at this fraction of FedBuff's pilot time to target.
LATE = 0.7

#: Early erasure: at this fraction, when there is little progress to lose.
EARLY = 0.2

#: A run may go on for the erasure time plus this many pilot times to target.
HORIZON_FACTOR = 4.0

#: Points of slack when our improvement's size is set against the paper's (Table II rounds to whole percents);
#: :func:`fedbook.verdict` adds two standard errors over our seeds (the paper gives no spread).
MAGNITUDE_SLACK = 1.0

#: The pilot's own limit, in simulated seconds.
PILOT_HORIZON = 50_000.0


@dataclass(frozen=True)
class Study:
    """One task's runs.

    Parameters
    ----------
    task : Task
        The task.
    pilot : Run
        FedBuff without erasure (the chapter's seed): its time to target fixes the erasure time.
    erase_time : float
        Simulated seconds of the erasure request, the same for every method and seed.
    horizon : float
        Simulated seconds a run may take.
    runs : list of Run
        Every method, seed and erasure count.
    """

    task: Task
    pilot: Run
    erase_time: float
    horizon: float
    runs: list

    def frame(self) -> pd.DataFrame:
        """One row per run: task, method, seed, erased clients and clusters, time to target, wall seconds.

        Returns
        -------
        pandas.DataFrame
            The runs.
        """
        return runs_frame(self.runs)


def runs_frame(runs: Sequence[Run]) -> pd.DataFrame:
    """One row per run (without its curve).

    Parameters
    ----------
    runs : sequence of Run
        Runs.

    Returns
    -------
    pandas.DataFrame
        Columns task, method, seed, n_erased, erased, erased_clusters, took_part, cluster_sizes, erase_time,
        time_to_target, reached, profile_seconds, unlearning_seconds, wall_seconds, train_seconds,
        eval_seconds, overhead_seconds.
    """
    columns = (
        "task method seed n_erased erased erased_clusters took_part cluster_sizes erase_time time_to_target "
        "profile_seconds unlearning_seconds wall_seconds train_seconds eval_seconds overhead_seconds"
    ).split()
    frame = pd.DataFrame([{c: getattr(r, c) for c in columns} for r in runs], columns=columns)
    frame["reached"] = np.isfinite(frame["time_to_target"].astype(float))
    return frame


def pilots(tasks: Sequence[Task], prepared: Sequence[TaskData], seed: int, *, n_jobs: int = 1) -> list[Run]:
    """FedBuff without erasure on every task (the chapter's seed), to fix each task's erasure time.

    Parameters
    ----------
    tasks : sequence of Task
        The tasks.
    prepared : sequence of TaskData
        Their data.
    seed : int
        The seed.
    n_jobs : int, default=1
        Processes.

    Returns
    -------
    list of Run
        One per task.

    Raises
    ------
    RuntimeError
        If FedBuff does not reach a task's target within :data:`PILOT_HORIZON` simulated seconds.
    """
    runs = parallel_map(
        run_without_erasure,
        [(task, data, "FedBuff", seed) for task, data in zip(tasks, prepared, strict=True)],
        n_jobs=n_jobs,
        keywords={"horizon": PILOT_HORIZON},
    )
    for task, run in zip(tasks, runs, strict=True):
        _check_pilot(task, run)
    return runs


def _check_pilot(task: Task, run: Run) -> None:
    if not run.reached:
        raise RuntimeError(
            f"{task.name}: FedBuff did not reach the target {task.metric} {task.target} within "
            f"{PILOT_HORIZON:.0f} simulated seconds; lower the target."
        )


@dataclass(frozen=True)
class StudyPlan:
    """What one study of :func:`study_set` runs: its tasks, when the erasure comes, the methods and counts.

    Parameters
    ----------
    tasks : sequence of str
        Names of the tasks (a subset of those given to :func:`study_set`, in the study's order).
    fraction : float, default=LATE
        The erasure comes at this fraction of the pilot's time to target.
    methods : sequence of str, default=METHODS
        Methods.
    counts : dict of str to tuple of int, optional
        Erasure counts per method; default each task's ``erased`` for every method but FedAvg, which
        only runs Fig. 6c's larger count (it is the baseline of its speed-ups).
    """

    tasks: Sequence[str]
    fraction: float = LATE
    methods: Sequence[str] = METHODS
    counts: Mapping[str, tuple[int, ...]] | None = None

    def chosen_counts(self, task: Task, method: str) -> tuple[int, ...]:
        """The erasure counts of ``method`` on ``task``."""
        default = task.erased[1:] if method == "FedAvg" else task.erased
        return tuple(default if self.counts is None or method not in self.counts else self.counts[method])


def studies(
    tasks: Sequence[Task],
    prepared: Sequence[TaskData],
    seeds: Sequence[int],
    *,
    pilot_seed: int = 0,
    fraction: float = LATE,
    methods: Sequence[str] = METHODS,
    counts: dict[str, tuple[int, ...]] | None = None,
    n_jobs: int = 1,
) -> list[Study]:
    """Every method on every task and seed, each erasing at the same simulated time, then retraining.

    Parameters
    ----------
    tasks : sequence of Task
        The tasks.
    prepared : sequence of TaskData
        Their data.
    seeds : sequence of int
        Seeds (the paper reports one run; we report mean ± std over these).
    pilot_seed : int, default=0
        Seed of the pilot that fixes the erasure time.
    fraction : float, default=LATE
        The erasure comes at this fraction of the pilot's time to target.
    methods : sequence of str, default=METHODS
        Methods.
    counts : dict of str to tuple of int, optional
        Erasure counts per method; default each task's ``erased`` for every method but FedAvg, which
        only runs Fig. 6c's larger count (it is the baseline of its speed-ups).
    n_jobs : int, default=1
        Processes.

    Returns
    -------
    list of Study
        One per task.
    """
    plan = StudyPlan([task.name for task in tasks], fraction=fraction, methods=tuple(methods), counts=counts)
    return study_set(tasks, prepared, seeds, [plan], pilot_seed=pilot_seed, n_jobs=n_jobs)[0]


def study_set(
    tasks: Sequence[Task],
    prepared: Sequence[TaskData],
    seeds: Sequence[int],
    plans: Sequence[StudyPlan],
    *,
    pilot_seed: int = 0,
    n_jobs: int = 1,
) -> list[list[Study]]:
    """Several :func:`studies` of the same tasks at once (e.g. a late and an early erasure), sharing their work.

    Each task's pilot runs once for every study, and each (task, method, seed) trains once: the trainer is
    copied at every study's erasure time (:func:`fedbook.knot.runs.runs_with_erasures`), so a study equals
    the one :func:`studies` gives alone, bit for bit. On ``n_jobs`` processes the pilots go first (a task's
    runs wait for its pilot's time to target), then the runs, the tasks with the slowest pilots first, so that
    short runs fill in at the end; the results do not depend on ``n_jobs`` or on the order the runs finish in.

    Parameters
    ----------
    tasks : sequence of Task
        Every task of the plans.
    prepared : sequence of TaskData
        Their data.
    seeds : sequence of int
        Seeds.
    plans : sequence of StudyPlan
        The studies.
    pilot_seed : int, default=0
        Seed of the pilots that fix the erasure times.
    n_jobs : int, default=1
        Processes.

    Returns
    -------
    list of list of Study
        For every plan, one study per task of the plan, in the plan's order.
    """
    by_name = {task.name: (task, data) for task, data in zip(tasks, prepared, strict=True)}
    names = [task.name for task in tasks if any(task.name in plan.tasks for plan in plans)]
    times: dict[str, list] = {}  # task -> per plan (erase_time, horizon), or None
    units: dict[tuple[str, str, int], list] = {}  # (task, method, seed) -> [(plan index, erasure)]

    def jobs_of(name: str, pilot: Run) -> list[tuple]:
        _check_pilot(by_name[name][0], pilot)
        task = by_name[name][0]
        times[name] = []
        mine = []
        for p, plan in enumerate(plans):
            if name not in plan.tasks:
                times[name].append(None)
                continue
            erase_time = plan.fraction * pilot.time_to_target
            horizon = erase_time + HORIZON_FACTOR * pilot.time_to_target
            times[name].append((erase_time, horizon))
            for seed in seeds:
                for method in plan.methods:
                    key = (name, method, seed)
                    if key not in units:
                        units[key] = []
                        mine.append(key)
                    units[key].append((p, (erase_time, horizon, plan.chosen_counts(task, method))))
        return [(key, tuple(erasure for _, erasure in units[key])) for key in mine]

    pilot_runs, results = _run_pipeline(by_name, names, pilot_seed, jobs_of, n_jobs=n_jobs)
    out = []
    for p, plan in enumerate(plans):
        studies_ = []
        for name in plan.tasks:
            erase_time, horizon = times[name][p]
            runs_ = []
            for seed in seeds:
                for method in plan.methods:
                    key = (name, method, seed)
                    index = [q for q, _ in units[key]].index(p)
                    runs_.extend(results[key][index])
            studies_.append(Study(task=by_name[name][0], pilot=pilot_runs[name], erase_time=erase_time,
                                  horizon=horizon, runs=runs_))  # fmt: skip
        out.append(studies_)
    return out


def _run_pipeline(by_name, names, pilot_seed, jobs_of, *, n_jobs):
    """Pilots, then the runs they unlock, as jobs (:func:`fedbook.sweeps.run_jobs`); pilots and runs by key.

    The pilots run first (a task's runs wait for its pilot's time to target); then every run, the tasks with
    the slowest pilots first, so that short runs fill in at the end. Every run draws from its own seed, and
    every job trains on one torch thread and one BLAS thread wherever it runs, so the results do not depend on
    ``n_jobs``, on the order the runs finish in, or on whether they ran here, in joblib's processes or on a Dask
    cluster.
    """
    shared = [by_name[name][1] for name in names]
    pilots = run_jobs(
        [delayed(run_without_erasure)(*by_name[name], "FedBuff", pilot_seed, horizon=PILOT_HORIZON) for name in names],
        n_jobs=n_jobs,
        shared=shared,
    )
    pilot_runs = dict(zip(names, pilots, strict=True))
    work = [(key, erasures, pilot_runs[name].wall_seconds) for name in names
            for key, erasures in jobs_of(name, pilot_runs[name])]  # fmt: skip
    done = run_jobs(
        [delayed(runs_with_erasures)(*by_name[key[0]], key[1], key[2], erasures=erasures) for key, erasures, _ in work],
        n_jobs=n_jobs,
        cost=[seconds for *_, seconds in work],
        shared=shared,
    )
    return pilot_runs, {key: runs for (key, _, _), runs in zip(work, done, strict=True)}


def _mean_std(values) -> tuple[float, float, int]:
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan"), 0
    return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else 0.0, int(values.size)


def improvements(study: Study, *, n_erased: int | None = None, baseline: str = "FedBuff") -> pd.DataFrame:
    """Per seed and method, ``1 − T_method / T_baseline`` in percent (Table II's "x%↑"), with the same erasure.

    A run that did not reach the target by the horizon counts as taking the horizon: its improvement
    is an upper bound (for the method) or a lower bound (for the baseline), flagged ``censored``.

    Parameters
    ----------
    study : Study
        A task's runs.
    n_erased : int, optional
        Which erasure count; default the main one (``task.erased[0]``).
    baseline : str, default="FedBuff"
        The method compared against.

    Returns
    -------
    pandas.DataFrame
        Columns seed, method, time, baseline_time, improvement, censored.
    """
    count = study.task.erased[0] if n_erased is None else n_erased
    frame = study.frame()
    frame = frame[frame["n_erased"] == count]
    base = frame[frame["method"] == baseline].set_index("seed")["time_to_target"]
    rows = []
    for _, row in frame.iterrows():
        if row["seed"] not in base.index:
            continue
        t, b = row["time_to_target"], base[row["seed"]]
        censored = not (np.isfinite(t) and np.isfinite(b))
        t, b = (study.horizon if not np.isfinite(t) else t), (study.horizon if not np.isfinite(b) else b)
        rows.append(
            {
                "seed": row["seed"],
                "method": row["method"],
                "time": row["time_to_target"],
                "baseline_time": base[row["seed"]],
                "improvement": 100.0 * (1.0 - t / b),
                "censored": censored,
            }
        )
    return pd.DataFrame(rows)


def _paper_improvement(task: Task, method: str) -> float:
    if task.stands_for is None or method not in paper.TABLE2_IMPROVEMENT:
        return float("nan")
    value = paper.TABLE2_IMPROVEMENT[method][task.stands_for]
    return float("nan") if value is None else float(value)


def _sign_verdict(mean: float, std: float, n: int, *, better: str, worse: str) -> str:
    """``better`` / ``worse`` when the mean is two standard errors from zero (:func:`fedbook.compare_to_noise`).

    "no clear difference" within them, "too few runs" under two runs or without a finite mean.
    """
    if n < 2 or not np.isfinite(mean):
        return "too few runs"
    side = compare_to_noise(mean, noise=2 * (std / np.sqrt(n)))
    return better if side == "higher" else worse if side == "lower" else "no clear difference"


def table2(studies_: Sequence[Study]) -> pd.DataFrame:
    """Table II beside ours: time to target and improvement over FedBuff, mean ± std over seeds, with verdicts.

    The verdict reads the sign of our improvement (two standard errors from zero) and compares it
    with the paper's: "agrees" when both say faster or both slower, "disagrees" when they differ in
    sign, "no clear difference" when ours is within two standard errors of zero. "size against paper"
    sets our mean ± std beside the paper's value by :func:`fedbook.verdict` ("matches" within
    two standard deviations plus :data:`MAGNITUDE_SLACK`, else "lower" or "higher").

    Parameters
    ----------
    studies_ : sequence of Study
        One per task.

    Returns
    -------
    pandas.DataFrame
        One row per task and method: task (its name; ``Task.label`` says what it stands for), method, seconds
        (mean, std), reached, improvement (mean, std), censored runs, paper improvement, paper FedBuff seconds,
        our sign, verdict, size against paper.
    """
    rows = []
    for study in studies_:
        gains = improvements(study)
        for method in [m for m in METHODS if m in set(gains["method"])]:
            mine = gains[gains["method"] == method]
            seconds = _mean_std(mine["time"])
            gain = _mean_std(mine["improvement"]) if method != "FedBuff" else (0.0, 0.0, len(mine))
            published = _paper_improvement(study.task, method)
            ours = _sign_verdict(gain[0], gain[1], gain[2], better="faster", worse="slower")
            if method == "FedBuff":
                verdict = "baseline"
            elif not np.isfinite(published):
                verdict = "no published value" if study.task.stands_for else "not in the paper"
            elif ours in ("no clear difference", "too few runs"):
                verdict = f"{ours} (paper: {'faster' if published > 0 else 'slower'})"
            else:
                verdict = "agrees" if (ours == "faster") == (published > 0) else "disagrees"
            magnitude = (
                verdict_rule((gain[0], gain[1]), (published, 0.0), slack=MAGNITUDE_SLACK, n_ours=int(gain[2]))
                if np.isfinite(published) and gain[2] > 1
                else ""
            )
            rows.append(
                {
                    "task": study.task.name,
                    "method": method,
                    "seconds": seconds[0],
                    "seconds std": seconds[1],
                    "reached": f"{int(np.isfinite(mine['time'].astype(float)).sum())}/{len(mine)}",
                    "improvement %": gain[0],
                    "improvement std": gain[1],
                    "censored": int(mine["censored"].sum()),
                    "paper %": published,
                    "paper FedBuff seconds": (
                        paper.TABLE2_FEDBUFF_SECONDS[study.task.stands_for] if study.task.stands_for else np.nan
                    ),
                    "ours": ours if method != "FedBuff" else "",
                    "verdict": verdict,
                    "size against paper": magnitude,
                }
            )
    return pd.DataFrame(rows)


def table2_shown(table: pd.DataFrame, tasks_: Mapping[str, Task]) -> pd.DataFrame:
    """:func:`table2` as the chapter shows it: by task and method, the columns that carry the comparison, as text.

    Our improvement is one cell, "mean ± std"; the paper's is its published value, or says why there is
    none: FedBuff is the baseline (the cell gives the paper's seconds for it), MNIST is not in Table II
    (the paper's proof of concept), or the paper published no value (FedEraser on Tiny-Shakespeare). Seconds
    are our mean over the runs that reached the target ("none reached" when no run did). Nothing is computed
    here; the numbers are :func:`table2`'s.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`table2`'s table.
    tasks_ : dict of str to Task
        The tasks by name, for their labels (ours, and the paper's task it stands in for).

    Returns
    -------
    pandas.DataFrame
        Indexed by (task label, method): seconds, reached, ours %, paper %, our sign (of our improvement),
        verdict, size against paper; every cell text.
    """
    rows = []
    for row in table.to_dict("records"):
        task = tasks_[row["task"]]
        baseline = row["method"] == "FedBuff"
        if task.stands_for is None:
            published = "not in Table II"
        elif baseline:
            published = f"baseline ({row['paper FedBuff seconds']:.0f} s)"
        elif np.isfinite(row["paper %"]):
            published = f"{row['paper %']:+.0f}"
        else:
            published = "none published"
        # a no-break space after ±: a narrow cell wraps before "±", never between it and the std
        spread = f"±\u00a0{row['improvement std']:.1f}"
        rows.append(
            {
                "task": task.label,
                "method": row["method"],
                "seconds": f"{row['seconds']:.0f}" if np.isfinite(row["seconds"]) else "none reached",
                "reached": row["reached"],
                "ours %": "baseline" if baseline else f"{row['improvement %']:+.1f} {spread}",
                "paper %": published,
                "our sign": row["ours"] or "—",
                "verdict": row["verdict"],
                "size against paper": row["size against paper"] or "—",
            }
        )
    return pd.DataFrame(rows).set_index(["task", "method"])


def table2_findings(table: pd.DataFrame) -> dict[str, object]:
    """What the chapter says of :func:`table2`: verdict counts, noisy cells and every improvement as text.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`table2`'s table.

    Returns
    -------
    dict of str to object
        Glue name to value: ``n_agrees``, ``n_disagrees``, ``n_unclear`` (sign within two standard errors of
        zero, or too few runs), ``n_compared`` (cells with a published value), ``n_size_matches``,
        ``n_size_lower``, ``n_size_inconclusive``, ``n_size_higher``, ``n_noisy`` (clustered cells whose
        std exceeds the mean's size), ``n_clustered_cells``, and ``gain_<task>_<method>`` ("+12% ± 5").
    """
    verdicts = table[table["method"] != "FedBuff"]
    counts = verdicts["verdict"].value_counts()
    sizes = verdicts["size against paper"].value_counts()
    clustered = verdicts[verdicts["method"].isin(["Random", "KNOT"])]
    values: dict[str, object] = {
        "n_agrees": int(counts.get("agrees", 0)),
        "n_disagrees": int(counts.get("disagrees", 0)),
        "n_unclear": int(verdicts["verdict"].str.startswith(("no clear", "too few")).sum()),
        "n_compared": int(verdicts["paper %"].notna().sum()),
        "n_size_matches": int(sizes.get("matches", 0)),
        "n_size_lower": int(sizes.get("lower", 0)),
        "n_size_inconclusive": int(sizes.get("inconclusive", 0)),
        "n_size_higher": int(sizes.get("higher", 0)),
        "n_noisy": int((clustered["improvement std"] > clustered["improvement %"].abs()).sum()),
        "n_clustered_cells": len(clustered),
    }
    for row in table.to_dict("records"):
        key = f"{row['task']}_{row['method']}".lower().replace("-", "")
        values[f"gain_{key}"] = f"{row['improvement %']:+.0f}% ± {row['improvement std']:.0f}"
    return values


def pairwise(studies_: Sequence[Study], method: str, other: str, *, n_erased: int | None = None) -> pd.DataFrame:
    """Per task, ``1 − T_method / T_other`` in percent over seeds, with its verdict (e.g. KNOT against Random).

    Parameters
    ----------
    studies_ : sequence of Study
        One per task.
    method, other : str
        The two methods.
    n_erased : int, optional
        Erasure count; default each task's main one.

    Returns
    -------
    pandas.DataFrame
        task, improvement (mean, std, n), verdict, and the paper's value where it states or implies one.
    """
    rows = []
    for study in studies_:
        gains = improvements(study, n_erased=n_erased, baseline=other)
        mine = gains[gains["method"] == method]
        mean, std, n = _mean_std(mine["improvement"])
        published = float("nan")
        if study.task.stands_for is not None and (method, other) == ("KNOT", "FedEraser"):
            published = paper.KNOT_OVER_FEDERASER.get(study.task.stands_for, float("nan"))
        elif study.task.stands_for is not None and other == "Random" and method == "KNOT":
            knot = paper.TABLE2_IMPROVEMENT["KNOT"][study.task.stands_for]
            rnd = paper.TABLE2_IMPROVEMENT["Random"][study.task.stands_for]
            published = 100.0 * (1.0 - (100.0 - knot) / (100.0 - rnd))  # implied by Table II
        rows.append(
            {
                "task": study.task.name,
                f"{method} over {other} %": mean,
                "std": std,
                "seeds": n,
                "censored": int(mine["censored"].sum()),
                "paper %": published,
                "verdict": _sign_verdict(mean, std, n, better=f"{method} faster", worse=f"{method} slower"),
            }
        )
    return pd.DataFrame(rows)


def speedup_runs(studies_: Sequence[Study], *, baseline: str = "FedAvg") -> pd.DataFrame:
    """Fig. 6(c), seed by seed: speed-up ``T_baseline / T_method`` with the larger erasure count.

    Parameters
    ----------
    studies_ : sequence of Study
        One per task.
    baseline : str, default="FedAvg"
        The synchronous baseline.

    Returns
    -------
    pandas.DataFrame
        task, method, seed, speed-up (NaN where either run did not reach the target).
    """
    rows = []
    for study in studies_:
        frame = study.frame()
        frame = frame[frame["n_erased"] == study.task.erased[1]]
        base = frame[frame["method"] == baseline].set_index("seed")["time_to_target"]
        for method in [m for m in METHODS if m != baseline and m in set(frame["method"])]:
            mine = frame[frame["method"] == method].set_index("seed")["time_to_target"]
            for seed_, seconds in mine.items():
                rows.append({"task": study.task.name, "method": method, "seed": seed_,
                             "speed-up": base.get(seed_, np.nan) / seconds})  # fmt: skip
    return pd.DataFrame(rows)


def speedups(studies_: Sequence[Study], *, baseline: str = "FedAvg") -> pd.DataFrame:
    """Fig. 6(c): speed-up ``T_baseline / T_method`` over synchronous FedAvg with the larger erasure count.

    Parameters
    ----------
    studies_ : sequence of Study
        One per task.
    baseline : str, default="FedAvg"
        The synchronous baseline.

    Returns
    -------
    pandas.DataFrame
        task, method, speed-up mean and std over seeds (seeds where both reached the target).
    """
    rows = []
    for (task, method), group in speedup_runs(studies_, baseline=baseline).groupby(["task", "method"], sort=False):
        mean, std, n = _mean_std(group["speed-up"])
        rows.append({"task": task, "method": method, "speed-up": mean, "std": std, "seeds": n})
    return pd.DataFrame(rows)


def async_against_sync(
    tasks: Sequence[Task], prepared: Sequence[TaskData], seeds: Sequence[int], *, n_jobs: int = 1
) -> pd.DataFrame:
    """Synchronous FedAvg against FedBuff without erasure: seconds to target and FedBuff's improvement.

    Parameters
    ----------
    tasks : sequence of Task
        Tasks.
    prepared : sequence of TaskData
        Their data.
    seeds : sequence of int
        Seeds.
    n_jobs : int, default=1
        Processes.

    Returns
    -------
    pandas.DataFrame
        task, seed, FedAvg seconds, FedBuff seconds, improvement % (``1 − T_FedBuff / T_FedAvg``; NaN when
        either did not reach the target within :data:`PILOT_HORIZON`).
    """
    jobs = [(task, data, method, seed) for task, data in zip(tasks, prepared, strict=True) for seed in seeds
            for method in ("FedAvg", "FedBuff")]  # fmt: skip
    runs = parallel_map(run_without_erasure, jobs, n_jobs=n_jobs, keywords={"horizon": PILOT_HORIZON})
    rows = []
    for i in range(0, len(runs), 2):
        sync, buffered = runs[i], runs[i + 1]
        rows.append(
            {
                "task": sync.task,
                "seed": sync.seed,
                "FedAvg seconds": sync.time_to_target,
                "FedBuff seconds": buffered.time_to_target,
                "improvement %": 100.0 * (1.0 - buffered.time_to_target / sync.time_to_target),
            }
        )
    return pd.DataFrame(rows)


def async_verdict(table: pd.DataFrame) -> pd.DataFrame:
    """Per task, FedBuff's improvement over FedAvg (mean ± std) beside the paper's 54% (CIFAR-10), with verdicts.

    "faster" when the mean is two standard errors above zero; "matches 54%" by :func:`~fedbook.verdict`
    (two standard deviations plus one point for the paper's rounding).

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`async_against_sync`.

    Returns
    -------
    pandas.DataFrame
        task, improvement mean, std, seeds, paper %, sign verdict, magnitude verdict.
    """
    rows = []
    for task, group in table.groupby("task", sort=False):
        mean, std, n = _mean_std(group["improvement %"])
        published = paper.SYNC_VS_ASYNC_IMPROVEMENT
        rows.append(
            {
                "task": task,
                "improvement %": mean,
                "std": std,
                "seeds": n,
                "paper % (CIFAR-10)": published,
                "FedBuff vs FedAvg": _sign_verdict(mean, std, n, better="faster", worse="slower"),
                "against 54%": verdict_rule((mean, std), (published, 0.0), slack=1.0, n_ours=n)
                if n
                else "too few runs",
            }
        )
    return pd.DataFrame(rows)


def first_to_target(runs_: Sequence[Run]) -> str:
    """The methods in the order their first post-erasure model reached the target, as a phrase.

    Parameters
    ----------
    runs_ : sequence of Run
        Runs of one task and seed.

    Returns
    -------
    str
        E.g. ``"Random first, then FedBuff, then FedAvg"``; methods that never reached it are named last.
    """
    reached = sorted((r for r in runs_ if r.reached), key=lambda r: r.time_to_target)
    missed = [r.method for r in runs_ if not r.reached]
    if not reached:
        return "no method reached the target"
    phrase = reached[0].method + " first" + "".join(f", then {r.method}" for r in reached[1:])
    return phrase + (f"; {', '.join(missed)} did not reach it" if missed else "")


def round_lengths(alphas: Sequence[float], concurrency: int, buffer: int, *, n_rounds: int = 2000,
                  random_state: int = 0) -> pd.DataFrame:  # fmt: skip
    """Mean synchronous round (the slowest of ``P`` clients) against the ``M``-th of ``P`` arrivals, by tail index.

    Client times are drawn fresh for every round from Plato's law (:func:`fedlib.learn.pareto_training_times`).

    Parameters
    ----------
    alphas : sequence of float
        Pareto tail indices.
    concurrency, buffer : int
        ``P`` and ``M``.
    n_rounds : int, default=2000
        Rounds drawn per index.
    random_state : int, default=0
        Seed.

    Returns
    -------
    pandas.DataFrame
        alpha, mean sync round, mean ``M``-th arrival, their ratio.
    """
    rows = []
    for alpha in alphas:
        draws = pareto_training_times(concurrency * n_rounds, alpha=alpha, random_state=random_state)
        draws = draws.reshape(n_rounds, concurrency)
        sync = draws.max(axis=1).mean()
        buffered = np.sort(draws, axis=1)[:, buffer - 1].mean()
        rows.append({"alpha": alpha, "sync round (s)": sync, "M-th arrival (s)": buffered, "ratio": sync / buffered})
    return pd.DataFrame(rows)


def slowest_gap(concurrencies: Sequence[int], *, n_rounds: int = 4000, random_state: int = 0) -> pd.DataFrame:
    """How far the slowest of ``P`` clients stays below Plato's cap: the length of a synchronous round's tail.

    With ``α = 1`` and an extra time capped at ``max_extra = 30`` s (:func:`fedlib.learn.pareto_training_times`),
    a synchronous round lasts ``max_k T_k``; its gap to the cap ``average + max_extra`` says how often the
    slowest client sits at the cap.

    Parameters
    ----------
    concurrencies : sequence of int
        ``P`` values.
    n_rounds : int, default=4000
        Rounds drawn per ``P`` (client times fresh for every round).
    random_state : int, default=0
        Seed.

    Returns
    -------
    pandas.DataFrame
        P, median gap to the cap (s), share of rounds whose slowest client is at the cap.
    """
    rows = []
    cap = 50.0  # Plato's average (20 s) + max_sleep_time (30 s), one epoch
    for P in concurrencies:
        draws = pareto_training_times(P * n_rounds, random_state=random_state).reshape(n_rounds, P)
        gap = cap - draws.max(axis=1)
        rows.append(
            {"P": int(P), "median gap to cap (s)": float(np.median(gap)), "at the cap": float(np.mean(gap == 0))}
        )
    return pd.DataFrame(rows)


def landing_table(studies_: Sequence[Study]) -> pd.DataFrame:
    """Where the (first) erasing client landed in the clustered runs, beside the run's improvement over FedBuff.

    Parameters
    ----------
    studies_ : sequence of Study
        One per task.

    Returns
    -------
    pandas.DataFrame
        task, method, seed, cluster size of the erasing client, largest cluster size, in the largest cluster,
        took part before the erasure, improvement %.
    """
    rows = []
    for study in studies_:
        gains = improvements(study).set_index(["seed", "method"])["improvement"]
        for run in study.runs:
            if run.method not in ("Random", "KNOT") or run.n_erased != study.task.erased[0]:
                continue
            size = run.cluster_sizes[run.erased_clusters[0]]
            rows.append(
                {
                    "task": run.task,
                    "method": run.method,
                    "seed": run.seed,
                    "erasing client's cluster size": size,
                    "largest cluster": max(run.cluster_sizes),
                    "in the largest cluster": size == max(run.cluster_sizes),
                    "took part": run.took_part[0],
                    "improvement %": gains.get((run.seed, run.method), np.nan),
                }
            )
    return pd.DataFrame(rows)


def two_erasures_verdict(studies_: Sequence[Study]) -> str:
    """Fig. 6(c)'s claim, "KNOT and Random still clearly beat FedEraser" with more erasing clients, as a sentence.

    Parameters
    ----------
    studies_ : sequence of Study
        One per task.

    Returns
    -------
    str
        On how many tasks each clustered method is faster than FedEraser by two standard errors.
    """
    parts = []
    for method in ("KNOT", "Random"):
        clear = []
        for study in studies_:
            table = pairwise([study], method, "FedEraser", n_erased=study.task.erased[1])
            if table.loc[0, "verdict"] == f"{method} faster":
                clear.append(study.task.name)
        parts.append(f"{method} is faster than FedEraser by two standard errors on {len(clear)} of "
                     f"{len(studies_)} tasks" + (f" ({', '.join(clear)})" if clear else ""))  # fmt: skip
    return (
        "With the larger number of erasing clients, "
        + "; ".join(parts)
        + ('. The paper: both "still clearly beat" FedEraser (Fig. 6c, no numbers).')
    )


def implied_table2() -> pd.DataFrame:
    """Table II's implied absolute seconds, ``T_FedBuff · (1 − x)``, and KNOT's implied gain over FedEraser and Random.

    Returns
    -------
    pandas.DataFrame
        One row per paper task: FedBuff seconds, implied seconds of FedEraser, Random and KNOT, KNOT over FedEraser
        implied and stated, KNOT over Random implied.
    """
    rows = []
    for task in paper.TASKS:
        base = paper.TABLE2_FEDBUFF_SECONDS[task]
        implied = {
            method: (np.nan if values[task] is None else base * (1 - values[task] / 100))
            for method, values in paper.TABLE2_IMPROVEMENT.items()
        }
        rows.append(
            {
                "task": task,
                "FedBuff (s)": base,
                **{f"{method} (s)": seconds for method, seconds in implied.items()},
                "KNOT over FedEraser, implied %": 100 * (1 - implied["KNOT"] / implied["FedEraser"]),
                "KNOT over FedEraser, stated %": paper.KNOT_OVER_FEDERASER.get(task, np.nan),
                "KNOT over Random, implied %": 100 * (1 - implied["KNOT"] / implied["Random"]),
            }
        )
    return pd.DataFrame(rows)


def early_against_late(late: Sequence[Study], early: Sequence[Study]) -> pd.DataFrame:
    """The clustered methods' improvement over FedBuff after an early and after a late erasure, task by task.

    Parameters
    ----------
    late, early : sequence of Study
        Studies of the same tasks (``early`` may hold a subset) with late and early erasures.

    Returns
    -------
    pandas.DataFrame
        task, method, late and early improvement (mean, std), and whether the early one is lower by two
        combined standard errors ("lower"), higher, or neither ("no clear difference"), by
        :func:`fedbook.compare_to_noise`.
    """
    by_task = {study.task.name: study for study in late}
    rows = []
    for study in early:
        for method in ("Random", "KNOT"):
            values = {}
            for label, source in (("late", by_task[study.task.name]), ("early", study)):
                gains = improvements(source)
                values[label] = _mean_std(gains[gains["method"] == method]["improvement"])
            (lm, ls, ln), (em, es, en) = values["late"], values["early"]
            se = float(np.hypot(ls / np.sqrt(max(ln, 1)), es / np.sqrt(max(en, 1))))
            change = compare_to_noise(em, lm, noise=2 * se)
            rows.append(
                {
                    "task": study.task.name,
                    "method": method,
                    "late %": lm,
                    "late std": ls,
                    "early %": em,
                    "early std": es,
                    "early against late": "no clear difference" if change == WITHIN_NOISE else change,
                }
            )
    return pd.DataFrame(rows)
