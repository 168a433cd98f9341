"""Exact unlearning: MUFC Alg. 3 (K-means++ seeding) and MUFC itself (Alg. 1 and 4)."""

from fedlib.unlearn._mufc import MUFC, RemovalReport
from fedlib.unlearn._seeding import SeedingUnlearning, unlearn_kmeans_plusplus

__all__ = ["MUFC", "RemovalReport", "SeedingUnlearning", "unlearn_kmeans_plusplus"]
