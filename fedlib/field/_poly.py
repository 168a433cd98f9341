"""Polynomials over GF(p) with exact Python-int coefficients, and the decoders built on them.

A polynomial is a list of coefficients, lowest degree first, with no trailing
zeros (the zero polynomial is ``[]``). Every function takes the prime ``p`` and
returns reduced coefficients in ``[0, p)``. Coefficients are Python ints, so any
size of ``p`` works (MUFC's SCMA needs primes of thousands of bits for FEMNIST).
"""

from __future__ import annotations

from fedlib._typing import SeedLike
from fedlib._validation import check_random_state
from fedlib.field._interpolation import barycentric_weights


class DecodingError(ValueError):
    """A Reed-Solomon / power-sum decoder found no consistent solution (too many terms, or corrupted input)."""


#: A polynomial over GF(p): coefficients lowest degree first, no trailing zeros.
Poly = list[int]


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
    >>> poly_from_roots([1, 6], 7)  # (x − 1)(x − 6) = x² − 7x + 6
    [6, 0, 1]
    """
    out: Poly = [1]
    for r in roots:
        out = poly_mul(out, [(-r) % p, 1], p)
    return out


def berlekamp_massey(sequence, p: int) -> Poly:
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

    Returns
    -------
    list of int
        ``[1, l_1, ..., l_m]``, of length ``m + 1`` where ``m`` is the linear
        complexity (trailing zeros kept).

    References
    ----------
    J. L. Massey. "Shift-register synthesis and BCH decoding", IEEE
    Transactions on Information Theory 15(1), 1969.

    Examples
    --------
    >>> berlekamp_massey([2, 2 * 3 % 7, 2 * 9 % 7], 7)  # s_i = 2·3^i: Λ(x) = 1 − 3x
    [1, 4]
    """
    s = [int(v) % p for v in sequence]
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


def poly_roots(h: Poly, p: int, *, backend: str = "auto", random_state: SeedLike = 0) -> list[int]:
    """All roots in GF(p) of a square-free polynomial that splits into linear factors.

    ``backend="python"`` runs Cantor-Zassenhaus equal-degree splitting written
    here: for random ``a``, ``gcd(h, (x + a)^((p-1)/2) - 1)`` separates the roots
    ``r`` for which ``r + a`` is a quadratic residue from the others; recurse on
    both parts. ``backend="flint"`` asks FLINT (python-flint), about 50 times
    faster at MUFC's Celltype scale; ``"auto"`` uses FLINT when it is installed.
    The two agree root for root (tested). MUFC Alg. 2 cites Kedlaya and Umans
    (2011) for this step; any exact root finder gives the same roots.

    Parameters
    ----------
    h : list of int
        Coefficients, lowest degree first.
    p : int
        The prime.
    backend : {"auto", "python", "flint"}, default="auto"
        The root finder.
    random_state : int, numpy.random.Generator or None, default=0
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
    >>> poly_roots([6, 0, 1], 7, backend="python")
    [1, 6]
    """
    h = poly_monic(trim(list(h)), p)
    if not h:
        raise DecodingError("the zero polynomial has every element as a root.")
    if backend not in ("auto", "python", "flint"):
        raise ValueError(f"backend={backend!r} should be 'auto', 'python' or 'flint'.")
    if backend != "python" and len(h) > 2:
        try:
            import flint
        except ImportError:
            if backend == "flint":
                raise
        else:
            found = flint.fmpz_mod_poly_ctx(p)(h).roots()
            if len(found) != len(h) - 1 or any(mult != 1 for _, mult in found):
                raise DecodingError(f"polynomial of degree {len(h) - 1} does not have {len(h) - 1} distinct roots.")
            return sorted(int(root) for root, _ in found)
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


