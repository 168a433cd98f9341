"""SecFC's datasets: the Gaussian mixture of §5.1 and rotated MNIST digits of §5.2."""

from __future__ import annotations

import math

import numpy as np

from fedlib._random import check_random_state
from fedlib._typing import SeedLike
from fedlib._validation import check_scalar
from fedlib.data._dataset import Dataset
from fedlib.data._synthetic import make_blobs

_CONSTRUCTIONS = ("disjoint", "all_rotations")


def make_gaussian_mixture(
    n_samples: int,
    n_features: int = 100,
    n_clusters: int = 4,
    *,
    cluster_std: float = 1.0,
    center_box: tuple[float, float] = (-10.0, 10.0),
    random_state: SeedLike = None,
) -> Dataset:
    """SecFC's synthetic data: k equal-weight isotropic Gaussians (SecFC §5.1).

    The density is ``p(x) = sum_h (1/k) N(mu_h, sigma^2 I)``. The paper says only
    that the centres are "randomly chosen"; as in
    ``sklearn.datasets.make_blobs(centers=k, center_box=(-10, 10))`` they are
    drawn uniformly in the box ``center_box^d``. Component sizes are equal,
    ``n_samples`` split as evenly as possible (the first ``n_samples mod k``
    components get one extra point), and the rows are shuffled.

    Parameters
    ----------
    n_samples : int
        m, the number of points (SecFC: 10000 for k=4, 16384 for k=16).
    n_features : int, default=100
        d (SecFC §5.1: 100).
    n_clusters : int, default=4
        k, the number of components (SecFC: 4 or 16).
    cluster_std : float, default=1.0
        sigma, the standard deviation of every coordinate (SecFC: 1 or 20).
    center_box : tuple of float, default=(-10.0, 10.0)
        Bounds ``(low, high)`` of the uniform distribution of each centre coordinate.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.

    Returns
    -------
    Dataset
        ``y`` is the generating component of each point, the primary label.
        ``extras["nearest_center_labels"]`` is the index of the closest true
        centre, the label the paper's text describes, and ``extras["centers"]``
        the centres, of shape (n_clusters, n_features).

    Raises
    ------
    ValueError
        If ``n_samples < n_clusters`` or ``cluster_std`` is not positive and finite.

    Notes
    -----
    Cost O(m·k·d). With sigma=20 and d=100 the components overlap, so the two
    labelings differ on a few percent of the points. The generating component
    is the primary label because centralized Lloyd's accuracy measured against
    it comes close to the paper's Table 2 (sigma=20), while measured against the
    closest centre it is several points higher for k=4 and about ten for k=16.
    Used in :doc:`/notebooks/secfc/secure_clustering`.

    References
    ----------
    S. Li, S. Hou, B. Buyukates, S. Avestimehr. "Secure Federated Clustering", 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import make_gaussian_mixture
    >>> ds = make_gaussian_mixture(1000, 20, 4, random_state=0)
    >>> ds.X.shape, np.bincount(ds.y).tolist()
    ((1000, 20), [250, 250, 250, 250])
    """
    n_samples = check_scalar(n_samples, "n_samples", "int", min_val=1)
    n_features = check_scalar(n_features, "n_features", "int", min_val=1)
    n_clusters = check_scalar(n_clusters, "n_clusters", "int", min_val=1)
    if n_samples < n_clusters:
        raise ValueError(f"n_samples={n_samples} should be >= n_clusters={n_clusters} (every component non-empty).")
    sigma = check_scalar(cluster_std, "cluster_std", "real", min_val=0.0, include_min=False)
    if not np.isfinite(sigma):
        raise ValueError(f"cluster_std={cluster_std} should be finite and > 0.")
    low, high = (float(v) for v in center_box)
    base, extra = divmod(n_samples, n_clusters)
    sizes = base + (np.arange(n_clusters) < extra)
    X, y, centers = make_blobs(
        sizes, n_features, cluster_std=sigma, center_box=(low, high), random_state=random_state, return_centers=True
    )
    # SecFC §5.1: "the ground truth label ... is the index of the closest center"
    # (one pass per centre, by differences rather than the expanded form, so that near-ties are decided exactly)
    d2 = np.empty((n_samples, n_clusters))
    for h in range(n_clusters):
        diff = X - centers[h]
        d2[:, h] = np.einsum("ij,ij->i", diff, diff)
    nearest = np.argmin(d2, axis=1).astype(np.int64)
    return Dataset(
        name=f"Gaussian mixture (σ={sigma:g}, k={n_clusters})",
        X=X,
        y=y,
        n_clusters=n_clusters,
        source=(
            f"generated: {n_clusters} equal-weight isotropic Gaussians in R^{n_features}, sigma={sigma:g}, "
            f"centres uniform in [{low:g}, {high:g}]^{n_features}, m={n_samples}, rows shuffled (SecFC §5.1); "
            "y = generating component, extras['nearest_center_labels'] = closest true centre"
        ),
        extras={"nearest_center_labels": nearest, "centers": centers},
    )


