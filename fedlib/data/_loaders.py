"""Parsers for the registered real datasets, each from its original file format."""

from __future__ import annotations

import gzip
import math
import pickle
import struct
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from fedlib._optional import import_optional
from fedlib._random import check_random_state
from fedlib._typing import SeedLike
from fedlib._validation import check_scalar
from fedlib.data._dataset import Dataset
from fedlib.data._registry import fetch, registry, verify
from fedlib.data._shapes import STANDIN_SHAPES
from fedlib.data._synthetic import make_blobs, make_mufc_gaussian, make_standin, scale_max_abs
from fedlib.exceptions import DataUnavailableError


class _NumpyOnlyUnpickler(pickle.Unpickler):
    """Unpickler that rebuilds numpy arrays and refuses every other global.

    ``pickle.load`` can run arbitrary code; the Celltype file needs only these
    three globals, so nothing else is allowed.
    """

    def find_class(self, module: str, name: str):
        if (module, name) in {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct")}:
            from numpy._core.multiarray import _reconstruct

            return _reconstruct
        if (module, name) == ("numpy", "ndarray"):
            return np.ndarray
        if (module, name) == ("numpy", "dtype"):
            return np.dtype
        raise pickle.UnpicklingError(f"refused to load global {module}.{name}: only numpy arrays are allowed.")


def _load_celltype() -> Dataset:
    path = fetch("celltype_processed.pkl")
    with open(path, "rb") as fh:
        raw = _NumpyOnlyUnpickler(fh).load()
    X = np.asarray(raw["full_data"], dtype=np.float64)
    clients = [np.asarray(raw[f"client_{i}"], dtype=np.float64) for i in range(100) if f"client_{i}" in raw]
    return Dataset(
        name="Celltype",
        X=X,
        y=np.asarray(raw["true_label"]).astype(np.int64).ravel(),
        n_clusters=int(raw["num_clusters"]),
        source="celltype_processed.pkl, MUFC authors' repository (Han et al. 2018 via Ginart et al. 2019)",
        extras={"authors_clients": clients, "authors_kmeans_loss": float(raw["kmeans_loss"])},
    )


def _load_covtype() -> Dataset:
    path = fetch("covtype_kaggle_train.csv")
    with open(path) as fh:
        header = fh.readline().strip().split(",")
    table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64)
    keep = [j for j, col in enumerate(header) if col not in ("Id", "Cover_Type")]
    features = table[:, keep]
    constant = np.ptp(features, axis=0) == 0
    dropped = [header[keep[j]] for j in np.flatnonzero(constant)]
    if dropped != ["Soil_Type7", "Soil_Type15"]:
        raise ValueError(f"covtype: expected constant columns Soil_Type7 and Soil_Type15, found {dropped}.")
    features = features[:, ~constant]
    lo, hi = features.min(axis=0), features.max(axis=0)
    X = (features - lo) / (hi - lo)
    return Dataset(
        name="Covtype",
        X=X,
        y=table[:, header.index("Cover_Type")].astype(np.int64),
        n_clusters=7,
        source="Kaggle Forest Cover Type training set (UCI Covertype subset); MUFC variant: d=52, min-max scaled",
        extras={"feature_names": [header[keep[j]] for j in np.flatnonzero(~constant)]},
    )


def _read_idx(path: Path, magic: int) -> np.ndarray:
    data = gzip.decompress(path.read_bytes())
    (found,) = struct.unpack(">i", data[:4])
    if found != magic:
        raise ValueError(f"{path.name}: IDX magic number {found}, expected {magic}.")
    ndim = magic & 0xFF
    shape = struct.unpack(f">{ndim}i", data[4 : 4 + 4 * ndim])
    arr = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if arr.size != int(np.prod(shape)):
        raise ValueError(f"{path.name}: {arr.size} bytes of data for shape {shape}.")
    return arr.reshape(shape)


