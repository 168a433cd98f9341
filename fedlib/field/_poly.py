"""Polynomials over GF(p) with exact Python-int coefficients, and the decoders built on them.

A polynomial is a list of coefficients, lowest degree first, with no trailing
zeros (the zero polynomial is ``[]``). Every function takes the prime ``p`` and
returns reduced coefficients in ``[0, p)``. Coefficients are Python ints, so any
size of ``p`` works (MUFC's SCMA needs primes of thousands of bits for FEMNIST).

The power-sum layer of SCMA (:func:`power_sums`, :func:`decode_power_sums`,
:func:`solve_transposed_vandermonde`, :func:`poly_roots`) also runs on FLINT
(python-flint's ``fmpz_mod_poly``) with fast multiplication: power sums as a
truncated rational series, Berlekamp-Massey as FLINT's ``minpoly``, magnitudes by
multipoint evaluation. ``backend="python"`` keeps the quadratic pure-Python
algorithms, the reference the FLINT path is tested against (equal results on
every input, not only on valid ones).
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from fedlib._random import check_random_state
from fedlib._typing import SeedLike
from fedlib.exceptions import DecodingError
from fedlib.field._interpolation import barycentric_weights
from fedlib.field._prime import _flint, _residues, _small_primes, random_field_elements

#: FLINT methods the fast path needs (python-flint >= 0.6 has ``fmpz_mod_poly``; older builds fall back).
_FLINT_METHODS = ("minpoly", "roots", "mul_low", "inverse_series_trunc", "multipoint_evaluate", "derivative")
_BACKENDS = ("auto", "python", "flint")


#: A polynomial over GF(p): coefficients lowest degree first, no trailing zeros.
Poly = list[int]


def _flint_usable() -> bool:
    """Whether python-flint is installed with every ``fmpz_mod_poly`` method the fast path calls."""
    if _flint is None or not hasattr(_flint, "fmpz_mod_poly_ctx"):
        return False
    poly_methods = [m for m in _FLINT_METHODS if m != "minpoly"]
    return hasattr(_flint.fmpz_mod_poly_ctx, "minpoly") and all(hasattr(_flint.fmpz_mod_poly, m) for m in poly_methods)


def _use_flint(backend: str) -> bool:
    """Resolve ``backend``: ``True`` for FLINT, ``False`` for pure Python.

    Raises ``ValueError`` for an unknown name and ``ImportError`` when ``"flint"`` is
    asked for and python-flint (with ``fmpz_mod_poly``) is missing.
    """
    if backend not in _BACKENDS:
        raise ValueError(f"backend={backend!r} should be 'auto', 'python' or 'flint'.")
    if backend == "python":
        return False
    usable = _flint_usable()
    if backend == "flint" and not usable:
        raise ImportError("backend='flint' needs python-flint (>= 0.6, with fmpz_mod_poly) installed.")
    return usable


@lru_cache(maxsize=16)
def _flint_ctx(p: int) -> Any:
    """FLINT's polynomial context over GF(p), made once per prime."""
    return _flint.fmpz_mod_poly_ctx(int(p))


def _flint_coeffs(f, length: int) -> list[int]:
    """The first ``length`` coefficients of a FLINT polynomial as Python ints, zero-padded."""
    out = [int(c) for c in f.coeffs()[:length]]
    return out + [0] * (length - len(out))


def trim(a: Poly) -> Poly:
    """Drop trailing zero coefficients (in place) and return ``a``."""
    while a and a[-1] == 0:
        a.pop()
    return a


def poly_add(a: Poly, b: Poly, p: int) -> Poly:
    """Sum ``a + b`` over GF(p)."""
    if len(a) < len(b):
        a, b = b, a
    out = list(a)
    for i, c in enumerate(b):
        out[i] = (out[i] + c) % p
    return trim(out)


def poly_sub(a: Poly, b: Poly, p: int) -> Poly:
    """Difference ``a − b`` over GF(p)."""
    return poly_add(a, [(-c) % p for c in b], p)


def poly_mul(a: Poly, b: Poly, p: int) -> Poly:
    """Product ``a · b`` over GF(p), schoolbook, reduced once per coefficient.

    Parameters
    ----------
    a, b : list of int
        Coefficients, lowest degree first.
    p : int
        The prime.

    Returns
    -------
    list of int
        Coefficients of the product, lowest degree first, no trailing zeros.

    Examples
    --------
    >>> from fedlib.field import poly_mul
    >>> poly_mul([1, 1], [6, 1], 7)  # (1 + x)(6 + x) = 6 + 7x + x² = 6 + x² mod 7
    [6, 0, 1]
    """
    if not a or not b:
        return []
    out = [0] * (len(a) + len(b) - 1)
    for i, ai in enumerate(a):
        if ai:
            for j, bj in enumerate(b):
                out[i + j] += ai * bj
    return trim([c % p for c in out])


