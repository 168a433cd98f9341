"""Set-up and repeated runs for the SecFC chapters (SecFC Sec. 5: Tables 1-3 and Figure 1)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from fedlib.cluster import KFED, PlainIntegerDistances, centralized_lloyd, clustering_accuracy
from fedlib.data import (
    Dataset,
    iid_partition,
    k_prime_partition,
    load_or_standin,
    make_gaussian_mixture,
    rotated_digit,
)
from fedlib.experiments._verdict import verdict
from fedlib.field import LagrangeCode, lagrange_basis, to_field
from fedlib.papers import secfc as paper
from fedlib.secagg import CodedDistances, SecFC, default_colluders, share_points
from fedlib.utils import SeedLike, check_random_state, progress

#: Slack of :func:`fedlib.experiments.verdict` for accuracies, in percentage points (the paper rounds to 0.1).
VERDICT_SLACK = 1.0


def _base_seed(random_state: SeedLike) -> int:
    """An int seed from which run ``r`` derives ``seed + r``: the int itself, or one drawn from a generator."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).integers(2**31))

METHODS = ("Centralized Lloyd", "SecFC", "k-FED")


def gaussian_problem(
    n_clusters: int, sigma: float, *, n_samples: int | None = None, random_state: SeedLike = 0
) -> Dataset:
    """SecFC Sec. 5.1's mixture: ``k`` Gaussians in ``d = 100``, centres uniform in [-10, 10]^d, std ``sigma``."""
    m = paper.GAUSSIAN_SETTINGS[n_clusters]["n_samples"] if n_samples is None else n_samples
    return make_gaussian_mixture(int(m), paper.N_FEATURES, n_clusters, cluster_std=sigma, random_state=random_state)


def rotated_mnist(digit: int, *, random_state: SeedLike = 0) -> Dataset:
    """SecFC Sec. 5.2: the MNIST test images of ``digit`` in four disjoint groups rotated by 0/90/180/270 degrees."""
    return rotated_digit(load_or_standin("mnist_test"), digit, construction="disjoint", random_state=random_state)


def accuracy_trials(
    dataset: Dataset,
    *,
    n_clients: int,
    k_primes,
    n_runs: int,
    random_state: SeedLike = 0,
    methods=METHODS,
) -> pd.DataFrame:
    """Accuracy of centralized Lloyd, SecFC and k-FED over ``n_runs`` runs (SecFC Tables 1-3).

    Run ``r`` uses seed ``s + r`` (``s = random_state`` when it is an int, else
    an int drawn from it) for the initialisation and for the
    partition of every ``k'``, so the three methods share their randomness.
    Centralized Lloyd ignores the partition and is run once per run. SecFC
    runs on every ``k'`` partition (decoding from the minimum ``2ℓ+2t-1``
    clients, ``ℓ = 1``, ``t = ⌈n/3⌉``) and is checked, every time, against
    exact Lloyd on the quantized data: ``identical`` says whether the two
    clusterings agree at every iteration. k-FED gets ``k'`` local clusters and
    a converged server step. Accuracy is the Hungarian-matched agreement with
    the generating labels, in %.
    """
    X, y = dataset.X, dataset.y
    k = int(dataset.n_clusters)
    seed = _base_seed(random_state)
    rows = []
    t = default_colluders(n_clients)
    with threadpool_limits(1):
        for run in progress(range(n_runs), desc=dataset.name, leave=False):
            run_seed = seed + run
            if "Centralized Lloyd" in methods:
                start = time.perf_counter()
                central = centralized_lloyd(X, k, random_state=run_seed)
                seconds = time.perf_counter() - start
                for k_prime in k_primes:
                    rows.append(
                        ("Centralized Lloyd", k_prime, run, 100 * clustering_accuracy(y, central.labels),
                         central.n_iter, np.nan, seconds)
                    )  # fmt: skip
            for k_prime in k_primes:
                parts = k_prime_partition(y, n_clients, k_prime, random_state=run_seed)
                if "SecFC" in methods:
                    start = time.perf_counter()
                    model = SecFC(k, n_colluders=t, n_responders=2 * t + 1, random_state=run_seed).fit(X, parts)
                    seconds = time.perf_counter() - start
                    reference = centralized_lloyd(X, k, scale=model.scale_, random_state=run_seed)
                    identical = len(reference.history) == len(model.history_) and all(
                        np.array_equal(a, b) for a, b in zip(reference.history, model.history_, strict=True)
                    )
                    rows.append(
                        ("SecFC", k_prime, run, 100 * clustering_accuracy(y, model.labels_), model.n_iter_,
                         float(identical), seconds)
                    )  # fmt: skip
                if "k-FED" in methods:
                    start = time.perf_counter()
                    fit = KFED(k, n_local_clusters=k_prime, server_max_iter=300, random_state=run_seed).fit(X, parts)
                    seconds = time.perf_counter() - start
                    rows.append(("k-FED", k_prime, run, 100 * clustering_accuracy(y, fit.labels_), 0, np.nan, seconds))
    frame = pd.DataFrame(rows, columns=["method", "k'", "run", "accuracy", "iterations", "identical", "seconds"])
    frame.insert(0, "dataset", dataset.name)
    return frame


