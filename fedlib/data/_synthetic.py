"""Generated datasets: MUFC's Gaussian mixture and labelled stand-ins with published shapes (Purchase-100's too)."""

from __future__ import annotations

import numpy as np

from fedlib._random import check_random_state
from fedlib._typing import SeedLike
from fedlib._validation import check_scalar
from fedlib.data._dataset import Dataset
from fedlib.data._shapes import DATASET_SPECS, MUFC_GAUSSIAN, PURCHASE100


def scale_max_abs(X: np.ndarray) -> np.ndarray:
    """Divide the whole matrix by ``max |x_ij|`` so that every entry lies in [-1, 1].

    MUFC App. M.1 preprocesses all data so that ``|x_ij| < 1``. One global
    factor, rather than one per dimension, scales every distance alike: the
    geometry is kept and loss ratios do not change.

    Parameters
    ----------
    X : ndarray
        The data.

    Returns
    -------
    ndarray
        ``X / max|X|``; a copy of ``X`` if it is all zeros.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import scale_max_abs
    >>> scale_max_abs(np.array([[2.0, -4.0]])).tolist()
    [[0.5, -1.0]]
    """
    m = float(np.max(np.abs(X)))
    return X / m if m > 0 else X.copy()


def make_blobs(
    cluster_sizes,
    n_features: int,
    *,
    cluster_std: float = 0.15,
    center_box: tuple[float, float] = (0.0, 1.0),
    random_state: SeedLike = None,
    return_centers: bool = False,
):
    """Isotropic Gaussian clusters with given sizes: the one Gaussian-mixture generator of fedlib.

    Centres are drawn uniformly in ``center_box^d``, then cluster ``h`` gets
    ``cluster_sizes[h]`` points ``centre_h + N(0, cluster_std² I)``, and the rows
    are shuffled. MUFC's Gaussian data (:func:`make_mufc_gaussian`), SecFC's
    mixture (:func:`make_gaussian_mixture`), the labelled stand-ins and the
    tests all draw from here.

    Parameters
    ----------
    cluster_sizes : sequence of int
        Points per cluster, each >= 1.
    n_features : int
        ``d``.
    cluster_std : float, default=0.15
        Standard deviation of every coordinate.
    center_box : tuple of float, default=(0.0, 1.0)
        Bounds of the uniform distribution of each centre coordinate.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.
    return_centers : bool, default=False
        Also return the centres.

    Returns
    -------
    X : ndarray of shape (sum(cluster_sizes), n_features)
        The points, rows shuffled.
    y : ndarray of int64
        Generating cluster of each row.
    centers : ndarray of shape (len(cluster_sizes), n_features)
        Only with ``return_centers=True``.

    Raises
    ------
    ValueError
        If ``cluster_sizes`` are not positive integers or ``center_box`` is not ``low < high``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import make_blobs
    >>> X, y = make_blobs((3, 2), 4, random_state=0)
    >>> X.shape, np.bincount(y).tolist()
    ((5, 4), [3, 2])
    """
    sizes = np.asarray(cluster_sizes)
    if sizes.ndim != 1 or sizes.size < 1 or not np.issubdtype(sizes.dtype, np.integer) or np.any(sizes < 1):
        raise ValueError(f"cluster_sizes must be positive integers, got {cluster_sizes!r}.")
    n_features = check_scalar(n_features, "n_features", "int", min_val=1)
    cluster_std = check_scalar(cluster_std, "cluster_std", "real", min_val=0.0, include_min=False)
    low, high = (check_scalar(v, "center_box", "real") for v in center_box)
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError(f"center_box must satisfy low < high, got low={low}, high={high}.")
    rng = check_random_state(random_state)
    centers = rng.uniform(low, high, size=(sizes.size, n_features))
    y = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
    X = centers[y] + rng.normal(0.0, cluster_std, size=(y.size, n_features))
    order = rng.permutation(y.size)
    if return_centers:
        return X[order], y[order], centers
    return X[order], y[order]


