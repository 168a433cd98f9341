"""Drivers of the chapters on Su & Li, "Asynchronous Federated Unlearning" (IEEE INFOCOM 2023), KNOT.

- :mod:`~fedbook.knot.assignment`: KNOT's client-to-cluster assignment (Sec. IV): clients profiled on
  MNIST, anchors and ratings, every solver against the exact lexicographic minimum, Meyer's lemma on reals and
  integers, total unimodularity by exact determinants, brute force, the paper's float weights (overflow and
  resolution), solve time against K with the verdict on the paper's "less than a second", and the paper's
  setting against Plato's. Its public names are re-exported here.
- :mod:`~fedbook.knot.tasks`: the training tasks standing in for the paper's (Table I) at the
  book's three scales.
- :mod:`~fedbook.knot.runs`: KNOT and its competitors (FedAvg, FedBuff, FedEraser, Random) on the
  simulated clock: train, erase, retrain, time to target.
- :mod:`~fedbook.knot.comparison`: studies over seeds for Table II, Fig. 6(c) and the text's
  numbers, beside the paper's with computed verdicts.
- :func:`readable`: a results table as the chapters show it, every cell short text (a few significant
  digits, long integers as powers of ten, "yes"/"no", a dash or a word for what is missing).
"""

from fedbook._readable import readable
from fedbook.knot.assignment import (
    FLOAT64_MAX,
    METHOD_ROWS,
    MEYER_COUNTEREXAMPLE,
    PLATO_LOCAL_SGD,
    TIME_ONLY,
    VARIANTS,
    AssignedInstance,
    ProfiledClients,
    assign_clients,
    brute_force_table,
    feature_summary,
    float64_levels,
    float_blind_swap,
    float_lp_table,
    float_weights_table,
    lemma_table,
    method_table,
    objective_forms,
    overflow_clients,
    plato_lower,
    profile_mnist,
    solve_time_verdicts,
    sorted_ratings_frame,
    timing_table,
    tu_table,
    variant_instances,
    variants_table,
)

__all__ = [
    "FLOAT64_MAX",
    "METHOD_ROWS",
    "MEYER_COUNTEREXAMPLE",
    "PLATO_LOCAL_SGD",
    "TIME_ONLY",
    "VARIANTS",
    "AssignedInstance",
    "ProfiledClients",
    "assign_clients",
    "brute_force_table",
    "feature_summary",
    "float64_levels",
    "float_blind_swap",
    "float_lp_table",
    "float_weights_table",
    "lemma_table",
    "method_table",
    "objective_forms",
    "overflow_clients",
    "plato_lower",
    "profile_mnist",
    "readable",
    "solve_time_verdicts",
    "sorted_ratings_frame",
    "timing_table",
    "tu_table",
    "variant_instances",
    "variants_table",
]
