"""Published numbers of MUFC (Pan, Sima, Prakash, Rana, Milenkovic; ICLR 2023)."""

from __future__ import annotations

from fedlib import data

DATASETS = ("TMI", "Celltype", "Gaussian", "TCGA", "Postures", "FEMNIST", "Covtype")

#: App. M.1, the table of datasets (kept in :mod:`fedlib.data`, whose generators and stand-ins use it).
DATASET_SPECS = data.DATASET_SPECS

#: Table 1: loss ratio phi_f / phi_c^* as (mean, std) over 5 trials (3 for FEMNIST); clients seed only.
TABLE1: dict[str, dict[str, tuple[float, float]]] = {
    "MUFC": {
        "TMI": (1.24, 0.10),
        "Celltype": (1.14, 0.03),
        "Gaussian": (1.25, 0.02),
        "TCGA": (1.18, 0.05),
        "Postures": (1.10, 0.01),
        "FEMNIST": (1.20, 0.00),
        "Covtype": (1.03, 0.02),
    },
    "K-FED": {
        "TMI": (1.84, 0.07),
        "Celltype": (1.72, 0.24),
        "Gaussian": (1.25, 0.01),
        "TCGA": (1.56, 0.11),
        "Postures": (1.13, 0.01),
        "FEMNIST": (1.21, 0.00),
        "Covtype": (1.60, 0.01),
    },
    "DC-KM": {
        "TMI": (1.54, 0.13),
        "Celltype": (1.46, 0.01),
        "Gaussian": (1.02, 0.00),
        "TCGA": (1.15, 0.02),
        "Postures": (1.03, 0.00),
        "FEMNIST": (1.18, 0.00),
        "Covtype": (1.03, 0.02),
    },
}

#: Table 2: MUFC with complete client training (App. M.3); K-FED and DC-KM rows repeat Table 1.
TABLE2_MUFC: dict[str, tuple[float, float]] = {
    "TMI": (1.05, 0.01),
    "Celltype": (1.03, 0.00),
    "Gaussian": (1.02, 0.00),
    "TCGA": (1.02, 0.01),
    "Postures": (1.02, 0.00),
    "FEMNIST": (1.12, 0.00),
    "Covtype": (1.02, 0.00),
}

#: Table 1, last row: speed-up of one unlearning round over complete retraining when no client re-seeds.
SPEEDUP_NO_RETRAIN: dict[str, float] = {
    "TMI": 151,
    "Celltype": 1535,
    "Gaussian": 2074,
    "TCGA": 483,
    "Postures": 613,
    "FEMNIST": 53,
    "Covtype": 267,
}

#: Abstract, contribution 5 and Sec. 6: "an average speed-up ratio of 84x" for random removals.
HEADLINE_SPEEDUP = 84.0

#: App. M.1, the Gaussian data: 10 clusters of 3000 points in d = 10, centres uniform in [0, 1]^d, variance 0.5.
GAUSSIAN = data.MUFC_GAUSSIAN

#: App. M.1: FEMNIST's 100 clients are writers "each of which contributed at least 350 data points".
FEMNIST_MIN_PER_WRITER = 350

#: Trials per cell of Tables 1 and 2: "5 trials (3 for FEMNIST)".
N_TRIALS: dict[str, int] = {name: (3 if name == "FEMNIST" else 5) for name in DATASETS}

#: K-means restarts of the authors' code: 3 for FEMNIST (784 dimensions, 62 clusters), 10 otherwise.
N_INIT: dict[str, int] = {name: (3 if name == "FEMNIST" else 10) for name in DATASETS}

#: Fig. 5: points removed per batch request.
BATCH_SIZES = (10, 30)

#: Clients per dataset (App. M.1), from the table above.
N_CLIENTS: dict[str, int] = {name: DATASET_SPECS[name].n_clients for name in DATASETS}


def paper_cell(value: tuple[float, float]) -> str:
    """Format a (mean, std) pair as the paper prints it."""
    return f"{value[0]:.2f} ± {value[1]:.2f}"
