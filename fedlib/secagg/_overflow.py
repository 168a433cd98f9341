"""SecFC's field and the scale λ that keeps its decoded distances exact (SecFC App. A).

SecFC quantizes each coordinate to ``floor(λx) mod q`` (App. A, Eq. (3)). The
server decodes ``d'_{i,h} = ||Σ_{i'∈S_h} x̄_{i'} − |S_h| x̄_i||²`` (the paper's
``||μ_h − |S_h| x_i||²`` is a typo), which is exact only while the true integer
stays below ``q/2``. Since ``μ_h − x_i`` is an average of differences of points,
``d' ≤ |S_h|² diam(X̄)² ≤ m² (2λR + √d)²`` for data of Euclidean norm at most
``R``: a bound every party can compute before the protocol starts, where the
paper's ``q ≥ 2λ²D`` depends on the largest decoded distance ``D``, known only
afterwards. :func:`check_scale` refuses a ``λ`` that breaks it. Per round,
``d'_{i,h} ≤ |S_h|² (2λR + √d)²`` with the public cluster sizes ``|S_h|``:
:func:`check_round` certifies a round from that bound before any client
computes, which allows a larger ``λ`` at the price of a run that can stop
midway. No test on the decoded residues alone can be sound: a true ``d'`` in
``[q, 1.5q)`` decodes to ``d' − q``, a plausible value
(:func:`fedlib.field.check_decoded` only catches the overflows that land above
``q/2``).
"""

from __future__ import annotations

import math

import numpy as np

from fedlib._typing import NDArrayInt
from fedlib._validation import check_scalar
from fedlib.exceptions import FieldOverflowError

#: SecFC's default field: the largest prime below 2**50, the int64 limit of :mod:`fedlib.field`.
SECFC_PRIME = 2**50 - 27


def distance_bound(n_samples: int, n_features: int, radius: float, scale: float) -> float:
    """Public upper bound ``m² (2λR + √d)²`` on every decoded ``d'_{i,h}``, from ``||x|| ≤ R``.

    Parameters
    ----------
    n_samples : int
        ``m``.
    n_features : int
        ``d``.
    radius : float
        ``R``, a bound on every point's Euclidean norm.
    scale : float
        ``λ``.

    Returns
    -------
    float
        ``m² (2λR + √d)²``.

    Examples
    --------
    >>> from fedlib.secagg import distance_bound
    >>> distance_bound(10, 4, 1.0, 2.0)  # 10² (2·2·1 + √4)²
    3600.0
    """
    return float(n_samples) ** 2 * _diameter_bound(n_features, radius, scale) ** 2


def _diameter_bound(n_features: int, radius: float, scale: float) -> float:
    """``2λR + √d``: a bound on ``diam(X̄)``, the largest distance between two quantized points of norm at most ``R``."""
    return 2.0 * scale * radius + math.sqrt(n_features)


def max_safe_scale(n_samples: int, n_features: int, radius: float, q: int = SECFC_PRIME) -> float:
    """Largest ``λ`` with ``m² (2λR + √d)² < (q-1)/2``, rounded down to 3 significant digits.

    Below this scale no decoded distance can overflow.

    Parameters
    ----------
    n_samples, n_features : int
        ``m`` and ``d``.
    radius : float
        ``R``, a finite bound on every point's norm; 0 gives ``inf``.
    q : int, default=SECFC_PRIME
        The prime.

    Returns
    -------
    float
        The scale λ, or ``inf`` when ``R = 0``.

    Raises
    ------
    FieldOverflowError
        If even ``λ → 0`` is unsafe (the ``√d`` rounding term alone is too
        large: ``m² d ≥ q/2``), or if the safe ``λ`` is below the smallest
        positive float64 (``R`` beyond about 1e300).
    ValueError
        If ``radius`` is negative, NaN or infinite.

    Examples
    --------
    >>> from fedlib.secagg import max_safe_scale
    >>> max_safe_scale(1000, 20, 30.0)
    395.0
    """
    n_samples = check_scalar(n_samples, "n_samples", "int", min_val=1)
    n_features = check_scalar(n_features, "n_features", "int", min_val=1)
    radius = check_radius(radius)
    room = math.sqrt((q - 1) / 2) / n_samples - math.sqrt(n_features)
    if room <= 0:
        raise FieldOverflowError(
            f"m² d = {n_samples}² · {n_features} >= (q-1)/2 = {(q - 1) // 2}: no scale λ is safe in GF({q}); "
            "use a larger prime."
        )
    if radius <= 0:
        return math.inf
    exact = room / 2.0 / radius  # not room / (2R): 2R overflows for R near float64's limit
    step = 10.0 ** (math.floor(math.log10(exact)) - 2) if exact > 0 else 0.0
    if not step > 0:
        raise FieldOverflowError(
            f"radius R={radius:.4g}: the largest safe scale λ = (√((q-1)/2)/m − √d) / (2R) = {exact:.3g} is below "
            "what float64 can represent to 3 digits; rescale the data."
        )
    return math.floor(exact / step * (1 - 1e-12)) * step


