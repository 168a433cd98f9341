"""The one rule by which every chapter compares its mean ± std with a paper's."""

from __future__ import annotations

import math

import numpy as np

#: Verdict of a cell measured by a single run: it has no spread, so it is shown but not judged.
ONE_RUN = "one run"


#: Verdict when the runs neither show a difference nor bound it within the margin: more runs are needed.
INCONCLUSIVE = "inconclusive"


def verdict(
    ours: tuple[float, float],
    published: tuple[float, float],
    *,
    slack: float,
    margin: float | None = None,
    n_ours: int | None = None,
    n_published: int | None = None,
) -> str:
    """Judge a mean ± std of ours against a published one.

    With ``se`` the standard error of the difference of the two means,
    ``sqrt(s_ours²/n_ours + s_paper²/n_paper)``, and ``gap`` that difference:

    - "lower" or "higher" (ours against the paper's) when
      ``|gap| > 2 se + slack``: an approximate two-sided 95% test says the
      means differ by more than the paper's rounding (``slack``);
    - "matches" when ``|gap| + 2 se <= margin``: the 95% interval of the
      difference lies within ``± margin`` (an equivalence test), so a wide
      error bar can never make a cell match;
    - :data:`INCONCLUSIVE` otherwise, and :data:`ONE_RUN` for a single run,
      which has no spread to judge with.

    Standard errors, not standard deviations: 75.2 ± 17.5 over 3 runs
    against 100.0 ± 0.0 is "lower".

    Parameters
    ----------
    ours, published : tuple of float
        ``(mean, standard deviation)`` over runs.
    slack : float
        Absolute tolerance of the difference test, in the cells' unit (the
        paper's rounding).
    margin : float, optional
        Largest difference still called a match; ``None`` means ``3 * slack``.
    n_ours, n_published : int, optional
        Runs behind each cell. ``None`` treats the standard deviation as the
        standard error. ``n_ours == 1`` returns :data:`ONE_RUN`.

    Returns
    -------
    str
        "matches", "lower", "higher", "inconclusive" or "one run".

    Examples
    --------
    >>> verdict((75.2, 17.5), (100.0, 0.0), slack=1.0, n_ours=3, n_published=10)
    'lower'
    >>> verdict((81.7, 18.3), (100.0, 0.0), slack=1.0, n_ours=2, n_published=10)
    'inconclusive'
    >>> verdict((96.0, 1.0), (96.3, 0.5), slack=1.0, n_ours=5, n_published=10)
    'matches'
    >>> verdict((96.0, 0.0), (96.3, 0.5), slack=1.0, n_ours=1, n_published=10)
    'one run'
    """
    if n_ours is not None and n_ours < 2:
        return ONE_RUN
    margin = 3 * slack if margin is None else margin
    se_ours = ours[1] / math.sqrt(n_ours) if n_ours else ours[1]
    se_published = published[1] / math.sqrt(n_published) if n_published else published[1]
    se = float(np.hypot(se_ours, se_published))
    gap = ours[0] - published[0]
    if abs(gap) > 2 * se + slack:
        return "lower" if gap < 0 else "higher"
    if abs(gap) + 2 * se <= margin:
        return "matches"
    return INCONCLUSIVE


def mean_cell(mean: float, std: float, n_runs: int, *, decimals: int) -> str:
    """Our cell as printed beside a paper's: "mean ± std (n runs)", or "mean (1 run)" without a spread.

    Examples
    --------
    >>> mean_cell(75.24, 17.5, 3, decimals=1)
    '75.2 ± 17.5 (3 runs)'
    >>> mean_cell(1.2345, 0.0, 1, decimals=2)
    '1.23 (1 run)'
    """
    if n_runs < 2:
        return f"{mean:.{decimals}f} (1 run)"
    return f"{mean:.{decimals}f} ± {std:.{decimals}f} ({n_runs} runs)"
