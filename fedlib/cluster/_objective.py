"""The K-means objective, nearest-centre or induced, and the loss ratio the papers report."""

from __future__ import annotations

import numpy as np

from fedlib._validation import check_array, check_sample_weight
from fedlib.cluster._distance import assign_to_nearest


def kmeans_objective(X, centers, *, labels=None, sample_weight=None) -> float:
    """K-means objective ``sum_i w_i ||x_i - c_{label(i)}||^2``.

    With ``labels=None`` each point is charged to its nearest centre, which is
    the centralized objective phi_c of MUFC Eq. (1). Passing ``labels`` charges
    each point to a given centre instead: the federated objective phi_f of
    MUFC Eq. (2) with the induced global clustering (MUFC Def. 3.1). Every
    induced loss in fedlib is computed here.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The points.
    centers : array-like of shape (n_clusters, n_features)
        The centres.
    labels : array-like of int of shape (n_samples,), default=None
        Centre charged for each point; ``None``: the nearest one.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; ones when ``None``.

    Returns
    -------
    float
        The objective, >= 0.

    Raises
    ------
    ValueError
        If ``centers`` and ``X`` differ in their number of features, or
        ``labels`` are not integers in ``[0, n_clusters)`` of shape (n_samples,).

    References
    ----------
    C. Pan, J. Sima, S. Prakash, V. Rana, O. Milenkovic. "Machine Unlearning of
    Federated Clusters", ICLR 2023, Sec. 3.

    Examples
    --------
    >>> from fedlib.cluster import kmeans_objective
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> kmeans_objective(X, [[0.0], [3.0]]), kmeans_objective(X, [[0.0], [3.0]], labels=[0, 1, 1])
    (1.0, 4.0)
    """
    X = check_array(X)
    C = check_array(centers, name="centers")
    if C.shape[1] != X.shape[1]:
        raise ValueError(f"centers have n_features={C.shape[1]}, X has n_features={X.shape[1]}.")
    w = check_sample_weight(sample_weight, X.shape[0])
    if labels is None:
        _, d2 = assign_to_nearest(X, C)
        return float(w @ d2)
    lab = np.asarray(labels)
    if lab.shape != (X.shape[0],) or not np.issubdtype(lab.dtype, np.integer):
        raise ValueError(f"labels must be integers of shape ({X.shape[0]},), got {lab.dtype} {lab.shape}.")
    if lab.size and (lab.min() < 0 or lab.max() >= C.shape[0]):
        raise ValueError(f"labels must lie in [0, {C.shape[0]}), got [{lab.min()}, {lab.max()}].")
    diff = X - C[lab]
    if sample_weight is None:
        return float(np.einsum("ij,ij->", diff, diff))
    return float(w @ np.einsum("ij,ij->i", diff, diff))


def loss_ratio(loss: float, reference: float) -> float:
    """Loss ratio ``phi / phi_c^*`` reported in MUFC Tables 1 and 2.

    A ratio of 1 means the clustering is as good as the (approximate) centralized
    optimum; larger is worse. MUFC approximates ``phi_c^*`` by the best of
    several K-means runs (MUFC footnote 1): ``KMeans(K, n_init=10).fit(X).inertia_``.

    Parameters
    ----------
    loss : float
        ``phi`` of the clustering, >= 0.
    reference : float
        ``phi_c^*``, > 0.

    Returns
    -------
    float
        ``loss / reference``.

    Raises
    ------
    ValueError
        If ``reference <= 0`` or ``loss < 0``.

    Examples
    --------
    >>> from fedlib.cluster import loss_ratio
    >>> loss_ratio(3.0, 2.0)
    1.5
    """
    if not reference > 0:
        raise ValueError(f"reference loss must be > 0, got {reference}.")
    if loss < 0:
        raise ValueError(f"loss must be >= 0, got {loss}.")
    return float(loss) / float(reference)
