"""Clustering accuracy: the fraction of points labelled correctly under the best matching of labels."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment


def clustering_accuracy(labels_true, labels_pred) -> float:
    """Fraction of points labelled correctly after the best one-to-one matching of labels.

    Cluster indices are arbitrary, so predicted label ``a`` is matched to true
    label ``b`` by the assignment that maximises the number of agreements (the
    Hungarian method on the confusion matrix). A predicted label left
    unmatched (more predicted than true labels, or vice versa) counts as wrong.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Ground-truth labels; any hashable values that numpy can sort.
    labels_pred : array-like of shape (n_samples,)
        Predicted labels. They need not be ``0..k-1`` nor as many as the true
        labels; ``-1`` (e.g. an unassigned point) is treated as an ordinary label.

    Returns
    -------
    float
        The accuracy ``max_pi (1/n) sum_i [pi(labels_pred[i]) == labels_true[i]]`` over
        injective matchings ``pi``, a value in ``[0, 1]``.

    Raises
    ------
    ValueError
        If the two label arrays differ in length or are empty.

    Notes
    -----
    Cost O(n + k_true·k_pred·min(k_true, k_pred)). This is the accuracy that
    SecFC reports in all its tables (SecFC Sec. 5: the Hungarian method finds
    the best permutation of the labels; Tables 1-3).
    Used in :doc:`/notebooks/secfc/secure_clustering`.

    References
    ----------
    S. Li, S. Hou, B. Buyukates, S. Avestimehr. "Secure Federated Clustering", 2022.

    Examples
    --------
    >>> from fedlib.cluster import clustering_accuracy
    >>> clustering_accuracy([0, 0, 1, 1, 2], [5, 5, 3, 3, 3])
    0.8
    """
    t = np.asarray(labels_true).ravel()
    p = np.asarray(labels_pred).ravel()
    if t.shape != p.shape:
        raise ValueError(f"labels_true and labels_pred must have the same length, got {t.size} and {p.size}.")
    if t.size == 0:
        raise ValueError("labels_true and labels_pred must hold at least one label.")
    t_values, t_idx = np.unique(t, return_inverse=True)
    p_values, p_idx = np.unique(p, return_inverse=True)
    confusion = np.zeros((p_values.size, t_values.size), dtype=np.int64)
    np.add.at(confusion, (p_idx.ravel(), t_idx.ravel()), 1)
    rows, cols = linear_sum_assignment(-confusion)
    return float(confusion[rows, cols].sum()) / float(t.size)
