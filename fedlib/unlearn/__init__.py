"""Exact and approximate unlearning: MUFC Alg. 3 (K-means++ seeding)."""

from fedlib.unlearn._seeding import SeedingUnlearning, unlearn_kmeans_plusplus

__all__ = ["SeedingUnlearning", "unlearn_kmeans_plusplus"]
