"""SecFC's field and the scale λ that keeps its decoded distances exact (SecFC App. A).

SecFC quantizes each coordinate to ``floor(λx) mod q`` (App. A, Eq. (3)). The
server decodes ``d'_{i,h} = ||Σ_{i'∈S_h} x̄_{i'} − |S_h| x̄_i||²`` (the paper's
``||μ_h − |S_h| x_i||²`` is a typo), which is exact only while the true integer
stays below ``q/2``. Since ``μ_h − x_i`` is an average of differences of points,
``d' ≤ |S_h|² diam(X̄)² ≤ m² (2λR + √d)²`` for data of Euclidean norm at most
``R``: a bound every party can compute before the protocol starts, where the
paper's ``q ≥ 2λ²D`` depends on the largest decoded distance ``D``, known only
afterwards. :func:`check_scale` refuses a ``λ`` that breaks it;
:func:`fedlib.field.check_decoded` catches an overflow at run time.
"""

from __future__ import annotations

import math

from fedlib._validation import check_scalar
from fedlib.field import FieldOverflowError

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
    >>> distance_bound(10, 4, 1.0, 2.0)  # 10² (2·2·1 + √4)²
    3600.0
    """
    return float(n_samples) ** 2 * (2.0 * scale * radius + math.sqrt(n_features)) ** 2


def max_safe_scale(n_samples: int, n_features: int, radius: float, q: int = SECFC_PRIME) -> float:
    """Largest ``λ`` with ``m² (2λR + √d)² < (q-1)/2``, rounded down to 3 significant digits.

    Below this scale no decoded distance can overflow.

    Parameters
    ----------
    n_samples, n_features : int
        ``m`` and ``d``.
    radius : float
        ``R``, a bound on every point's norm; 0 gives ``inf``.
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
        large: ``m² d ≥ q/2``).

    Examples
    --------
    >>> max_safe_scale(1000, 20, 30.0)
    395.0
    """
    n_samples = check_scalar(n_samples, "n_samples", "int", min_val=1)
    n_features = check_scalar(n_features, "n_features", "int", min_val=1)
    room = math.sqrt((q - 1) / 2) / n_samples - math.sqrt(n_features)
    if room <= 0:
        raise FieldOverflowError(
            f"m² d = {n_samples}² · {n_features} >= (q-1)/2 = {(q - 1) // 2}: no scale λ is safe in GF({q}); "
            "use a larger prime."
        )
    if radius <= 0:
        return math.inf
    exact = room / (2.0 * radius)
    step = 10.0 ** (math.floor(math.log10(exact)) - 2)
    return math.floor(exact / step * (1 - 1e-12)) * step


def check_scale(scale: float, n_samples: int, n_features: int, radius: float, q: int = SECFC_PRIME) -> float:
    """Return ``scale`` if ``m² (2λR + √d)² < q/2``, else raise :class:`fedlib.field.FieldOverflowError`.

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

    Examples
    --------
    >>> check_scale(100.0, 1000, 20, 30.0)
    100.0
    """
    scale = check_scalar(scale, "scale (λ)", "real", min_val=0.0, include_min=False)
    bound = distance_bound(n_samples, n_features, radius, scale)
    if not bound < (q - 1) / 2:
        raise FieldOverflowError(
            f"scale λ={scale} can overflow GF({q}): decoded distances d' are bounded only by "
            f"m²(2λR+√d)² = {n_samples}²·(2·{scale}·{radius:.4g}+√{n_features})² = {bound:.4g}, which is not below "
            f"q/2 = {q // 2} (SecFC App. A). The largest safe λ is "
            f"{max_safe_scale(n_samples, n_features, radius, q):.4g}."
        )
    return scale