def poly_divmod(a: Poly, b: Poly, p: int) -> tuple[Poly, Poly]:
    """Quotient and remainder of ``a / b`` over GF(p).

    Parameters
    ----------
    a : list of int
        The dividend, lowest degree first.
    b : list of int
        The divisor, non-zero.
    p : int
        The prime.

    Returns
    -------
    quotient : list of int
        ``q`` with ``a = q b + r``.
    remainder : list of int
        ``r``, of degree below that of ``b``.

    Raises
    ------
    ZeroDivisionError
        If ``b`` is the zero polynomial.

    Examples
    --------
    >>> from fedlib.field import poly_divmod
    >>> poly_divmod([6, 0, 1], [1, 1], 7)  # x² + 6 = (x + 1)(x + 6)
    ([6, 1], [])
    """
    b = trim(list(b))
    if not b:
        raise ZeroDivisionError("polynomial division by zero")
    r = list(a)
    trim(r)
    if len(r) < len(b):
        return [], r
    inv_lead = pow(b[-1], -1, p)
    q = [0] * (len(r) - len(b) + 1)
    db = len(b) - 1
    for k in range(len(r) - len(b), -1, -1):
        coef = r[k + db] * inv_lead % p
        q[k] = coef
        if coef:
            for j in range(db + 1):
                r[k + j] = (r[k + j] - coef * b[j]) % p
    return trim(q), trim(r[:db])


def poly_mod(a: Poly, b: Poly, p: int) -> Poly:
    """Remainder of ``a / b`` over GF(p)."""
    return poly_divmod(a, b, p)[1]


def poly_monic(a: Poly, p: int) -> Poly:
    """``a`` divided by its leading coefficient (the zero polynomial stays ``[]``)."""
    if not a:
        return []
    inv = pow(a[-1], -1, p)
    return [c * inv % p for c in a]


def poly_gcd(a: Poly, b: Poly, p: int) -> Poly:
    """Monic greatest common divisor over GF(p) (Euclid's algorithm).

    Parameters
    ----------
    a, b : list of int
        Coefficients, lowest degree first.
    p : int
        The prime.

    Returns
    -------
    list of int
        The monic gcd; ``[]`` if both are zero.

    Examples
    --------
    >>> from fedlib.field import poly_gcd
    >>> poly_gcd([6, 0, 1], [1, 1], 7)
    [1, 1]
    """
    a, b = trim(list(a)), trim(list(b))
    while b:
        a, b = b, poly_mod(a, b, p)
    return poly_monic(a, p)


def poly_powmod(base: Poly, exponent: int, modulus: Poly, p: int) -> Poly:
    """``base ** exponent mod modulus`` over GF(p), by square and multiply.

    Parameters
    ----------
    base : list of int
        Coefficients, lowest degree first.
    exponent : int
        A non-negative exponent (any size).
    modulus : list of int
        A non-zero polynomial.
    p : int
        The prime.

    Returns
    -------
    list of int
        The reduced power.

    Examples
    --------
    >>> from fedlib.field import poly_powmod
    >>> poly_powmod([0, 1], 7, [6, 0, 1], 7)  # x^7 mod (x² − 1) = x
    [0, 1]
    """
    result: Poly = [1]
    base = poly_mod(base, modulus, p)
    while exponent > 0:
        if exponent & 1:
            result = poly_mod(poly_mul(result, base, p), modulus, p)
        exponent >>= 1
        if exponent:
            base = poly_mod(poly_mul(base, base, p), modulus, p)
    return result


def poly_eval(a: Poly, x: int, p: int) -> int:
    """Value ``a(x) mod p`` by Horner's rule.

    Parameters
    ----------
    a : list of int
        Coefficients, lowest degree first.
    x : int
        The point.
    p : int
        The prime.

    Returns
    -------
    int
        ``a(x)`` in ``[0, p)``.

    Examples
    --------
    >>> from fedlib.field import poly_eval
    >>> poly_eval([6, 0, 1], 3, 7)  # 6 + 9
    1
    """
    acc = 0
    for c in reversed(a):
        acc = (acc * x + c) % p
    return acc


def poly_from_roots(roots, p: int) -> Poly:
    """The monic polynomial ``Π (x − r)`` over the given roots.

    Parameters
    ----------
    roots : iterable of int
        Roots in GF(p), repeated as often as their multiplicity.
    p : int
        The prime.

    Returns
    -------
    list of int
        Coefficients, lowest degree first.

    Examples
    --------
    >>> from fedlib.field import poly_from_roots
    >>> poly_from_roots([1, 6], 7)  # (x − 1)(x − 6) = x² − 7x + 6
    [6, 0, 1]
    """
    out: Poly = [1]
    for r in roots:
        out = poly_mul(out, [(-r) % p, 1], p)
    return out


