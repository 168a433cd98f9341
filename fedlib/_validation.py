"""Input checks shared by every fedlib subpackage: inputs are coerced here and nowhere else."""

from __future__ import annotations

import numbers
import warnings
from typing import Literal

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_array as sklearn_check_array

from fedlib._typing import NDArrayFloat, NDArrayInt

__all__ = [
    "NotFittedError",
    "check_array",
    "check_is_fitted",
    "check_n_clusters",
    "check_option",
    "check_partition",
    "check_sample_weight",
    "check_scalar",
]


def check_scalar(
    x,
    name: str,
    kind: Literal["int", "real"],
    *,
    min_val: float | None = None,
    max_val: float | None = None,
    include_min: bool = True,
    include_max: bool = True,
):
    """Return ``x`` as a Python ``int`` or ``float`` after checking its type and range.

    The one scalar validator of fedlib. A float where an int is meant (2.7
    clients, 1.5 segments, even 2.0) raises ``TypeError`` instead of being
    truncated; ``bool`` and complex numbers are refused for both kinds; NaN is
    refused for ``"real"``, and infinity wherever a bound on its side is set
    (``inf`` passes a real check with no ``max_val``).

    Parameters
    ----------
    x : object
        The value to check.
    name : str
        Its name, for the error message.
    kind : {"int", "real"}
        ``"int"``: an integral number (Python or numpy integer). ``"real"``: any
        real number, integers included.
    min_val, max_val : float or None
        Bounds; ``None`` means unbounded on that side.
    include_min, include_max : bool, default=True
        Whether the bounds themselves are allowed.

    Returns
    -------
    int or float
        ``x`` as a Python number.

    Raises
    ------
    TypeError
        If ``x`` is not of the requested kind.
    ValueError
        If ``x`` lies outside the bounds (or is NaN).

    Examples
    --------
    >>> from fedlib.utils import check_scalar
    >>> check_scalar(3, "n_clients", "int", min_val=1)
    3
    >>> check_scalar(2.7, "n_clients", "int")
    Traceback (most recent call last):
    ...
    TypeError: n_clients must be an int, got float 2.7.
    """
    if kind not in ("int", "real"):
        raise ValueError(f"kind must be 'int' or 'real', got {kind!r}.")
    wanted = numbers.Integral if kind == "int" else numbers.Real
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, wanted):
        article = "an int" if kind == "int" else "a real number"
        raise TypeError(f"{name} must be {article}, got {type(x).__name__} {x!r}.")
    value = int(x) if kind == "int" else float(x)
    if kind == "real" and np.isnan(value):
        raise ValueError(f"{name} must be a number, got NaN.")
    if min_val is not None and not (value >= min_val if include_min else value > min_val):
        raise ValueError(f"{name}={x!r} should be {'>=' if include_min else '>'} {min_val}.")
    if max_val is not None and not (value <= max_val if include_max else value < max_val):
        raise ValueError(f"{name}={x!r} should be {'<=' if include_max else '<'} {max_val}.")
    return value


def check_bool(value, name: str) -> bool:
    """Return ``value`` as a bool, refusing anything else (a string such as ``"no"`` is truthy).

    Raises
    ------
    TypeError
        If ``value`` is not a bool (Python's or numpy's).
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}.")
    return bool(value)


def check_option(value, name: str, allowed) -> str:
    """Return ``value`` if it is one of ``allowed`` (string options such as ``init="kmeans++"``)."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name}={value!r} should be one of {tuple(allowed)}.")
    return value


def check_is_fitted(estimator, attribute: str) -> None:
    """Raise :class:`NotFittedError` unless ``estimator`` has the fitted ``attribute`` (set by ``fit``)."""
    if not hasattr(estimator, attribute):
        raise NotFittedError(
            f"This {type(estimator).__name__} instance is not fitted yet; call fit(X, ...) before using it."
        )


def check_array(X, *, name: str = "X", min_samples: int = 1, dtype=np.float64) -> NDArrayFloat:
    """Return ``X`` as a C-contiguous 2-D float array with finite entries, with scikit-learn's messages.

    Delegates to :func:`sklearn.utils.check_array`: sparse input is refused
    (``TypeError``: fedlib's estimators need dense data), complex input too
    (``ValueError``, rather than casting away the imaginary part), and so are
    1-D or 3-D arrays, empty arrays, strings, NaN and infinity (``ValueError``).
    """
    if _holds_complex(X):  # also lists and object arrays, which numpy would fail to cast with another error
        raise ValueError(f"Complex data not supported: {name} must be real (the imaginary part would be dropped).")
    return sklearn_check_array(
        X, dtype=dtype, order="C", ensure_min_samples=min_samples, ensure_all_finite=True, input_name=name
    )


def _holds_complex(X) -> bool:
    """Whether array-like ``X`` is, or converts to, a complex array (ragged or non-numeric input: False)."""
    dtype = getattr(X, "dtype", None)
    if isinstance(dtype, np.dtype) and dtype.kind != "O":
        return dtype.kind == "c"
    try:
        return np.asarray(X).dtype.kind == "c" or any(isinstance(v, complex) for v in np.asarray(X).ravel()[:1000])
    except (TypeError, ValueError):
        return False


def check_sample_weight(sample_weight, n_samples: int) -> NDArrayFloat:
    """Return positive sample weights of length ``n_samples`` (ones when ``None``)."""
    if sample_weight is None:
        return np.ones(n_samples, dtype=np.float64)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError(f"sample_weight must have shape ({n_samples},), got {w.shape}.")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("sample_weight must be finite and >= 0.")
    if not np.any(w > 0):
        raise ValueError("sample_weight is all zero: at least one weight must be positive.")
    return w