def solve_transposed_vandermonde(nodes, rhs, p: int) -> list[int]:
    """Solve ``sum_t q_t nodes_t^i = rhs_i`` (i = 0..m-1) over GF(p) in O(m^2) operations.

    This is the Vandermonde step of MUFC Alg. 2 (line 3). With ``P(x) = prod_t (x - nodes_t)``
    and ``P_t(x) = P(x) / (x - nodes_t) = sum_k a_{t,k} x^k``, the solution is
    ``q_t = w_t sum_k a_{t,k} rhs_k``, where ``w_t = 1 / P_t(nodes_t)`` is the
    barycentric weight of the Lagrange basis (:func:`fedlib.field.barycentric_weights`).

    Parameters
    ----------
    nodes : sequence of int
        ``m`` distinct elements of GF(p).
    rhs : sequence of int
        ``m`` right-hand sides.
    p : int
        The prime.

    Returns
    -------
    list of int
        The unknowns ``q_t``, in the order of ``nodes``.

    Raises
    ------
    ValueError
        If ``rhs`` and ``nodes`` differ in length or the nodes are not distinct.

    Examples
    --------
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
    syndromes, p: int, *, backend: str = "auto", magnitudes: str = "vandermonde", random_state: SeedLike = 0
) -> dict[int, int]:
    """Recover a sparse vector from its power sums over GF(p).

    Given ``S_i = sum_j q_j j^(i-1) mod p`` for ``i = 1..2T``, with at most ``T``
    non-zero ``q_j``, distinct non-zero indices ``j`` and ``q_j != 0 mod p``,
    return ``{j: q_j}`` (MUFC Alg. 2, line 3): Berlekamp-Massey gives
    ``Lambda(x) = prod (1 - j x)``, its reversal ``prod (x - j)`` has the indices
    as roots, and a Vandermonde solve gives the magnitudes. Every syndrome is
    then checked against the result.

    Parameters
    ----------
    syndromes : sequence of int
        ``S_1..S_2T``, an even number of them.
    p : int
        The prime.
    backend : {"auto", "python", "flint"}, default="auto"
        The root finder (see :func:`poly_roots`).
    magnitudes : {"vandermonde", "forney"}, default="vandermonde"
        How to solve for the ``q_j``: the Vandermonde system of MUFC Alg. 2, or
        Forney's formula ``q_j = Ω(1/j) / Π_{t≠j} (1 − t/j)`` with
        ``Ω = S Λ mod x^m``, the Reed-Solomon error-evaluator formula. Both are
        exact and agree.
    random_state : int, numpy.random.Generator or None, default=0
        Passed to :func:`poly_roots`.

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
        For an odd number of syndromes or an unknown ``magnitudes``.

    Examples
    --------
    Two bins, 3 and 5, with counts 4 and 2, from ``2T = 4`` power sums over GF(13):

    >>> S = [(4 * 3**i + 2 * 5**i) % 13 for i in range(4)]
    >>> decode_power_sums(S, 13, backend="python")
    {3: 4, 5: 2}
    """
    S = [int(v) % p for v in syndromes]
    if len(S) % 2:
        raise ValueError(f"need an even number of syndromes (2T), got {len(S)}.")
    if not any(S):
        return {}
    lam = berlekamp_massey(S, p)
    m = len(lam) - 1
    if 2 * m > len(S):
        raise DecodingError(
            f"the syndromes need a recurrence of order {m} > T={len(S) // 2}: more than T non-zero terms."
        )
    h = list(reversed(lam))  # x^m Lambda(1/x) = prod (x - j)
    trim(h)
    if len(h) - 1 != m:
        raise DecodingError("index 0 appears in the support: indices must be non-zero field elements.")
    support = poly_roots(h, p, backend=backend, random_state=random_state)
    if magnitudes == "forney":
        values = _forney_magnitudes(S, lam, support, p)
    elif magnitudes == "vandermonde":
        values = solve_transposed_vandermonde(support, S[:m], p)
    else:
        raise ValueError(f"magnitudes={magnitudes!r} should be 'vandermonde' or 'forney'.")
    out: dict[int, int] = {}
    for j, q in zip(support, values, strict=True):
        if q == 0:
            raise DecodingError(f"decoded a zero magnitude at index {j}: inconsistent syndromes.")
        out[j] = q
    # every syndrome must be explained, not only the first 2m
    terms = list(out.items())
    current = [q for _, q in terms]
    for i, s_i in enumerate(S):
        if sum(current) % p != s_i:
            raise DecodingError(f"decoded vector does not reproduce syndrome {i + 1}; input is inconsistent.")
        current = [c * j % p for c, (j, _) in zip(current, terms, strict=True)]
    return out