def _load_mnist_test() -> Dataset:
    images = _read_idx(fetch("t10k-images-idx3-ubyte.gz"), 2051)
    labels = _read_idx(fetch("t10k-labels-idx1-ubyte.gz"), 2049)
    return Dataset(
        name="MNIST test",
        X=images.reshape(len(images), -1).astype(np.float64) / 255.0,
        y=labels.astype(np.int64),
        n_clusters=10,
        source="MNIST test set (LeCun et al. 1998), IDX files; pixels scaled to [0, 1]",
        extras={"images": images},
    )


#: Where Debian's package ``dataset-fashion-mnist`` installs the Fashion-MNIST files: the registered bytes.
_FASHION_SYSTEM_DIR = Path("/usr/share/datasets/fashion-mnist")

#: Fashion-MNIST's class names, by label (Xiao et al. 2017).
FASHION_MNIST_CLASSES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)


def _fetch_fashion(part: str, kind: str) -> Path:
    """A verified Fashion-MNIST file: mirror or cache (:func:`fetch`), else Debian's installed copy.

    The registered gzip files are Debian's recompression (package
    ``dataset-fashion-mnist``), so a Debian machine with that package installed
    has exactly these bytes; they are checked against the same SHA-256.
    """
    file = f"fashion-{part}-{kind}-ubyte.gz"
    try:
        return fetch(file)
    except DataUnavailableError as exc:
        system = _FASHION_SYSTEM_DIR / f"{part}-{kind}-ubyte.gz"
        if system.is_file():
            return verify(system, registry()[file])
        raise DataUnavailableError(
            f"{exc} Also tried Debian's package dataset-fashion-mnist: {system} (missing; "
            "`apt-get install dataset-fashion-mnist` provides it)."
        ) from None


def _load_fashion_mnist(part: str) -> Dataset:
    images = _read_idx(_fetch_fashion(part, "images-idx3"), 2051)
    labels = _read_idx(_fetch_fashion(part, "labels-idx1"), 2049)
    if len(images) != len(labels):
        raise ValueError(f"Fashion-MNIST {part}: {len(images)} images but {len(labels)} labels.")
    title = "Fashion-MNIST train" if part == "train" else "Fashion-MNIST test"
    return Dataset(
        name=title,
        X=images.reshape(len(images), -1).astype(np.float64) / 255.0,
        y=labels.astype(np.int64),
        n_clusters=10,
        source=f"{title} set (Xiao, Rasul & Vollgraf 2017; MIT), IDX files; pixels scaled to [0, 1]",
        extras={"images": images, "class_names": FASHION_MNIST_CLASSES},
    )


def _load_femnist_sample() -> Dataset:
    with np.load(fetch("femnist_leaf_niid005_20shards.npz"), allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    images = arrays["X"]
    return Dataset(
        name="FEMNIST (LEAF sample)",
        X=images.reshape(len(images), -1).astype(np.float64) / 255.0,
        y=arrays["y"].astype(np.int64),
        n_clusters=62,
        source="LEAF FEMNIST small non-iid sample (Caldas et al. 2018), 20 of 35 shards; LEAF pixel values",
        extras={
            "images": images,
            "user_index": arrays["user_index"].astype(np.int64),
            "user_ids": arrays["user_ids"],
            "is_test": arrays["is_test"].astype(bool),
        },
    )


def _load_tinyshakespeare() -> Dataset:
    text = fetch("tinyshakespeare.txt").read_text(encoding="utf-8")
    vocab = sorted(set(text))
    lookup = np.zeros(max(map(ord, vocab)) + 1, dtype=np.int64)
    lookup[[ord(c) for c in vocab]] = np.arange(len(vocab))
    codes = lookup[np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)]
    return Dataset(
        name="tiny-shakespeare",
        X=codes[:-1, None].astype(np.float64),
        y=codes[1:],
        n_clusters=len(vocab),
        source="tiny-shakespeare (Karpathy, char-rnn): X is the character code, y the next character's code",
        extras={"text": text, "vocab": vocab, "codes": codes},
    )


