"""Set-up and repeated runs for the foundations chapter: the book's datasets, seeding quality, weighting."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import pandas as pd
from joblib import delayed

from fedbook.bench import speed_ratios
from fedbook.papers import mufc as mufc_paper
from fedbook.sweeps import run_jobs
from fedlib.cluster import KMeans, OneShotFederatedKMeans, kmeans_objective, kmeans_plusplus, lloyd, loss_ratio
from fedlib.data import Dataset, iid_partition, non_iid_partition
from fedlib.utils import SeedLike, check_random_state, spawn_generators

#: MUFC's name of each dataset of :func:`fedlib.data.load` that MUFC also uses.
MUFC_NAMES = {
    "celltype": "Celltype",
    "covtype": "Covtype",
    "gaussian": "Gaussian",
    "postures_partial": "Postures",
    "femnist_sample": "FEMNIST",
    "tcga_standin": "TCGA",
    "tmi_standin": "TMI",
}


@dataclass(frozen=True)
class DatasetProfiles:
    """K-means fits of the book's datasets and their cluster sizes beside MUFC's (:func:`dataset_profiles`)."""

    fits: dict[str, KMeans]  #: best of n_init K-means runs per dataset
    sizes: dict[str, np.ndarray]  #: K-means cluster sizes, largest first
    published_sizes: dict[str, tuple[int, ...] | None]  #: MUFC App. M.1's sizes where it publishes them
    table: pd.DataFrame  #: n, d, K and imbalance, ours beside the paper's


def _restart(X: np.ndarray, K: int, stream: np.random.Generator) -> KMeans:
    """One K-means restart from ``stream`` (one job of :func:`kmeans_fits`)."""
    return KMeans(K, n_init=1, random_state=stream).fit(X)


def kmeans_fits(fits, *, n_jobs: int = 1) -> list[KMeans]:
    """``KMeans(K, n_init=n_init, random_state=r).fit(X)`` for every ``(X, K, n_init, r)`` of ``fits``, with the
    restarts of all of them shared by ``n_jobs`` joblib processes.

    :class:`fedlib.cluster.KMeans` runs its restarts one after the other from one stream: restart ``i`` draws its
    K-means++ seeds with ``K`` uniforms (one per step, :func:`fedlib.cluster.kmeans_plusplus`) after the ``K i``
    of the restarts before it, and Lloyd's iterations draw nothing. So each restart here starts from a copy of
    the stream advanced by ``K i`` uniforms, the best restart (lowest inertia, the first on ties) is the model,
    and a Generator ``r`` ends where ``fit`` would leave it. Each model is the one ``fit`` gives in a joblib
    worker, bit for bit (``n_jobs=1``: in this process); a matrix product's rounding depends on the BLAS threads
    that share it, and joblib gives each worker ``cpu_count // n_jobs`` of them. The tests check all of it against
    ``KMeans`` itself.

    Parameters
    ----------
    fits : iterable of (ndarray, int, int, int or numpy.random.Generator)
        Data, clusters, restarts and random state of each fit.
    n_jobs : int, default=1
        Processes; the largest fits' restarts go first.

    Returns
    -------
    list of KMeans
        The fitted models, in the order of ``fits`` (``n_init`` and ``random_state`` as given).
    """
    specs, jobs = [], []
    for f, (X, K, n_init, random_state) in enumerate(fits):
        rng = check_random_state(random_state)
        specs.append((n_init, random_state))
        for _ in range(n_init):
            jobs.append((f, X, K, copy.deepcopy(rng)))
            rng.random(K)  # what this restart's K-means++ seeding draws
    models = run_jobs([delayed(_restart)(*job[1:]) for job in jobs], n_jobs=n_jobs,
                      cost=[job[1].size * job[2] for job in jobs])  # fmt: skip
    out = []
    for f, (n_init, random_state) in enumerate(specs):
        restarts = [model for job, model in zip(jobs, models, strict=True) if job[0] == f]
        best = min(range(n_init), key=lambda i: (restarts[i].inertia_, i))
        out.append(restarts[best].set_params(n_init=n_init, random_state=random_state))
    return out


def dataset_profiles(
    datasets: dict[str, Dataset],
    X_used: dict[str, np.ndarray],
    *,
    n_init: int,
    n_jobs: int = 1,
    random_state: SeedLike = None,
) -> DatasetProfiles:
    """Fit K-means on every dataset and set its size and imbalance beside MUFC's published ones.

    Every dataset's fit draws from its own stream spawned from ``random_state``;
    ``n_jobs`` processes share the fits' restarts (:func:`kmeans_fits`) and give the same profiles as one, up to
    the rounding of BLAS threads on large data (one process computes with every core's thread, a worker with its
    share).
    """
    streams = spawn_generators(random_state, len(datasets))
    jobs = [(X_used[name], ds.n_clusters, n_init, stream) for (name, ds), stream in zip(datasets.items(), streams,
                                                                                         strict=True)]  # fmt: skip
    models = kmeans_fits(jobs, n_jobs=n_jobs)
    fits, sizes, published_sizes, rows = {}, {}, {}, []
    for (name, ds), model in zip(datasets.items(), models, strict=True):
        X = X_used[name]
        fits[name] = model
        sizes[name] = np.sort(np.bincount(model.labels_, minlength=ds.n_clusters))[::-1]
        spec = mufc_paper.DATASET_SPECS.get(MUFC_NAMES.get(name, ""))
        published = spec.cluster_sizes if spec else None
        published_sizes[name] = published
        kind = "stand-in" if ds.is_standin else "real"
        rows.append(
            {
                "dataset": ds.name,
                "data": "generated" if name == "gaussian" else kind,
                "n (ours)": X.shape[0],
                "n (paper)": str(spec.n_samples) if spec else "",
                "d": ds.n_features,
                "K": ds.n_clusters,
                "imbalance (ours)": round(sizes[name][0] / max(sizes[name][-1], 1), 1),
                "imbalance (paper)": round(published[0] / published[-1], 1) if published else "",
            }
        )
    return DatasetProfiles(fits, sizes, published_sizes, pd.DataFrame(rows).set_index("dataset"))


def _one_seeding(X: np.ndarray, K: int, phi_star: float, rng) -> tuple[float, float, float]:
    """Loss ratios of one K-means++ seeding, one uniform seeding and Lloyd from the K-means++ seeds."""
    centers, _ = kmeans_plusplus(X, K, random_state=rng)
    uniform = X[rng.choice(X.shape[0], K, replace=False)]
    return (
        kmeans_objective(X, centers) / phi_star,
        kmeans_objective(X, uniform) / phi_star,
        lloyd(X, centers).inertia / phi_star,
    )


def seeding_quality(
    datasets: dict[str, Dataset],
    X_used: dict[str, np.ndarray],
    fits: dict[str, KMeans],
    *,
    n_reps: int,
    n_jobs: int = 1,
    random_state: SeedLike = None,
) -> pd.DataFrame:
    """Loss ratio of K-means++ seeds, of uniform seeds and of Lloyd from the seeds, beside ``8(ln K + 2)``.

    ``phi^*`` is the inertia of ``fits[name]``; one row per dataset, means over
    ``n_reps`` seedings (and the worst K-means++ seeding). Every seeding draws
    from its own stream, spawned from ``random_state``, so ``n_jobs`` processes
    share them and give the same table as one.
    """
    names = list(datasets)
    streams = iter(spawn_generators(random_state, len(names) * n_reps))
    jobs = [(name, next(streams)) for name in names for _ in range(n_reps)]
    ratios = run_jobs(
        [delayed(_one_seeding)(X_used[name], datasets[name].n_clusters, fits[name].inertia_, stream)
         for name, stream in jobs],
        n_jobs=n_jobs,
    )  # fmt: skip
    rows = []
    for i, name in enumerate(names):
        seeded, uniform, refined = np.array(ratios[i * n_reps : (i + 1) * n_reps]).T
        K = datasets[name].n_clusters
        rows.append(
            {
                "dataset": datasets[name].name,
                "K": K,
                "bound 8(ln K + 2)": 8 * (np.log(K) + 2),
                "K-means++ seeds": seeded.mean(),
                "K-means++ seeds (worst)": seeded.max(),
                "uniform seeds": uniform.mean(),
                "K-means++ then Lloyd": refined.mean(),
            }
        )
    table = pd.DataFrame(rows).set_index("dataset")
    table["within bound"] = table["K-means++ seeds"] <= table["bound 8(ln K + 2)"]
    return table


def weighting_study(
    datasets: dict[str, Dataset],
    names,
    *,
    n_clients: int,
    n_reps: int,
    n_init: int,
    random_state: SeedLike = None,
) -> pd.DataFrame:
    """One-shot federated K-means (MUFC Alg. 5) with and without server weights, iid and non-iid (K' = round √K).

    One row per dataset, split and weighting with the loss ratio over ``n_reps``
    splits, as "mean ± std" and as the mean.
    """
    rng = check_random_state(random_state)
    rows = []
    for name in names:
        ds = datasets[name]
        X, K = ds.X, ds.n_clusters
        k_prime = round(float(np.sqrt(K)))
        reference = KMeans(K, n_init=n_init, random_state=rng).fit(X)
        phi_star, labels = reference.inertia_, reference.labels_
        for split in ["iid", f"non-iid (K'={k_prime})"]:
            for weighted in [True, False]:
                ratios = []
                for _ in range(n_reps):
                    if split == "iid":
                        parts = iid_partition(ds.n_samples, n_clients, random_state=rng)
                    else:
                        parts = non_iid_partition(
                            labels, n_clients, max_clusters_per_client=k_prime, random_state=rng
                        )
                    model = OneShotFederatedKMeans(K, weighted=weighted, server_n_init=n_init, random_state=rng)
                    ratios.append(loss_ratio(model.fit(X, parts=parts).federated_loss_, phi_star))
                rows.append(
                    {
                        "dataset": ds.name,
                        "split": split,
                        "server weights": "cluster sizes" if weighted else "none",
                        "loss ratio": f"{np.mean(ratios):.2f} ± {np.std(ratios):.2f}",
                        "mean": np.mean(ratios),
                    }
                )
    return pd.DataFrame(rows)


def seeding_speed(datasets: dict[str, Dataset], names, *, repeat: int) -> pd.DataFrame:
    """fedlib's K-means++ against scikit-learn's (greedy default and ``n_local_trials=1``), ratios in one run."""
    from sklearn.cluster import kmeans_plusplus as sklearn_kmeans_plusplus

    rows = []
    for name in names:
        ds = datasets[name]
        X, K = ds.X, ds.n_clusters
        ratios = speed_ratios(
            {
                "fedlib": lambda X=X, K=K: kmeans_plusplus(X, K, random_state=0),
                "sklearn (greedy, default)": lambda X=X, K=K: sklearn_kmeans_plusplus(X, K, random_state=0),
                "sklearn (n_local_trials=1)": lambda X=X, K=K: sklearn_kmeans_plusplus(
                    X, K, random_state=0, n_local_trials=1
                ),
            },
            reference="fedlib",
            repeat=repeat,
        )
        rows.append(
            {
                "dataset": ds.name,
                "n": ds.n_samples,
                "d": ds.n_features,
                "K": K,
                "speed-up over sklearn greedy": 1 / ratios["sklearn (greedy, default)"],
                "speed-up over sklearn n_local_trials=1": 1 / ratios["sklearn (n_local_trials=1)"],
            }
        )
    return pd.DataFrame(rows).set_index("dataset")


def lloyd_trace(X, init, *, max_iter: int = 15) -> tuple[list[float], object]:
    """The objective before Lloyd and after each iteration until it converges (at most ``max_iter``).

    Returns the objective values (first: at ``init``) and the final :class:`fedlib.cluster.LloydResult`.
    """
    trace = [kmeans_objective(X, init)]
    run = None
    for n_iter in range(1, max_iter + 1):
        run = lloyd(X, init, max_iter=n_iter, tol=0.0)
        trace.append(run.inertia)
        if run.converged:
            break
    return trace, run