def berlekamp_massey(sequence, p: int, *, backend: str = "python") -> Poly:
    """Shortest linear recurrence of ``sequence`` over GF(p) (Massey 1969).

    Returns the connection polynomial ``Lambda(x) = 1 + l_1 x + ... + l_m x^m``
    with ``sum_k l_k s_{i-k} = 0`` for every ``i >= m``. For power sums
    ``s_i = sum_j q_j j^i`` with ``m`` distinct non-zero ``j`` and non-zero
    ``q_j``, ``Lambda(x) = prod_j (1 - j x)`` once ``2m`` terms are given
    (MUFC Alg. 2, line 3: the polynomial ``g(x)``).

    Parameters
    ----------
    sequence : iterable of int
        ``s_0, s_1, ...`` (reduced mod ``p``).
    p : int
        The prime.
    backend : {"python", "flint", "auto"}, default="python"
        ``"python"``: Massey's quadratic loop as written; ``"flint"``: FLINT's
        ``minpoly`` (half-gcd for long sequences), whose minimal polynomial is
        the reversal of ``Lambda``. Both return the same list (tested).

    Returns
    -------
    list of int
        ``[1, l_1, ..., l_m]``, of length ``m + 1`` where ``m`` is the linear
        complexity (trailing zeros kept).

    Raises
    ------
    ValueError
        For an unknown ``backend``.
    ImportError
        With ``backend="flint"`` when python-flint is not installed.

    References
    ----------
    J. L. Massey. "Shift-register synthesis and BCH decoding", IEEE
    Transactions on Information Theory 15(1), 1969.

    Examples
    --------
    >>> from fedlib.field import berlekamp_massey
    >>> berlekamp_massey([2, 2 * 3 % 7, 2 * 9 % 7], 7)  # s_i = 2·3^i: Λ(x) = 1 − 3x
    [1, 4]
    """
    s = [int(v) % p for v in sequence]
    if _use_flint(backend):
        h = _flint_ctx(p).minpoly(s)  # monic, degree m: x^m Lambda(1/x)
        return [int(c) for c in reversed(_flint_coeffs(h, h.degree() + 1))]
    C: Poly = [1]  # current connection polynomial
    B: Poly = [1]  # copy of C before the last length change
    L, m, b = 0, 1, 1
    for n, sn in enumerate(s):
        d = sn  # discrepancy
        for i in range(1, L + 1):
            d += C[i] * s[n - i]
        d %= p
        if d == 0:
            m += 1
            continue
        coef = d * pow(b, -1, p) % p
        T = list(C)
        if len(C) < len(B) + m:
            C.extend([0] * (len(B) + m - len(C)))
        for i, bi in enumerate(B):  # C <- C - (d / b) x^m B
            C[i + m] = (C[i + m] - coef * bi) % p
        if 2 * L <= n:
            L, B, b, m = n + 1 - L, T, d, 1
        else:
            m += 1
    C = C[: L + 1]
    return C + [0] * (L + 1 - len(C))


