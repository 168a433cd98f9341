"""The rules by which every chapter judges its numbers: against noise, within a margin, and against a paper's cell.

- :func:`compare_to_noise`: the difference test, "is ours beyond the noise of the reference, and on which side";
- :func:`within`: the equivalence test, "does ours lie within a margin of the reference, noise included";
- :func:`verdict`: both together, for a mean ± std of ours against a published one ("matches", "lower", ...).

The chapters' comparisons of a number with noise or a margin call these rules; their own functions only choose
the noise and the words of their tables.
"""

from __future__ import annotations

import math

import numpy as np

#: Verdict of a cell measured by a single run: it has no spread, so it is shown but not judged.
ONE_RUN = "one run"


#: Verdict when the runs neither show a difference nor bound it within the margin: more runs are needed.
INCONCLUSIVE = "inconclusive"

#: Outcome of :func:`compare_to_noise` when the runs show no difference: absence of evidence, not a match.
WITHIN_NOISE = "within noise"


def compare_to_noise(value: float, reference: float = 0.0, *, noise: float) -> str:
    """Whether ``value`` lies beyond ``reference ± noise``, and on which side: the book's difference test.

    - "higher" when ``value - noise > reference``;
    - "lower" when ``value + noise < reference``;
    - :data:`WITHIN_NOISE` otherwise: the numbers show no difference. A value
      exactly at ``reference ± noise`` is within the noise, and so is a NaN
      value, reference or noise (nothing is shown).

    With ``noise`` two standard errors of the difference this is an
    approximate two-sided 95% test that ``value`` differs from ``reference``;
    with ``noise = 0`` it is the sign of ``value - reference``. "Within noise"
    says the difference is not shown, not that it is small: for a match, see
    :func:`within`.

    Parameters
    ----------
    value : float
        Ours: a mean, or a difference to test against zero.
    reference : float, default=0.0
        What ``value`` is compared with.
    noise : float
        Largest distance from ``reference`` that is not called a difference
        (e.g. two standard errors plus a paper's rounding), in the value's unit.

    Returns
    -------
    str
        "higher", "lower" or "within noise".

    Raises
    ------
    ValueError
        If ``noise`` is negative.

    Examples
    --------
    >>> compare_to_noise(0.05, noise=0.02)
    'higher'
    >>> compare_to_noise(80.0, 85.0, noise=2.6)
    'lower'
    >>> compare_to_noise(-0.02, noise=0.02)
    'within noise'
    """
    if noise < 0:
        raise ValueError(f"noise must be non-negative, got {noise}")
    if value - noise > reference:
        return "higher"
    if value + noise < reference:
        return "lower"
    return WITHIN_NOISE


def within(difference: float, margin: float, *, noise: float = 0.0) -> bool:
    """Whether ``difference ± noise`` lies inside ``± margin``: the book's equivalence test.

    True when ``|difference| + noise <= margin`` (exactly at the margin counts
    as within), False otherwise and for a NaN difference, noise or margin.
    With ``noise`` two standard errors, the 95% interval of the difference
    lies within ``± margin``, so a wide error bar can never make a match; with
    ``noise = 0``, ``difference`` itself is at most ``margin`` from zero.

    Parameters
    ----------
    difference : float
        Ours minus the reference.
    margin : float
        Largest difference still called a match, in the difference's unit.
    noise : float, default=0.0
        Uncertainty of ``difference`` (e.g. two standard errors).

    Returns
    -------
    bool

    Examples
    --------
    >>> within(-0.3, 3.0, noise=1.2)
    True
    >>> within(-0.3, 1.0, noise=1.2)
    False
    """
    return bool(abs(difference) + noise <= margin)


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
      ``|gap| > 2 se + slack`` (:func:`compare_to_noise` with that noise): an
      approximate two-sided 95% test says the means differ by more than the
      paper's rounding (``slack``);
    - "matches" when ``|gap| + 2 se <= margin`` (:func:`within`): the 95%
      interval of the difference lies within ``± margin`` (an equivalence
      test), so a wide error bar can never make a cell match;
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
    side = compare_to_noise(gap, noise=2 * se + slack)
    if side != WITHIN_NOISE:
        return side
    return "matches" if within(gap, margin, noise=2 * se) else INCONCLUSIVE


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
