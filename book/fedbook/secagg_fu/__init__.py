"""Drivers of the chapters on Liu et al., "Guaranteeing Data Privacy in Federated Unlearning with Dynamic User
Participation" (IEEE TDSC 2025).

- ParGen (Alg. 2) and the theory of the clustered scheme: Figs. 4-5 grids, the worked example, the exact unlearning
  capacity, Monte Carlo of Requirements 1-4, Remark 1's retraining costs, the errata and the verdicts on the
  paper's claims.
- :mod:`~fedbook.secagg_fu.protocol`: SecAgg(+) inside one cluster (Fig. 3, thresholds, coalitions,
  dropouts, Figs. 10-11 costs).
- :mod:`~fedbook.secagg_fu.learning`: training and unlearning with clusters (Figs. 6-9): data, ParGen's
  designs, convergence, sequential and batch unlearning against global FedAvg, exactness and dropout checks.
"""

from fedbook.secagg_fu._pargen import (
    FIG4_FIXED,
    FIG4_SWEEPS,
    FIG5_SWEEP,
    N_GRID,
    RETRAINING_CASES,
    capacity_table,
    claims_table,
    design_row,
    errata_table,
    figure4_grid,
    figure5_grid,
    first_feasible_n,
    harary_disconnection_table,
    k_against_n,
    optimality_check,
    optimality_verdict,
    requirements_table,
    retraining_table,
    setting_label,
    worked_example_table,
)

__all__ = [
    "FIG4_FIXED",
    "FIG4_SWEEPS",
    "FIG5_SWEEP",
    "N_GRID",
    "RETRAINING_CASES",
    "capacity_table",
    "claims_table",
    "design_row",
    "errata_table",
    "figure4_grid",
    "figure5_grid",
    "first_feasible_n",
    "harary_disconnection_table",
    "k_against_n",
    "optimality_check",
    "optimality_verdict",
    "requirements_table",
    "retraining_table",
    "setting_label",
    "worked_example_table",
]