def poly_roots(h: Poly, p: int, *, backend: str = "auto", random_state: SeedLike = None) -> list[int]:
    """All roots in GF(p) of a square-free polynomial that splits into linear factors.

    ``backend="python"`` runs Cantor-Zassenhaus equal-degree splitting written
    here: for random ``a``, ``gcd(h, (x + a)^((p-1)/2) - 1)`` separates the roots
    ``r`` for which ``r + a`` is a quadratic residue from the others; recurse on
    both parts. ``backend="flint"`` runs on FLINT (python-flint), about 50 times
    faster at MUFC's Celltype scale; ``"auto"`` uses FLINT when it is installed.
    Its first split uses one exponentiation for the whole smooth part ``D`` of
    ``p - 1`` instead of one per factor: ``(x + a)^((p-1)/D) mod h`` gives the
    ``D``-th power character of every ``r + a``, read off by gcds, and FLINT's own
    splitter finishes the roots that share a character (two to three times
    faster than FLINT alone for tens of roots and a 3,000-bit prime). Either way
    each splitting costs about ``log2 p`` squarings modulo the polynomial being
    split: for thousand-bit primes this step dominates SCMA's decoding.
    The two backends agree root for root (tested). MUFC Alg. 2 cites Kedlaya and Umans
    (2011) for this step; any exact root finder gives the same roots.

    Parameters
    ----------
    h : list of int
        Coefficients, lowest degree first.
    p : int
        The prime.
    backend : {"auto", "python", "flint"}, default="auto"
        The root finder.
    random_state : int, numpy.random.Generator or None, default=None
        Draws the shifts ``a`` of the Python backend (the roots do not depend on it).

    Returns
    -------
    list of int
        The ``deg h`` roots, sorted.

    Raises
    ------
    DecodingError
        If ``h`` is zero or does not have ``deg h`` distinct roots in GF(p).
    ValueError
        For an unknown ``backend``.
    ImportError
        With ``backend="flint"`` when python-flint is not installed.

    Examples
    --------
    >>> from fedlib.field import poly_roots
    >>> poly_roots([6, 0, 1], 7) == poly_roots([6, 0, 1], 7, backend="python")
    True
    >>> poly_roots([6, 0, 1], 7, backend="python")
    [1, 6]
    """
    h = poly_monic(trim(list(h)), p)
    if not h:
        raise DecodingError("the zero polynomial has every element as a root.")
    if _use_flint(backend) and len(h) > 2:
        ctx = _flint_ctx(p)
        return _roots_flint(ctx(h), ctx)
    if p == 2:
        roots = [r for r in (0, 1) if poly_eval(h, r, p) == 0]
        if len(roots) != len(h) - 1:
            raise DecodingError("polynomial does not split into distinct linear factors over GF(2).")
        return roots
    rng = check_random_state(random_state)
    # keep only the part that splits into distinct linear factors: gcd(h, x^p - x)
    xp = poly_powmod([0, 1], p, h, p) if len(h) > 2 else None
    if xp is not None:
        split_part = poly_gcd(h, poly_sub(xp, [0, 1], p), p)
        if len(split_part) != len(h):
            raise DecodingError(
                f"polynomial of degree {len(h) - 1} has only {len(split_part) - 1} distinct roots in GF(p)."
            )
    roots: list[int] = []
    stack = [h]
    while stack:
        f = stack.pop()
        deg = len(f) - 1
        if deg == 0:
            continue
        if deg == 1:
            roots.append((-f[0]) * pow(f[1], -1, p) % p)
            continue
        while True:
            a = int(rng.integers(0, min(p, 2**62)))
            g = poly_powmod([a % p, 1], (p - 1) // 2, f, p)
            g = poly_gcd(f, poly_sub(g, [1], p), p)
            if 0 < len(g) - 1 < deg:
                stack.append(g)
                stack.append(poly_divmod(f, g, p)[0])
                break
    return sorted(roots)


def _forney_magnitudes(S: list[int], lam: Poly, support: list[int], p: int) -> list[int]:
    """Forney: ``Omega(x) = S(x) Lambda(x) mod x^m``, ``q_j = Omega(1/j) / prod_{t != j} (1 - t/j)``."""
    m = len(support)
    omega = poly_mul(S[:m], lam, p)[:m]
    values = []
    for j in support:
        inv = pow(j, -1, p)
        denom = 1
        for t in support:
            if t != j:
                denom = denom * (1 - t * inv) % p
        values.append(poly_eval(omega, inv, p) * pow(denom, -1, p) % p)
    return values


def _flint_roots_checked(h) -> list[int]:
    """FLINT's own root finder, refusing a polynomial without ``deg h`` distinct roots; sorted."""
    degree = h.degree()
    found = h.roots()
    if len(found) != degree or any(mult != 1 for _, mult in found):
        raise DecodingError(f"polynomial of degree {degree} does not have {degree} distinct roots.")
    return sorted(int(root) for root, _ in found)


#: Largest prime factor of ``p - 1`` and largest product of them used by :func:`_roots_flint`'s first split.
_CHARACTER_PRIME_MAX = 2**12
_CHARACTER_ORDER_MAX = 2**20
#: The same bound for word-sized primes, where FLINT's own splitting is cheap and the character digits are not:
#: for 6,200 roots modulo the 62-bit ``2**46 · 3 · 5 · 17 · 257 + 1``, 1.7 s at 2**8 against 2.4 s at 2**20 and
#: 3.8 s for FLINT alone (measured).
_CHARACTER_ORDER_MAX_WORD = 2**8


def _smooth_factors(p: int) -> list[int]:
    """Prime factors of ``p - 1`` below 2**12, with multiplicity, ascending, while their product stays small.

    The product stays below 2**20, or 2**8 for primes of at most 64 bits.
    """
    primes = _small_primes(_CHARACTER_PRIME_MAX)
    cap = _CHARACTER_ORDER_MAX if p.bit_length() > 64 else _CHARACTER_ORDER_MAX_WORD
    rest, order, factors = p - 1, 1, []
    for q in primes[_residues(p - 1, primes) == 0].tolist():
        while rest % q == 0 and order * q <= cap:
            factors.append(q)
            order *= q
            rest //= q
    return factors


def _roots_flint(h, ctx, *, random_state: SeedLike = None) -> list[int]:
    """Roots of a FLINT polynomial that must split into distinct linear factors, sorted.

    Rabin's splitting raises ``x + a`` to the power ``(p - 1)/2`` modulo every
    factor it meets: ``log2 p`` squarings each time. Here one exponentiation
    ``g = (x + a)^((p - 1)/D) mod h`` serves all the smooth part ``D`` of
    ``p - 1`` (its prime factors below 2**12): ``g(r)`` is the ``D``-th power
    character of ``r + a``, a ``D``-th root of unity ``w^k(r)``, and the digits of
    ``k(r)`` in the mixed radix of ``D``'s prime factors are read off by gcds
    with ``(g w^(-kappa))^(D / q_1...q_i) - zeta^t`` at the cost of exponents
    below ``D``. Roots that share a character (and the whole polynomial when
    ``D = 2``) go to FLINT's splitter. The roots do not depend on ``a`` or ``w``.
    """
    h = h.monic()
    degree = h.degree()
    p = int(ctx.modulus())
    factors = _smooth_factors(p) if degree > 3 else []
    if len(factors) < 2:
        return _flint_roots_checked(h)
    order = math.prod(factors)
    rng = check_random_state(random_state)
    shift = random_field_elements(p, 1, random_state=rng)[0]
    while int(h(-shift)) == 0:  # r + a = 0 has no character
        shift = random_field_elements(p, 1, random_state=rng)[0]
    generator = _root_of_unity(p, order, factors, rng)
    nodes = [(h, ctx([shift, 1]).pow_mod((p - 1) // order, h), 0)]  # (f, g mod f, k(r) mod q_1...q_(i-1))
    prefix = 1
    for q in factors:
        zeta = pow(generator, order // q, p)
        split = []
        for f, g, kappa in nodes:
            if f.degree() < 2:
                split.append((f, g, kappa))
                continue
            y = (g * pow(generator, -kappa, p)).pow_mod(order // (prefix * q), f)
            parts = [(f.gcd(y - pow(zeta, t, p)), t) for t in range(q)]
            if sum(part.degree() for part, _ in parts) != f.degree():
                raise DecodingError(f"polynomial of degree {degree} does not split into distinct linear factors.")
            split.extend((part, g % part, kappa + t * prefix) for part, t in parts if part.degree() > 0)
        nodes = split
        prefix *= q
    roots: list[int] = []
    for f, _, _ in nodes:
        roots.extend([(-int(f.coeffs()[0])) % p] if f.degree() == 1 else _flint_roots_checked(f))
    return sorted(roots)


def splitting_seconds(degree: int, p: int, *, random_state: SeedLike = None) -> float:
    """Seconds of the exponentiation every FLINT root finding of a degree-``degree`` polynomial starts with.

    :func:`poly_roots` (FLINT) first raises ``x + a`` to the power
    ``(p − 1)/D`` modulo the polynomial (``D`` the smooth part of ``p − 1`` it
    uses, 1 for degree 3 or less): one squaring per bit of the exponent, and
    the splitting that follows costs more. This times one squaring modulo a
    random monic polynomial of the same degree (the difference between
    ``pow_mod`` to the powers ``2**6`` and ``2**2``, over 4) and multiplies, a
    lower bound on the root finding that takes seconds to measure when the
    root finding itself takes hours.

    Parameters
    ----------
    degree : int
        Degree of the polynomial (the number of roots), >= 1.
    p : int
        The prime.
    random_state : int, numpy.random.Generator or None, default=None
        Draws the polynomials.

    Returns
    -------
    float
        Seconds, a lower bound on :func:`poly_roots` at this size.

    Raises
    ------
    ImportError
        When python-flint is not installed.

    Examples
    --------
    A timing, so the value differs from run to run (and is 0.0 when the polynomial is too small to time):

    >>> from fedlib.field import splitting_seconds
    >>> seconds = splitting_seconds(1000, 2**61 - 1, random_state=0)
    >>> isinstance(seconds, float) and seconds >= 0.0
    True
    """
    _use_flint("flint")
    ctx = _flint_ctx(p)
    rng = check_random_state(random_state)
    order = math.prod(_smooth_factors(p)) if degree > 3 else 1
    modulus = ctx([*random_field_elements(p, degree, random_state=rng), 1])
    g = ctx(random_field_elements(p, degree, random_state=rng))
    seconds = []
    for k in (2, 6):
        start = time.perf_counter()
        g.pow_mod(2**k, modulus)
        seconds.append(time.perf_counter() - start)
    return max(seconds[1] - seconds[0], 0.0) / 4 * (((p - 1) // order).bit_length() - 1)


def _root_of_unity(p: int, order: int, factors: list[int], rng) -> int:
    """A primitive ``order``-th root of unity in GF(p), ``order`` dividing ``p - 1``."""
    fp = _flint.fmpz(p)
    while True:
        a = random_field_elements(p - 2, 1, random_state=rng)[0] + 2
        w = int(pow(_flint.fmpz(a), (p - 1) // order, fp))
        if all(pow(w, order // q, p) != 1 for q in set(factors)):
            return w


def _product_tree(factors: list) -> Any:
    """Product of FLINT polynomials, balanced pairwise (fast multiplication pays off on equal sizes)."""
    while len(factors) > 1:
        paired = [a * b for a, b in zip(factors[::2], factors[1::2], strict=False)]
        factors = paired + ([factors[-1]] if len(factors) % 2 else [])
    return factors[0]


def _from_roots_flint(nodes: list[int], ctx) -> Any:
    """``prod_t (x - t)`` as a FLINT polynomial."""
    p = int(ctx.modulus())
    return _product_tree([ctx([(-t) % p, 1]) for t in nodes]) if nodes else ctx([1])


def _rational_sum_flint(points: list[int], weights: list[int], ctx) -> tuple[Any, Any]:
    """``N, D`` with ``N / D = sum_t w_t / (1 - x_t X)`` and ``D = prod_t (1 - x_t X)``, by a product tree."""
    p = int(ctx.modulus())
    level = [(ctx([w % p]), ctx([1, (-x) % p])) for x, w in zip(points, weights, strict=True)]
    while len(level) > 1:
        paired = [(n1 * d2 + n2 * d1, d1 * d2) for (n1, d1), (n2, d2) in zip(level[::2], level[1::2], strict=False)]
        level = paired + ([level[-1]] if len(level) % 2 else [])
    return level[0]


def _series_flint(numerator, denominator, n_terms: int, block: int, ctx) -> list[int]:
    """The first ``n_terms`` coefficients of ``N / D`` (``D(0) = 1``, ``deg D = k < b``, ``deg N < b``), by blocks.

    With ``E = 1/D mod x^b`` and ``R_0 = N``: block ``i`` is ``c_i = R_i E mod x^b``
    and ``R_(i+1) = (R_i - D c_i) / x^b``, an exact shift of degree below ``k``.
    As ``deg R_i < b``, ``R_(i+1)`` is minus the top ``k`` coefficients of
    ``D c_i``, read off the low product of the reversals:
    ``rev(D) rev(c_i top k) mod x^k``. So a block costs one ``k`` by ``b``
    product and one ``k`` by ``k`` one, and the inverse is only ``b`` long.
    """
    if n_terms <= block:
        return _flint_coeffs(numerator.mul_low(denominator.inverse_series_trunc(n_terms), n_terms), n_terms)
    k = denominator.degree()
    inverse = denominator.inverse_series_trunc(block)
    reversed_denominator = ctx(_flint_coeffs(denominator, k + 1)[::-1])
    rest = numerator
    out: list[int] = []
    for _ in range(0, n_terms, block):
        chunk = _flint_coeffs(rest.mul_low(inverse, block), block)
        out.extend(chunk)
        top = ctx(chunk[block - k :][::-1])  # c_(b-1), ..., c_(b-k)
        rest = -ctx(_flint_coeffs(reversed_denominator.mul_low(top, k), k)[::-1])
    return out[:n_terms]


def _power_sums_flint(points: list[int], weights: list[int], n_terms: int, ctx) -> list[int]:
    """FLINT path of :func:`power_sums`: the truncated series of ``sum_t w_t / (1 - x_t X)``."""
    if not points or n_terms == 0:
        return [0] * n_terms
    numerator, denominator = _rational_sum_flint(points, weights, ctx)
    return _series_flint(numerator, denominator, n_terms, max(64, 8 * len(points)), ctx)


def power_sums(points, weights, n_terms: int, p: int, *, backend: str = "auto") -> list[int]:
    """``S_i = sum_t w_t x_t^i mod p`` for ``i = 0..n_terms-1``: the syndromes of SCMA (MUFC Alg. 2, line 2).

    The sums are the coefficients of the power series
    ``sum_t w_t / (1 - x_t X) = N(X) / D(X)`` with ``D = prod_t (1 - x_t X)``.
    With FLINT, ``N`` and ``D`` come from a product tree and the series is
    expanded ``b = 8 m`` terms at a time by fast multiplication (``m`` points),
    about ``2 n / m`` products of size ``m`` in all; the Python backend updates
    the ``m`` powers once per term, ``n m`` multiplications. Both give the same
    residues.

    Parameters
    ----------
    points : sequence of int
        The ``x_t`` (SCMA: the bin indices).
    weights : sequence of int
        The ``w_t`` (SCMA: the counts), as many as ``points``.
    n_terms : int
        How many sums, ``>= 0``.
    p : int
        The prime.
    backend : {"auto", "python", "flint"}, default="auto"
        ``"auto"`` uses FLINT when python-flint is installed.

    Returns
    -------
    list of int
        ``n_terms`` residues in ``[0, p)``.

    Raises
    ------
    ValueError
        If ``points`` and ``weights`` differ in length, ``n_terms < 0``, or for an unknown ``backend``.
    ImportError
        With ``backend="flint"`` when python-flint is not installed.

    References
    ----------
    C. Pan, J. Sima, S. Prakash, V. Rana, O. Milenkovic. "Machine Unlearning of
    Federated Clusters", ICLR 2023, Alg. 2.

    Examples
    --------
    >>> from fedlib.field import power_sums
    >>> power_sums([3, 5], [4, 2], 4, 13)  # 4·3^i + 2·5^i mod 13
    [6, 9, 8, 7]
    """
    points = [int(v) % p for v in points]
    weights = [int(v) % p for v in weights]
    if len(points) != len(weights):
        raise ValueError(f"{len(points)} points but {len(weights)} weights.")
    if n_terms < 0:
        raise ValueError(f"n_terms={n_terms} should be >= 0.")
    if _use_flint(backend):
        return _power_sums_flint(points, weights, n_terms, _flint_ctx(p))
    powers = list(weights)
    out = []
    for _ in range(n_terms):
        out.append(sum(powers) % p)
        powers = [v * x % p for v, x in zip(powers, points, strict=True)]
    return out


def _transposed_vandermonde_flint(nodes: list[int], rhs: list[int], ctx, master=None) -> list[int]:
    """FLINT path of :func:`solve_transposed_vandermonde`: ``q_t = Omega~(t) / P'(t)``.

    With ``Lambda(x) = prod_t (1 - t x)`` (the reversal of ``P = prod_t (x - t)``) and
    ``Omega = R Lambda mod x^m`` for ``R = sum_i rhs_i x^i``, ``Omega = sum_t q_t prod_(s != t) (1 - s x)``
    exactly; its reversal ``Omega~`` of length ``m`` is ``sum_t q_t prod_(s != t) (x - s)``, so
    ``Omega~(t) = q_t P'(t)``. Two multipoint evaluations, ``O(M(m) log m)``.
    """
    m = len(nodes)
    master = _from_roots_flint(nodes, ctx) if master is None else master
    lam = ctx(_flint_coeffs(master, m + 1)[::-1])
    omega = ctx(rhs).mul_low(lam, m)
    omega_rev = ctx(_flint_coeffs(omega, m)[::-1])
    numerators = omega_rev.multipoint_evaluate(nodes)
    derivatives = master.derivative().multipoint_evaluate(nodes)
    return [int(a / b) for a, b in zip(numerators, derivatives, strict=True)]


def solve_transposed_vandermonde(nodes, rhs, p: int, *, backend: str = "auto") -> list[int]:
    """Solve ``sum_t q_t nodes_t^i = rhs_i`` (i = 0..m-1) over GF(p): O(m^2) operations, or O(M(m) log m) with FLINT.

    This is the Vandermonde step of MUFC Alg. 2 (line 3). With ``P(x) = prod_t (x - nodes_t)``
    and ``P_t(x) = P(x) / (x - nodes_t) = sum_k a_{t,k} x^k``, the solution is
    ``q_t = w_t sum_k a_{t,k} rhs_k``, where ``w_t = 1 / P_t(nodes_t)`` is the
    barycentric weight of the Lagrange basis (:func:`fedlib.field.barycentric_weights`).
    The FLINT backend evaluates the same solution in closed form,
    ``q_t = Omega~(t) / P'(t)`` with ``Omega~`` the reversal of
    ``(sum_i rhs_i x^i) prod_s (1 - s x) mod x^m`` (the Forney form), by fast
    multipoint evaluation; the solution is unique, so both backends agree.

    Parameters
    ----------
    nodes : sequence of int
        ``m`` distinct elements of GF(p).
    rhs : sequence of int
        ``m`` right-hand sides.
    p : int
        The prime.
    backend : {"auto", "python", "flint"}, default="auto"
        ``"auto"`` uses FLINT when python-flint is installed.

    Returns
    -------
    list of int
        The unknowns ``q_t``, in the order of ``nodes``.

    Raises
    ------
    ValueError
        If ``rhs`` and ``nodes`` differ in length, the nodes are not distinct, or for an unknown ``backend``.
    ImportError
        With ``backend="flint"`` when python-flint is not installed.

    Examples
    --------
    >>> from fedlib.field import solve_transposed_vandermonde
    >>> solve_transposed_vandermonde([2, 3], [5, 13], 101)  # 2·2^i + 3·3^i for i = 0, 1
    [2, 3]
    """
    nodes = [int(v) % p for v in nodes]
    rhs = [int(v) % p for v in rhs]
    m = len(nodes)
    if len(rhs) != m:
        raise ValueError(f"need {m} right-hand sides, got {len(rhs)}.")
    if len(set(nodes)) != m:
        raise ValueError("Vandermonde nodes must be distinct.")
    if _use_flint(backend):
        return _transposed_vandermonde_flint(nodes, rhs, _flint_ctx(p)) if m else []
    master = poly_from_roots(nodes, p)  # P(x), degree m, monic, lowest degree first
    out = []
    for node, weight in zip(nodes, barycentric_weights(nodes, p), strict=True):
        # synthetic division of P by (x - node); quotient[k] is the coefficient of x^k in P_t
        quotient = [0] * m
        carry = 0
        for k in range(m, 0, -1):
            carry = (master[k] + carry * node) % p
            quotient[k - 1] = carry
        numerator = sum(a * b for a, b in zip(quotient, rhs, strict=True)) % p
        out.append(numerator * weight % p)
    return out


def decode_power_sums(
    syndromes,
    p: int,
    *,
    backend: str = "auto",
    magnitudes: str = "vandermonde",
    random_state: SeedLike = None,
    support=None,
    stage_seconds: dict[str, float] | None = None,
) -> dict[int, int]:
    """Recover a sparse vector from its power sums over GF(p).

    Given ``S_i = sum_j q_j j^(i-1) mod p`` for ``i = 1..2T``, with at most ``T``
    non-zero ``q_j``, distinct non-zero indices ``j`` and ``q_j != 0 mod p``,
    return ``{j: q_j}`` (MUFC Alg. 2, line 3): Berlekamp-Massey gives
    ``Lambda(x) = prod (1 - j x)``, its reversal ``prod (x - j)`` has the indices
    as roots, and a Vandermonde solve gives the magnitudes. Every syndrome is
    then checked against the result.

    With FLINT (``backend="auto"`` when python-flint is installed, or
    ``"flint"``) every step uses fast polynomial arithmetic: FLINT's ``minpoly``
    (Berlekamp-Massey, half-gcd for long sequences) gives ``prod (x - j)``
    directly, its roots come from :func:`poly_roots`'s FLINT splitter, the magnitudes are
    ``q_j = Omega~(j) / h'(j)`` by multipoint evaluation (for either
    ``magnitudes``: the solution is unique), and the check recomputes all ``2T``
    power sums of the result with :func:`power_sums`. ``backend="python"`` runs
    the quadratic reference algorithms. Both return the same dictionary and
    refuse the same inputs. At SCMA scale the root finding dominates: about
    ``log2 p`` squarings modulo a degree-``m`` polynomial per splitting.

    Parameters
    ----------
    syndromes : sequence of int
        ``S_1..S_2T``, an even number of them.
    p : int
        The prime.
    backend : {"auto", "python", "flint"}, default="auto"
        The arithmetic of every step (see above); the root finder of
        :func:`poly_roots`.
    magnitudes : {"vandermonde", "forney"}, default="vandermonde"
        How the Python backend solves for the ``q_j``: the Vandermonde system
        of MUFC Alg. 2, or Forney's formula ``q_j = Ω(1/j) / Π_{t≠j} (1 − t/j)``
        with ``Ω = S Λ mod x^m``, the Reed-Solomon error-evaluator formula. Both
        are exact and agree.
    random_state : int, numpy.random.Generator or None, default=None
        Passed to :func:`poly_roots` (Python backend).
    support : sequence of int, optional
        A claimed support to verify instead of searching for the locator's
        roots: the locator must have exactly these roots (checked), and the
        decoding goes on from them. For benchmarks on supports whose root
        finding would take hours.
    stage_seconds : dict, optional
        Filled with the seconds of each stage: ``"locator"``
        (Berlekamp-Massey), ``"roots"``, ``"magnitudes"`` and ``"check"``.

    Returns
    -------
    dict of int to int
        ``{j: q_j}`` for the non-zero entries; empty if every syndrome is 0.

    Raises
    ------
    DecodingError
        When the syndromes are not those of a vector with at most ``T``
        non-zeros and non-zero indices (for example, corrupted by a client).
    ValueError
        For an odd number of syndromes, an unknown ``magnitudes`` or an unknown ``backend``,
        or a claimed ``support`` that is not the locator's set of roots.
    ImportError
        With ``backend="flint"`` when python-flint is not installed.

    Examples
    --------
    Two bins, 3 and 5, with counts 4 and 2, from ``2T = 4`` power sums over GF(13):

    >>> from fedlib.field import decode_power_sums
    >>> S = [(4 * 3**i + 2 * 5**i) % 13 for i in range(4)]
    >>> decode_power_sums(S, 13, backend="python")
    {3: 4, 5: 2}
    """
    S = [int(v) % p for v in syndromes]
    if len(S) % 2:
        raise ValueError(f"need an even number of syndromes (2T), got {len(S)}.")
    if magnitudes not in ("vandermonde", "forney"):
        raise ValueError(f"magnitudes={magnitudes!r} should be 'vandermonde' or 'forney'.")
    flint = _use_flint(backend)
    if not any(S):
        return {}
    if flint:
        ctx = _flint_ctx(p)
        with _timed(stage_seconds, "locator"):
            h = _locator_flint(S, ctx)
        with _timed(stage_seconds, "roots"):
            roots = _roots_flint(h, ctx) if support is None else _claimed_roots(support, h.degree(), h, p)
        with _timed(stage_seconds, "magnitudes"):
            out = _check_magnitudes(roots, _transposed_vandermonde_flint(roots, S[: len(roots)], ctx, master=h))
        with _timed(stage_seconds, "check"):
            _check_syndromes_flint(S, out, ctx)
        return out
    with _timed(stage_seconds, "locator"):
        lam = berlekamp_massey(S, p)
        m = len(lam) - 1
        _check_order(m, len(S))
        h = list(reversed(lam))  # x^m Lambda(1/x) = prod (x - j), monic of degree m
        _check_no_zero_index(h[0])
    with _timed(stage_seconds, "roots"):
        if support is None:
            roots = poly_roots(h, p, backend=backend, random_state=random_state)
        else:
            roots = _claimed_roots(support, m, lambda x: poly_eval(h, x, p), p)
    with _timed(stage_seconds, "magnitudes"):
        if magnitudes == "forney":
            values = _forney_magnitudes(S, lam, roots, p)
        else:
            values = solve_transposed_vandermonde(roots, S[:m], p, backend="python")
        out = _check_magnitudes(roots, values)
    with _timed(stage_seconds, "check"):  # every syndrome must be explained, not only the first 2m
        terms = list(out.items())
        current = [q for _, q in terms]
        for i, s_i in enumerate(S):
            if sum(current) % p != s_i:
                raise DecodingError(f"decoded vector does not reproduce syndrome {i + 1}; input is inconsistent.")
            current = [c * j % p for c, (j, _) in zip(current, terms, strict=True)]
    return out


@contextmanager
def _timed(seconds: dict[str, float] | None, stage: str):
    """Add the seconds the block takes to ``seconds[stage]`` (nothing without a dict)."""
    start = time.perf_counter()
    yield
    if seconds is not None:
        seconds[stage] = seconds.get(stage, 0.0) + time.perf_counter() - start


def _claimed_roots(support, degree: int, locator, p: int) -> list[int]:
    """A claimed support, checked to be exactly the roots of the locator (of the given degree)."""
    roots = sorted({int(j) % p for j in support})
    if len(roots) != len(support) or degree != len(roots):
        raise ValueError(f"the claimed support has {len(support)} indices; the locator has degree {degree}.")
    values = locator.multipoint_evaluate(roots) if hasattr(locator, "multipoint_evaluate") else map(locator, roots)
    if any(int(v) for v in values):
        raise ValueError("the claimed support is not the set of the locator's roots.")
    return roots


def _check_order(m: int, n_syndromes: int) -> None:
    """Refuse a linear recurrence too long for the syndromes to determine: more than T non-zero terms."""
    if 2 * m > n_syndromes:
        raise DecodingError(
            f"the syndromes need a recurrence of order {m} > T={n_syndromes // 2}: more than T non-zero terms."
        )


def _check_no_zero_index(constant: int) -> None:
    """Refuse a locator with root 0 (``Lambda`` of degree below ``m``): index 0 has no power sums to show it."""
    if constant == 0:
        raise DecodingError("index 0 appears in the support: indices must be non-zero field elements.")


def _locator_flint(S: list[int], ctx) -> Any:
    """``h(x) = prod_j (x - j)``: FLINT's minimal polynomial of the syndromes, the reversal of Berlekamp-Massey's."""
    h = ctx.minpoly(S)
    _check_order(h.degree(), len(S))
    _check_no_zero_index(int(h.constant_coefficient()))
    return h


def _check_magnitudes(support: list[int], values: list[int]) -> dict[int, int]:
    """``{j: q_j}``, refusing a zero magnitude (then the syndromes were inconsistent)."""
    out: dict[int, int] = {}
    for j, q in zip(support, values, strict=True):
        if q == 0:
            raise DecodingError(f"decoded a zero magnitude at index {j}: inconsistent syndromes.")
        out[j] = q
    return out


def _check_syndromes_flint(S: list[int], out: dict[int, int], ctx) -> None:
    """Every syndrome must be reproduced by the decoded vector, not only the first 2m."""
    recomputed = _power_sums_flint(list(out), list(out.values()), len(S), ctx)
    if recomputed != S:
        i = next(i for i, (a, b) in enumerate(zip(recomputed, S, strict=True)) if a != b)
        raise DecodingError(f"decoded vector does not reproduce syndrome {i + 1}; input is inconsistent.")
