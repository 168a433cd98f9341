"""Primes and uniform random elements of a prime field GF(p), for any size of p.

Primality and the prime search run on FLINT (python-flint) when it is installed, with sympy as the
fallback; both apply the same test (BPSW, deterministic below 2**64), so they agree on every input.
"""

from __future__ import annotations

import secrets
from functools import lru_cache
from types import ModuleType

import numpy as np

from fedlib._random import check_key_source
from fedlib._typing import SeedLike


def _import_flint() -> ModuleType | None:
    try:
        import flint
    except ImportError:  # pragma: no cover - python-flint is a dependency; sympy is the fallback
        return None
    return flint


#: python-flint, or ``None`` when it is not installed (then sympy tests primality).
_flint = _import_flint()

#: Below this, the prime search tests consecutive integers (sympy's own bound for a deterministic test is
#: 2**64 as well); above, it first sieves a window of candidates by the primes below :data:`_SIEVE_BOUND`.
_SIEVE_FROM = 2**64
#: Sieving bound: a candidate with no prime factor below it survives with probability about
#: ``e^(-gamma) / ln(bound)`` (Mertens), 3.7% for 2**22, and costs one BPSW test.
_SIEVE_BOUND = 2**22


@lru_cache(maxsize=4)
def _small_primes(bound: int) -> np.ndarray:
    """The primes below ``bound`` (sieve of Eratosthenes), as int64."""
    is_p = np.ones(bound, dtype=bool)
    is_p[:2] = False
    for r in range(2, int(bound**0.5) + 1):
        if is_p[r]:
            is_p[r * r :: r] = False
    return np.flatnonzero(is_p).astype(np.int64)


