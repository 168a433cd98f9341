"""How well a membership score separates members from non-members: ROC AUC and TPR at low FPR, with intervals."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import rankdata

from fedlib._random import check_random_state
from fedlib._typing import SeedLike
from fedlib._validation import check_scalar

#: The false-positive rates at which :func:`membership_metrics` reports the true-positive rate (Carlini et al. 2022).
DEFAULT_FPRS = (0.001, 0.01)


@dataclass(frozen=True)
class AttackResult:
    """A membership-inference attack's success: ROC AUC and TPR at low FPR, each with a bootstrap interval.

    Parameters
    ----------
    attack : str
        The attack's name.
    auc : float
        Area under the ROC curve: the probability that a random member scores above a random non-member
        (ties count one half). 0.5 is chance.
    auc_interval : tuple of float
        Its percentile bootstrap interval.
    tpr : dict of float to float
        False-positive rate ``α`` → the share of members scoring above all but ``⌊α n_out⌋`` non-members.
    tpr_intervals : dict of float to tuple of float
        Their bootstrap intervals.
    n_members, n_nonmembers : int
        The two samples' sizes.
    confidence : float
        The intervals' level.
    scores : ndarray of float64, shape (n_members + n_nonmembers,)
        The attack's membership scores (higher: more likely a member), members first.

    Notes
    -----
    With ``n_out`` non-members, the smallest false-positive rate that can be told apart from zero is
    ``1/n_out``: below it, "TPR at FPR α" is the share of members scoring above *every* non-member, the
    strictest point of the ROC curve (:attr:`resolved` says whether ``α`` is resolved).
    """

    attack: str
    auc: float
    auc_interval: tuple[float, float]
    tpr: dict[float, float]
    tpr_intervals: dict[float, tuple[float, float]]
    n_members: int
    n_nonmembers: int
    confidence: float
    scores: np.ndarray = field(repr=False)

    def resolved(self, fpr: float) -> bool:
        """Whether ``fpr`` is at least ``1/n_nonmembers``, the resolution of the non-member sample.

        Parameters
        ----------
        fpr : float
            A false-positive rate.

        Returns
        -------
        bool
            ``True`` if the non-member sample can measure a rate this small.
        """
        return fpr * self.n_nonmembers >= 1

    def at_chance(self) -> bool:
        """Whether chance (AUC 0.5) lies inside the AUC's interval.

        Returns
        -------
        bool
            ``True`` if the sample cannot tell the attack from guessing.
        """
        return self.auc_interval[0] <= 0.5 <= self.auc_interval[1]

    def as_row(self) -> dict[str, float | str | int]:
        """The result as one table row: AUC, its interval, and TPR at each FPR.

        Returns
        -------
        dict
            ``attack``, ``AUC``, ``AUC low``, ``AUC high``, ``TPR at α FPR`` per rate, ``members``, ``non-members``.
        """
        row: dict[str, float | str | int] = {
            "attack": self.attack,
            "AUC": self.auc,
            "AUC low": self.auc_interval[0],
            "AUC high": self.auc_interval[1],
        }
        for alpha, value in self.tpr.items():
            row[f"TPR at {alpha:.1%} FPR"] = value
        row["members"], row["non-members"] = self.n_members, self.n_nonmembers
        return row


def _split(scores, is_member) -> tuple[np.ndarray, np.ndarray]:
    scores = np.asarray(scores, dtype=np.float64).ravel()
    is_member = np.asarray(is_member).ravel()
    if is_member.dtype != bool:
        raise TypeError(f"is_member must be an array of booleans, got dtype {is_member.dtype}.")
    if scores.shape != is_member.shape:
        raise ValueError(f"scores and is_member differ in length: {scores.size} and {is_member.size}.")
    if not np.isfinite(scores).all():
        raise ValueError("scores must be finite; got NaN or infinity.")
    members, others = scores[is_member], scores[~is_member]
    if members.size == 0 or others.size == 0:
        raise ValueError(
            f"an attack needs members and non-members; got {members.size} members and {others.size} non-members."
        )
    return members, others


def _auc(members: np.ndarray, others: np.ndarray) -> np.ndarray:
    """AUC of each row of (members, others) by the rank-sum (Mann-Whitney) formula, ties counting one half."""
    n_in, n_out = members.shape[-1], others.shape[-1]
    ranks = rankdata(np.concatenate([members, others], axis=-1), axis=-1)
    return (ranks[..., :n_in].sum(axis=-1) - n_in * (n_in + 1) / 2) / (n_in * n_out)


def _tpr_at(members: np.ndarray, others: np.ndarray, fpr: float) -> np.ndarray:
    """Share of members strictly above the ``(⌊fpr n_out⌋ + 1)``-th largest non-member score, per row."""
    n_out = others.shape[-1]
    allowed = int(np.floor(fpr * n_out + 1e-9))
    if allowed >= n_out:
        return np.ones(members.shape[:-1])
    threshold = -np.partition(-others, allowed, axis=-1)[..., allowed]
    return (members > threshold[..., None]).mean(axis=-1)


def membership_metrics(
    scores,
    is_member,
    *,
    attack: str = "attack",
    fprs=DEFAULT_FPRS,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    random_state: SeedLike = None,
) -> AttackResult:
    """ROC AUC and TPR at low FPR of a membership score, with stratified bootstrap intervals.

    The metrics of Carlini et al., *Membership Inference Attacks From First Principles* (S&P 2022), Sec. III:
    the AUC, and the true-positive rate at false-positive rates of 0.1% and 1%, where an attack that
    identifies a few members with confidence shows (an average-case AUC hides it).

    Parameters
    ----------
    scores : array-like of float, shape (n,)
        Membership scores: higher means more likely a member.
    is_member : array-like of bool, shape (n,)
        The truth.
    attack : str, default="attack"
        A name for the result.
    fprs : sequence of float, default=(0.001, 0.01)
        False-positive rates at which to report the true-positive rate.
    n_bootstrap : int, default=1000
        Bootstrap resamples (members and non-members resampled separately); 0 gives the point estimates
        as their own intervals.
    confidence : float, default=0.95
        Level of the percentile intervals.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Draws the resamples.

    Returns
    -------
    AttackResult
        The metrics, their intervals and the scores (members first).

    Raises
    ------
    ValueError
        For scores that are not finite, lengths that differ, or a sample without members or non-members.
    TypeError
        For an ``is_member`` that is not boolean.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> is_member = np.arange(400) < 200
    >>> separated = membership_metrics(is_member + rng.normal(0, 0.5, 400), is_member, random_state=0)
    >>> round(separated.auc, 2), separated.at_chance()
    (0.93, False)
    >>> blind = membership_metrics(rng.normal(0, 1, 400), is_member, random_state=0)
    >>> blind.at_chance()
    True
    """
    members, others = _split(scores, is_member)
    n_bootstrap = check_scalar(n_bootstrap, "n_bootstrap", "int", min_val=0)
    confidence = check_scalar(confidence, "confidence", "real", min_val=0.0, max_val=1.0, include_min=False)
    fprs = tuple(float(check_scalar(a, "fpr", "real", min_val=0.0, max_val=1.0, include_min=False)) for a in fprs)
    auc = float(_auc(members, others))
    tpr = {a: float(_tpr_at(members, others, a)) for a in fprs}
    if n_bootstrap == 0:
        auc_interval, tpr_intervals = (auc, auc), {a: (v, v) for a, v in tpr.items()}
    else:
        rng = check_random_state(random_state)
        boot_in = members[rng.integers(0, members.size, (n_bootstrap, members.size))]
        boot_out = others[rng.integers(0, others.size, (n_bootstrap, others.size))]
        tail = 100 * (1 - confidence) / 2
        q = (tail, 100 - tail)
        auc_interval = tuple(float(v) for v in np.percentile(_auc(boot_in, boot_out), q))
        tpr_intervals = {a: tuple(float(v) for v in np.percentile(_tpr_at(boot_in, boot_out, a), q)) for a in fprs}
    return AttackResult(
        attack=attack,
        auc=auc,
        auc_interval=auc_interval,
        tpr=tpr,
        tpr_intervals=tpr_intervals,
        n_members=int(members.size),
        n_nonmembers=int(others.size),
        confidence=float(confidence),
        scores=np.concatenate([members, others]),
    )


@dataclass(frozen=True)
class AUCGap:
    """The difference of two attacks' AUCs on the same candidates, with a paired bootstrap interval.

    Parameters
    ----------
    gap : float
        ``a.auc − b.auc``.
    interval : tuple of float
        Its percentile bootstrap interval (members and non-members resampled once for both attacks).
    confidence : float
        The interval's level.
    """

    gap: float
    interval: tuple[float, float]
    confidence: float

    def excludes_zero(self) -> bool:
        """Whether the interval lies wholly above or below zero: a gap the sample resolves.

        Returns
        -------
        bool
            ``True`` if zero is outside the interval.
        """
        return self.interval[0] > 0 or self.interval[1] < 0


def auc_gap(
    a: AttackResult,
    b: AttackResult,
    *,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    random_state: SeedLike = None,
) -> AUCGap:
    """How much more an attack finds in one model than in another, on the same candidates.

    The auditor's question after forgetting: does the attack still see more in the unlearned model (``a``) than
    in a model retrained without the data (``b``)? Both results must score the same candidates with the same
    membership labels (as :func:`membership_metrics` stores them, members first); the bootstrap resamples the
    candidates once for both, so the interval accounts for their correlation (it is much narrower than the two
    AUC intervals side by side when the models agree).

    Parameters
    ----------
    a, b : AttackResult
        Two attacks on the same candidates.
    n_bootstrap : int, default=1000
        Paired resamples.
    confidence : float, default=0.95
        The interval's level.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Draws the resamples.

    Returns
    -------
    AUCGap
        ``a.auc − b.auc`` and its interval.

    Raises
    ------
    ValueError
        If the two results have different numbers of members or non-members.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> is_member = np.arange(200) < 100
    >>> same = rng.normal(size=200)
    >>> a = membership_metrics(same + 0.05 * rng.normal(size=200), is_member, n_bootstrap=0)
    >>> b = membership_metrics(same, is_member, n_bootstrap=0)
    >>> auc_gap(a, b, random_state=0).excludes_zero()
    False
    """
    if (a.n_members, a.n_nonmembers) != (b.n_members, b.n_nonmembers):
        raise ValueError(
            f"the attacks scored different samples: {a.n_members}/{a.n_nonmembers} and "
            f"{b.n_members}/{b.n_nonmembers} members/non-members."
        )
    n_bootstrap = check_scalar(n_bootstrap, "n_bootstrap", "int", min_val=1)
    confidence = check_scalar(confidence, "confidence", "real", min_val=0.0, max_val=1.0, include_min=False)
    m = a.n_members
    rng = check_random_state(random_state)
    pick_in = rng.integers(0, m, (n_bootstrap, m))
    pick_out = m + rng.integers(0, a.n_nonmembers, (n_bootstrap, a.n_nonmembers))
    gaps = _auc(a.scores[pick_in], a.scores[pick_out]) - _auc(b.scores[pick_in], b.scores[pick_out])
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(gaps, (tail, 100 - tail))
    return AUCGap(a.auc - b.auc, (float(low), float(high)), float(confidence))
