"""Every exception fedlib raises of its own, in one hierarchy under :class:`FedlibError`.

Each class also subclasses the builtin it specialises, so ``except ValueError``
(or ``OverflowError``, ``RuntimeError``, ``FileNotFoundError``) keeps catching
it, and ``except FedlibError`` catches every one of them:

- arithmetic and decoding: :class:`FieldOverflowError`, :class:`RingOverflowError`,
  :class:`DecodingError` and its :class:`IndexCollisionError`;
- protocols: :class:`ProtocolStageError`, :class:`SecAggAbort`,
  :class:`PrivacyViolationError`, :class:`TamperedMessageError`; bytes that do not parse as the
  protocol message or state they claim to be: :class:`WireFormatError`;
- infeasible settings: :class:`InfeasibleAssignment`, :class:`InfeasibleParameters`,
  :class:`UnlearningCapacityError`; a request to unlearn that cannot be served: :class:`UnlearningRequestError`;
- data: :class:`DataUnavailableError`, :class:`ChecksumError`;
- installation: :class:`MissingDependencyError`, an optional dependency not installed;
  :class:`DeviceUnavailableError`, a GPU asked for that torch cannot see.

This module imports nothing from the rest of fedlib: every layer may raise its errors.
"""

from __future__ import annotations

__all__ = [
    "ChecksumError",
    "DataUnavailableError",
    "DecodingError",
    "DeviceUnavailableError",
    "FedlibError",
    "FieldOverflowError",
    "IndexCollisionError",
    "InfeasibleAssignment",
    "InfeasibleParameters",
    "MissingDependencyError",
    "PrivacyViolationError",
    "ProtocolStageError",
    "RingOverflowError",
    "SecAggAbort",
    "TamperedMessageError",
    "UnlearningCapacityError",
    "UnlearningRequestError",
    "WireFormatError",
]


class FedlibError(Exception):
    """Base of every exception raised by fedlib itself.

    Examples
    --------
    >>> from fedlib.field import to_fixed_point
    >>> try:
    ...     to_fixed_point([[1e30]], scale=1.0)
    ... except FedlibError as error:
    ...     type(error).__name__
    'FieldOverflowError'
    """


class FieldOverflowError(FedlibError, ValueError):
    """A computation over GF(q) would leave (or has left) the range where residues equal integers."""


class DecodingError(FedlibError, ValueError):
    """A Reed-Solomon / power-sum decoder found no consistent solution (too many terms, or corrupted input)."""


class IndexCollisionError(DecodingError):
    """The round's key made occupied bins indistinguishable (a shared hash, or shared rows in every sub-table).

    Not a wrong answer: the decoder detected it. Rerun the round with a fresh key
    (:func:`fedlib.secagg.secure_hashed_sparse_sum` does).
    """


class DataUnavailableError(FedlibError, FileNotFoundError):
    """A registered data file is in neither the mirror nor the cache and cannot be fetched."""


class ChecksumError(FedlibError, ValueError):
    """A data file's SHA-256 differs from the registry's; the file is not used."""


class InfeasibleAssignment(FedlibError, ValueError):
    """No assignment meets the cluster-size bounds (KNOT's constraints (2)-(5))."""


class ProtocolStageError(FedlibError, RuntimeError):
    """A party received a message meant for another stage of the protocol."""


class SecAggAbort(FedlibError, RuntimeError):
    """The round cannot complete: fewer than ``t`` clients are left where ``t`` are needed; nothing is output."""


class PrivacyViolationError(FedlibError, RuntimeError):
    """An honest client refuses a request that would let the server unmask an individual input."""


class TamperedMessageError(FedlibError, ValueError):
    """An encrypted message failed authentication: altered, or sent to or from someone else."""


class WireFormatError(FedlibError, ValueError):
    """Bytes that are not a well-formed SecAgg message, configuration or client state of this wire format.

    Raised by the ``from_bytes`` parsers of :mod:`fedlib.secagg` before anything is built: wrong magic,
    version or type tag, truncated or trailing bytes, an array of the wrong length, an id outside ``[0, n)``,
    a share outside ``GF(2^521 - 1)``, a message of another round. Unlike :class:`TamperedMessageError`
    (an authentication failure), it says nothing about who altered the bytes: the message names the field
    and the bound it broke.
    """


class RingOverflowError(FedlibError, OverflowError):
    """A fixed-point setting whose sums could wrap around ``Z_{2^32}``."""


class InfeasibleParameters(FedlibError, ValueError):
    """No clustering meets the paper's requirements for these parameters (Liu et al. 2025, Lemmas 1-2, Remark 6).

    Raised, with the violated bound named, when ``ξ <= γ`` (Lemma 1), when
    ``ξ + ζ + δ >= 1`` (Lemma 2 corrected), when the smallest admissible cluster
    size exceeds ``N`` (Remark 6), or when no ``k`` up to the search limit works.

    Parameters
    ----------
    message : str
        What is infeasible, naming the bound.
    **details : int
        The quantities behind it, e.g. ``k1``, ``k2``, ``k`` and ``n_clients`` when ``k > N``.

    Attributes
    ----------
    details : dict
        ``details`` as given.

    Examples
    --------
    >>> from fedlib.unlearn import pargen
    >>> try:
    ...     pargen(200, gamma=0.1, delta=0.1, zeta=0.1, xi=0.7, sigma=40, eta=40, variant="corrected")
    ... except InfeasibleParameters as exc:
    ...     exc.details
    {'k1': 41, 'k2': 1293, 'k': 1293, 'n_clients': 200}
    """

    def __init__(self, message: str, **details: int) -> None:
        super().__init__(message)
        self.details = details


class UnlearningCapacityError(FedlibError, ValueError):
    """An unlearning request would break Requirement 4 (Liu et al. 2025): too many unlearned clients.

    Raised before anything changes, naming the cluster, its cap ``⌊ζ k_i⌋``
    and how many of its clients are already unlearned, or the system's
    ``max_requests``; also when a cluster would keep too few clients for its
    fixed Shamir threshold (Requirement 2), whatever the cap. Liu et al.
    (Sec. VIII) leave this case open; re-clustering all clients and restarting
    secure aggregation is the way out they mention.
    """


class MissingDependencyError(FedlibError, ImportError):
    """A part of fedlib needs an optional dependency that is not installed; the message names the extra."""


class DeviceUnavailableError(FedlibError, ValueError):
    """A ``device`` this machine cannot train on: CUDA asked for where torch sees no GPU, or a GPU index it lacks.

    Raised by :func:`fedlib.learn.resolve_device` before anything is trained; ``device="auto"``
    never raises it (it falls back to the CPU).
    """


class UnlearningRequestError(FedlibError, ValueError):
    """An unlearning request that cannot be served: empty, an id twice, an id never fitted or already forgotten.

    Raised by :meth:`fedlib.base.UnlearningMixin.unlearn` before anything changes.
    """