def _load_postures_partial() -> Dataset:
    pd = import_optional("pandas", "data", feature="load('postures_partial')")
    table = pd.read_csv(fetch("postures_partial.csv"), na_values="?")
    markers = [f"{axis}{m}" for m in range(5) for axis in "XYZ"]
    complete = table[markers].notna().all(axis=1).to_numpy()
    return Dataset(
        name="Postures (partial)",
        X=table.loc[complete, markers].to_numpy(dtype=np.float64),
        y=table.loc[complete, "Class"].to_numpy(dtype=np.int64),
        n_clusters=3,  # the three postures present (the full dataset has 5)
        source=(
            "UCI MoCap Hand Postures, classes 1-3 of 5 and users 0-2 only; rows with all of the first five "
            "markers (d=15), raw millimetres"
        ),
        extras={"user": table.loc[complete, "User"].to_numpy(dtype=np.int64)},
    )


_LOADERS: dict[str, Callable[[], Dataset]] = {
    "celltype": _load_celltype,
    "covtype": _load_covtype,
    "mnist_test": _load_mnist_test,
    "fashion_mnist": lambda: _load_fashion_mnist("train"),
    "fashion_mnist_test": lambda: _load_fashion_mnist("t10k"),
    "femnist_sample": _load_femnist_sample,
    "tinyshakespeare": _load_tinyshakespeare,
    "postures_partial": _load_postures_partial,
}

_GENERATED: dict[str, Callable[[SeedLike], Dataset]] = {
    "gaussian": lambda rs: make_mufc_gaussian(random_state=rs),
    "tcga_standin": lambda rs: make_standin("TCGA", random_state=rs),
    "tmi_standin": lambda rs: make_standin("TMI", random_state=rs),
}


def available() -> list[str]:
    """Names accepted by :func:`load`.

    Returns
    -------
    list of str
        The registered real datasets and the generated ones, sorted.

    Examples
    --------
    >>> from fedlib.data import available
    >>> "celltype" in available(), "gaussian" in available()
    (True, True)
    """
    return sorted([*_LOADERS, *_GENERATED])


def load(name: str, *, random_state: SeedLike = None) -> Dataset:
    """Load a registered dataset, or generate a synthetic one.

    Real datasets come from hash-checked files (see ``data/README.md``).

    Parameters
    ----------
    name : str
        One of :func:`available` (case-insensitive).
    random_state : int, numpy.random.Generator or None, default=None
        Used only by the generated datasets (``gaussian``, ``tcga_standin``,
        ``tmi_standin``).

    Returns
    -------
    Dataset
        The arrays, their provenance and K.

    Raises
    ------
    KeyError
        For an unknown name.
    DataUnavailableError
        The file is in neither the mirror nor the cache and cannot be fetched.
    ChecksumError
        A copy was found but its SHA-256 is not the registered one.

    Examples
    --------
    The generated datasets need no file:

    >>> import numpy as np
    >>> from fedlib.data import load
    >>> ds = load("gaussian", random_state=0)
    >>> ds
    Dataset('Gaussian', n_samples=30000, n_features=10, n_clusters=10, real)
    >>> np.bincount(ds.y).tolist() == [3000] * 10
    True
    """
    key = name.lower()
    if key in _LOADERS:
        return _LOADERS[key]()
    if key in _GENERATED:
        return _GENERATED[key](random_state)
    raise KeyError(f"unknown dataset {name!r}; available: {available()}.")


