"""Timing helpers for benchmarks: medians and ratios against a reference measured in the same run."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def speed_ratios(candidates: dict[str, Callable[[], object]], *, reference: str, repeat: int = 5) -> dict[str, float]:
    """``median_time(reference) / median_time(candidate)`` for each candidate (> 1: faster than the reference).

    Calls are interleaved round by round so that a machine-wide slowdown hits
    every candidate alike; absolute times are not returned on purpose.

    Parameters
    ----------
    candidates : dict of str to callable
        Functions of no argument to time, by name; each is called once to warm up.
    reference : str
        The name of the candidate the others are compared with.
    repeat : int, default=5
        Timed rounds; the median of each candidate's times is used.

    Returns
    -------
    dict of str to float
        Speed-up of each candidate over the reference (the reference's own is 1.0).

    Raises
    ------
    KeyError
        If ``reference`` is not a candidate.
    """
    if reference not in candidates:
        raise KeyError(f"reference {reference!r} is not among the candidates {sorted(candidates)}.")
    for func in candidates.values():
        func()  # warm-up
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(repeat):
        for name, func in candidates.items():
            start = time.perf_counter()
            func()
            samples[name].append(time.perf_counter() - start)
    medians = {name: float(np.median(ts)) for name, ts in samples.items()}
    return {name: medians[reference] / medians[name] for name in candidates}