def check_n_clusters(n_clusters, n_samples: int) -> int:
    """Check ``1 <= n_clusters <= n_samples`` (K in all four papers)."""
    n_clusters = check_scalar(n_clusters, "n_clusters", "int", min_val=1)
    if n_samples < n_clusters:
        raise ValueError(f"n_samples={n_samples} should be >= n_clusters={n_clusters}.")
    return int(n_clusters)


def check_fit_partition(parts, y, n_samples: int) -> list[np.ndarray]:
    """The client partition of a federated ``fit(X, y=None, *, parts=None)``: one client when ``None``.

    Refuses a partition passed positionally where ``y`` belongs (a list of index arrays), which would
    otherwise be ignored silently.
    """
    if y is not None and isinstance(y, (list, tuple)) and len(y) and np.ndim(y[0]) == 1:
        raise TypeError("fit(X, y=None, *, parts=...): pass the client partition by keyword, as parts=.")
    return check_partition([np.arange(n_samples)] if parts is None else parts, n_samples)


def check_partition(parts, n_samples: int) -> list[np.ndarray]:
    """Client index arrays that partition ``range(n_samples)``: every row exactly once, no empty client."""
    if len(parts) < 1:
        raise ValueError("parts must hold at least one client.")
    arrays = [np.asarray(p, dtype=np.int64).ravel() for p in parts]
    sizes = [a.size for a in arrays]
    if min(sizes) < 1:
        raise ValueError(f"client {sizes.index(min(sizes))} holds no points; every client needs at least one.")
    if any(a.size and (a.min() < 0 or a.max() >= n_samples) for a in arrays):
        raise ValueError(f"parts must partition range(n_samples={n_samples}): an index lies outside it.")
    check_disjoint_clients(arrays)
    flat = np.concatenate(arrays)
    if flat.size != n_samples or not np.array_equal(np.sort(flat), np.arange(n_samples)):
        raise ValueError(f"parts must partition range(n_samples={n_samples}): every index exactly once.")
    return arrays


def check_disjoint_clients(clients: list[np.ndarray]) -> None:
    """Refuse clients that share a row: every row belongs to one client (which may list it more than once).

    Forgetting a client must remove every trace of its rows; a row also held by another client would stay in
    training through it, and the report would still say ``exact``. ``clients`` are 1-D arrays of non-negative
    int64 indices, already checked.
    """
    owner_counts = np.bincount(np.concatenate([np.unique(part) for part in clients]))
    if owner_counts.max(initial=0) <= 1:
        return
    shared = np.flatnonzero(owner_counts > 1)
    owners = [k for k, part in enumerate(clients) if np.isin(part, shared).any()]
    raise ValueError(
        f"parts overlap: {shared.size} row(s) (e.g. row {int(shared[0])}) are held by more than one client "
        f"(clients {owners[:8]}{', ...' if len(owners) > 8 else ''}); each row must belong to one client, "
        "or forgetting a client would leave its rows in training through the others."
    )


def check_ids(ids, name: str = "ids") -> NDArrayInt:
    """``ids`` as a flat int64 array, refusing values that are not whole numbers (3.7 must not become 3).

    Parameters
    ----------
    ids : int or array-like of int
        Ids (rows, clients).
    name : str, default="ids"
        Their name in messages.

    Returns
    -------
    ndarray of int64
        The ids, flattened.

    Raises
    ------
    TypeError
        For booleans, complex numbers, strings or other non-numbers.
    ValueError
        For non-finite or fractional values.

    Examples
    --------
    >>> check_ids([3, 4.0]).tolist()
    [3, 4]
    """
    arr = np.atleast_1d(np.asarray(ids)).ravel()
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must be integers, got dtype {arr.dtype}.")
    if np.issubdtype(arr.dtype, np.floating):
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            raise ValueError(f"{name} must be whole numbers; got {arr[bad][:5].tolist()}.")
    return arr.astype(np.int64)


def check_race_keys(race_keys, n_samples: int, n_clusters: int) -> NDArrayFloat:
    """Validate exponential-race keys: shape (n_samples, >= n_clusters), positive and finite."""
    keys = np.asarray(race_keys, dtype=np.float64)
    if keys.ndim != 2 or keys.shape[0] != n_samples or keys.shape[1] < n_clusters:
        raise ValueError(
            f"race_keys must have shape (n_samples={n_samples}, >= n_clusters={n_clusters}), got {keys.shape}."
        )
    if not np.all(np.isfinite(keys)) or np.any(keys <= 0):
        raise ValueError("race_keys must be positive and finite (Exponential(1) draws).")
    return keys


def warn_small_clients(sizes, n_clusters: int, estimator: str, *, parameter: str = "n_clusters") -> int:
    """Warn once when some clients hold fewer points than the clusters they are asked for; return how many do.

    Such a client uses all its points as its local centres, so it sends fewer
    than ``n_clusters`` of them. One :class:`UserWarning` per call (per
    ``fit``), naming the count, the smallest client and what is done; nothing
    when every client holds at least ``n_clusters`` points. ``parameter``
    names the estimator's setting in the message (``n_local_clusters`` for
    :class:`KFED`). The warning points at the caller of ``fit``.
    """
    sizes = np.asarray(sizes)
    small = int(np.count_nonzero(sizes < n_clusters))
    if small:
        warnings.warn(
            f"{estimator}: {small} of {sizes.size} clients hold fewer points than {parameter}={n_clusters} "
            f"(the smallest holds {int(sizes.min())}); each of them uses all its points as its local centres "
            f"and so sends fewer than {n_clusters} centres.",
            UserWarning,
            stacklevel=3,
        )
    return small
