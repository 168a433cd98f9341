"""Lagrange coded computing over GF(p) (Yu et al., AISTATS 2019), as SecFC uses it (SecFC Sec. 4.1, Eq. (2)).

A secret is cut into ``ℓ`` segments ``x_1..x_ℓ``; with ``t`` uniformly random
masks ``z_{ℓ+1}..z_{ℓ+t}`` they define the polynomial ``f`` of degree at most
``ℓ+t-1`` with ``f(β_u) = x_u`` (``u ≤ ℓ``) and ``f(β_u) = z_u`` (``u > ℓ``).
Client ``j`` receives the share ``f(α_j)``. Any polynomial ``g`` of degree
``deg`` applied to shares gives evaluations of ``g∘f``, of degree
``(ℓ+t-1)·deg``, so ``(ℓ+t-1)·deg + 1`` responses determine it and its values at
the ``β_u``, the results on the secret segments. For SecFC's squared distances
``deg = 2`` and the recovery threshold is ``2ℓ+2t-1`` (SecFC Theorem 1). With
one segment and ``t`` masks this is Shamir's ``(t+1)``-out-of-``n`` secret
sharing (Shamir 1979), the secret sitting at ``β_1`` instead of at 0.

The public points are ``β_u = u`` (``u = 1..ℓ+t``) and ``α_j = ℓ+t+j``
(``j = 1..n``): distinct and disjoint, as LCC requires. Every coefficient is
computed with Python integers (:func:`fedlib.field.lagrange_basis`), never in
floating point, and the code works over any prime through
:class:`fedlib.field.PrimeField`.

The responses form a Reed-Solomon codeword of length ``N`` and dimension
``R``: :meth:`LagrangeCode.decode` detects up to ``N − R`` corrupted responses
(it raises, naming the inconsistency, never a client it cannot prove guilty),
and :meth:`LagrangeCode.decode_correcting` locates and removes up to
``⌊(N − R)/2⌋`` of them (Berlekamp-Welch), LCC's ``N ≥ R + 2A`` for ``A``
adversarial clients (Yu et al. 2019, Theorem 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import combinations

import numpy as np

from fedlib._random import check_random_state
from fedlib._typing import SeedLike
from fedlib._validation import check_scalar
from fedlib.exceptions import DecodingError
from fedlib.field._field import PrimeField
from fedlib.field._interpolation import lagrange_basis


def determinant_mod(matrix: list[list[int]], q: int) -> int:
    """Determinant of a square matrix over GF(q) by Gaussian elimination in Python ints.

    Parameters
    ----------
    matrix : list of list of int
        A square matrix of integers (reduced mod ``q``).
    q : int
        A prime (inverses are taken as ``a^(q-2)``).

    Returns
    -------
    int
        The determinant, in ``[0, q)``.

    Examples
    --------
    >>> from fedlib.field import determinant_mod
    >>> determinant_mod([[1, 2], [3, 4]], 7)  # -2 mod 7
    5
    """
    a = [[int(v) % q for v in row] for row in matrix]
    n = len(a)
    det = 1
    for col in range(n):
        pivot = next((r for r in range(col, n) if a[r][col]), None)
        if pivot is None:
            return 0
        if pivot != col:
            a[col], a[pivot] = a[pivot], a[col]
            det = -det
        det = det * a[col][col] % q
        inv = pow(a[col][col], q - 2, q)
        for r in range(col + 1, n):
            factor = a[r][col] * inv % q
            if factor:
                a[r] = [(x - factor * y) % q for x, y in zip(a[r], a[col], strict=True)]
    return det % q


@lru_cache(maxsize=4096)
def _lagrange_rows(nodes: tuple[int, ...], points: tuple[int, ...], prime: int) -> list[list[int]]:
    """:func:`lagrange_basis`, memoised: a server decodes many secrets from the same responders."""
    return lagrange_basis(list(nodes), list(points), prime)


def _solve_mod(gf: PrimeField, A: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """One solution of ``A x = b`` over GF(q) by Gauss-Jordan elimination (free unknowns 0); None if there is none."""
    q = gf.prime
    M = np.concatenate([A, b[:, None]], axis=1)
    n_rows, n_cols = A.shape
    pivots: list[int] = []
    for col in range(n_cols):
        row = len(pivots)
        if row == n_rows:
            break
        nonzero = np.flatnonzero(M[row:, col] != 0)
        if not nonzero.size:
            continue
        pivot = row + int(nonzero[0])
        if pivot != row:
            M[[row, pivot]] = M[[pivot, row]]
        M[row] = gf.mul(M[row], pow(int(M[row, col]), q - 2, q))
        factors = M[:, col].copy()
        factors[row] = 0
        M = gf.sub(M, gf.mul(factors[:, None], M[row][None, :]))
        pivots.append(col)
    if np.any(M[len(pivots) :, -1] != 0):
        return None
    x = np.zeros(n_cols, dtype=gf.dtype)
    x[pivots] = M[: len(pivots), -1]
    return x


def _berlekamp_welch_roots(gf: PrimeField, points: list[int], y, dimension: int, e: int) -> list[int] | None:
    """Positions ``r`` with ``E(points[r]) = 0`` for a solution of Berlekamp-Welch's key equations; None if none.

    Solves ``y_r E(x_r) = Q(x_r)`` (every ``r``) for a monic ``E`` of degree
    ``e`` and a ``Q`` of degree below ``dimension + e``: ``N`` linear equations
    in ``dimension + 2e`` unknowns. If ``y`` is a codeword of dimension
    ``dimension`` plus at most ``e`` errors, a solution exists and every
    solution has ``Q = P E`` with ``P`` the codeword's polynomial, so ``E``
    vanishes at every error position (and possibly at up to ``e`` others in total).
    """
    q = gf.prime
    n_q = dimension + e
    V = gf.asarray([[pow(x, k, q) for k in range(n_q)] for x in points])  # V[r, k] = x_r^k
    y = gf.asarray(y)
    A = np.concatenate([V, gf.sub(0, gf.mul(y[:, None], V[:, :e]))], axis=1)
    solution = _solve_mod(gf, A, gf.mul(y, V[:, e]))
    if solution is None:
        return None
    locator = solution[n_q:]  # E_0..E_{e-1}; E_e = 1
    at_points = gf.add(gf.sum(gf.mul(V[:, :e], locator[None, :]), axis=1), V[:, e])
    return [r for r in range(len(points)) if at_points[r] == 0]


@dataclass(frozen=True)
class CorrectedDecoding:
    """What :meth:`LagrangeCode.decode_correcting` returns: the decoded values and who sent corrupted responses.

    Parameters
    ----------
    values : ndarray
        The values at the targets, as :meth:`LagrangeCode.decode` returns them
        from uncorrupted responses.
    corrupted : list of int
        Client indices, ascending, whose responses differ from the decoded
        polynomial (in at least one coordinate); empty if all agree.
    max_errors : int
        ``e``, the most corrupted responses the decoding could correct.

    Examples
    --------
    Five shares of a secret, one of them altered on its way back: the secret is decoded and client 2 named.

    >>> from fedlib.field import LagrangeCode
    >>> code = LagrangeCode(n_clients=5, n_segments=1, n_masks=1, prime=2**61 - 1)
    >>> responses = code.encode([[[42]]], random_state=0)
    >>> responses[2] = (responses[2] + 7) % code.prime
    >>> decoded = code.decode_correcting(responses, range(5), 1)
    >>> decoded.values.ravel().tolist(), decoded.corrupted, decoded.max_errors
    ([42], [2], 1)
    """

    values: np.ndarray
    corrupted: list[int]
    max_errors: int


@dataclass(frozen=True)
class LagrangeCode:
    """Public parameters of an LCC scheme over GF(``prime``).

    Parameters
    ----------
    n_clients : int
        ``n``, the number of shares (one per client).
    n_segments : int
        ``ℓ``, the number of segments a secret vector is split into.
    n_masks : int
        ``t``, the number of uniform random masks: any ``t`` shares are
        independent of the secret. Must be below ``n_clients``.
    prime : int
        ``q``. Any prime: below 2**50 the code runs on int64 arrays, above it
        on Python integers (:class:`fedlib.field.PrimeField`).

    Attributes
    ----------
    field : PrimeField
        GF(q), whose arrays (int64 or object) every method returns.
    betas : list of int
        ``β_1..β_{ℓ+t}``.
    alphas : list of int
        ``α_1..α_n``.

    Raises
    ------
    ValueError
        If ``t >= n`` (``t`` clients would hold every share), or GF(q) has
        fewer than ``ℓ+t+n`` non-zero elements.

    Notes
    -----
    With ``ℓ`` segments and ``t`` masks, any ``t`` shares reveal nothing about
    the secret (LCC's t-privacy; Yu et al. 2019, Theorem 1) and a degree-``deg``
    function of the shares is decoded from ``(ℓ+t-1)·deg + 1`` responses.
    Used in :doc:`/notebooks/secfc/secure_clustering`.

    References
    ----------
    Q. Yu, S. Li, N. Raviv, S. M. M. Kalan, M. Soltanolkotabi, S. Avestimehr.
    "Lagrange Coded Computing: Optimal Design for Resiliency, Security and
    Privacy", AISTATS 2019.

    Examples
    --------
    Shamir sharing is the one-segment case: any ``t + 1`` shares give the
    secret back, here from clients 4, 1 and 3 of five.

    >>> from fedlib.field import LagrangeCode
    >>> code = LagrangeCode(n_clients=5, n_segments=1, n_masks=2, prime=2**127 - 1)
    >>> shares = code.encode([[[42]]], random_state=0)  # one secret of one segment of width 1
    >>> int(code.decode(shares[[3, 0, 2]], [3, 0, 2], 1)[0, 0, 0])
    42
    """

    n_clients: int
    n_segments: int
    n_masks: int
    prime: int
    field: PrimeField = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = check_scalar(self.n_clients, "n_clients (n)", "int", min_val=1)
        ell = check_scalar(self.n_segments, "n_segments (ℓ)", "int", min_val=1)
        t = check_scalar(self.n_masks, "n_masks (t)", "int", min_val=0)
        gf = PrimeField(self.prime)
        q = gf.prime
        if t >= n:
            raise ValueError(
                f"privacy against t colluders needs t < n (SecFC Sec. 3); got t={t}, n_clients={n}: "
                "t clients together would hold every share."
            )
        if ell + t + n >= q:
            raise ValueError(f"GF({q}) has too few elements for ℓ+t+n = {ell + t + n} distinct points.")
        for name, value in (("n_clients", n), ("n_segments", ell), ("n_masks", t), ("prime", q), ("field", gf)):
            object.__setattr__(self, name, value)

    @property
    def betas(self) -> list[int]:
        """``β_1..β_{ℓ+t}``: segments at the first ``ℓ``, masks at the last ``t``."""
        return list(range(1, self.n_segments + self.n_masks + 1))

    @property
    def alphas(self) -> list[int]:
        """``α_1..α_n``, the evaluation point of each client's share."""
        start = self.n_segments + self.n_masks + 1
        return list(range(start, start + self.n_clients))

    def recovery_threshold(self, degree: int) -> int:
        """Responses needed to decode a polynomial of degree ``degree`` of the shares: ``(ℓ+t-1)·deg + 1``.

        Parameters
        ----------
        degree : int
            Degree ``deg`` >= 1 of the function applied to the shares (2 for
            SecFC's squared distances, 1 for sums).

        Returns
        -------
        int
            ``R = (ℓ+t-1)·deg + 1``; for ``deg = 2`` SecFC Theorem 1's ``2ℓ+2t-1``.

        Examples
        --------
        >>> from fedlib.field import LagrangeCode
        >>> LagrangeCode(n_clients=10, n_segments=1, n_masks=4, prime=101).recovery_threshold(2)
        9
        """
        degree = check_scalar(degree, "degree", "int", min_val=1)
        return (self.n_segments + self.n_masks - 1) * degree + 1

    def encoding_matrix(self) -> np.ndarray:
        """The encoding matrix ``U`` with ``U[j, u] = Π_{v≠u} (α_j − β_v)/(β_u − β_v)`` (SecFC Eq. (2)).

        Returns
        -------
        ndarray of shape (n_clients, ℓ+t)
            Client ``j``'s share is ``Σ_u U[j, u] f(β_u)``. Computed once per code
            and returned read-only.
        """
        return self._encoding

    @cached_property
    def _encoding(self) -> np.ndarray:
        U = self.field.lagrange_basis(self.betas, self.alphas)
        U.flags.writeable = False
        return U

    def encode(self, segments, *, random_state: SeedLike | str = "secrets") -> np.ndarray:
        """Shares of secrets given as segments.

        Parameters
        ----------
        segments : array-like of shape (n_secrets, ℓ, width)
            Residues in ``[0, q)``: secret ``i`` is ``segments[i].ravel()``.
        random_state : "secrets", int, numpy.random.Generator or None, default="secrets"
            Draws the ``t`` masks of every secret, uniform on GF(q): by default
            the operating system's CSPRNG. A seed gives reproducible shares for
            a simulation, and is insecure: whoever knows it recomputes the masks.

        Returns
        -------
        ndarray of shape (n_clients, n_secrets, width)
            The shares: ``shares[j, i] = f_i(α_j)``.

        Raises
        ------
        ValueError
            If ``segments`` is not 3-D with ``ℓ`` segments, or holds values outside ``[0, q)``.
        """
        gf, q = self.field, self.prime
        P = np.asarray(segments, dtype=gf.dtype)
        if P.ndim != 3 or P.shape[1] != self.n_segments:
            raise ValueError(f"segments must have shape (n_secrets, ℓ={self.n_segments}, width), got {P.shape}.")
        if P.size and (P.min() < 0 or P.max() >= q):
            raise ValueError(f"segments must be residues in [0, q={q}); quantize them first.")
        m, _, width = P.shape
        masks = gf.random((m, self.n_masks, width), random_state)
        coefficients = np.concatenate([P, masks], axis=1)  # (m, ℓ+t, width): values at β_1..β_{ℓ+t}
        flat = coefficients.transpose(1, 0, 2).reshape(self.n_segments + self.n_masks, m * width)
        return gf.matmul(self.encoding_matrix(), flat).reshape(self.n_clients, m, width)

    def decoding_weights(self, responders, degree: int, *, targets: str | list[int] = "segments") -> np.ndarray:
        """Weights that turn ``R = (ℓ+t-1)·deg + 1`` responses into values at ``targets``.

        Parameters
        ----------
        responders : sequence of int
            Client indices (0-based) whose responses are used, at least ``R``;
            only the first ``R`` enter the weights.
        degree : int
            Degree of the function applied to the shares (2 for squared distances).
        targets : "segments", "sum" or list of field points
            ``"segments"``: the values at ``β_1..β_ℓ`` (one row each); ``"sum"``:
            one row, their sum (SecFC's ``d'_{i,h} = Σ_u φ_{i,h}(β_u)``).

        Returns
        -------
        ndarray of shape (n_targets, R)
            Row ``a`` turns the first ``R`` responses into the value at target ``a``.

        Raises
        ------
        ValueError
            With fewer than ``R`` responders (SecFC Theorem 1 for ``deg = 2``),
            repeated or out-of-range responders, or unknown ``targets``.
        """
        responders = self._check_responders(responders, degree)
        nodes = [self.alphas[j] for j in responders[: self.recovery_threshold(degree)]]
        if isinstance(targets, str):
            if targets not in ("segments", "sum"):
                raise ValueError(f"targets must be 'segments', 'sum' or a list of field points, got {targets!r}.")
            points = self.betas[: self.n_segments]
        else:
            points = [int(z) % self.prime for z in targets]
        rows = _lagrange_rows(tuple(nodes), tuple(points), self.prime)
        if targets == "sum":
            rows = [[sum(col) % self.prime for col in zip(*rows, strict=True)]]
        return np.array(rows, dtype=self.field.dtype)

    def decode(self, responses, responders, degree: int, *, targets: str | list[int] = "segments") -> np.ndarray:
        """Values at ``targets`` of the polynomial whose evaluations at the responders' ``α`` are ``responses``.

        Responses beyond the recovery threshold are checked against the
        polynomial decoded from the first ``R``: any disagreement (a wrong or
        corrupted response, or a result of higher degree than ``degree``)
        raises :class:`fedlib.exceptions.DecodingError` instead of returning a
        wrong value. Up to ``N − R`` corrupted responses are detected this way.
        The error names the inconsistency, not a client: a disagreement does
        not show which response is wrong, the first ``R`` included.
        :meth:`decode_correcting` locates and corrects up to ``⌊(N − R)/2⌋``.

        Parameters
        ----------
        responses : array-like of shape (n_responses, ...)
            Residues; ``responses[r]`` came from client ``responders[r]``.
        responders : sequence of int
            Distinct client indices (0-based), at least ``R``.
        degree : int
            Degree of the function applied to the shares.
        targets : {"segments", "sum"} or list of int, default="segments"
            As in :meth:`decoding_weights`.

        Returns
        -------
        ndarray
            Shape ``(n_targets, ...)``, or ``(...)`` for ``targets="sum"``.

        Raises
        ------
        ValueError
            With fewer than ``R`` responders, or as many responses as responders not given.
        fedlib.exceptions.DecodingError
            If the ``N`` responses are not evaluations of one polynomial of
            degree ``(ℓ+t-1)·deg`` (some response is corrupted).
        """
        responders, Y, flat = self._check_responses(responses, responders, degree)
        R, n = self.recovery_threshold(degree), len(responders)
        out, missed = self._fit(flat, responders, list(range(R)), degree, targets)
        if missed:
            raise DecodingError(self._inconsistency(n, degree, len(missed)))
        return self._shape(out, Y.shape[1:], targets)

    def decode_correcting(
        self,
        responses,
        responders,
        degree: int,
        *,
        targets: str | list[int] = "segments",
        max_errors: int | None = None,
        random_state: SeedLike | str = None,
    ) -> CorrectedDecoding:
        """:meth:`decode` despite up to ``e = ⌊(N − R)/2⌋`` corrupted responses, naming the clients that sent them.

        Per coordinate, the ``N`` responses are a Reed-Solomon codeword of
        dimension ``R`` at the responders' ``α``, so ``N ≥ R + 2e`` responses
        determine the polynomial even if ``e`` of them are arbitrary
        (Berlekamp-Welch): LCC's tolerance of ``A`` adversarial clients with
        ``N ≥ R + 2A`` (Yu et al. 2019, Theorem 1). A corrupted client may
        alter any subset of its coordinates; errors are located per responder.

        Parameters
        ----------
        responses : array-like of shape (n_responses, ...)
            Residues; ``responses[r]`` came from client ``responders[r]``.
        responders : sequence of int
            Distinct client indices (0-based), at least ``R``.
        degree : int
            Degree of the function applied to the shares.
        targets : {"segments", "sum"} or list of int, default="segments"
            As in :meth:`decoding_weights`.
        max_errors : int or None, default=None
            ``e``, the most corrupted responses to correct; ``None`` takes the
            largest, ``⌊(N − R)/2⌋``. A smaller ``e`` detects more: up to
            ``e`` are corrected and ``N − R − e`` detected. ``0`` is
            :meth:`decode`'s check.
        random_state : int, numpy.random.Generator, None or "secrets", default=None
            Draws the random combination of coordinates in which errors are
            located (not used for one coordinate, nor when the first ``R``
            responses are uncorrupted). A deployment keeps the default or
            passes ``"secrets"``: a client that knows the combination can hide
            its error from the locator, and decoding then raises instead of
            correcting (it never returns a wrong value).

        Returns
        -------
        CorrectedDecoding
            ``values``, of :meth:`decode`'s shape, and ``corrupted``, the
            clients whose responses differ from the decoded polynomial.

        Raises
        ------
        ValueError
            With fewer than ``R`` responders, repeated or unknown ones, as
            many responses as responders not given, or ``max_errors`` above
            ``⌊(N − R)/2⌋`` (correcting ``e`` needs ``N ≥ R + 2e``).
        fedlib.exceptions.DecodingError
            If no polynomial of degree ``(ℓ+t-1)·deg`` agrees with all but at
            most ``e`` responses: more than ``e`` are corrupted.

        Notes
        -----
        *Guarantees.* A result is accepted only if one polynomial (per
        coordinate, of degree ``R − 1``) agrees with every response of all
        but at most ``e`` responders. Two such polynomials would agree on
        ``N − 2e ≥ R`` points, so it is unique, and with ``s`` corrupted
        responders it is the true one whenever ``s ≤ N − R − e``. Hence:
        with ``s ≤ e`` the values are right and ``corrupted`` is exactly the
        set of clients whose responses were altered; with
        ``e < s ≤ N − R − e`` :class:`fedlib.exceptions.DecodingError` is raised
        (always, for ``e + 1`` corruptions when ``N − R`` is odd). With more,
        the corrupted responses can form another codeword up to ``e``
        changes, which no decoder can tell from the truth: the code's minimum
        distance is ``N − R + 1``.

        *Algorithm.* If the polynomial through the first ``R`` responses
        misses at most ``e`` responders it is the answer (no extra cost while
        the corrupted clients are among the others). Otherwise the errors of
        a random combination ``y_r = Σ_c γ_c Y[r, c]`` of the coordinates are
        located by Berlekamp-Welch: an ``N × (R + 2e)`` linear system over
        GF(q) gives a monic ``E`` of degree ``e`` and a ``Q`` of degree below
        ``R + e`` with ``y_r E(α_r) = Q(α_r)``; ``E`` vanishes at every error
        of ``y``. The polynomial through ``R`` responses outside the roots of
        ``E`` decodes every coordinate and is accepted or not as above. A
        corrupted response's error vector vanishes in the combination with
        probability ``1/q`` (Schwartz-Zippel: degree one in ``γ``), so a
        combination hides one of ``s ≤ e`` corrupted responders with
        probability at most ``e/q``; that fails the acceptance check (never
        a wrong value) and another combination is drawn, up to
        ``a = min(8, ⌈40 / log2(q/e)⌉)``. A correctable pattern is refused
        with probability at most ``(e/q)^a``, below ``2^-40`` unless ``q`` is
        tiny. An inconsistent system proves ``s > e`` and raises at once.

        References
        ----------
        L. R. Welch, E. R. Berlekamp. "Error correction for algebraic block
        codes", US Patent 4,633,470 (1986); as a linear system, P. Gemmell,
        M. Sudan. "Highly resilient correctors for polynomials", Information
        Processing Letters 43(4), 1992.

        Q. Yu, S. Li, N. Raviv, S. M. M. Kalan, M. Soltanolkotabi, S. Avestimehr.
        "Lagrange Coded Computing: Optimal Design for Resiliency, Security and
        Privacy", AISTATS 2019.

        Examples
        --------
        Six Shamir shares of 42 (``R = 2``) survive two wrong ones, client 0's among them:

        >>> from fedlib.field import LagrangeCode
        >>> code = LagrangeCode(n_clients=6, n_segments=1, n_masks=1, prime=101)
        >>> shares = code.encode([[[42]]], random_state=0)
        >>> shares[[0, 4]] = (shares[[0, 4]] + 1) % 101
        >>> result = code.decode_correcting(shares, range(6), 1)
        >>> int(result.values[0, 0, 0]), result.corrupted
        (42, [0, 4])
        """
        gf, q = self.field, self.prime
        responders, Y, flat = self._check_responses(responses, responders, degree)
        R, n = self.recovery_threshold(degree), len(responders)
        bound = (n - R) // 2
        e = bound if max_errors is None else check_scalar(max_errors, "max_errors", "int", min_val=0)
        if e > bound:
            raise ValueError(
                f"correcting e={e} corrupted responses needs N >= R + 2e = {R + 2 * e} responders; got N={n} "
                f"(R={R}), which correct at most floor((N - R)/2) = {bound}."
            )
        out, missed = self._fit(flat, responders, list(range(R)), degree, targets)
        proved = False  # whether more than e corrupted responses are certain
        if len(missed) > e and e:
            width = flat.shape[1]
            attempts = 1 if width == 1 else min(8, max(1, math.ceil(40 / math.log2(q / e))))
            rng = random_state if isinstance(random_state, str) else check_random_state(random_state)
            points = [self.alphas[j] for j in responders]
            for _ in range(attempts):
                y = flat[:, 0] if width == 1 else gf.matmul(flat, gf.random((width, 1), rng))[:, 0]
                roots = _berlekamp_welch_roots(gf, points, y, R, e)
                if roots is None:  # y has more than e errors, so more than e responders are corrupted
                    proved = True
                    break
                out, missed = self._fit(flat, responders, [r for r in range(n) if r not in roots][:R], degree, targets)
                if len(missed) <= e:
                    break
        if len(missed) > e:
            certain = proved or e == 0 or flat.shape[1] == 1
            raise DecodingError(self._uncorrectable(n, degree, e, len(missed), certain=certain))
        corrupted = sorted(responders[r] for r in missed)
        return CorrectedDecoding(values=self._shape(out, Y.shape[1:], targets), corrupted=corrupted, max_errors=e)

    def _check_responses(self, responses, responders, degree: int) -> tuple[list[int], np.ndarray, np.ndarray]:
        """Checked responders, the responses as residues, and those as an ``(N, n_coordinates)`` matrix."""
        responders = self._check_responders(responders, degree)
        Y = self.field.asarray(responses)
        if Y.shape[0] != len(responders):
            raise ValueError(f"{Y.shape[0]} responses for {len(responders)} responders.")
        return responders, Y, Y.reshape(len(responders), -1)

    def _fit(self, flat, responders: list[int], basis: list[int], degree: int, targets) -> tuple[np.ndarray, list[int]]:
        """Values at ``targets`` of the polynomial through the responses at positions ``basis`` (``R`` of them),
        and the other positions whose responses it misses, from one modular product."""
        gf = self.field
        others = sorted(set(range(len(responders))) - set(basis))
        weights = self.decoding_weights([responders[r] for r in basis], degree, targets=targets)
        if others:
            nodes = [self.alphas[responders[r]] for r in basis]
            weights = np.vstack([weights, gf.lagrange_basis(nodes, [self.alphas[responders[r]] for r in others])])
        in_order = basis == list(range(len(basis)))  # the first R: slices, no copies of the responses
        product = gf.matmul(weights, flat[: len(basis)] if in_order else flat[basis])
        n_out = product.shape[0] - len(others)
        rest = flat[len(basis) :] if in_order else flat[others]
        missed = np.flatnonzero(np.any(product[n_out:] != rest, axis=1)) if others else []
        return product[:n_out], [others[int(i)] for i in missed]

    @staticmethod
    def _shape(out: np.ndarray, shape: tuple[int, ...], targets) -> np.ndarray:
        if isinstance(targets, str) and targets == "sum":
            return out.reshape(shape)
        return out.reshape((out.shape[0], *shape))

    def _inconsistency(self, n: int, degree: int, misses: int) -> str:
        """Why ``n`` responses do not decode, naming no client: any of them may be the wrong one."""
        R = self.recovery_threshold(degree)
        extra = n - R
        e = extra // 2
        head = (
            f"the {n} responses are not evaluations of one polynomial of degree {R - 1} = (ℓ+t-1)·{degree}: "
            f"the polynomial through the first R={R} disagrees with {misses} of the other {extra}. Any of the "
            f"{n} may be corrupted, the first {R} included, so no client is named (or the function computed has "
            f"degree above {degree}). With N - R = {extra} extra responder{'' if extra == 1 else 's'} up to "
            f"floor({extra}/2) = {e} corrupted responses "
        )
        if e:
            return head + "can be located: LagrangeCode.decode_correcting does."
        return head + f"can be located; locating e of them needs N >= R + 2e responders ({R + 2} for one)."

    def _uncorrectable(self, n: int, degree: int, e: int, misses: int, *, certain: bool) -> str:
        """Why ``n`` responses do not decode with up to ``e`` corrupted ones, naming no client."""
        R = self.recovery_threshold(degree)
        if e == 0:
            return self._inconsistency(n, degree, misses)
        message = (
            f"more than e={e} of the {n} responses are corrupted: no polynomial of degree {R - 1} = (ℓ+t-1)·{degree} "
            f"agrees with N - e = {n - e} of them. Correcting e corrupted responses needs N >= R + 2e (R={R}); "
            "more responders are needed, and no client is named."
        )
        if not certain:
            message += (
                " (Or, with probability at most (e/q)^a, below 2^-40 unless q is tiny, every random combination of "
                "coordinates hid a corrupted response: another random_state would tell.)"
            )
        return message

    def colluders_learn_nothing(self, colluders) -> bool:
        """Whether the shares of ``colluders`` are uniform whatever the secret (LCC's t-privacy).

        True exactly when the ``t × t`` block ``U[colluders, ℓ:]`` of the encoding
        matrix is invertible over GF(q): the masks then act as a one-time pad on
        the colluders' view (Yu et al. 2019, Theorem 1).

        Parameters
        ----------
        colluders : sequence of int
            Exactly ``t`` client indices.

        Returns
        -------
        bool
            Whether their shares are independent of the secret.

        Raises
        ------
        ValueError
            If not exactly ``t`` colluders are given.
        """
        colluders = [int(j) for j in colluders]
        if len(colluders) != self.n_masks:
            raise ValueError(f"pass exactly t={self.n_masks} colluders, got {len(colluders)}.")
        U = self.encoding_matrix()
        block = U[np.ix_(colluders, np.arange(self.n_segments, self.n_segments + self.n_masks))]
        return determinant_mod([[int(v) for v in row] for row in block], self.prime) != 0

    def all_colluding_sets_learn_nothing(self) -> bool:
        """:meth:`colluders_learn_nothing` for every ``t``-subset of clients (use for small ``n``).

        Returns
        -------
        bool
            Whether no set of ``t`` clients learns anything (``C(n, t)`` determinants).
        """
        return all(self.colluders_learn_nothing(c) for c in combinations(range(self.n_clients), self.n_masks))

    def _check_responders(self, responders, degree: int) -> list[int]:
        responders = [int(j) for j in responders]
        if len(set(responders)) != len(responders):
            raise ValueError(f"responders must be distinct, got {responders}.")
        if any(j < 0 or j >= self.n_clients for j in responders):
            raise ValueError(f"responders must be client indices in [0, {self.n_clients}), got {responders}.")
        R = self.recovery_threshold(degree)
        if len(responders) < R:
            raise ValueError(
                f"decoding a degree-{degree} function of LCC shares needs (ℓ+t-1)·{degree}+1 = {R} responses "
                f"(ℓ={self.n_segments}, t={self.n_masks}; for degree 2 this is SecFC Theorem 1's 2ℓ+2t-1); "
                f"got {len(responders)}."
            )
        return responders
