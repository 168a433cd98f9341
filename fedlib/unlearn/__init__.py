"""Exact unlearning: of K-means++ seeding (MUFC Alg. 3) and of federated clusters (MUFC, DC-KM), with an audit.

- :func:`unlearn_kmeans_plusplus` (MUFC Alg. 3), checked bit for bit with exponential-race keys.
- :class:`MUFC` (MUFC Alg. 1 and 4) and the DC-KM baseline :class:`DCKMeans`, whose
  ``remove`` both return a :class:`RemovalReport`.
- :func:`audit_seeding_unlearning`: a chi-square test that exact unlearning passes and
  tempting shortcuts fail.
"""

from fedlib.unlearn._audit import AuditResult, audit_seeding_unlearning, shortcut_unlearn_kmeans_plusplus
from fedlib.unlearn._dckm import DCKMeans
from fedlib.unlearn._mufc import MUFC
from fedlib.unlearn._report import RemovalReport
from fedlib.unlearn._seeding import SeedingUnlearning, unlearn_kmeans_plusplus

__all__ = [
    "MUFC",
    "AuditResult",
    "DCKMeans",
    "RemovalReport",
    "SeedingUnlearning",
    "audit_seeding_unlearning",
    "shortcut_unlearn_kmeans_plusplus",
    "unlearn_kmeans_plusplus",
]
