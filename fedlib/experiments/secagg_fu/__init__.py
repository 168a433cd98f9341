"""Drivers of the chapters on Liu et al., "Guaranteeing Data Privacy in Federated Unlearning with Dynamic User
Participation" (IEEE TDSC 2025).

- ParGen (Alg. 2) and the theory of the clustered scheme: Figs. 4-5 grids, the worked example, the exact unlearning
  capacity, Monte Carlo of Requirements 1-4, Remark 1's retraining costs, the errata and the verdicts on the
  paper's claims.
"""

from fedlib.experiments.secagg_fu._pargen import (
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
    "requirements_table",
    "retraining_table",
    "setting_label",
    "worked_example_table",
]
