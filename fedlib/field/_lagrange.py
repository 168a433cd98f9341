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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import combinations

import numpy as np

from fedlib._typing import SeedLike
from fedlib._validation import check_scalar
from fedlib.field._field import PrimeField
from fedlib.field._interpolation import lagrange_basis
from fedlib.field._poly import DecodingError


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

    def encode(self, segments, *, random_state: SeedLike | str = None) -> np.ndarray:
        """Shares of secrets given as segments.

        Parameters
        ----------
        segments : array-like of shape (n_secrets, ℓ, width)
            Residues in ``[0, q)``: secret ``i`` is ``segments[i].ravel()``.
        random_state : int, numpy.random.Generator, None or "secrets", default=None
            Draws the ``t`` masks of every secret, uniform on GF(q). A seeded
            generator gives reproducible shares for a simulation; a deployment
            passes ``"secrets"`` (the operating system's CSPRNG).

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
        raises :class:`fedlib.field.DecodingError` instead of returning a
        wrong value.

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
        fedlib.field.DecodingError
            If a response beyond the first ``R`` disagrees with the decoded polynomial.
        """
        gf = self.field
        responders = self._check_responders(responders, degree)
        Y = gf.asarray(responses)
        if Y.shape[0] != len(responders):
            raise ValueError(f"{Y.shape[0]} responses for {len(responders)} responders.")
        R = self.recovery_threshold(degree)
        flat = Y.reshape(len(responders), -1)
        weights = self.decoding_weights(responders, degree, targets=targets)
        if len(responders) > R:
            # Predict the extra responses from the first R, in the same product as the decoding.
            extra_points = [self.alphas[j] for j in responders[R:]]
            predict = gf.lagrange_basis([self.alphas[j] for j in responders[:R]], extra_points)
            weights = np.vstack([weights, predict])
        product = gf.matmul(weights, flat[:R])
        out = product[: product.shape[0] - (len(responders) - R)]
        if len(responders) > R:
            mismatch = np.flatnonzero(np.any(product[out.shape[0] :] != flat[R:], axis=1))
            if mismatch.size:
                bad = [responders[R + int(r)] for r in mismatch]
                poly_degree = (self.n_segments + self.n_masks - 1) * degree
                raise DecodingError(
                    f"responses of clients {bad} disagree with the degree-{poly_degree} polynomial decoded from "
                    f"clients {responders[:R]}."
                )
        shape = Y.shape[1:]
        return out.reshape(shape) if targets == "sum" else out.reshape((out.shape[0], *shape))

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
