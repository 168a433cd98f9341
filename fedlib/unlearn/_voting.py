"""Majority vote of an ensemble of classifiers, with ties broken by summed probabilities.

Clustered ("SISA-style") unlearning answers a query with the vote of its
cluster models (Bourtoule et al. 2021; Liu et al., TDSC 2025, Fig. 1). Neither
paper says how a tie is broken; here the tied label with the largest summed
softmax probability wins, then the lowest label, and the share of tied votes
is reported so that a reader sees how often the rule mattered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class VoteResult:
    """The ensemble's answers.

    Parameters
    ----------
    labels : ndarray of int64, shape (n,)
        The winning label of each query.
    tied : ndarray of bool, shape (n,)
        Whether two or more labels shared the most votes (the tie-break decided).
    votes : ndarray of int64, shape (n, n_classes)
        Votes per label.

    Examples
    --------
    Two models that disagree on the first of two queries:

    >>> import numpy as np
    >>> from fedlib.unlearn import majority_vote
    >>> out = majority_vote(np.array([[[0.9, 0.1], [0.6, 0.4]], [[0.2, 0.8], [0.7, 0.3]]]))
    >>> out.votes.tolist(), out.labels.tolist(), out.tied.tolist(), out.tie_rate
    ([[1, 1], [2, 0]], [0, 0], [True, False], 0.5)
    """

    labels: np.ndarray
    tied: np.ndarray
    votes: np.ndarray

    @property
    def tie_rate(self) -> float:
        """Share of queries decided by the tie-break."""
        return float(self.tied.mean()) if self.tied.size else 0.0


def majority_vote(probabilities) -> VoteResult:
    """Majority vote of models that each give class probabilities (ties: summed probability, then lowest label).

    Each model votes for its most probable label (the lowest one if its own
    probabilities tie). Among the labels with the most votes, the one with the
    largest probability summed over all models wins; an exact tie of those
    sums goes to the lowest label.

    Parameters
    ----------
    probabilities : array-like of float, shape (n_models, n, n_classes)
        Each model's class probabilities (or any scores: only their order and sums are used).

    Returns
    -------
    VoteResult
        Labels, tie indicators and vote counts.

    Raises
    ------
    ValueError
        If ``probabilities`` is not 3-D with at least one model and one class.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.unlearn import majority_vote
    >>> p = np.array([[[0.9, 0.1], [0.6, 0.4]], [[0.2, 0.8], [0.7, 0.3]], [[0.3, 0.7], [0.45, 0.55]]])
    >>> out = majority_vote(p)
    >>> out.labels.tolist(), out.tied.tolist()
    ([1, 0], [False, False])
    >>> out = majority_vote(p[:2])  # two models that disagree on the first query: a tie
    >>> out.labels.tolist(), out.tied.tolist()
    ([0, 0], [True, False])
    """
    P = np.asarray(probabilities, dtype=np.float64)
    if P.ndim != 3 or P.shape[0] < 1 or P.shape[2] < 1:
        raise ValueError(f"probabilities must have shape (n_models, n, n_classes), got {P.shape}.")
    _, n, n_classes = P.shape
    choice = P.argmax(axis=2)  # (n_models, n)
    votes = np.zeros((n, n_classes), dtype=np.int64)
    np.add.at(votes, (np.broadcast_to(np.arange(n), choice.shape), choice), 1)
    top = votes.max(axis=1, keepdims=True)
    leaders = votes == top
    tied = leaders.sum(axis=1) > 1
    score = np.where(leaders, P.sum(axis=0), -np.inf)
    return VoteResult(labels=score.argmax(axis=1).astype(np.int64), tied=tied, votes=votes)
