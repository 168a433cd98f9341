"""Secure aggregation and secure computation protocols, built on :mod:`fedlib.field` and :mod:`fedlib.cluster`.

- SecAgg and SecAgg+ (Bonawitz et al. 2017; Bell et al. 2020): X25519 key agreement, AES-GCM
  sealed Shamir shares, AES-CTR masks along a complete or Harary :class:`MaskingGraph`, double
  masking, the protocol as :class:`Stage` s of :class:`SecAggClient` and :class:`SecAggServer`,
  driven by :func:`secure_aggregate`; :class:`FixedPoint` encodes floats into ``Z_{2^32}``;
  what a curious server learns with a coalition or a disconnected graph (:func:`unmask_with_coalition`,
  :func:`leaked_partial_sums`); :class:`SecureAggregator` sums float model updates, one fresh round per call.
  Every message, the configuration and a client's whole state go to bytes and back (``to_bytes`` and
  ``from_bytes``, a versioned format parsed strictly, no pickle), for parties that keep no Python object
  between stages, such as Flower nodes.

- SCMA, secure compressed multiset aggregation (MUFC Alg. 2), with zero-sum masks, and its variant over
  hashed bin indices in a 62-bit field (power sums plus an index table peeled by the decoded hashes) for
  grids of thousands of bits, where Alg. 2's prime makes root finding take hours.
- Lagrange coded sharing of data points (SecFC Phase 1, and its membership-private variant).
- :class:`SecFC`, Lloyd's K-means on LCC-shared data (SecFC Alg. 1), its coded distance
  oracle, its field :data:`SECFC_PRIME` and the overflow bounds of its scale, in advance or per round
  (SecFC App. A), and its optional per-feature scaling.
"""

from fedlib.secagg._aggregator import SecureAggregator, SecureSum
from fedlib.secagg._crypto import (
    agree,
    generate_keypair,
    open_sealed,
    prg_words,
    random_bytes,
    seal,
)
from fedlib.secagg._fixed_point import FixedPoint
from fedlib.secagg._graph import MaskingGraph, harary_graph
from fedlib.secagg._lcc import share_all, share_every_index, share_points, split_segments
from fedlib.secagg._leakage import leaked_partial_sums, strip_pairwise_masks, unmask_with_coalition
from fedlib.secagg._masks import zero_sum_mask_arrays, zero_sum_masks
from fedlib.secagg._overflow import (
    SECFC_PRIME,
    check_radius,
    check_round,
    check_scale,
    data_radius,
    distance_bound,
    max_safe_scale,
)
from fedlib.secagg._scma import (
    SCMAParams,
    SCMAResult,
    dense_secure_sum_bits,
    plain_sparse_sum,
    scma_aggregate,
    scma_decode,
    scma_encode,
    scma_params,
    secure_sparse_sum,
)
from fedlib.secagg._scma_hashed import (
    HASHED_SCMA_PRIME,
    HashedSCMAParams,
    HashedSCMAResult,
    bin_hashes,
    hashed_scma_aggregate,
    hashed_scma_decode,
    hashed_scma_encode,
    hashed_scma_key,
    hashed_scma_params,
    secure_hashed_sparse_sum,
    table_rows,
)
from fedlib.secagg._secagg import (
    CorruptedClientView,
    EncryptedShare,
    KeyAdvertisement,
    MaskedInput,
    PhaseClock,
    SecAggClient,
    SecAggConfig,
    SecAggServer,
    Stage,
    UnmaskingResponse,
)
from fedlib.secagg._secagg_round import PHASES, SecAggResult, secure_aggregate
from fedlib.secagg._secfc import CodedDistances, SecFC, default_colluders, feature_transform

__all__ = [
    "HASHED_SCMA_PRIME",
    "PHASES",
    "SECFC_PRIME",
    "CodedDistances",
    "CorruptedClientView",
    "EncryptedShare",
    "FixedPoint",
    "HashedSCMAParams",
    "HashedSCMAResult",
    "KeyAdvertisement",
    "MaskedInput",
    "MaskingGraph",
    "PhaseClock",
    "SCMAParams",
    "SCMAResult",
    "SecAggClient",
    "SecAggConfig",
    "SecAggResult",
    "SecAggServer",
    "SecFC",
    "SecureAggregator",
    "SecureSum",
    "Stage",
    "UnmaskingResponse",
    "agree",
    "bin_hashes",
    "check_radius",
    "check_round",
    "check_scale",
    "data_radius",
    "default_colluders",
    "dense_secure_sum_bits",
    "distance_bound",
    "feature_transform",
    "generate_keypair",
    "harary_graph",
    "hashed_scma_aggregate",
    "hashed_scma_decode",
    "hashed_scma_encode",
    "hashed_scma_key",
    "hashed_scma_params",
    "leaked_partial_sums",
    "max_safe_scale",
    "open_sealed",
    "plain_sparse_sum",
    "prg_words",
    "random_bytes",
    "scma_aggregate",
    "scma_decode",
    "scma_encode",
    "scma_params",
    "seal",
    "secure_aggregate",
    "secure_hashed_sparse_sum",
    "secure_sparse_sum",
    "share_all",
    "share_every_index",
    "share_points",
    "split_segments",
    "strip_pairwise_masks",
    "table_rows",
    "unmask_with_coalition",
    "zero_sum_mask_arrays",
    "zero_sum_masks",
]
