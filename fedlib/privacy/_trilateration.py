"""Trilateration: what SecFC's server can rebuild from the seed distances it decodes by design.

SecFC (Li, Hou, Buyukates, Avestimehr 2022) protects the data with Lagrange
coded computing (LCC), and the proof of its Theorem 1 (Sec. 4.2) states what
is left for the server: it "is only able to decode the distances between the
data points and the current cluster centers, but not their individual values".
With the private K-means++ initialisation every seed ``c`` is queried as the
singleton cluster ``{c}``, so the server decodes, in the clear, the exact
squared distances ``||x̄_i − x̄_c||²`` from every quantized point ``x̄_i`` to
each of the ``k`` seeds ``x̄_c``. Those seeds are points of the data set, and
the server knows their indices.

That is enough to rebuild the data set. Classical multidimensional scaling
places the seeds from their pairwise distances (which are entries of the same
matrix), and every other point is then located by multilateration from its
distances to the seeds. When ``k ≥ d + 1`` seeds are in general position the
reconstruction is exact up to a rigid motion (rotation or reflection, plus
translation), which distances can never reveal. With fewer seeds, the server
still learns each point's projection onto the seeds' affine hull and its
distance from that hull.

This is not an attack on LCC: no share is touched, no colluding client is
needed, and Theorem 1 is not contradicted. It uses only what SecFC reveals
*by design*, and it shows that "not their individual values" holds only up to
an isometry, which leaves the shape of the data, every pairwise distance and
every cluster's geometry in the open. The book's privacy section quantifies it.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.linalg import orthogonal_procrustes

from fedlib._typing import NDArrayFloat
from fedlib._validation import check_array

__all__ = ["align", "reconstruct_from_anchor_distances"]

# Anchor-to-anchor entries that should be 0 (an anchor's distance to itself) may
# carry this much noise, relative to the largest anchor-to-anchor distance, before
# we conclude that the columns do not belong to the rows ``anchors``.
_DIAGONAL_RTOL = 1e-6


def reconstruct_from_anchor_distances(sq_distances, anchors, n_dims: int) -> NDArrayFloat:
    """Coordinates of every point, up to a rigid motion, from squared distances to some of the points.

    Parameters
    ----------
    sq_distances : array-like of shape (n_samples, n_anchors)
        ``sq_distances[i, j] = ||x_i − x_{anchors[j]}||²``: squared distances
        from every point to each anchor. In SecFC these are the seed columns
        the server decodes during the private K-means++ initialisation
        (``d'_{i,h}`` for the singleton cluster ``S_h = {seed_h}``).
    anchors : array-like of int of shape (n_anchors,)
        Row index of each anchor: anchor ``j`` is the point ``anchors[j]``, so
        ``sq_distances[anchors]`` is the anchor-to-anchor distance matrix.
        In SecFC, ``model.run_.seeds``.
    n_dims : int
        ``d``, the dimension of the space to reconstruct in.

    Returns
    -------
    ndarray of shape (n_samples, n_dims)
        ``X_hat``, the points, in the frame of the anchors' classical MDS embedding
        (centred at the anchors' centroid). Use :func:`align` to compare with
        the truth.

    Raises
    ------
    TypeError
        If ``n_dims`` is not an int or ``anchors`` is not a 1-D integer array.
    ValueError
        If ``n_anchors < n_dims + 1``; if the anchors are degenerate (their
        centred coordinates have rank below ``n_dims``, e.g. three collinear
        anchors in the plane); or if the inputs are inconsistent (negative
        distances, anchors out of range or repeated, or an anchor at a nonzero
        distance from itself).

    See Also
    --------
    align : The best rigid motion onto a reference, and the RMS error left.

    Notes
    -----
    1. *Place the anchors* by classical MDS (Torgerson 1952): double-centre
       the ``a × a`` anchor matrix, ``B = −½ J D J`` with ``J = I − 11ᵀ/a``,
       and take ``P = V_d Λ_d^{1/2}`` from the top ``d`` eigenpairs of ``B``.
    2. *Locate every point* by linearised multilateration. Subtracting the
       equation ``||x − p_0||² = d_0²`` from ``||x − p_j||² = d_j²`` cancels
       ``||x||²`` and leaves the linear system
       ``2 (p_j − p_0) · x = ||p_j||² − ||p_0||² − d_j² + d_0²``,
       ``j = 1, …, a−1``. Its matrix is the same for every point, so all
       points are solved by one least-squares call with ``n_samples``
       right-hand sides.

    Exact Euclidean distances give ``B ⪰ 0`` with rank at most ``d``. The
    anchors count as degenerate when the ``d``-th eigenvalue of ``B`` is not
    above both the rounding level and the size of its most negative
    eigenvalue (a measure of how far the distances are from Euclidean), since
    such a direction cannot be told apart from noise.

    Quantized data, as in SecFC, are no obstacle: the decoded distances are
    exact for ``x̄ = floor(λx)``, so ``x̄`` is rebuilt exactly, and ``x̄/λ`` is
    within ``√d/λ`` of ``x``.

    Cost ``O(a³ + n_samples · a · d)``. Used in :doc:`/notebooks/secfc/secure_clustering`.

    References
    ----------
    .. [1] S. Li, S. Hou, B. Buyukates and S. Avestimehr, "Secure Federated
       Clustering", 2022, Sec. 4.2, proof of Theorem 1.
    .. [2] W. S. Torgerson, "Multidimensional scaling: I. Theory and method",
       Psychometrika 17, 1952.

    Examples
    --------
    >>> from fedlib.privacy import align, reconstruct_from_anchor_distances
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3))
    >>> anchors = np.array([0, 1, 2, 3])
    >>> D = ((X[:, None, :] - X[None, anchors, :]) ** 2).sum(axis=-1)
    >>> X_hat = reconstruct_from_anchor_distances(D, anchors, n_dims=3)
    >>> X_hat.shape
    (50, 3)
    >>> _, rms = align(X, X_hat)
    >>> bool(rms < 1e-9)
    True
    """
    D = check_array(sq_distances, name="sq_distances")
    n_samples, n_anchors = D.shape
    if not isinstance(n_dims, numbers.Integral) or isinstance(n_dims, bool):
        raise TypeError(f"n_dims must be an int, not {type(n_dims).__name__}.")
    if n_dims < 1:
        raise ValueError(f"n_dims={n_dims} should be >= 1.")
    anchors = np.asarray(anchors)
    if anchors.ndim != 1 or not (anchors.size == 0 or np.issubdtype(anchors.dtype, np.integer)):
        raise TypeError(
            f"anchors must be a 1-D array of row indices, got dtype {anchors.dtype} and shape {anchors.shape}."
        )
    anchors = anchors.astype(np.int64)
    if anchors.size != n_anchors:
        raise ValueError(
            f"sq_distances has n_anchors={n_anchors} columns but anchors names {anchors.size} rows; "
            "column j must hold the distances to point anchors[j]."
        )
    if n_anchors < n_dims + 1:
        raise ValueError(
            f"Trilateration in d dimensions needs n_anchors >= n_dims + 1 anchors in general position; "
            f"got n_anchors={n_anchors}, n_dims={n_dims}, so need n_anchors >= {n_dims + 1}."
        )
    if np.any(anchors < 0) or np.any(anchors >= n_samples):
        raise ValueError(f"anchors must satisfy 0 <= anchors[j] < n_samples={n_samples}, got {anchors.tolist()}.")
    if np.unique(anchors).size != n_anchors:
        raise ValueError(f"anchors must be distinct rows, got {anchors.tolist()}.")
    if np.any(D < 0):
        raise ValueError(f"sq_distances must be >= 0 (squared distances), got minimum {D.min():.4g}.")

    # Anchor-to-anchor matrix, symmetrised so that noise cannot make eigh see an asymmetric input.
    D_aa = D[anchors]
    D_aa = 0.5 * (D_aa + D_aa.T)
    scale = float(D_aa.max())
    if np.any(np.abs(np.diag(D_aa)) > _DIAGONAL_RTOL * scale):
        raise ValueError(
            "sq_distances[anchors[j], j] must be 0 (anchor j is the point anchors[j]); "
            f"got diagonal {np.diag(D_aa).tolist()}."
        )

    # Classical MDS (Torgerson 1952): B = -1/2 J D J, coordinates from the top n_dims eigenpairs.
    J = np.eye(n_anchors) - 1.0 / n_anchors
    B = -0.5 * J @ D_aa @ J
    eigenvalues, eigenvectors = np.linalg.eigh(B)  # ascending
    eigenvalues, eigenvectors = eigenvalues[::-1], eigenvectors[:, ::-1]
    # A direction is real only if it beats rounding and the non-Euclidean part (negative eigenvalues).
    tol = max(100.0 * n_anchors * np.finfo(np.float64).eps * max(scale, np.finfo(np.float64).tiny), -eigenvalues[-1])
    rank = int(np.count_nonzero(eigenvalues > tol))
    if rank < n_dims:
        raise ValueError(
            f"Degenerate anchors: their centred coordinates have rank {rank} < n_dims={n_dims}, "
            f"so they do not affinely span {n_dims} dimensions (need n_anchors >= n_dims + 1 anchors in general "
            f"position; eigenvalues of the centred Gram matrix {np.round(eigenvalues[: n_dims + 1], 6).tolist()}, "
            f"noise level {tol:.3g})."
        )
    P = eigenvectors[:, :n_dims] * np.sqrt(eigenvalues[:n_dims])  # (a, d), centred at the anchors' centroid

    # Linearised multilateration: 2 (p_j - p_0) . x = |p_j|^2 - |p_0|^2 - d_j^2 + d_0^2, j = 1..a-1,
    # one matrix for all points, so one lstsq with n_samples right-hand sides.
    norms = np.einsum("ij,ij->i", P, P)
    A = 2.0 * (P[1:] - P[0])  # (a-1, d)
    rhs = (norms[1:] - norms[0])[:, None] - D[:, 1:].T + D[:, 0][None, :]  # (a-1, n_samples)
    X_hat, *_ = np.linalg.lstsq(A, rhs, rcond=None)
    return np.ascontiguousarray(X_hat.T)


def align(reference, estimate) -> tuple[NDArrayFloat, float]:
    """The best rigid motion of ``estimate`` onto ``reference``, and the RMS error that remains.

    Parameters
    ----------
    reference : array-like of shape (n_samples, n_features)
        The true points.
    estimate : array-like of shape (n_samples, n_features)
        Points known only up to rotation, reflection and translation, row for
        row the same points as ``reference``.

    Returns
    -------
    aligned : ndarray of shape (n_samples, n_features)
        ``(estimate − mean(estimate)) R + mean(reference)`` with the
        orthogonal ``R`` (reflections allowed) that minimises the squared error.
    rms : float
        ``sqrt(mean_i ||aligned_i − reference_i||²)``, the root mean squared
        Euclidean distance per point.

    Raises
    ------
    ValueError
        If the two arrays differ in shape.

    Notes
    -----
    Centring both sets gives the optimal translation; the optimal orthogonal
    map of the centred sets is the orthogonal Procrustes solution
    (:func:`scipy.linalg.orthogonal_procrustes`). No scaling is fitted: the
    distances fix the scale. Used in :doc:`/notebooks/secfc/secure_clustering`.

    Examples
    --------
    >>> from fedlib.privacy import align
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    >>> moved = X @ np.array([[0.0, 1.0], [1.0, 0.0]]) + 5.0  # a reflection, then a shift
    >>> aligned, rms = align(X, moved)
    >>> bool(np.allclose(aligned, X)), bool(rms < 1e-12)
    (True, True)
    """
    reference = check_array(reference, name="reference")
    estimate = check_array(estimate, name="estimate")
    if reference.shape != estimate.shape:
        raise ValueError(
            f"reference and estimate must have the same shape, got {reference.shape} and {estimate.shape}."
        )
    ref_mean = reference.mean(axis=0)
    est_centred = estimate - estimate.mean(axis=0)
    R, _ = orthogonal_procrustes(est_centred, reference - ref_mean)
    aligned = est_centred @ R + ref_mean
    rms = float(np.sqrt(np.mean(np.einsum("ij,ij->i", aligned - reference, aligned - reference))))
    return aligned, rms
