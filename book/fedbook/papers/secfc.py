"""Published numbers of SecFC (Li, Hou, Buyukates, Avestimehr: "Secure Federated Clustering", arXiv 2205.15564)."""

from __future__ import annotations

#: Accuracy tables: method -> {(k, k'): (mean %, std %)} over 10 runs ("±" read as a standard deviation).
Table = dict[str, dict[tuple[int, int], tuple[float, float]]]

#: Table 1: Gaussian mixture, sigma = 1 (d = 100; k = 4: n = 10, m = 10000; k = 16: n = 16, m = 16384).
TABLE1: Table = {
    "Centralized Lloyd": {
        (4, 1): (100.0, 0.0),
        (4, 2): (100.0, 0.0),
        (4, 4): (100.0, 0.0),
        (16, 2): (88.2, 5.5),
        (16, 4): (88.2, 5.5),
        (16, 16): (88.2, 5.5),
    },
    "k-FED": {
        (4, 1): (75.0, 0.1),
        (4, 2): (99.7, 2.1),
        (4, 4): (25.8, 0.6),
        (16, 2): (80.3, 5.3),
        (16, 4): (78.7, 3.7),
        (16, 16): (7.6, 0.1),
    },
    "SecFC": {
        (4, 1): (100.0, 0.0),
        (4, 2): (100.0, 0.0),
        (4, 4): (100.0, 0.0),
        (16, 2): (86.0, 1.5),
        (16, 4): (86.0, 1.5),
        (16, 16): (86.0, 1.5),
    },
}

#: Table 2: Gaussian mixture, sigma = 20 (same settings as Table 1).
TABLE2: Table = {
    "Centralized Lloyd": {
        (4, 1): (96.3, 0.1),
        (4, 2): (96.3, 0.1),
        (4, 4): (96.3, 0.1),
        (16, 2): (84.0, 0.2),
        (16, 4): (84.0, 0.2),
        (16, 16): (84.0, 0.2),
    },
    "k-FED": {
        (4, 1): (46.7, 0.0),
        (4, 2): (86.6, 5.5),
        (4, 4): (25.6, 0.1),
        (16, 2): (42.0, 2.2),
        (16, 4): (41.7, 1.2),
        (16, 16): (8.4, 0.1),
    },
    "SecFC": {
        (4, 1): (96.3, 0.0),
        (4, 2): (96.3, 0.0),
        (4, 4): (96.3, 0.0),
        (16, 2): (84.0, 0.1),
        (16, 4): (84.0, 0.1),
        (16, 16): (84.0, 0.1),
    },
}

#: Table 3: rotated MNIST, k = 4 (rotations 0/90/180/270), n = 10: method -> {(digit, k'): (mean %, std %)}.
TABLE3: Table = {
    "Centralized Lloyd": {
        (2, 1): (99.5, 0.1),
        (2, 2): (99.5, 0.1),
        (2, 4): (99.5, 0.1),
        (3, 1): (98.1, 0.0),
        (3, 2): (98.1, 0.0),
        (3, 4): (98.1, 0.0),
    },
    "k-FED": {
        (2, 1): (50.5, 0.0),
        (2, 2): (90.3, 10.4),
        (2, 4): (25.8, 0.1),
        (3, 1): (97.7, 0.0),
        (3, 2): (98.1, 0.0),
        (3, 4): (68.2, 9.4),
    },
    "SecFC": {
        (2, 1): (99.5, 0.1),
        (2, 2): (99.5, 0.1),
        (2, 4): (99.5, 0.1),
        (3, 1): (98.1, 0.0),
        (3, 2): (98.1, 0.0),
        (3, 4): (98.1, 0.0),
    },
}

#: Sec. 5.1: the two accuracy settings, by k.
GAUSSIAN_SETTINGS: dict[int, dict[str, object]] = {
    4: {"n_clients": 10, "n_samples": 10000, "k_primes": (1, 2, 4)},
    16: {"n_clients": 16, "n_samples": 16384, "k_primes": (2, 4, 16)},
}
N_FEATURES = 100
SIGMAS = (1.0, 20.0)
N_RUNS = 10
MNIST_DIGITS = (2, 3)
MNIST_N_CLIENTS = 10
MNIST_K_PRIMES = (1, 2, 4)

#: Sec. 5, Figure 1 defaults: k = 4, n = 10, m = 1000, d = 20, sigma = 1, t = ceil(n/3).
TIMING_DEFAULTS: dict[str, float] = {
    "n_clusters": 4,
    "n_clients": 10,
    "n_samples": 1000,
    "n_features": 20,
    "sigma": 1.0,
}

#: Sec. 5: "the execution time of SecFC in each iteration is rather short (< 16s in the worst case)".
WORST_ITERATION_SECONDS = 16.0

#: Sec. 5: the paper's machine ("Intel(R) Xeon(R) Gold 5118 CPU @ 2.30GHz, with 12 cores of 48 threads").
HARDWARE = "Intel Xeon Gold 5118 @ 2.30 GHz, '12 cores of 48 threads', process-parallel clients"


def paper_cell(value: tuple[float, float]) -> str:
    """Format a (mean, std) pair of percentages as the paper prints it."""
    return f"{value[0]:.1f} ± {value[1]:.1f}"
