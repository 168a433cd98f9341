"""Secure aggregation and secure computation protocols, built on :mod:`fedlib.field` and :mod:`fedlib.cluster`.

- SCMA, secure compressed multiset aggregation (MUFC Alg. 2), with zero-sum masks.
- Lagrange coded sharing of data points (SecFC Phase 1, and its membership-private variant).
- :class:`SecFC`, Lloyd's K-means on LCC-shared data (SecFC Alg. 1), its coded distance
  oracle, its field :data:`SECFC_PRIME` and the overflow bound of its scale (SecFC App. A).
"""

from fedlib.secagg._lcc import share_all, share_every_index, share_points, split_segments
from fedlib.secagg._masks import zero_sum_masks
from fedlib.secagg._overflow import SECFC_PRIME, check_scale, distance_bound, max_safe_scale
from fedlib.secagg._scma import (
    SCMAParams,
    SCMAResult,
    dense_secure_sum_bits,
    scma_aggregate,
    scma_decode,
    scma_encode,
    scma_params,
    secure_sparse_sum,
)
from fedlib.secagg._secfc import CodedDistances, SecFC, default_colluders

__all__ = [
    "SECFC_PRIME",
    "CodedDistances",
    "SCMAParams",
    "SCMAResult",
    "SecFC",
    "check_scale",
    "default_colluders",
    "dense_secure_sum_bits",
    "distance_bound",
    "max_safe_scale",
    "scma_aggregate",
    "scma_decode",
    "scma_encode",
    "scma_params",
    "secure_sparse_sum",
    "share_all",
    "share_every_index",
    "share_points",
    "split_segments",
    "zero_sum_masks",
]