def _residues(n: int, moduli: np.ndarray) -> np.ndarray:
    """``n mod r`` for every ``r < 2**31`` in ``moduli``, by Horner over the 32-bit limbs of ``n``, vectorised."""
    limbs = np.frombuffer(n.to_bytes(max(1, (n.bit_length() + 31) // 32) * 4, "big"), dtype=">u4").astype(np.int64)
    acc = np.zeros_like(moduli)
    for limb in limbs:
        acc = (acc * 2**32 + limb) % moduli
    return acc


def _probable_prime(n: int) -> bool:
    """BPSW (FLINT, else sympy): deterministic below 2**64, no known counterexample above."""
    if n < 2:
        return False
    if _flint is not None:
        return bool(_flint.fmpz(n).is_probable_prime())
    import sympy  # only without python-flint, a core dependency

    return bool(sympy.isprime(n))


def _next_prime_sieved(n: int, *, width: int | None = None) -> int:
    """Smallest prime above ``n >= _SIEVE_FROM``: sieve windows of candidates, then BPSW on the survivors in order.

    Exactly the answer of testing ``n + 1, n + 2, ...`` one by one: the sieve only
    removes candidates with a prime factor below :data:`_SIEVE_BOUND` (all of them
    composite, as every candidate exceeds the bound), and the survivors are tested in
    increasing order. ``width`` is the window's length (by default a power of two
    above ``2 ln n``, so most searches end in the first window).
    """
    primes = _small_primes(_SIEVE_BOUND)
    if width is None:
        width = 1 << max(12, (2 * n.bit_length()).bit_length())
    start = n + 1
    residues = _residues(start, primes)
    small = primes[primes < width]
    while True:
        composite = np.zeros(width, dtype=bool)
        first = (-residues) % primes  # offset of the first multiple of each prime in the window
        for r, k in zip(small.tolist(), first[: small.size].tolist(), strict=True):
            composite[k::r] = True
        big_first = first[small.size :]
        composite[big_first[big_first < width]] = True
        for k in np.flatnonzero(~composite).tolist():
            if _probable_prime(start + k):
                return start + k
        start += width
        residues = (residues + width) % primes


def next_prime(n: int) -> int:
    """Smallest prime strictly greater than ``n``.

    Below 2**64 the integers above ``n`` are tested in turn; above, a window of
    candidates is first sieved by the primes below 2**22 (vectorised), and the
    survivors are tested in increasing order. The test is BPSW, from FLINT when
    python-flint is installed and from sympy otherwise, so the answer is the
    same as ``sympy.nextprime(n)``: sieving only skips composites. For the
    5,209-bit bound of a ``100**784`` grid (MUFC's SCMA on FEMNIST) this takes
    seconds where ``sympy.nextprime`` takes minutes.

    Parameters
    ----------
    n : int
        Any integer; below 1 the answer is 2.

    Returns
    -------
    int
        The next prime.

    Examples
    --------
    >>> from fedlib.field import next_prime
    >>> next_prime(10), next_prime(2**50 - 28)
    (11, 1125899906842597)
    >>> next_prime(2**64) - 2**64
    13
    """
    n = int(n)
    if n < 1:
        return 2
    if n >= _SIEVE_FROM:
        return _next_prime_sieved(n)
    if _flint is None:
        import sympy  # only without python-flint, a core dependency

        return int(sympy.nextprime(n))
    candidate = n + 1
    while not _probable_prime(candidate):
        candidate += 1
    return candidate


def is_prime(n: int) -> bool:
    """Primality of ``n`` (deterministic below 2**64, BPSW above; no known counterexample).

    Uses FLINT when python-flint is installed (a 5,000-bit prime takes a fraction
    of a second), sympy otherwise; both run BPSW.

    Parameters
    ----------
    n : int
        The integer to test.

    Returns
    -------
    bool
        Whether ``n`` is prime.

    Examples
    --------
    >>> from fedlib.field import is_prime
    >>> is_prime(2**127 - 1), is_prime(2**50)
    (True, False)
    """
    return _probable_prime(int(n))


def check_prime(p: int) -> int:
    """Return ``p`` as an int if it is a prime.

    Parameters
    ----------
    p : int
        A Python or numpy integer.

    Returns
    -------
    int
        ``p``.

    Raises
    ------
    TypeError
        If ``p`` is not an integer (or is a bool).
    ValueError
        If ``p`` is not a prime.

    Examples
    --------
    >>> from fedlib.field import check_prime
    >>> check_prime(2**61 - 1) == 2**61 - 1
    True
    >>> check_prime(2**61 + 1)
    Traceback (most recent call last):
        ...
    ValueError: prime=2305843009213693953 is not a prime.
    """
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
        raise TypeError(f"prime must be an int, not {type(p).__name__}.")
    p = int(p)
    if p < 2 or not is_prime(p):
        raise ValueError(f"prime={p} is not a prime.")
    return p


def random_field_elements(p: int, size: int, *, random_state: SeedLike | str = None) -> list[int]:
    """``size`` independent uniform elements of ``{0, ..., p-1}`` as Python ints.

    Rejection sampling on ``p.bit_length()`` random bits, so the draw is exactly
    uniform for any ``p``.

    Parameters
    ----------
    p : int
        The field size, >= 2 (any size).
    size : int
        Number of elements, >= 0.
    random_state : int, numpy.random.Generator, None or "secrets", default=None
        ``"secrets"`` draws from the operating system's CSPRNG (for real key
        material); an int or a Generator gives a reproducible simulation.

    Returns
    -------
    list of int
        The elements.

    Raises
    ------
    ValueError
        If ``p < 2``, ``size < 0``, or ``random_state`` is a string other than ``"secrets"``.

    Examples
    --------
    >>> from fedlib.field import random_field_elements
    >>> values = random_field_elements(2**255 - 19, 3, random_state=0)
    >>> len(values), all(0 <= v < 2**255 - 19 for v in values)
    (3, True)
    """
    p = int(p)
    if p < 2:
        raise ValueError(f"p={p} should be >= 2.")
    if size < 0:
        raise ValueError(f"size={size} should be >= 0.")
    bits = p.bit_length()
    source = check_key_source(random_state)
    draw = secrets.token_bytes if isinstance(source, str) else source.bytes
    n_bytes = (bits + 7) // 8
    excess = 8 * n_bytes - bits
    out: list[int] = []
    while len(out) < size:
        need = size - len(out)
        raw = memoryview(draw(n_bytes * (need + need // 2 + 4)))
        for k in _accepted_offsets(raw, n_bytes, p << excess)[:need].tolist():
            out.append(int.from_bytes(raw[k : k + n_bytes], "little") >> excess)
    return out


def _accepted_offsets(raw: memoryview, n_bytes: int, bound: int) -> np.ndarray:
    """Byte offsets, in order, of the ``n_bytes``-long little-endian chunks of ``raw`` below ``bound``.

    Vectorised on the top 8 bytes of each chunk; the rare chunks that tie with
    ``bound`` there are compared in full. The same chunks as comparing each one
    in turn, so the draws of :func:`random_field_elements` do not depend on it.
    """
    count = len(raw) // n_bytes
    offsets = np.arange(count) * n_bytes
    if n_bytes <= 8:
        values = [int.from_bytes(raw[k : k + n_bytes], "little") for k in offsets.tolist()]
        return offsets[np.array([v < bound for v in values], dtype=bool)]
    chunks = np.frombuffer(raw, dtype=np.uint8, count=count * n_bytes).reshape(count, n_bytes)
    top = np.ascontiguousarray(chunks[:, :-9:-1]).view(">u8").ravel()  # most significant 8 bytes, big-endian
    bound_top = bound >> (8 * (n_bytes - 8))
    accept = top < bound_top
    for i in np.flatnonzero(top == bound_top).tolist():
        accept[i] = int.from_bytes(raw[offsets[i] : offsets[i] + n_bytes], "little") < bound
    return offsets[accept]


def secret_residues(p: int, size: int) -> np.ndarray:
    """``size`` uniform residues mod ``p`` (``2 <= p < 2**63``) as int64, from the operating system's CSPRNG.

    Rejection sampling on ``p.bit_length()``-bit words of ``secrets.token_bytes``: exactly
    uniform, and vectorised (the masks and share coefficients of word-sized fields).

    Parameters
    ----------
    p : int
        The modulus.
    size : int
        Number of residues, >= 0.

    Returns
    -------
    ndarray of int64, shape (size,)
        The residues.

    Raises
    ------
    ValueError
        If ``p`` is not in ``[2, 2**63)`` or ``size < 0``.

    Examples
    --------
    >>> from fedlib.field import secret_residues
    >>> values = secret_residues(101, 1000)
    >>> values.shape, bool(values.min() >= 0 and values.max() < 101)
    ((1000,), True)
    """
    p, size = int(p), int(size)
    if not 2 <= p < 2**63:
        raise ValueError(f"secret_residues needs 2 <= p < 2**63, got p={p}.")
    if size < 0:
        raise ValueError(f"size={size} should be >= 0.")
    bits = int(p).bit_length()
    out = np.empty(0, dtype=np.uint64)
    while out.size < size:
        need = size - out.size
        words = np.frombuffer(secrets.token_bytes(8 * (need + need // 2 + 16)), dtype=np.uint64)
        words = words >> np.uint64(64 - bits)
        out = np.concatenate([out, words[words < np.uint64(p)]])
    return out[:size].astype(np.int64)
