"""The one rule by which every chapter compares its mean ± std with a paper's."""

from __future__ import annotations

import numpy as np


def verdict(ours: tuple[float, float], published: tuple[float, float], *, slack: float) -> str:
    """ "matches" when the means differ by at most two combined standard deviations plus ``slack``.

    Otherwise "lower" or "higher" (ours against the paper's). ``slack`` covers the paper's rounding.
    """
    gap = ours[0] - published[0]
    if abs(gap) <= 2 * float(np.hypot(ours[1], published[1])) + slack:
        return "matches"
    return "lower" if gap < 0 else "higher"
