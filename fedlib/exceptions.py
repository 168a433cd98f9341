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
    >>> from fedlib.exceptions import FedlibError
    >>> from fedlib.field import to_fixed_point
    >>> try:
    ...     to_fixed_point([[1e30]], scale=1.0)
    ... except FedlibError as error:
    ...     type(error).__name__
    'FieldOverflowError'
    """


class FieldOverflowError(FedlibError, ValueError):
    """A computation over GF(q) would leave (or has left) the range where residues equal integers.

    Examples
    --------
    >>> from fedlib.exceptions import FieldOverflowError
    >>> from fedlib.field import to_field
    >>> try:
    ...     to_field([60, -3], 101)  # |60| >= 101/2: its residue would decode to -41
    ... except FieldOverflowError as error:
    ...     type(error).__name__, isinstance(error, ValueError)
    ('FieldOverflowError', True)
    """


class DecodingError(FedlibError, ValueError):
    """A Reed-Solomon / power-sum decoder found no consistent solution (too many terms, or corrupted input).

    Examples
    --------
    >>> from fedlib.exceptions import DecodingError
    >>> from fedlib.field import poly_roots
    >>> try:
    ...     poly_roots([1, 0, 1], 7)  # x^2 + 1 has no root in GF(7)
    ... except DecodingError as error:
    ...     type(error).__name__, isinstance(error, ValueError)
    ('DecodingError', True)
    """


class IndexCollisionError(DecodingError):
    """The round's key made occupied bins indistinguishable (a shared hash, or shared rows in every sub-table).

    Not a wrong answer: the decoder detected it. Rerun the round with a fresh key
    (:func:`fedlib.secagg.secure_hashed_sparse_sum` does).

    Examples
    --------
    With ``q = 5`` the hashes live in ``GF(5)*``, four values for five bins: two bins share one under any key.

    >>> import numpy as np
    >>> from fedlib.exceptions import DecodingError, IndexCollisionError
    >>> from fedlib.secagg import hashed_scma_encode, hashed_scma_key, hashed_scma_params
    >>> params = hashed_scma_params(n_samples=1, n_bins=8, n_clusters=5, n_clients=1, prime=5)
    >>> zero = np.zeros(params.message_length, dtype=np.uint64)
    >>> try:
    ...     hashed_scma_encode({1: 1, 2: 1, 3: 1, 4: 1, 5: 1}, params, hashed_scma_key(0), zero)
    ... except IndexCollisionError as error:
    ...     type(error).__name__, isinstance(error, DecodingError)
    ('IndexCollisionError', True)
    """


class DataUnavailableError(FedlibError, FileNotFoundError):
    """A registered data file is in neither the mirror nor the cache and cannot be fetched.

    Examples
    --------
    With an empty mirror and cache and downloads disabled, no copy can be had:

    >>> import os
    >>> import tempfile
    >>> from unittest import mock
    >>> from fedlib.data import fetch
    >>> from fedlib.exceptions import DataUnavailableError
    >>> with tempfile.TemporaryDirectory() as empty, mock.patch.dict(
    ...     os.environ, {"FEDLIB_DATA_MIRROR": empty, "FEDLIB_CACHE": empty}
    ... ):
    ...     try:
    ...         fetch("tinyshakespeare.txt", download=False)
    ...     except DataUnavailableError as error:
    ...         print(type(error).__name__, isinstance(error, FileNotFoundError))
    DataUnavailableError True
    """


class ChecksumError(FedlibError, ValueError):
    """A data file's SHA-256 differs from the registry's; the file is not used.

    Examples
    --------
    A mirror whose copy is not the registered file:

    >>> import os
    >>> import tempfile
    >>> from pathlib import Path
    >>> from unittest import mock
    >>> from fedlib.data import fetch
    >>> from fedlib.exceptions import ChecksumError
    >>> with tempfile.TemporaryDirectory() as mirror, mock.patch.dict(os.environ, {"FEDLIB_DATA_MIRROR": mirror}):
    ...     _ = (Path(mirror) / "tinyshakespeare.txt").write_text("not the registered file")
    ...     try:
    ...         fetch("tinyshakespeare.txt", download=False)
    ...     except ChecksumError as error:
    ...         print(type(error).__name__, isinstance(error, ValueError))
    ChecksumError True
    """


class InfeasibleAssignment(FedlibError, ValueError):
    """No assignment meets the cluster-size bounds (KNOT's constraints (2)-(5)).

    Examples
    --------
    >>> from fedlib.cluster import size_bounds
    >>> from fedlib.exceptions import InfeasibleAssignment
    >>> try:
    ...     size_bounds(10, 3, lower=4)  # 3 clusters of at least 4 clients need 12 clients, not 10
    ... except InfeasibleAssignment as error:
    ...     type(error).__name__, isinstance(error, ValueError)
    ('InfeasibleAssignment', True)
    """


class ProtocolStageError(FedlibError, RuntimeError):
    """A party received a message meant for another stage of the protocol.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.exceptions import ProtocolStageError
    >>> from fedlib.secagg import MaskingGraph, SecAggClient, SecAggConfig
    >>> config = SecAggConfig(MaskingGraph.complete(3), threshold=2, vector_length=1)
    >>> client = SecAggClient(0, np.zeros(1, dtype=np.uint32), config, random_state=0)
    >>> try:
    ...     client.unmask([0, 1, 2])  # it has not even advertised its keys
    ... except ProtocolStageError as error:
    ...     type(error).__name__, isinstance(error, RuntimeError)
    ('ProtocolStageError', True)
    """


class SecAggAbort(FedlibError, RuntimeError):
    """The round cannot complete: fewer than ``t`` clients are left where ``t`` are needed; nothing is output.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.exceptions import SecAggAbort
    >>> from fedlib.secagg import MaskingGraph, SecAggConfig, secure_aggregate
    >>> config = SecAggConfig(MaskingGraph.complete(3), threshold=2, vector_length=1)
    >>> x = np.ones((3, 1), dtype=np.uint32)
    >>> try:  # clients 1 and 2 drop before sharing their keys: one client is left, t = 2 are needed
    ...     secure_aggregate(x, config, dropouts={"share_keys": [1, 2]}, random_state=0)
    ... except SecAggAbort as error:
    ...     type(error).__name__, isinstance(error, RuntimeError)
    ('SecAggAbort', True)
    """


class PrivacyViolationError(FedlibError, RuntimeError):
    """An honest client refuses a request that would let the server unmask an individual input.

    Examples
    --------
    Client 0 went silent before unmasking; a server then tells it that client 3, who never sent shares, sent a
    masked input:

    >>> import numpy as np
    >>> from fedlib.exceptions import PrivacyViolationError
    >>> from fedlib.secagg import MaskingGraph, SecAggConfig, secure_aggregate
    >>> config = SecAggConfig(MaskingGraph.complete(4), threshold=2, vector_length=1)
    >>> x = np.ones((4, 1), dtype=np.uint32)
    >>> result = secure_aggregate(x, config, dropouts={"share_keys": [3], "unmasking": [0]}, random_state=0)
    >>> try:
    ...     result.clients[0].unmask([0, 1, 2, 3])
    ... except PrivacyViolationError as error:
    ...     type(error).__name__, isinstance(error, RuntimeError)
    ('PrivacyViolationError', True)
    """


class TamperedMessageError(FedlibError, ValueError):
    """An encrypted message failed authentication: altered, or sent to or from someone else.

    Examples
    --------
    >>> from fedlib.exceptions import TamperedMessageError
    >>> from fedlib.secagg import open_sealed, seal
    >>> box = seal(bytes(32), b"share", sender=1, recipient=2, context=b"round 0")
    >>> try:  # rerouted to client 3
    ...     open_sealed(bytes(32), box, sender=1, recipient=3, context=b"round 0")
    ... except TamperedMessageError as error:
    ...     type(error).__name__, isinstance(error, ValueError)
    ('TamperedMessageError', True)
    """


class WireFormatError(FedlibError, ValueError):
    """Bytes that are not a well-formed SecAgg message, configuration or client state of this wire format.

    Raised by the ``from_bytes`` parsers of :mod:`fedlib.secagg` before anything is built: wrong magic,
    version or type tag, truncated or trailing bytes, an array of the wrong length, an id outside ``[0, n)``,
    a share outside ``GF(2^521 - 1)``, a message of another round. Unlike :class:`TamperedMessageError`
    (an authentication failure), it says nothing about who altered the bytes: the message names the field
    and the bound it broke.

    Examples
    --------
    >>> from fedlib.exceptions import WireFormatError
    >>> from fedlib.secagg import SecAggConfig
    >>> try:
    ...     SecAggConfig.from_bytes(b"not a configuration")  # wrong magic
    ... except WireFormatError as error:
    ...     type(error).__name__, isinstance(error, ValueError)
    ('WireFormatError', True)
    """


class RingOverflowError(FedlibError, OverflowError):
    """A fixed-point setting whose sums could wrap around ``Z_{2^32}``.

    Examples
    --------
    >>> from fedlib.exceptions import RingOverflowError
    >>> from fedlib.secagg import FixedPoint
    >>> try:  # 3 * 8 * 2**30 >= 2**31: a sum of 3 encodings could wrap around
    ...     FixedPoint(clip=8.0, frac_bits=30, max_summands=3)
    ... except RingOverflowError as error:
    ...     type(error).__name__, isinstance(error, OverflowError)
    ('RingOverflowError', True)
    """


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
    >>> from fedlib.exceptions import InfeasibleParameters
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

    Examples
    --------
    Six clients in clusters of three, a system that may unlearn one client in all (needs torch, the ``learn`` extra):

    >>> import numpy as np
    >>> from fedlib.exceptions import UnlearningCapacityError
    >>> from fedlib.unlearn import ClusteredUnlearning
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((18, 4), dtype=np.float32), rng.integers(0, 2, 18)
    >>> fu = ClusteredUnlearning(cluster_size=3, rounds=1, max_requests=1, method="loop", random_state=0)
    >>> fu = fu.fit(X, y, parts=np.array_split(np.arange(18), 6))
    >>> try:
    ...     fu.unlearn(clients=[0, 1])
    ... except UnlearningCapacityError as error:
    ...     type(error).__name__, isinstance(error, ValueError)
    ('UnlearningCapacityError', True)
    """


class MissingDependencyError(FedlibError, ImportError):
    """A part of fedlib needs an optional dependency that is not installed; the message names the extra.

    Examples
    --------
    Hiding networkx shows what an install without the ``assignment`` extra raises, whether networkx is installed or not:

    >>> import sys
    >>> from unittest import mock
    >>> from fedlib.cluster import lexmin_assignment
    >>> from fedlib.exceptions import MissingDependencyError
    >>> with mock.patch.dict(sys.modules, {"networkx": None}):
    ...     try:
    ...         lexmin_assignment([[0, 1], [1, 0]], method="network_simplex")
    ...     except MissingDependencyError as error:
    ...         print(type(error).__name__, isinstance(error, ImportError))
    MissingDependencyError True
    """


class DeviceUnavailableError(FedlibError, ValueError):
    """A ``device`` this machine cannot train on: CUDA asked for where torch sees no GPU, or a GPU index it lacks.

    Raised by :func:`fedlib.learn.resolve_device` before anything is trained; ``device="auto"``
    never raises it (it falls back to the CPU).

    Examples
    --------
    A hundredth GPU, on a machine with none or with fewer (needs torch, the ``learn`` extra):

    >>> from fedlib.exceptions import DeviceUnavailableError
    >>> from fedlib.learn import resolve_device
    >>> try:
    ...     resolve_device("cuda:99")
    ... except DeviceUnavailableError as error:
    ...     type(error).__name__, isinstance(error, ValueError)
    ('DeviceUnavailableError', True)
    """


class UnlearningRequestError(FedlibError, ValueError):
    """An unlearning request that cannot be served: empty, an id twice, an id never fitted or already forgotten.

    Raised by :meth:`fedlib.base.UnlearningMixin.unlearn` before anything changes.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.exceptions import UnlearningRequestError
    >>> from fedlib.unlearn import MUFC
    >>> X = np.array([[0.0], [0.2], [5.0], [5.2], [0.1], [5.1]])
    >>> model = MUFC(n_clusters=2, random_state=0).fit(X, parts=[[0, 1, 2], [3, 4, 5]])
    >>> try:
    ...     model.unlearn(samples=[0, 0])  # sample 0 twice
    ... except UnlearningRequestError as error:
    ...     type(error).__name__, isinstance(error, ValueError)
    ('UnlearningRequestError', True)
    """
