"""The K-means objective and the loss ratio the papers report."""

from __future__ import annotations

import numpy as np

from fedlib._typing import SeedLike
from fedlib._validation import check_array, check_sample_weight
from fedlib.cluster._distance import assign_to_nearest


def kmeans_objective(X, centers, *, labels=None, sample_weight=None) -> float:
    """K-means objective ``sum_i w_i ||x_i - c_{label(i)}||^2``.

    With ``labels=None`` each point is charged to its nearest centre, which is
    the centralized objective phi_c of MUFC Eq. (1). Passing ``labels`` charges
    each point to a given centre instead, as the federated objective phi_f of
    MUFC Eq. (2) does with the induced global clustering.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    centers : array-like of shape (n_clusters, n_features)
    labels : array-like of shape (n_samples,), default=None
    sample_weight : array-like of shape (n_samples,), default=None
    """
    X = check_array(X)
    C = check_array(centers, name="centers")
    if C.shape[1] != X.shape[1]:
        raise ValueError(f"centers have n_features={C.shape[1]}, X has n_features={X.shape[1]}.")
    w = check_sample_weight(sample_weight, X.shape[0])
    if labels is None:
        _, d2 = assign_to_nearest(X, C)
    else:
        lab = np.asarray(labels)
        if lab.shape != (X.shape[0],) or not np.issubdtype(lab.dtype, np.integer):
            raise ValueError(f"labels must be integers of shape ({X.shape[0]},), got {lab.dtype} {lab.shape}.")
        if lab.size and (lab.min() < 0 or lab.max() >= C.shape[0]):
            raise ValueError(f"labels must lie in [0, {C.shape[0]}), got [{lab.min()}, {lab.max()}].")
        d2 = np.einsum("ij,ij->i", X - C[lab], X - C[lab])
    return float(w @ d2)


def optimal_loss(X, n_clusters: int, *, n_init: int = 10, sample_weight=None, random_state: SeedLike = None) -> float:
    """Approximate the optimal K-means loss phi_c^* by the best of ``n_init`` K-means runs.

    This is how all the papers define the denominator of the loss ratio
    (MUFC footnote 1: "the best of several K-means++ runs").
    """
    from fedlib.cluster._lloyd import KMeans

    model = KMeans(n_clusters, n_init=n_init, random_state=random_state).fit(X, sample_weight=sample_weight)
    return model.inertia_


def loss_ratio(loss: float, reference: float) -> float:
    """Loss ratio ``phi / phi_c^*`` reported in MUFC Table 1 and SecFC Tables 1-3.

    A ratio of 1 means the clustering is as good as the (approximate) centralized
    optimum; larger is worse.
    """
    if not reference > 0:
        raise ValueError(f"reference loss must be > 0, got {reference}.")
    if loss < 0:
        raise ValueError(f"loss must be >= 0, got {loss}.")
    return float(loss) / float(reference)
