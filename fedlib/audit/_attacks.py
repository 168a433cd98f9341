"""Membership inference from the outside: the loss-threshold attack and LiRA, with shadow models run by joblib.

An auditor who asks "is the forgotten client's data really gone?" attacks the model as an adversary would:
given a model and an example, was the example in the training data? Two attacks:

- the loss-threshold attack (Yeom et al., *Privacy Risk in Machine Learning*, CSF 2018): members have lower
  loss; the membership score is minus the loss;
- the likelihood-ratio attack LiRA (Carlini et al., *Membership Inference Attacks From First Principles*,
  S&P 2022, Sec. IV): shadow models trained by the same procedure with and without each example give, per
  example, Gaussians of a statistic (the scaled logit of the true class, :func:`~fedlib.audit.logit_confidence`,
  or for clustering the log distance to the nearest centre, :func:`~fedlib.audit.nearest_center_scores`);
  the target model's statistic is scored by their likelihood ratio (online) or against the "out" Gaussian alone
  (offline, which needs no shadow trained on the target's examples).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import norm

from fedlib._random import check_random_state, child_sequence, root_sequence
from fedlib._typing import SeedLike
from fedlib._validation import check_scalar
from fedlib.audit._metrics import AttackResult, membership_metrics


def balanced_masks(
    n_candidates: int, n_models: int, *, fraction: float = 0.5, random_state: SeedLike = None
) -> np.ndarray:
    """Which candidates each shadow model trains on: every candidate in the same number of models.

    Carlini et al. (2022), Sec. VI-A: each of ``n_models`` shadows trains on a random half of the
    candidates, balanced so that every candidate is "in" for ``⌊n_models/2⌋`` of them and "out" for the rest,
    which gives every candidate the same number of "in" and "out" observations. Another ``fraction`` puts
    each candidate in ``⌊fraction · n_models⌋`` models (e.g. when a model can hold only a few canaries, as a
    clustering with few centres).

    Parameters
    ----------
    n_candidates : int
        Candidate examples (canaries).
    n_models : int
        Shadow models, at least 2.
    fraction : float, default=0.5
        Share of the models each candidate is in; every candidate must be in at least one and out of at
        least one.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Draws the subsets.

    Returns
    -------
    ndarray of bool, shape (n_models, n_candidates)
        ``masks[j, i]``: shadow ``j`` trains on candidate ``i``.

    Raises
    ------
    ValueError
        If ``fraction · n_models`` leaves a candidate in no model or in all of them.

    Examples
    --------
    >>> from fedlib.audit import balanced_masks
    >>> masks = balanced_masks(5, 4, random_state=0)
    >>> masks.shape, masks.sum(axis=0).tolist()
    ((4, 5), [2, 2, 2, 2, 2])
    >>> balanced_masks(3, 10, fraction=0.2, random_state=0).sum(axis=0).tolist()
    [2, 2, 2]
    """
    n_candidates = check_scalar(n_candidates, "n_candidates", "int", min_val=1)
    n_models = check_scalar(n_models, "n_models", "int", min_val=2)
    fraction = check_scalar(fraction, "fraction", "real", min_val=0.0, max_val=1.0, include_min=False)
    n_in = int(np.floor(fraction * n_models + 1e-9))
    if not 1 <= n_in <= n_models - 1:
        raise ValueError(
            f"fraction={fraction} of n_models={n_models} puts each candidate in {n_in} models; "
            "it must be in at least one and out of at least one."
        )
    rng = check_random_state(random_state)
    order = rng.random((n_models, n_candidates)).argsort(axis=0).argsort(axis=0)
    return order < n_in


@dataclass(frozen=True)
class ShadowScores:
    """The statistic of every candidate under every shadow model, and which shadows trained on it.

    Parameters
    ----------
    scores : ndarray of float64, shape (n_shadows, n_candidates)
        The attack statistic of candidate ``i`` under shadow ``j``.
    inside : ndarray of bool, shape (n_shadows, n_candidates)
        Whether shadow ``j`` trained on candidate ``i``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import ShadowScores
    >>> shadows = ShadowScores(np.array([[3.0, 0.1], [0.0, 2.9]]), np.array([[True, False], [False, True]]))
    >>> shadows.n_shadows, shadows.scores[shadows.inside].tolist()  # each candidate's "in" statistic
    (2, [3.0, 2.9])
    """

    scores: np.ndarray
    inside: np.ndarray

    @property
    def n_shadows(self) -> int:
        """Shadow models."""
        return self.scores.shape[0]


def run_shadows(
    train_and_score: Callable[[np.ndarray, np.random.SeedSequence], np.ndarray],
    n_candidates: int,
    n_shadows: int,
    *,
    fraction: float = 0.5,
    random_state: SeedLike = None,
    n_jobs: int | None = None,
) -> ShadowScores:
    """Train ``n_shadows`` shadow models by the target's procedure and score every candidate under each.

    Shadow ``j`` calls ``train_and_score(masks[j], seeds[j])``: train on the candidates where the mask is
    true (plus whatever data the procedure always uses) with randomness from ``seeds[j]``, and return the
    statistic of *every* candidate. The masks are :func:`balanced_masks`; the seeds are children of
    ``random_state``'s :class:`~numpy.random.SeedSequence`, so the result does not depend on ``n_jobs`` or on
    where a job ran. The jobs go through ``joblib.Parallel`` (any joblib backend, e.g. Dask, applies).

    Parameters
    ----------
    train_and_score : callable
        ``(mask, seed) -> ndarray of shape (n_candidates,)``; picklable when ``n_jobs`` is not 1.
    n_candidates : int
        Candidates.
    n_shadows : int
        Shadow models, at least 2 (Carlini et al. use 16-256; fewer give noisier Gaussians).
    fraction : float, default=0.5
        Share of the shadows each candidate is in (:func:`balanced_masks`).
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Root of the masks and of the shadows' seeds.
    n_jobs : int or None, default=None
        joblib workers (``None``: joblib's default, one unless a backend context says otherwise).

    Returns
    -------
    ShadowScores
        The statistics and the masks.

    Raises
    ------
    ValueError
        If a shadow returns statistics of the wrong shape or that are not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import run_shadows
    >>> def train_and_score(mask, seed):  # a "model" that remembers its members exactly
    ...     return mask + np.random.default_rng(seed).normal(0, 0.1, mask.size)
    >>> shadows = run_shadows(train_and_score, 6, 4, random_state=0)
    >>> shadows.n_shadows, bool((shadows.scores[shadows.inside] > 0.5).all())
    (4, True)
    """
    root = root_sequence(random_state)
    masks = balanced_masks(
        n_candidates, n_shadows, fraction=fraction, random_state=np.random.default_rng(child_sequence(root, 0))
    )
    seeds = [child_sequence(root, 1, j) for j in range(n_shadows)]
    results = Parallel(n_jobs=n_jobs)(delayed(train_and_score)(m, s) for m, s in zip(masks, seeds, strict=True))
    scores = np.asarray([np.asarray(r, dtype=np.float64).ravel() for r in results])
    if scores.shape != masks.shape or not np.isfinite(scores).all():
        raise ValueError(
            f"train_and_score must return {n_candidates} finite statistics per shadow; got shape {scores.shape}"
            f"{'' if np.isfinite(scores).all() else ' with NaN or infinity'}."
        )
    return ShadowScores(scores, masks)


def _gaussian(values: np.ndarray, mask: np.ndarray, fix_variance: bool, side: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-candidate mean and standard deviation of the shadows' statistics where ``mask`` holds."""
    counts = mask.sum(axis=0)
    if (counts < (1 if fix_variance else 2)).any():
        raise ValueError(
            f"LiRA needs at least {1 if fix_variance else 2} '{side}' shadow(s) per candidate "
            f"(fix_variance={fix_variance}); some candidate has {int(counts.min())}: train more shadows."
        )
    mean = np.where(mask, values, 0.0).sum(axis=0) / counts
    centred = np.where(mask, values - mean, 0.0)
    if fix_variance:  # one variance for all candidates, pooled within candidates (Carlini et al., Sec. IV-C)
        dof = int(counts.sum() - counts.size)
        if dof < 1:
            raise ValueError(
                f"LiRA's pooled '{side}' variance has no degree of freedom: every candidate has exactly one "
                f"'{side}' shadow, so no spread can be measured; train more shadows (at least one candidate "
                "needs two)."
            )
        std = np.full(mean.shape, np.sqrt((centred**2).sum() / dof))
    else:
        std = np.sqrt((centred**2).sum(axis=0) / (counts - 1))
    return mean, np.maximum(std, 1e-12)


def lira_scores(target, shadows: ShadowScores, *, online: bool = True, fix_variance: bool = True) -> np.ndarray:
    """LiRA's membership score of every candidate under the target model (Carlini et al. 2022, Alg. 1).

    Online: the log-likelihood ratio of the target's statistic under the candidate's "in" Gaussian against its
    "out" Gaussian, both fitted on the shadows. Offline: the statistic's standard score under the "out"
    Gaussian alone (a one-sided test; the monotone equivalent of Carlini et al.'s ``1 − Pr[Z > φ]``, without
    its saturation in the tails), for when no shadow may train on the target's candidates.

    Parameters
    ----------
    target : array-like of float, shape (n_candidates,) or (n_targets, n_candidates)
        The statistic of each candidate under the attacked model, or under each of several attacked models
        (e.g. repeated runs, each with its own members, pooled into one ROC curve as Carlini et al. do).
    shadows : ShadowScores
        From :func:`run_shadows`.
    online : bool, default=True
        Use the "in" shadows too.
    fix_variance : bool, default=True
        One variance for every candidate (per side), pooled within candidates: Carlini et al.'s choice with
        fewer than 64 shadows; ``False`` fits each candidate's own.

    Returns
    -------
    ndarray of float64, shape of ``target``
        Higher: more likely a member.

    Raises
    ------
    ValueError
        For a target of the wrong length, too few "in"/"out" shadows per candidate, or (``fix_variance``)
        a side on which every candidate has a single shadow: its pooled variance cannot be estimated.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import ShadowScores, lira_scores
    >>> shadows = ShadowScores(np.array([[3.0, 0.1], [0.0, 2.9], [3.1, 0.0], [0.1, 3.0]]),
    ...                        np.array([[True, False], [False, True], [True, False], [False, True]]))
    >>> (lira_scores([3.0, 0.0], shadows) > 0).tolist()
    [True, False]
    """
    target = np.asarray(target, dtype=np.float64)
    if target.ndim not in (1, 2) or target.shape[-1] != shadows.scores.shape[1]:
        raise ValueError(
            f"target must hold {shadows.scores.shape[1]} statistics per model (the candidates the shadows scored); "
            f"got shape {target.shape}."
        )
    mu_out, sd_out = _gaussian(shadows.scores, ~shadows.inside, fix_variance, "out")
    if not online:
        return (target - mu_out) / sd_out
    mu_in, sd_in = _gaussian(shadows.scores, shadows.inside, fix_variance, "in")
    return norm.logpdf(target, mu_in, sd_in) - norm.logpdf(target, mu_out, sd_out)


def loss_attack(losses, is_member, **metrics) -> AttackResult:
    """The loss-threshold attack (Yeom et al., CSF 2018): members are the candidates with the lowest loss.

    Parameters
    ----------
    losses : array-like of float, shape (n,)
        Each candidate's loss under the attacked model (:func:`~fedlib.audit.cross_entropy`, or a squared
        distance to the nearest centre for clustering).
    is_member : array-like of bool, shape (n,)
        Whether the candidate was in the training data.
    **metrics : dict
        Passed to :func:`~fedlib.audit.membership_metrics` (``fprs``, ``n_bootstrap``, ``confidence``,
        ``random_state``).

    Returns
    -------
    AttackResult
        AUC and TPR at low FPR of the score ``-loss``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import loss_attack
    >>> result = loss_attack([0.1, 0.2, 2.0, 3.0], np.array([True, True, False, False]), n_bootstrap=0)
    >>> result.auc
    1.0
    """
    scores = -np.asarray(losses, dtype=np.float64)
    return membership_metrics(scores, is_member, **{"attack": "loss threshold", **metrics})


def lira_attack(
    target, shadows: ShadowScores, is_member, *, online: bool = True, fix_variance: bool = True, **metrics
) -> AttackResult:
    """LiRA (Carlini et al., S&P 2022) against a target model, scored by :func:`membership_metrics`.

    Parameters
    ----------
    target : array-like of float, shape (n_candidates,) or (n_targets, n_candidates)
        The statistic of each candidate under the attacked model (or each of several).
    shadows : ShadowScores
        From :func:`run_shadows`, trained by the target's procedure.
    is_member : array-like of bool, shape of ``target``
        Whether the target trained on the candidate.
    online : bool, default=True
        Online (in and out shadows) or offline (out shadows only) LiRA.
    fix_variance : bool, default=True
        As :func:`lira_scores`.
    **metrics : dict
        Passed to :func:`~fedlib.audit.membership_metrics`.

    Returns
    -------
    AttackResult
        AUC and TPR at low FPR of LiRA's scores.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import lira_attack, run_shadows
    >>> def train_and_score(mask, seed):
    ...     return 2.0 * mask + np.random.default_rng(seed).normal(0, 0.5, mask.size)
    >>> shadows = run_shadows(train_and_score, 200, 16, random_state=0)
    >>> member = np.arange(200) < 100
    >>> target = train_and_score(member, np.random.SeedSequence(99))
    >>> lira_attack(target, shadows, member, random_state=0).auc > 0.95
    True
    """
    scores = lira_scores(target, shadows, online=online, fix_variance=fix_variance).ravel()
    is_member = np.asarray(is_member).ravel()
    name = "LiRA online" if online else "LiRA offline"
    return membership_metrics(scores, is_member, **{"attack": name, **metrics})
