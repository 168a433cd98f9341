"""Exact unlearning: MUFC Alg. 3 (K-means++ seeding), MUFC itself (Alg. 1 and 4), and an audit of exactness."""

from fedlib.unlearn._audit import AuditResult, audit_seeding_unlearning, shortcut_unlearn_kmeans_plusplus
from fedlib.unlearn._mufc import MUFC, RemovalReport
from fedlib.unlearn._seeding import SeedingUnlearning, unlearn_kmeans_plusplus

__all__ = [
    "MUFC",
    "AuditResult",
    "RemovalReport",
    "SeedingUnlearning",
    "audit_seeding_unlearning",
    "shortcut_unlearn_kmeans_plusplus",
    "unlearn_kmeans_plusplus",
]