def make_mufc_gaussian(
    *,
    n_clusters: int | None = None,
    n_per_cluster: int | None = None,
    n_features: int | None = None,
    variance: float | None = None,
    random_state: SeedLike = None,
) -> Dataset:
    """MUFC's synthetic Gaussian dataset (App. M.1).

    ``n_clusters`` spherical Gaussians with centres uniform in ``[0, 1]^d`` and
    variance 0.5 per coordinate (standard deviation ``sqrt(0.5)``), 3000 points
    each, rows shuffled, divided by ``max |x|``. The paper does not say whether
    0.5 is a variance or a standard deviation; with this reading the MUFC
    authors' code gives the loss ratios of MUFC Table 1 on the Gaussian data
    (MUFC, K-FED and DC-KM alike).

    Parameters
    ----------
    n_clusters : int or None
        K; ``None``: the paper's 10 (:data:`~fedlib.data.MUFC_GAUSSIAN`, as the others).
    n_per_cluster : int or None
        Points per Gaussian; ``None``: the paper's 3000.
    n_features : int or None
        d; ``None``: the paper's 10.
    variance : float or None
        Variance of every coordinate; ``None``: the paper's 0.5.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.

    Returns
    -------
    Dataset
        ``n_clusters * n_per_cluster`` points, ``y`` the generating Gaussian.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import make_mufc_gaussian
    >>> ds = make_mufc_gaussian(n_clusters=3, n_per_cluster=5, n_features=2, random_state=0)
    >>> ds.X.shape, float(np.abs(ds.X).max())
    ((15, 2), 1.0)
    """
    published = MUFC_GAUSSIAN
    n_clusters = published["n_clusters"] if n_clusters is None else n_clusters
    n_per_cluster = published["n_per_cluster"] if n_per_cluster is None else n_per_cluster
    n_features = published["n_features"] if n_features is None else n_features
    variance = published["variance"] if variance is None else variance
    X, y = make_blobs(
        (n_per_cluster,) * n_clusters,
        n_features,
        cluster_std=float(np.sqrt(variance)),
        random_state=random_state,
    )
    return Dataset(
        name="Gaussian",
        X=scale_max_abs(X),
        y=y,
        n_clusters=n_clusters,
        source=(
            f"generated: {n_clusters} Gaussians in [0,1]^{n_features}, variance {variance}, "
            f"{n_per_cluster} points each, scaled by max|x| (MUFC App. M.1)"
        ),
    )


def make_standin(name: str, *, random_state: SeedLike = None, cluster_std: float = 0.15) -> Dataset:
    """Stand-in for a MUFC dataset we cannot have: its published n, d, K and cluster sizes.

    A Gaussian mixture (:func:`make_blobs`) scaled by ``max |x|``. It matches the
    paper's shape and imbalance, not its geometry, so its loss ratios are not the
    paper's; chapters label it "(stand-in)" wherever it is shown.

    Parameters
    ----------
    name : str
        A key of :data:`~fedlib.data.DATASET_SPECS`, e.g. ``"TCGA"`` or ``"TMI"``.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.
    cluster_std : float, default=0.15
        Standard deviation of every coordinate, before scaling.

    Returns
    -------
    Dataset
        Named ``"<name> (stand-in)"``, with ``is_standin=True``.

    Raises
    ------
    KeyError
        If no shape is published for ``name``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import make_standin
    >>> ds = make_standin("TCGA", random_state=0)
    >>> ds.name, ds.X.shape, np.bincount(ds.y).tolist()
    ('TCGA (stand-in)', (1904, 57), [735, 503, 390, 276])
    """
    if name not in DATASET_SPECS:
        raise KeyError(f"no published shape for {name!r}; known: {sorted(DATASET_SPECS)}.")
    spec = DATASET_SPECS[name]
    sizes = spec.cluster_sizes
    if sizes is None:  # sizes not published: spread n as evenly as possible
        base, extra = divmod(spec.n_samples, spec.n_clusters)
        sizes = tuple(base + (i < extra) for i in range(spec.n_clusters))
    X, y = make_blobs(sizes, spec.n_features, cluster_std=cluster_std, random_state=random_state)
    return Dataset(
        name=f"{name} (stand-in)",
        X=scale_max_abs(X),
        y=y,
        n_clusters=spec.n_clusters,
        source=(
            f"stand-in: Gaussian mixture with the published n={spec.n_samples}, d={spec.n_features}, "
            f"K={spec.n_clusters} and cluster sizes {list(sizes)} ({spec.where}); not the real data"
        ),
        is_standin=True,
    )


