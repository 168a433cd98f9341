"""Published values of Su & Li, "Asynchronous Federated Unlearning" (IEEE INFOCOM 2023), the KNOT paper.

Table I (the four tasks' settings), Table II (time to a target accuracy, as improvements over FedBuff), the numbers
quoted in the text (the 54% of asynchronous over synchronous training, KNOT against FedEraser, the proof of concept
of Fig. 4, the solver time) and the constants of the assignment (Sec. IV). The algorithms are code:
:class:`fedlib.learn.AsyncFederatedTrainer`, :func:`fedlib.cluster.lexmin_assignment`,
:class:`fedlib.unlearn.FedEraser`.
"""

from __future__ import annotations

#: The four tasks of Sec. V, in Table I's column order.
TASKS = ("CIFAR-10", "FEMNIST", "Purchase-100", "Tiny-Shakespeare")

#: Table I: clients K. Tiny-Shakespeare reads "70/50" (two configurations; which run used which is not said).
TABLE1_CLIENTS: dict[str, tuple[int, ...]] = {
    "CIFAR-10": (100,),
    "FEMNIST": (250,),
    "Purchase-100": (100,),
    "Tiny-Shakespeare": (70, 50),
}

#: Table I: "# selected", the clients in flight P ("50/30" for Tiny-Shakespeare).
TABLE1_SELECTED: dict[str, tuple[int, ...]] = {
    "CIFAR-10": (20,),
    "FEMNIST": (200,),
    "Purchase-100": (60,),
    "Tiny-Shakespeare": (50, 30),
}

#: Table I: "# minimum", the results per aggregation M.
TABLE1_MINIMUM: dict[str, int] = {"CIFAR-10": 15, "FEMNIST": 150, "Purchase-100": 30, "Tiny-Shakespeare": 25}

#: Table I: "# erased", clients erased in the main runs (Fig. 5, Table II) and in Fig. 6(c).
TABLE1_ERASED: dict[str, tuple[int, int]] = {
    "CIFAR-10": (1, 2),
    "FEMNIST": (1, 2),
    "Purchase-100": (1, 2),
    "Tiny-Shakespeare": (2, 4),
}

#: Table I: samplers.
TABLE1_SAMPLER: dict[str, str] = {
    "CIFAR-10": "non-i.i.d.",
    "FEMNIST": "non-i.i.d.",
    "Purchase-100": "non-i.i.d.",
    "Tiny-Shakespeare": "i.i.d.",
}

#: Table I: models.
TABLE1_MODEL: dict[str, str] = {
    "CIFAR-10": "VGG-16",
    "FEMNIST": "LeNet-5",
    "Purchase-100": "MLP",
    "Tiny-Shakespeare": "GPT-2 (distilgpt2)",
}

#: Table II, first row: the target, an accuracy in percent, except Tiny-Shakespeare's, a perplexity.
TABLE2_TARGET: dict[str, float] = {"CIFAR-10": 75.0, "FEMNIST": 60.0, "Purchase-100": 63.5, "Tiny-Shakespeare": 37.5}

#: Table II: FedBuff's seconds to the target.
TABLE2_FEDBUFF_SECONDS: dict[str, float] = {
    "CIFAR-10": 2036.0,
    "FEMNIST": 4272.0,
    "Purchase-100": 2381.0,
    "Tiny-Shakespeare": 16293.0,
}

#: Table II: improvement over FedBuff, 1 - T / T_FedBuff, in percent (negative: slower; "2%↓" is -2).
#: FedEraser "failed to work correctly" on Tiny-Shakespeare: None.
TABLE2_IMPROVEMENT: dict[str, dict[str, float | None]] = {
    "FedEraser": {"CIFAR-10": -2.0, "FEMNIST": 10.0, "Purchase-100": 19.0, "Tiny-Shakespeare": None},
    "Random": {"CIFAR-10": 73.0, "FEMNIST": 45.0, "Purchase-100": 61.0, "Tiny-Shakespeare": 27.0},
    "KNOT": {"CIFAR-10": 85.0, "FEMNIST": 52.0, "Purchase-100": 64.0, "Tiny-Shakespeare": 33.0},
}

#: Sec. V: KNOT's improvement over FedEraser in percent ("85%, 47%, and 56%"; none on Tiny-Shakespeare).
KNOT_OVER_FEDERASER: dict[str, float] = {"CIFAR-10": 85.0, "FEMNIST": 47.0, "Purchase-100": 56.0}

#: Sec. V: synchronous FedAvg against FedBuff on CIFAR-10, seconds to 75%: "4426 seconds" and "2036 seconds".
SYNC_VS_ASYNC_SECONDS: dict[str, float] = {"FedAvg": 4426.0, "FedBuff": 2036.0}

#: The improvement the text states for it, percent ("54%").
SYNC_VS_ASYNC_IMPROVEMENT = 54.0

#: Sec. III, Fig. 4 (MNIST, LeNet-5): the proof of concept of random clustered aggregation.
FIG4_SETUP: dict[str, float] = {
    "clients": 100,
    "clusters": 5,
    "selected": 30,
    "minimum": 15,
    "dirichlet": 5.0,
    "pareto_alpha": 1.0,
}

#: Fig. 4: the erasure comes at about 140 s for all methods; random clustering's final model at 360 s with 90%.
FIG4_ERASURE_SECONDS = 140.0
FIG4_FINAL_SECONDS = 360.0
FIG4_FINAL_ACCURACY = 90.0

#: Sec. V: clusters in every experiment, and the Pareto tail index of the training times.
N_CLUSTERS = 5
PARETO_ALPHA = 1.0

#: Sec. IV: each client in exactly one cluster (c1), and cluster sizes between c2 = K/(2N) and c3 = K/2.
#: As functions of (K, N): the bounds are not integers in general.
C1 = 1


def c2(n_clients: int, n_clusters: int) -> float:
    """Sec. IV's smallest cluster size, K / (2N) (before rounding up)."""
    return n_clients / (2 * n_clusters)


def c3(n_clients: int, n_clusters: int) -> float:
    """Sec. IV's largest cluster size, K / 2 (before rounding down)."""
    return n_clients / 2


#: Sec. IV: match ratings are rounded to integers D in 0..100 before the exponential objective.
RATING_LEVELS = 100

#: Sec. IV: the LP "can be solved in less than one second" (Mosek 9; K = 100 in the experiments).
SOLVE_SECONDS = 1.0

#: What the text says beyond the tables, one sentence per claim, for verdict tables.
CLAIMS: dict[str, str] = {
    "async_beats_sync": "FedBuff reaches 75% on CIFAR-10 in 2036 s against synchronous FedAvg's 4426 s, "
    "a 54% improvement (Sec. V)",
    "knot_beats_fedbuff": "KNOT outperforms FedBuff by up to 85% in the time to the target (Table II)",
    "knot_beats_random_minor": "KNOT has a minor advantage over random clustered aggregation (Sec. V)",
    "knot_beats_federaser": "KNOT converges 85%, 47% and 56% faster than FedEraser (Sec. V)",
    "clusters_no_effect": "the number of clusters had no material effects on the training performance (Sec. III)",
    "two_erased": "with two clients erased (four for the language model), KNOT and Random still clearly beat "
    "FedEraser (Fig. 6c)",
    "fig4_final": "random clustered aggregation produces its final model at 360 s with 90% accuracy, before "
    "FedAvg and FedBuff (Fig. 4)",
}
