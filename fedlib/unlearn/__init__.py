"""Methods that forget, on one contract (:mod:`fedlib.base`): ``fit``, then ``unlearn(samples=..., clients=...)``.

These estimators return a :class:`~fedlib.base.UnlearningReport` from ``unlearn``:

- :class:`KMeansPlusPlus`: K-means++ seeding that unlearns exactly (MUFC Alg. 3), bit for bit
  with exponential-race keys.
- :class:`MUFC` (MUFC Alg. 1 and 4) and the DC-KM baseline :class:`DCKMeans`.
- :class:`Retrain`: retraining any estimator from scratch, the exact baseline.
- :class:`ClusteredUnlearning` (Liu et al. 2025, Alg. 1 and Fig. 1): clients split into random
  clusters, FedAvg with secure aggregation inside each, a :func:`majority_vote` of the cluster
  models, and exact unlearning of clients by retraining only the affected clusters; requests past
  Requirement 4 raise :class:`~fedlib.exceptions.UnlearningCapacityError`.
- :class:`FedEraser` (Liu et al., IWQoS 2021): approximate unlearning by calibrating the client
  updates an asynchronous server stored, the baseline of KNOT (Su & Li 2023); its training is
  :class:`fedlib.learn.AsyncFederatedTrainer`'s, which itself forgets exactly by rolling back the
  forgotten clients' clusters (KNOT, Sec. III).
- :class:`RapidRetraining` (Liu, Xu, Yuan, Wang and Li, INFOCOM 2022): exact unlearning of clients by
  retraining FedAvg from the initial model on the remaining clients, with a Newton-type local step
  preconditioned by the diagonal empirical Fisher information and momentum, for fewer rounds.
- :class:`FineTuning`: the naive, inexact baseline: drop the clients and continue FedAvg from the
  current model on the others for a few rounds.

Beside them:

- :func:`audit_seeding_unlearning`: a chi-square test that exact unlearning passes and
  tempting shortcuts fail.
- :func:`pargen` (Liu et al. 2025, Alg. 2), printed and corrected, with the lemma functions
  (:func:`f1_shamir_security`, :func:`f2_shamir_correctness`, :func:`f3_connectivity`), the exact
  probabilities of Requirements 1, 2 and 4, the exact unlearning capacity, Monte Carlo of
  Requirements 1-4 over random clusterings (:func:`assign_clusters`, Alg. 1) and the retraining costs
  of Remark 1.

:class:`ClusteredUnlearning`, :class:`FedEraser`, :class:`RapidRetraining` and :class:`FineTuning` train models
with :mod:`fedlib.learn` (torch, the ``learn`` extra); they are imported when first used, so the rest of this
package works on the core install.
"""

import importlib

from fedlib._optional import import_optional
from fedlib.unlearn._audit import AuditResult, audit_seeding_unlearning, shortcut_unlearn_kmeans_plusplus
from fedlib.unlearn._capacity import (
    f_batch_capacity,
    tau_batch_printed,
    tau_sequential_printed,
    unlearning_capacity_exact,
)
from fedlib.unlearn._clustering import assign_clusters, balanced_cluster_sizes
from fedlib.unlearn._dckm import DCKMeans
from fedlib.unlearn._harary import harary_connected, harary_degree
from fedlib.unlearn._lemmas import balanced_threshold_rate, f1_shamir_security, f2_shamir_correctness, f3_connectivity
from fedlib.unlearn._mufc import MUFC
from fedlib.unlearn._pargen import ParGenResult, pargen
from fedlib.unlearn._requirements import (
    RequirementRisk,
    overflow_probability,
    r4_failure_probability,
    requirement_failure_probabilities,
)
from fedlib.unlearn._retrain import Retrain
from fedlib.unlearn._retraining_cost import (
    expected_retrained,
    expected_retrained_batch,
    expected_retrained_sequential,
    simulate_retraining,
)
from fedlib.unlearn._seeding import KMeansPlusPlus
from fedlib.unlearn._simulation import simulate_requirements
from fedlib.unlearn._voting import VoteResult, majority_vote

__all__ = [
    "MUFC",
    "AuditResult",
    "ClusteredUnlearning",
    "DCKMeans",
    "FedEraser",
    "FineTuning",
    "KMeansPlusPlus",
    "ParGenResult",
    "RapidRetraining",
    "RequirementRisk",
    "Retrain",
    "VoteResult",
    "assign_clusters",
    "audit_seeding_unlearning",
    "balanced_cluster_sizes",
    "balanced_threshold_rate",
    "expected_retrained",
    "expected_retrained_batch",
    "expected_retrained_sequential",
    "f1_shamir_security",
    "f2_shamir_correctness",
    "f3_connectivity",
    "f_batch_capacity",
    "harary_connected",
    "harary_degree",
    "majority_vote",
    "overflow_probability",
    "pargen",
    "r4_failure_probability",
    "requirement_failure_probabilities",
    "shortcut_unlearn_kmeans_plusplus",
    "simulate_requirements",
    "simulate_retraining",
    "tau_batch_printed",
    "tau_sequential_printed",
    "unlearning_capacity_exact",
]

#: Names whose modules need torch, and those modules.
_NEEDS_TORCH = {
    "ClusteredUnlearning": "_clustered",
    "FedEraser": "_federaser",
    "FineTuning": "_finetuning",
    "RapidRetraining": "_rapid",
}


def __getattr__(name: str):
    if name in _NEEDS_TORCH:
        # Checked first, so the core install gets the MissingDependencyError naming the extra, not a bare
        # ModuleNotFoundError from the module's own ``import torch``.
        import_optional("torch", "learn", feature=f"fedlib.unlearn.{name}")
        return getattr(importlib.import_module(f"fedlib.unlearn.{_NEEDS_TORCH[name]}"), name)
    raise AttributeError(f"module 'fedlib.unlearn' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