def load_or_standin(name: str, *, random_state: SeedLike = None) -> Dataset:
    """:func:`load`, or a labelled stand-in (with a warning) when the file cannot be had.

    A stand-in has the shape of the data it replaces
    (:data:`fedlib.data.STANDIN_SHAPES`: n, d and cluster sizes),
    not its geometry; its name ends in "(stand-in)" and ``is_standin`` is set.

    Parameters
    ----------
    name : str
        One of :func:`available` (case-insensitive).
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the generated datasets and the stand-ins.

    Returns
    -------
    Dataset
        The real data, or a stand-in.

    Raises
    ------
    KeyError
        For an unknown name.
    ChecksumError
        A copy was found but its SHA-256 is not the registered one: a checksum
        mismatch is never replaced by a stand-in.

    Warns
    -----
    RuntimeWarning
        When a stand-in replaces the real data.

    Examples
    --------
    With an empty mirror and cache and downloads off, Celltype is replaced by a stand-in of its published shape:

    >>> import os
    >>> import tempfile
    >>> import warnings
    >>> from unittest import mock
    >>> from fedlib.data import load_or_standin
    >>> with tempfile.TemporaryDirectory() as empty, mock.patch.dict(
    ...     os.environ, {"FEDLIB_DATA_MIRROR": empty, "FEDLIB_CACHE": empty, "FEDLIB_OFFLINE": "1"}
    ... ), warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     ds = load_or_standin("celltype", random_state=0)
    >>> ds
    Dataset('Celltype (stand-in)', n_samples=12009, n_features=10, n_clusters=4, stand-in)
    >>> ds.is_standin, caught[0].category.__name__
    (True, 'RuntimeWarning')
    """
    try:
        return load(name, random_state=random_state)
    except DataUnavailableError as exc:
        warnings.warn(f"{exc} Using a labelled stand-in instead.", RuntimeWarning, stacklevel=2)
    key = name.lower()
    if key == "tinyshakespeare":
        return _text_standin(random_state)
    title, sizes, n_features = STANDIN_SHAPES[key]
    X, y = make_blobs(sizes, n_features, random_state=random_state)
    return Dataset(
        name=f"{title} (stand-in)",
        X=scale_max_abs(X),
        y=y,
        n_clusters=len(sizes),
        source=(
            f"stand-in: Gaussian mixture with the shape of {title} (n={sum(sizes)}, d={n_features}); not the real data"
        ),
        is_standin=True,
    )


def split_dataset(
    dataset: Dataset,
    test_size: float | int,
    *,
    stratify: bool = True,
    random_state: SeedLike = None,
) -> tuple[Dataset, Dataset]:
    """Split a dataset into a train and a test part, reproducibly.

    The book has only the 10,000-image MNIST test set, so its federated runs
    train on one part of it and evaluate on the other. With ``stratify`` every
    label keeps its share in both parts (each label's rows are shuffled and the
    first ``round(share · count)`` go to the test part, with the remainder
    adjusted so that the test part has exactly the requested size). Rows keep
    their original order within each part; ``extras`` arrays with one entry per
    row are split alongside, the others are shared.

    Parameters
    ----------
    dataset : Dataset
        The data to split.
    test_size : float or int
        A float in (0, 1): the share of rows in the test part; an int: their number.
    stratify : bool, default=True
        Keep each label's share in both parts.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.

    Returns
    -------
    train : Dataset
        The other rows; its name ends in "(train part)".
    test : Dataset
        ``test_size`` rows; its name ends in "(test part)".

    Raises
    ------
    ValueError
        If either part would be empty.
    TypeError
        If ``test_size`` is neither an int nor a float.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import Dataset, split_dataset
    >>> ds = Dataset("toy", np.arange(20.0).reshape(10, 2), np.array([0] * 6 + [1] * 4), 2, "hand-made")
    >>> train, test = split_dataset(ds, 0.5, random_state=0)
    >>> train.n_samples, test.n_samples, np.bincount(test.y).tolist()
    (5, 5, [3, 2])
    """
    n = dataset.n_samples
    if isinstance(test_size, (float, np.floating)):
        share = check_scalar(
            test_size, "test_size", "real", min_val=0.0, max_val=1.0, include_min=False, include_max=False
        )
        n_test = round(share * n)
    else:
        n_test = check_scalar(test_size, "test_size", "int", min_val=1)
    if not 1 <= n_test <= n - 1:
        raise ValueError(
            f"test_size={test_size!r} puts {n_test} of {n} rows in the test part; both parts need at least one row."
        )
    rng = check_random_state(random_state)
    if stratify:
        labels = np.asarray(dataset.y)
        classes, inverse = np.unique(labels, return_inverse=True)
        counts = np.bincount(inverse, minlength=classes.size)
        # largest-remainder apportionment of n_test over the labels, then a shuffle within each label
        exact = counts * (n_test / n)
        quota = np.floor(exact).astype(np.int64)
        remainder = n_test - int(quota.sum())
        quota[np.argsort(-(exact - quota), kind="stable")[:remainder]] += 1
        test_rows = np.concatenate(
            [rng.permutation(np.flatnonzero(inverse == c))[: quota[c]] for c in range(classes.size)]
        )
    else:
        test_rows = rng.permutation(n)[:n_test]
    is_test = np.zeros(n, dtype=bool)
    is_test[test_rows] = True
    how = f"{'stratified ' if stratify else ''}split, {n_test} of {n} rows to the test part"
    return _subset(dataset, np.flatnonzero(~is_test), "train part", how), _subset(
        dataset, np.flatnonzero(is_test), "test part", how
    )


