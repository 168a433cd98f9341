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
    groups : ndarray of int64 or None, default=None
        The model (run) of each score, in the order of :attr:`scores`, when the intervals resampled whole runs.

    Notes
    -----
    With ``n_out`` non-members, the smallest false-positive rate that can be told apart from zero is
    ``1/n_out``: below it, "TPR at FPR α" is the share of members scoring above *every* non-member, the
    strictest point of the ROC curve (:attr:`resolved` says whether ``α`` is resolved).

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import membership_metrics
    >>> is_member = np.array([True, True, True, False, False, False])
    >>> result = membership_metrics([3.0, 2.0, 0.8, 1.0, 0.5, 0.0], is_member, attack="toy", n_bootstrap=0)
    >>> round(result.auc, 3), {fpr: round(tpr, 3) for fpr, tpr in result.tpr.items()}
    (0.889, {0.001: 0.667, 0.01: 0.667})
    >>> result.resolved(0.01), result.resolved(0.5)  # three non-members resolve no FPR below 1/3
    (False, True)
    >>> result.as_row()["members"], result.as_row()["non-members"]
    (3, 3)
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
    groups: np.ndarray | None = field(default=None, repr=False)

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


def _by_group(members: np.ndarray, others: np.ndarray, g_in: np.ndarray, g_out: np.ndarray):
    """Each run's members and non-members as rows of two arrays (runs of equal sizes), or None."""
    labels = np.unique(np.concatenate([g_in, g_out]))
    counts_in = np.array([(g_in == g).sum() for g in labels])
    counts_out = np.array([(g_out == g).sum() for g in labels])
    if (counts_in == 0).any() or (counts_out == 0).any():
        raise ValueError("with groups, every run must score members and non-members.")
    if len(set(counts_in)) > 1 or len(set(counts_out)) > 1:
        raise ValueError(
            "with groups, every run must score as many members (and non-members) as the others; "
            f"got {sorted(set(counts_in.tolist()))} members and {sorted(set(counts_out.tolist()))} non-members."
        )
    order_in, order_out = np.argsort(g_in, kind="stable"), np.argsort(g_out, kind="stable")
    return members[order_in].reshape(labels.size, -1), others[order_out].reshape(labels.size, -1)


def _resample(members, others, groups, n_bootstrap: int, rng: np.random.Generator, extra=()):
    """Bootstrap samples of (members, others) for each array pair: candidates within strata, or whole runs."""
    pairs = [(members, others), *extra]
    if groups is None:
        pick_in = rng.integers(0, members.size, (n_bootstrap, members.size))
        pick_out = rng.integers(0, others.size, (n_bootstrap, others.size))
        return [(m[pick_in], o[pick_out]) for m, o in pairs]
    n_runs = groups[0][0].shape[0]
    pick = rng.integers(0, n_runs, (n_bootstrap, n_runs))
    return [(m[pick].reshape(n_bootstrap, -1), o[pick].reshape(n_bootstrap, -1)) for m, o in groups]


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
    groups=None,
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
    groups : array-like of int, shape (n,), optional
        The model (target run) each score comes from, when several runs are pooled into one ROC curve. The
        bootstrap then resamples whole runs, so that the intervals also cover how much one run's model differs
        from another's (candidates of one run share its model, and resampling them alone leaves that out).
        Every run must score as many members, and as many non-members, as the others.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Draws the resamples.

    Returns
    -------
    AttackResult
        The metrics, their intervals and the scores (members first).

    Raises
    ------
    ValueError
        For scores that are not finite, lengths that differ, a sample without members or non-members, or runs
        of unequal sizes.
    TypeError
        For an ``is_member`` that is not boolean.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import membership_metrics
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
    truth = np.asarray(is_member).ravel()
    by_run = None
    if groups is not None:
        groups = np.asarray(groups).ravel()
        if groups.shape != truth.shape or not np.issubdtype(groups.dtype, np.integer):
            raise ValueError(f"groups must hold {truth.size} integer run ids, one per score.")
        by_run = _by_group(members, others, groups[truth], groups[~truth])
    n_bootstrap = check_scalar(n_bootstrap, "n_bootstrap", "int", min_val=0)
    confidence = check_scalar(confidence, "confidence", "real", min_val=0.0, max_val=1.0, include_min=False)
    fprs = tuple(float(check_scalar(a, "fpr", "real", min_val=0.0, max_val=1.0, include_min=False)) for a in fprs)
    auc = float(_auc(members, others))
    tpr = {a: float(_tpr_at(members, others, a)) for a in fprs}
    if n_bootstrap == 0:
        auc_interval, tpr_intervals = (auc, auc), {a: (v, v) for a, v in tpr.items()}
    else:
        rng = check_random_state(random_state)
        [(boot_in, boot_out)] = _resample(members, others, None if by_run is None else [by_run], n_bootstrap, rng)
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
        groups=None if groups is None else np.concatenate([groups[truth], groups[~truth]]).astype(np.int64),
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

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import auc_gap, membership_metrics
    >>> rng = np.random.default_rng(0)
    >>> is_member = np.arange(200) < 100
    >>> unlearned = membership_metrics(is_member + rng.normal(0, 1, 200), is_member, n_bootstrap=0)
    >>> retrained = membership_metrics(rng.normal(0, 1, 200), is_member, n_bootstrap=0)
    >>> gap = auc_gap(unlearned, retrained, random_state=0)
    >>> round(gap.gap, 2), gap.confidence, gap.excludes_zero()  # the attack still sees the members
    (0.34, 0.95, True)
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
    AUC intervals side by side when the models agree). When both were computed with the same ``groups`` (several
    runs pooled), whole runs are resampled, so that the interval also covers the run-to-run variation of the
    models; with a single run it covers only which candidates were drawn, not the training's randomness.

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
        If the two results have different numbers of members or non-members, or different groups.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import auc_gap, membership_metrics
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
    if (a.groups is None) != (b.groups is None) or (a.groups is not None and not np.array_equal(a.groups, b.groups)):
        raise ValueError("the attacks were computed with different groups (runs); give both the same, or neither.")
    m = a.n_members
    rng = check_random_state(random_state)
    split = [(r.scores[:m], r.scores[m:]) for r in (a, b)]
    runs = None
    if a.groups is not None:
        g_in, g_out = a.groups[:m], a.groups[m:]
        runs = [_by_group(*pair, g_in, g_out) for pair in split]
    (in_a, out_a), (in_b, out_b) = _resample(*split[0], runs, n_bootstrap, rng, extra=split[1:])
    gaps = _auc(in_a, out_a) - _auc(in_b, out_b)
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(gaps, (tail, 100 - tail))
    return AUCGap(a.auc - b.auc, (float(low), float(high)), float(confidence))