def _square_images(dataset: Dataset) -> np.ndarray:
    """The dataset's images as (n, s, s) floats in the scale of X: ``extras['images']`` or X reshaped."""
    images = dataset.extras.get("images")
    if images is None:
        side = math.isqrt(dataset.n_features)
        if side * side != dataset.n_features:
            raise ValueError(
                f"dataset has no extras['images'] and n_features={dataset.n_features} is not a square side*side."
            )
        return np.asarray(dataset.X, dtype=np.float64).reshape(-1, side, side)
    images = np.asarray(images)
    if images.ndim != 3 or images.shape[1] != images.shape[2] or images.shape[0] != dataset.n_samples:
        raise ValueError(
            f"extras['images'] must have shape (n_samples={dataset.n_samples}, side, side), got {images.shape}."
        )
    if images.dtype == np.uint8:
        return images.astype(np.float64) / 255.0
    return images.astype(np.float64)


def rotated_digit(
    dataset: Dataset,
    digit: int,
    *,
    construction: str = "disjoint",
    random_state: SeedLike = None,
) -> Dataset:
    """SecFC's rotated-MNIST data: one digit's images at 0/90/180/270 degrees, k=4 clusters (SecFC §5.2).

    "For the set of images in MNIST labelled by a certain digit, we rotate the
    images by a degree of 0, 90, 180, 270 respectively to construct a dataset
    with k = 4 clusters" (SecFC §5.2, after Ghosh et al.'s IFCA). The cluster
    label is the rotation. The paper does not say whether each image is used
    once or four times, so both readings are offered.

    Parameters
    ----------
    dataset : Dataset
        MNIST-like: ``y`` holds digit labels and ``extras["images"]`` the images,
        of shape (n_samples, side, side); uint8 images are scaled to [0, 1] like
        the X of ``load("mnist_test")``. Without ``extras["images"]`` the rows of
        X are reshaped to square images (e.g. sklearn's 8×8 digits).
    digit : int
        The digit whose images are used (SecFC: 2 and 3).
    construction : {"disjoint", "all_rotations"}, default="disjoint"
        "disjoint" (primary; an assumption): shuffle the digit's images and split
        them into 4 near-equal disjoint groups, group r rotated by r·90°.
        "all_rotations": every image at all 4 rotations (4× as many rows).
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.
        Only "disjoint" draws; "all_rotations" keeps the image order.

    Returns
    -------
    Dataset
        X of shape (n, side*side), y the rotation index r (angle r·90°
        counter-clockwise, ``np.rot90(image, r)``), ``n_clusters=4``,
        ``is_standin`` inherited from ``dataset``. ``extras["source_index"]``
        gives each row's index in ``dataset``.

    Raises
    ------
    ValueError
        For an unknown ``construction``, a digit with no images, or images
        that are not square.

    Notes
    -----
    Used for the Table 3 runs of
    :doc:`/notebooks/secfc/secure_clustering`.

    References
    ----------
    S. Li, S. Hou, B. Buyukates, S. Avestimehr. "Secure Federated Clustering", 2022.

    Examples
    --------
    Sixteen 2×2 "images" of one digit, in four groups of four, group r rotated by r·90°:

    >>> import numpy as np
    >>> from fedlib.data import Dataset, rotated_digit
    >>> images = np.tile(np.array([[1.0, 0.0], [0.0, 0.0]]), (16, 1, 1))
    >>> digits = Dataset("toy", images.reshape(16, 4), np.zeros(16, dtype=int), 1, "hand-made")
    >>> rotated = rotated_digit(digits, 0, random_state=0)
    >>> np.bincount(rotated.y).tolist(), rotated.X[rotated.y == 1][0].tolist()
    ([4, 4, 4, 4], [0.0, 0.0, 1.0, 0.0])
    """
    if construction not in _CONSTRUCTIONS:
        raise ValueError(f"construction={construction!r} should be one of {list(_CONSTRUCTIONS)}.")
    labels = np.asarray(dataset.y)
    present = np.unique(labels)
    if digit not in present:
        raise ValueError(f"digit={digit} has no images in {dataset.name!r}; labels present: {present.tolist()}.")
    images = _square_images(dataset)
    index = np.flatnonzero(labels == digit)
    if construction == "disjoint":
        rng = check_random_state(random_state)
        index = rng.permutation(index)
        groups = np.array_split(np.arange(index.size), 4)
        rotation = np.concatenate([np.full(g.size, r, dtype=np.int64) for r, g in enumerate(groups)])
    else:
        rotation = np.repeat(np.arange(4, dtype=np.int64), index.size)
        index = np.tile(index, 4)
    chosen = images[index]
    rotated = np.empty_like(chosen)
    for r in range(4):  # four whole-array rotations, not a loop over images
        mask = rotation == r
        rotated[mask] = np.rot90(chosen[mask], k=r, axes=(1, 2))
    side = images.shape[1]
    return Dataset(
        name=f"Rotated MNIST digit {digit}" + (" (stand-in)" if dataset.is_standin else ""),
        X=rotated.reshape(index.size, side * side),
        y=rotation,
        n_clusters=4,
        source=(
            f"{dataset.name}, images of digit {digit} rotated by 0/90/180/270 degrees, construction "
            f"{construction!r} ("
            + (
                "4 random disjoint groups, group r rotated by r*90"
                if construction == "disjoint"
                else "every image at all 4 rotations"
            )
            + "; SecFC §5.2); y = rotation index"
        ),
        is_standin=dataset.is_standin,
        extras={"source_index": index},
    )