def make_purchase_like(
    n_samples: int = 20000,
    n_features: int = 600,
    n_classes: int = 100,
    flip: float = 0.15,
    *,
    random_state: SeedLike = None,
) -> Dataset:
    """Stand-in for Purchase-100: noisy copies of random binary class prototypes.

    Purchase-100 (Shokri et al., IEEE S&P 2017) holds 197,324 purchase
    histories of Kaggle's "Acquire Valued Shoppers" challenge as 600 binary
    features, clustered into 100 classes (:data:`fedlib.data.PURCHASE100`);
    KNOT (Su & Li, INFOCOM 2023) trains an MLP on it. The data cannot be had
    here, so this draws ``n_classes`` prototypes with independent fair bits,
    gives the classes sizes that differ by at most one, and makes each sample
    its class's prototype with every bit flipped independently with
    probability ``flip``; the rows are shuffled. It has the published feature
    count, class count and binary features, not the real data's structure:
    the nearest prototype (the Bayes classifier) separates the classes almost
    perfectly at the default ``flip`` (two prototypes differ in about half
    their bits), so accuracies are not the paper's.

    Parameters
    ----------
    n_samples : int, default=20000
        Rows, at least ``n_classes`` (the real dataset has 197,324).
    n_features : int, default=600
        Binary features.
    n_classes : int, default=100
        Classes, at least 2.
    flip : float, default=0.15
        Probability that a bit differs from the prototype's, in ``[0, 0.5]``
        (at 0.5 the features carry no information about the class).
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.

    Returns
    -------
    Dataset
        Named ``"Purchase-100 (stand-in)"`` with ``is_standin=True``; ``X``
        float64 in {0, 1}, ``y`` int64 classes, ``n_clusters=n_classes``;
        ``extras["prototypes"]``: the ``(n_classes, n_features)`` bool prototypes.

    Raises
    ------
    TypeError, ValueError
        For an argument of the wrong type, or out of the ranges above.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import make_purchase_like
    >>> ds = make_purchase_like(1000, random_state=0)
    >>> ds.name, ds.X.shape, np.unique(ds.X).tolist(), np.bincount(ds.y).tolist() == [10] * 100
    ('Purchase-100 (stand-in)', (1000, 600), [0.0, 1.0], True)
    """
    n_classes = check_scalar(n_classes, "n_classes", "int", min_val=2)
    n_samples = check_scalar(n_samples, "n_samples", "int", min_val=n_classes)
    n_features = check_scalar(n_features, "n_features", "int", min_val=1)
    flip = check_scalar(flip, "flip", "real", min_val=0.0, max_val=0.5)
    rng = check_random_state(random_state)
    prototypes = rng.random((n_classes, n_features)) < 0.5
    base, extra = divmod(n_samples, n_classes)
    sizes = np.full(n_classes, base, dtype=np.int64)
    sizes[:extra] += 1
    y = rng.permutation(np.repeat(np.arange(n_classes, dtype=np.int64), sizes))
    X = (prototypes[y] ^ (rng.random((n_samples, n_features)) < flip)).astype(np.float64)
    published = PURCHASE100
    sizes_text = f"{base}" if extra == 0 else f"{base}-{base + 1}"
    return Dataset(
        name="Purchase-100 (stand-in)",
        X=X,
        y=y,
        n_clusters=n_classes,
        source=(
            f"stand-in: {n_samples} noisy copies of {n_classes} random binary prototypes over {n_features} features, "
            f"each bit flipped with probability {flip}, {sizes_text} rows per class. Purchase-100 "
            f"(Shokri et al., IEEE S&P 2017) has {published['n_samples']:,} records of {published['n_features']} "
            f"binary features (Kaggle's 'Acquire Valued Shoppers' purchase histories) clustered into "
            f"{published['n_classes']} classes; not the real data"
        ),
        is_standin=True,
        extras={"prototypes": prototypes},
    )
