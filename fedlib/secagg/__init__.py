"""Secure aggregation: zero-sum masks and SCMA (MUFC Alg. 2)."""

from fedlib.secagg._lcc import share_all, share_every_index, share_points, split_segments
from fedlib.secagg._masks import zero_sum_masks
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

__all__ = [
    "SCMAParams",
    "SCMAResult",
    "dense_secure_sum_bits",
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