def check_radius(radius: float) -> float:
    """Return ``radius`` as a float if it is a finite number ``>= 0`` (the public norm bound ``R``).

    Parameters
    ----------
    radius : float
        ``R``.

    Returns
    -------
    float
        ``radius``.

    Raises
    ------
    TypeError
        If ``radius`` is not a real number.
    ValueError
        If it is negative, NaN or infinite.

    Examples
    --------
    >>> from fedlib.secagg import check_radius
    >>> check_radius(3)
    3.0
    """
    radius = check_scalar(radius, "radius", "real", min_val=0.0)
    if not math.isfinite(radius):
        raise ValueError(
            f"radius={radius} must be finite: R bounds every point's Euclidean norm, and the safe scale λ of "
            "SecFC App. A is proportional to 1/R."
        )
    return radius


def data_radius(X) -> float:
    """The largest Euclidean norm of the rows of ``X``, without overflow for entries up to float64's limit.

    ``max ||x||`` where ``||x||²`` itself would overflow (``|x| ≈ 1e300``) is
    computed on ``X / max|x|`` and scaled back.

    Parameters
    ----------
    X : ndarray of shape (m, d)
        Finite points.

    Returns
    -------
    float
        ``R = max_i ||x_i||``, finite.

    Raises
    ------
    ValueError
        If the largest norm itself exceeds float64's largest value (about 1.8e308).

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.secagg import data_radius
    >>> data_radius(np.array([[3.0, 4.0], [1.0, 0.0]]))
    5.0
    >>> data_radius(np.array([[3e300, 4e300]]))
    5e+300
    """
    X = np.asarray(X, dtype=np.float64)
    if X.size == 0:
        return 0.0
    with np.errstate(over="ignore"):
        largest = float(np.max(np.einsum("ij,ij->i", X, X)))
    if math.isfinite(largest) and largest > 1e-250:  # the plain formula: neither overflow nor underflow
        return math.sqrt(largest)
    top = float(np.max(np.abs(X)))
    if top == 0.0:
        return 0.0
    Y = X / top
    radius = top * math.sqrt(float(np.max(np.einsum("ij,ij->i", Y, Y))))
    if not math.isfinite(radius):
        raise ValueError(
            f"the largest norm of the data overflows float64 (entries up to |x| = {top:.3g} in d = {X.shape[1]} "
            "features): the radius R of the overflow bound is not a float; rescale the data."
        )
    return radius


