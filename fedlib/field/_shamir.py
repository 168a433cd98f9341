"""Shamir's t-out-of-n secret sharing (Shamir 1979), the one-segment Lagrange code.

A secret ``x`` and ``t - 1`` uniform masks define a polynomial ``f`` of degree
``t - 1``; holder ``j`` receives ``f(α_j)``. Any ``t`` shares determine ``f``
and so ``x``; any ``t - 1`` shares are uniform whatever ``x`` is. This is
:class:`fedlib.field.LagrangeCode` with one segment and ``t - 1`` masks (the
secret sits at ``β_1 = 1`` rather than at 0, which changes nothing: the
evaluation points of secret, masks and shares are distinct), so fedlib has
one Lagrange code and one Shamir.

Secure aggregation shares 32-byte keys and seeds (Bonawitz et al., CCS'17):
the default field is GF(2^521 − 1), a Mersenne prime above 2^256, and
:meth:`Shamir.share_bytes` turns byte strings into field elements and back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from fedlib._typing import SeedLike
from fedlib._validation import check_scalar
from fedlib.field._lagrange import LagrangeCode

MERSENNE_521 = 2**521 - 1
"""The default prime of :class:`Shamir`: 2^521 − 1, so that one element holds a 256-bit key."""


@dataclass(frozen=True)
class Shamir:
    """Shamir's ``t``-out-of-``n`` secret sharing over GF(``prime``).

    Parameters
    ----------
    n_shares : int
        ``n``, the number of holders; holder ``j`` (0-based) gets share ``j``.
    threshold : int
        ``t``: any ``t`` shares reconstruct, any ``t - 1`` reveal nothing.
        ``1 <= t <= n``.
    prime : int, default=MERSENNE_521
        The field. Secrets must be residues below it.

    Attributes
    ----------
    code : LagrangeCode
        The underlying one-segment Lagrange code with ``t - 1`` masks.

    Raises
    ------
    ValueError
        If ``t > n`` (the secret could never be reconstructed) or ``t < 1``.

    References
    ----------
    A. Shamir. "How to share a secret", Communications of the ACM 22(11), 1979.

    Examples
    --------
    >>> from fedlib.field import Shamir
    >>> shamir = Shamir(n_shares=5, threshold=3, prime=2**127 - 1)
    >>> shares = shamir.share([42, 7], random_state=0)  # two secrets, five holders
    >>> shamir.reconstruct(shares[[4, 0, 2]], holders=[4, 0, 2])
    [42, 7]
    """

    n_shares: int
    threshold: int
    prime: int = MERSENNE_521
    code: LagrangeCode = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = check_scalar(self.n_shares, "n_shares (n)", "int", min_val=1)
        t = check_scalar(self.threshold, "threshold (t)", "int", min_val=1)
        if t > n:
            raise ValueError(f"threshold t={t} exceeds the n={n} shares: the secret could never be reconstructed.")
        code = LagrangeCode(n_clients=n, n_segments=1, n_masks=t - 1, prime=self.prime)
        object.__setattr__(self, "n_shares", n)
        object.__setattr__(self, "threshold", t)
        object.__setattr__(self, "prime", code.prime)
        object.__setattr__(self, "code", code)

    @property
    def secret_bytes(self) -> int:
        """The longest byte string :meth:`share_bytes` accepts: every value of it is below the prime."""
        return (self.prime.bit_length() - 1) // 8

    def share(self, secrets: Sequence[int], *, random_state: SeedLike | str = "secrets") -> np.ndarray:
        """Shares of each secret, one row per holder.

        Parameters
        ----------
        secrets : sequence of int
            Residues in ``[0, prime)``.
        random_state : "secrets", int, numpy.random.Generator or None, default="secrets"
            Draws the ``t - 1`` masks of every secret: by default the operating
            system's CSPRNG. A seed gives reproducible shares for a simulation,
            and is insecure: whoever knows it recomputes the masks and so the
            secret from a single share.

        Returns
        -------
        ndarray of shape (n_shares, n_secrets)
            ``shares[j, i]``: holder ``j``'s share of secret ``i`` (int64 below
            2^50, Python ints above).

        Raises
        ------
        ValueError
            If a secret is not a residue in ``[0, prime)``.
        """
        values = [int(v) for v in secrets]
        if any(v < 0 or v >= self.prime for v in values):
            raise ValueError(f"secrets must be residues in [0, {self.prime}); got {values}.")
        segments = np.array(values, dtype=self.code.field.dtype).reshape(len(values), 1, 1)
        return self.code.encode(segments, random_state=random_state)[:, :, 0]

    def reconstruct(self, shares, holders: Sequence[int]) -> list[int]:
        """The secrets, from the shares of at least ``t`` holders.

        Shares beyond the first ``t`` are checked against the polynomial the
        first ``t`` define, so a wrong share raises instead of giving a wrong secret.

        Parameters
        ----------
        shares : array-like of shape (n_holders, n_secrets)
            ``shares[r]`` came from holder ``holders[r]``.
        holders : sequence of int
            Distinct holder indices in ``[0, n_shares)``.

        Returns
        -------
        list of int
            The secrets.

        Raises
        ------
        ValueError
            With fewer than ``t`` holders, or repeated or unknown holders.
        fedlib.exceptions.DecodingError
            If the shares of more than ``t`` holders are inconsistent.
        """
        holders = [int(j) for j in holders]
        if len(holders) < self.threshold:
            raise ValueError(
                f"Shamir reconstruction needs t={self.threshold} shares, got {len(holders)}: with fewer the "
                "secret is information-theoretically hidden."
            )
        Y = self.code.field.asarray(shares)
        if Y.ndim != 2:
            raise ValueError(f"shares must have shape (n_holders, n_secrets), got {Y.shape}.")
        secrets = self.code.decode(Y[:, None, :], holders, 1)  # (1 segment, 1, n_secrets)
        return [int(v) for v in secrets.reshape(-1)]

    def share_bytes(self, secrets: Sequence[bytes], *, random_state: SeedLike | str = "secrets") -> np.ndarray:
        """:meth:`share` for byte strings (keys, seeds), read as big-endian integers.

        Parameters
        ----------
        secrets : sequence of bytes
            Each at most :attr:`secret_bytes` long (65 bytes over GF(2^521 − 1)).
        random_state : "secrets", int, numpy.random.Generator or None, default="secrets"
            As in :meth:`share`.

        Returns
        -------
        ndarray of shape (n_shares, n_secrets)
            The shares.

        Raises
        ------
        ValueError
            If a secret is longer than :attr:`secret_bytes`.
        """
        for s in secrets:
            if len(s) > self.secret_bytes:
                raise ValueError(f"a {len(s)}-byte secret does not fit GF(p) with p < 2^{self.prime.bit_length()}.")
        return self.share([int.from_bytes(s, "big") for s in secrets], random_state=random_state)

    def reconstruct_bytes(self, shares, holders: Sequence[int], length: int = 32) -> list[bytes]:
        """:meth:`reconstruct` for secrets shared with :meth:`share_bytes`.

        Parameters
        ----------
        shares : array-like of shape (n_holders, n_secrets)
            As in :meth:`reconstruct`.
        holders : sequence of int
            As in :meth:`reconstruct`.
        length : int, default=32
            Byte length of the secrets.

        Returns
        -------
        list of bytes
            The secrets.

        Raises
        ------
        ValueError
            As :meth:`reconstruct`; or if a reconstructed value does not fit
            ``length`` bytes (shares of another secret, or of a longer one).
        """
        values = self.reconstruct(shares, holders)
        if any(v.bit_length() > 8 * length for v in values):
            raise ValueError(f"a reconstructed secret does not fit {length} bytes: the shares do not belong together.")
        return [v.to_bytes(length, "big") for v in values]