def _subset(dataset: Dataset, rows: np.ndarray, part: str, how: str) -> Dataset:
    n = dataset.n_samples
    extras = {
        key: value[rows] if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == n else value
        for key, value in dataset.extras.items()
    }
    return Dataset(
        name=f"{dataset.name} ({part})",
        X=dataset.X[rows],
        y=np.asarray(dataset.y)[rows],
        n_clusters=dataset.n_clusters,
        source=f"{dataset.source}; {how}",
        is_standin=dataset.is_standin,
        extras=extras,
    )


def image_array(dataset: Dataset) -> np.ndarray:
    """The dataset's images as a float32 array of shape (n, 1, side, side) in the scale of X, ready for torch.

    ``torch.from_numpy`` turns the result into a tensor without a copy.
    Images come from ``extras["images"]`` (uint8 pixels are divided by 255, as
    the loaders do for X), else from the rows of X reshaped to squares (a
    stand-in, or sklearn's 8×8 digits).

    Parameters
    ----------
    dataset : Dataset
        A dataset of square grey images: ``extras["images"]`` of shape
        (n_samples, side, side), or ``n_features`` a perfect square.

    Returns
    -------
    ndarray of float32, shape (n_samples, 1, side, side)
        C-contiguous; channels first.

    Raises
    ------
    ValueError
        If the dataset holds no square images.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import Dataset, image_array
    >>> ds = Dataset("toy", np.ones((2, 4)), np.array([0, 1]), 2, "hand-made")
    >>> image_array(ds).shape, image_array(ds).dtype
    ((2, 1, 2, 2), dtype('float32'))
    """
    images = dataset.extras.get("images")
    if images is None:
        side = math.isqrt(dataset.n_features)
        if side * side != dataset.n_features:
            raise ValueError(
                f"{dataset.name}: no extras['images'] and n_features={dataset.n_features} is not a square side*side."
            )
        return np.ascontiguousarray(np.asarray(dataset.X).reshape(-1, 1, side, side), dtype=np.float32)
    images = np.asarray(images)
    if images.ndim != 3 or images.shape[1] != images.shape[2] or images.shape[0] != dataset.n_samples:
        raise ValueError(
            f"{dataset.name}: extras['images'] must have shape (n_samples={dataset.n_samples}, side, side), "
            f"got {images.shape}."
        )
    out = images.astype(np.float32)[:, None]
    if images.dtype == np.uint8:
        out /= np.float32(255.0)
    return np.ascontiguousarray(out)


def _text_standin(random_state: SeedLike) -> Dataset:
    """Character stream (200,000 symbols) from a random bigram model over 65 symbols."""
    rng = check_random_state(random_state)
    n_symbols, length = 65, 200_000
    transition = rng.dirichlet(np.full(n_symbols, 0.1), size=n_symbols)
    cumulative = np.cumsum(transition, axis=1)
    codes = np.empty(length, dtype=np.int64)
    codes[0] = 0
    u = rng.random(length)
    for t in range(1, length):  # a Markov chain is sequential by definition
        codes[t] = min(int(np.searchsorted(cumulative[codes[t - 1]], u[t])), n_symbols - 1)
    return Dataset(
        name="tiny-shakespeare (stand-in)",
        X=codes[:-1, None].astype(np.float64),
        y=codes[1:],
        n_clusters=n_symbols,
        source="stand-in: random bigram character model, 65 symbols; not the real text",
        is_standin=True,
        extras={"codes": codes},
    )