def check_scale(scale: float, n_samples: int, n_features: int, radius: float, q: int = SECFC_PRIME) -> float:
    """Return ``scale`` if ``m² (2λR + √d)² < q/2``, else raise :class:`fedlib.exceptions.FieldOverflowError`.

    SecFC App. A asks for ``q ≥ 2λ²D`` with ``D`` the largest decoded distance,
    which depends on the clustering; this is the same requirement with ``D``
    replaced by a bound every party can compute before the protocol starts.

    Parameters
    ----------
    scale : float
        ``λ``, > 0.
    n_samples, n_features : int
        ``m`` and ``d``.
    radius : float
        ``R``.
    q : int, default=SECFC_PRIME
        The prime.

    Returns
    -------
    float
        ``scale``.

    Raises
    ------
    FieldOverflowError
        If ``m² (2λR + √d)²`` is not below ``(q-1)/2``.
    ValueError
        If ``scale`` is not a finite positive number, or ``radius`` not a finite one ``>= 0``.

    Examples
    --------
    >>> from fedlib.secagg import check_scale
    >>> check_scale(100.0, 1000, 20, 30.0)
    100.0
    """
    scale = check_scalar(
        scale, "scale (λ)", "real", min_val=0.0, include_min=False, max_val=math.inf, include_max=False
    )
    radius = check_radius(radius)
    bound = distance_bound(n_samples, n_features, radius, scale)
    if not bound < (q - 1) / 2:
        raise FieldOverflowError(
            f"scale λ={scale} can overflow GF({q}): decoded distances d' are bounded only by "
            f"m²(2λR+√d)² = {n_samples}²·(2·{scale}·{radius:.4g}+√{n_features})² = {bound:.4g}, which is not below "
            f"q/2 = {q // 2} (SecFC App. A). The largest safe λ is "
            f"{max_safe_scale(n_samples, n_features, radius, q):.4g}."
        )
    return scale


def check_round(sizes: NDArrayInt, n_features: int, radius: float, scale: float, q: int = SECFC_PRIME) -> NDArrayInt:
    """Certify one SecFC round before it runs: ``|S_h|² (2λR + √d)² < q/2`` for every cluster ``h``.

    ``d'_{i,h} = ||Σ_{i'∈S_h} (x̄_{i'} − x̄_i)||² ≤ |S_h|² diam(X̄)²`` and
    ``diam(X̄) ≤ 2λR + √d``, so a round whose clusters pass this test decodes
    every ``d'`` exactly (SecFC App. A with ``D`` replaced by a bound from the
    public cluster sizes). It is the per-round form of :func:`check_scale`
    (which uses ``m ≥ |S_h|``): sound, and less conservative by about
    ``(m / max_h |S_h|)²``, but known only once the clustering of the round is.

    Parameters
    ----------
    sizes : ndarray of int of shape (n_clusters,)
        ``|S_h|``, public in SecFC (the clustering is broadcast).
    n_features : int
        ``d``.
    radius : float
        ``R``, a bound on every point's Euclidean norm.
    scale : float
        ``λ``.
    q : int, default=SECFC_PRIME
        The prime.

    Returns
    -------
    ndarray of int64
        ``sizes``.

    Raises
    ------
    FieldOverflowError
        If some ``|S_h|² (2λR + √d)²`` is not below ``(q-1)/2``, naming the
        cluster, the scale, ``q`` and the largest size the scale allows.

    Examples
    --------
    >>> # m = 1000 points allow λ = 395 in advance; at λ = 1000 a round passes while no cluster exceeds 395
    >>> import numpy as np
    >>> from fedlib.secagg import check_round
    >>> check_round(np.array([250, 360, 390]), 20, 30.0, 1000.0).tolist()
    [250, 360, 390]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    half = (q - 1) / 2
    largest = int(np.argmax(sizes)) if sizes.size else 0
    s = int(sizes[largest]) if sizes.size else 0
    bound = distance_bound(s, n_features, radius, scale)  # d' <= |S_h|² diam(X̄)²: m = |S_h| in the bound
    if not bound < half:
        allowed = max(math.ceil(math.sqrt(half) / _diameter_bound(n_features, radius, scale)) - 1, 0)
        while allowed > 0 and not distance_bound(allowed, n_features, radius, scale) < half:
            allowed -= 1
        raise FieldOverflowError(
            f"cluster {largest} has |S_h| = {s} points: at scale λ={scale} and radius R={radius:.4g} its decoded "
            f"distances are bounded only by |S_h|²(2λR+√d)² = {s}²·(2·{scale}·{radius:.4g}+√{n_features})² = "
            f"{bound:.4g}, which is not below q/2 = {q // 2} (SecFC App. A), so a d' that wrapped around GF({q}) "
            f"could decode to a plausible wrong value. check_overflow='runtime' refuses the round: at this λ a "
            f"cluster may hold at most {allowed} points. Lower the scale λ, or use check_overflow='bound', which "
            "certifies every round in advance."
        )
    return sizes