def beside_paper(trials: pd.DataFrame, published: paper.Table, key: int) -> pd.DataFrame:
    """Our mean ± std (population std over runs, %) beside the paper's cell, with a verdict, per method and ``k'``."""
    rows = []
    for (method, k_prime), group in trials.groupby(["method", "k'"], sort=False):
        ours = (float(group["accuracy"].mean()), float(group["accuracy"].std(ddof=0)))
        theirs = published[method][(key, int(k_prime))]
        rows.append(
            {
                "method": method,
                "k'": int(k_prime),
                "ours": paper.paper_cell(ours),
                "paper": paper.paper_cell(theirs),
                "verdict": verdict(ours, theirs, slack=VERDICT_SLACK),
                "runs": len(group),
                "mean": ours[0],
                "std": ours[1],
                "paper mean": theirs[0],
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class AccuracyTable:
    """One of SecFC's accuracy tables rerun: the runs and our cells beside the paper's."""

    dataset: Dataset  #: the data (its ``name`` says what it is)
    trials: pd.DataFrame  #: one row per method, k' and run (:func:`accuracy_trials`)
    side_by_side: pd.DataFrame  #: ours beside the paper per method and k' (:func:`beside_paper`)


def gaussian_tables(
    *, n_samples: dict[int, int], n_runs: dict[int, int], random_state: SeedLike = 0
) -> dict[tuple[float, int], AccuracyTable]:
    """SecFC Tables 1 and 2: every ``(σ, k)`` of the paper, with ``n_samples[k]`` points and ``n_runs[k]`` runs."""
    tables = {}
    for sigma, published in [(1.0, paper.TABLE1), (20.0, paper.TABLE2)]:
        for k, setup in paper.GAUSSIAN_SETTINGS.items():
            data = gaussian_problem(k, sigma, n_samples=n_samples[k], random_state=random_state)
            trials = accuracy_trials(
                data, n_clients=setup["n_clients"], k_primes=setup["k_primes"], n_runs=n_runs[k],
                random_state=random_state,
            )  # fmt: skip
            tables[(sigma, k)] = AccuracyTable(data, trials, beside_paper(trials, published, k))
    return tables


def mnist_tables(*, n_runs: int, random_state: SeedLike = 0) -> dict[int, AccuracyTable]:
    """SecFC Table 3: rotated MNIST for each digit of the paper."""
    tables = {}
    for digit in paper.MNIST_DIGITS:
        data = rotated_mnist(digit, random_state=random_state)
        trials = accuracy_trials(
            data, n_clients=paper.MNIST_N_CLIENTS, k_primes=paper.MNIST_K_PRIMES, n_runs=n_runs,
            random_state=random_state,
        )  # fmt: skip
        tables[digit] = AccuracyTable(data, trials, beside_paper(trials, paper.TABLE3, digit))
    return tables


def wide_table(side_by_side: pd.DataFrame) -> pd.DataFrame:
    """Methods as rows, ``k'`` as columns, cells "ours (paper)"."""
    cells = side_by_side.assign(cell=side_by_side["ours"] + "  (" + side_by_side["paper"] + ")")
    return cells.pivot(index="method", columns="k'", values="cell").reindex(list(METHODS))


def exactness_runs(X, n_clusters: int, configurations, *, random_state: SeedLike = 0) -> pd.DataFrame:
    """SecFC against exact Lloyd on the quantized data, for several ``(n, ℓ, t, responders)`` (SecFC Theorem 1).

    Every round decodes from a fresh random subset of responding clients.
    Reports, per configuration, whether the clusterings agree at every
    iteration and whether every decoded distance matrix equals the plaintext one.
    """
    seed = _base_seed(random_state)
    rows = []
    reference_cache: dict[float, object] = {}
    with threadpool_limits(1):
        for n, ell, t, n_responders in configurations:
            parts = iid_partition(X.shape[0], n, random_state=seed)
            model = SecFC(n_clusters, n_segments=ell, n_colluders=t, n_responders=n_responders, random_state=seed).fit(
                X, parts
            )
            if model.scale_ not in reference_cache:
                reference_cache[model.scale_] = centralized_lloyd(X, n_clusters, scale=model.scale_, random_state=seed)
            ref = reference_cache[model.scale_]
            same_rounds = len(ref.history) == len(model.history_)
            identical = same_rounds and all(
                np.array_equal(a, b) for a, b in zip(ref.history, model.history_, strict=True)
            )
            rows.append(
                {
                    "n": n,
                    "ℓ": ell,
                    "t": t,
                    "threshold 2ℓ+2t-1": 2 * ell + 2 * t - 1,
                    "responders per round": n_responders,
                    "distinct responder sets": len({tuple(sorted(r)) for r in model.responders_}),
                    "rounds": len(model.responders_),
                    "iterations": model.n_iter_,
                    "identical at every iteration": identical,
                    "final d' identical": bool(np.array_equal(ref.distances, model.run_.distances)),
                }
            )
    return pd.DataFrame(rows)


def float_vs_quantized(X, y, n_clusters: int, scales, *, seeds=(0,)) -> pd.DataFrame:
    """Lloyd on raw floats against Lloyd on ``floor(λX)`` (= SecFC), same seeds: where "identical" stops."""
    rows = []
    for seed in seeds:
        real = centralized_lloyd(X, n_clusters, random_state=seed)
        for scale in scales:
            quant = centralized_lloyd(X, n_clusters, scale=scale, random_state=seed)
            same_seeds = bool(np.array_equal(real.seeds, quant.seeds))
            rows.append(
                {
                    "seed": seed,
                    "λ": scale,
                    "same K-means++ seeds": same_seeds,
                    "labels differing": int(np.sum(real.labels != quant.labels)),
                    "iterations (float)": real.n_iter,
                    "iterations (quantized)": quant.n_iter,
                    "accuracy float (%)": 100 * clustering_accuracy(y, real.labels),
                    "accuracy quantized (%)": 100 * clustering_accuracy(y, quant.labels),
                }
            )
    return pd.DataFrame(rows)


def timing_sweep(parameter: str, values, *, repeats: int = 1, random_state: SeedLike = 0) -> pd.DataFrame:
    """Per-iteration SecFC times against one parameter (Figure 1 of SecFC), the others at the paper's defaults.

    ``parameter`` is ``"n_clients"``, ``"n_features"`` or ``"n_samples"``. Defaults:
    ``k = 4, n = 10, m = 1000, d = 20, σ = 1, ℓ = 1, t = ⌈n/3⌉``; the server
    decodes from the minimum ``2ℓ+2t-1`` clients. Times are medians over
    ``repeats`` fits of: a client's compute per Lloyd round (mean over
    clients and rounds), the server's decoding plus assignment per round,
    Phase 1 per client, and one whole k-FED run (``k' = k``), all with one BLAS thread.
    """
    if parameter not in ("n_clients", "n_features", "n_samples"):
        raise ValueError(f"parameter must be n_clients, n_features or n_samples, got {parameter!r}.")
    seed = _base_seed(random_state)
    rows = []
    with threadpool_limits(1):
        for value in progress(list(values), desc=parameter, leave=False):
            setting = {k: v for k, v in paper.TIMING_DEFAULTS.items()}
            setting[parameter] = value
            n, m, d, k = int(setting["n_clients"]), int(setting["n_samples"]), int(setting["n_features"]), 4
            data = make_gaussian_mixture(m, d, k, cluster_std=float(setting["sigma"]), random_state=seed)
            parts = iid_partition(m, n, random_state=seed)
            t = math.ceil(n / 3)
            samples = []
            for rep in range(repeats):
                model = SecFC(k, n_colluders=t, n_responders=2 * t + 1, random_state=seed + rep).fit(data.X, parts)
                lloyd_rounds = model.client_seconds_[model.n_seed_rounds_ :]
                start = time.perf_counter()
                KFED(k, n_local_clusters=k, server_max_iter=300, random_state=seed + rep).fit(data.X, parts)
                kfed_seconds = time.perf_counter() - start
                samples.append(
                    (
                        float(np.mean([np.mean(c) for c in lloyd_rounds])),
                        float(np.mean(model.server_seconds_[model.n_seed_rounds_ :])),
                        model.sharing_seconds_ / n,
                        kfed_seconds,
                        model.n_iter_,
                    )
                )
            med = np.median(np.array(samples), axis=0)
            rows.append(
                {
                    "parameter": parameter,
                    "value": value,
                    "t": t,
                    "client s/iter": med[0],
                    "server s/iter": med[1],
                    "sharing s/client": med[2],
                    "k-FED total s": med[3],
                    "iterations": med[4],
                }
            )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class WorkedExample:
    """One SecFC round small enough to read (:func:`worked_example`)."""

    code: LagrangeCode  #: n = 5 clients, ℓ = 1, t = 2
    points: pd.DataFrame  #: the quantized points and their clusters
    encoding_row: list[int]  #: client 1's row of the encoding matrix (Lagrange basis at α_1)
    shares: pd.DataFrame  #: every point's share at every client
    weights: pd.DataFrame  #: the decoding weights of one responding set
    distances: pd.DataFrame  #: client 1's coded d̃, the decoded d', the plaintext d' and d = d'/|S_h|²
    decoded_equals_plaintext: bool
    coded_centres: np.ndarray  #: (n, k, d) each client's coded centre sums


def worked_example(*, prime: int = 8191, random_state: SeedLike = 0) -> WorkedExample:
    """A hand-sized SecFC round: 4 points in 2-D, n = 5 clients, ℓ = 1, t = 2, in GF(8191).

    Returns the public points, the shares of every point, one client's coded
    centre and coded distances, the decoding weights of a responding set and
    the decoded ``d'`` next to the plaintext value, as small tables.
    """
    X_int = np.array([[1, 2], [2, 1], [9, 8], [8, 10]], dtype=np.int64)
    labels = np.array([0, 0, 1, 1])
    code = LagrangeCode(n_clients=5, n_segments=1, n_masks=2, prime=prime)
    q = code.prime
    shares = share_points(code, to_field(X_int, q), random_state=random_state)  # (n, m, d)
    sizes = np.bincount(labels, minlength=2)
    clients = CodedDistances(code, shares, n_responders=5, rng=check_random_state(random_state))
    coded = np.stack([clients.client_response(j, labels, 2) for j in range(5)])  # (n, m, k)
    coded_centres = np.stack([[shares[j][labels == h].sum(axis=0) % q for h in range(2)] for j in range(5)])
    responders = [4, 0, 2, 3, 1]
    weights = code.decoding_weights(responders, 2, targets="sum")[0]
    decoded = code.decode(coded[responders], responders, 2, targets="sum")
    plain = PlainIntegerDistances(X_int)(labels, 2)
    point_table = pd.DataFrame(
        {"point": [f"x{i + 1}" for i in range(4)], "x̄": [tuple(r) for r in X_int.tolist()], "cluster": labels + 1}
    )
    share_table = pd.DataFrame(
        {f"client {j + 1} (α={code.alphas[j]})": [tuple(r) for r in shares[j].tolist()] for j in range(5)},
        index=[f"x{i + 1}" for i in range(4)],
    )
    distance_table = pd.DataFrame(
        {
            "d̃ at client 1": [tuple(r) for r in coded[0].tolist()],
            "decoded d'": [tuple(r) for r in decoded.tolist()],
            "plaintext d'": [tuple(r) for r in plain.tolist()],
            "d = d'/|S_h|²": [tuple(float(v) for v in (r / sizes**2)) for r in plain],
        },
        index=[f"x{i + 1}" for i in range(4)],
    )
    weight_table = pd.DataFrame(
        {
            "client": [r + 1 for r in responders],
            "α": [code.alphas[r] for r in responders],
            "weight w_r": weights.tolist(),
        }
    )
    return WorkedExample(
        code=code,
        points=point_table,
        encoding_row=lagrange_basis(code.betas, [code.alphas[0]], q)[0],
        shares=share_table,
        weights=weight_table,
        distances=distance_table,
        decoded_equals_plaintext=bool(np.array_equal(decoded, plain)),
        coded_centres=coded_centres,
    )
