"""Auditing forgetting from the outside: canaries, membership-inference attacks, and exactness checks.

A regulator asking "is it really gone?" should not have to read the code. This package tests forgetting as
an attacker or an auditor would, for any method of the contract (:mod:`fedlib.base`):

- **Canaries** (:class:`Canaries`): planted examples a model fits only by memorising them — mislabelled
  examples for classifiers (:func:`mislabeled_canaries`), small far-out groups that pull a K-means centre
  (:func:`outlier_canaries`). Without them a membership test on ordinary data sits near chance before
  forgetting as after, and shows nothing.
- **Statistics** an attacker reads from a model: :func:`cross_entropy` and :func:`logit_confidence` from a
  classifier's logits, :func:`nearest_center_distances` and :func:`nearest_center_scores` from a clustering.
- **Membership inference**: the loss-threshold attack (:func:`loss_attack`; Yeom et al., CSF 2018) and LiRA
  (:func:`lira_attack`, :func:`lira_scores`; Carlini et al., S&P 2022) online and offline, with shadow
  models trained by the target's own procedure (:func:`run_shadows` over :func:`balanced_masks`, jobs run
  by joblib); every attack reports ROC AUC and TPR at 0.1% and 1% FPR with bootstrap intervals
  (:func:`membership_metrics`, :class:`AttackResult`), and the gap between two attacks on the same
  candidates — the unlearned model against the retrained one — with a paired interval (:func:`auc_gap`).
- **Exactness** against retraining from scratch: bit for bit where a method's guarantee is coupled to its
  seeds (:func:`check_bitwise`, :class:`BitwiseCheck`), in distribution by a two-sample test over many seeds
  (:func:`exactness_test`, :class:`ExactnessTest`), and the distance of an approximate method's model from the
  retrained one (:func:`model_distance`).

It is fedlib's top layer: it may use every other package, and none uses it.
"""

from fedlib.audit._attacks import (
    ShadowScores,
    balanced_masks,
    lira_attack,
    lira_scores,
    loss_attack,
    run_shadows,
)
from fedlib.audit._canaries import Canaries, mislabeled_canaries, outlier_canaries
from fedlib.audit._exactness import (
    N_PERMUTATIONS,
    BitwiseCheck,
    ExactnessTest,
    check_bitwise,
    exactness_test,
    model_distance,
)
from fedlib.audit._metrics import AttackResult, AUCGap, auc_gap, membership_metrics
from fedlib.audit._scores import cross_entropy, logit_confidence, nearest_center_distances, nearest_center_scores

__all__ = [
    "N_PERMUTATIONS",
    "AUCGap",
    "AttackResult",
    "BitwiseCheck",
    "Canaries",
    "ExactnessTest",
    "ShadowScores",
    "auc_gap",
    "balanced_masks",
    "check_bitwise",
    "cross_entropy",
    "exactness_test",
    "lira_attack",
    "lira_scores",
    "logit_confidence",
    "loss_attack",
    "membership_metrics",
    "mislabeled_canaries",
    "model_distance",
    "nearest_center_distances",
    "nearest_center_scores",
    "outlier_canaries",
    "run_shadows",
]
