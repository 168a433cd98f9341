"""Drivers of the chapter on training and unlearning with clusters (Liu et al. 2025, Figs. 6-9 and Remark 2).

Everything here calls :class:`fedlib.unlearn.ClusteredUnlearning`: FedAvg in every cluster with
SecAgg (t-out-of-k Shamir sharing in the cluster, masks along a Harary graph) or in the clear,
majority vote, and exact unlearning by retraining the affected clusters. The paper's MNIST and
CIFAR-10 become the 10,000-image MNIST test set (split into a training and a test part) and
Fashion-MNIST, both with a small CNN, so that a laptop runs a chapter in minutes.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from joblib import delayed
from scipy.stats import binom
from scipy.stats import t as student_t

from fedbook._verdict import WITHIN_NOISE, compare_to_noise, within
from fedbook.papers import secagg_fu as paper
from fedbook.sweeps import run_jobs
from fedlib import data
from fedlib.base import UnlearningReport
from fedlib.exceptions import InfeasibleParameters, UnlearningCapacityError
from fedlib.learn import LocalSGD
from fedlib.secagg import SecAggConfig
from fedlib.unlearn import (
    ClusteredUnlearning,
    expected_retrained,
    pargen,
)
from fedlib.utils import SeedLike, check_random_state, child_sequence, root_sequence

#: The chapter's (γ, δ) settings: Fig. 8-9's "larger δ and γ", with the other inputs of the worked example.
SETTINGS: tuple[tuple[float, float], ...] = ((0.05, 0.05), (0.1, 0.1), (0.2, 0.1), (0.3, 0.1))

#: The label of the baseline row of :func:`design_table`: FedAvg over all clients, fully retrained per request.
GLOBAL = "global FedAvg"

#: "Comparable unlearning effectiveness" (the abstract) as an equivalence margin on the test accuracy after
#: unlearning, scheme minus global FedAvg, fixed before any run: Liu et al. do not quantify "comparable", and two
#: accuracy points is less than the seed-to-seed swing of one model trained twice.
EQUIVALENCE_MARGIN = 0.02

#: The data sets: ours for theirs (Sec. VI uses MNIST with a two-layer CNN and CIFAR-10 with ResNet-18).
DATASETS = {
    "MNIST": "mnist_test",
    "Fashion-MNIST": "fashion_mnist",
    "FEMNIST": "femnist_sample",
}


@dataclass(frozen=True)
class FederatedImages:
    """Images split IID over clients, and a test set.

    Parameters
    ----------
    name : str
        Display name (ends in "(stand-in)" for generated data).
    X : ndarray of float32, shape (n, 1, 28, 28)
        Training images of all clients.
    y : ndarray of int64, shape (n,)
        Their labels.
    clients : list of ndarray of int64
        Each client's rows of ``X`` (equal shares, as in Sec. VI: "uniformly distributed among users").
    X_test : ndarray of float32
        Test images.
    y_test : ndarray of int64
        Test labels.
    is_standin : bool
        Whether the images are a labelled synthetic stand-in.
    source : str
        Where the images come from and how they were split.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    clients: list
    X_test: np.ndarray
    y_test: np.ndarray
    is_standin: bool
    source: str

    @property
    def n_clients(self) -> int:
        """``N``."""
        return len(self.clients)


def load_federated_images(
    name: str, *, n_clients: int, per_client: int, n_test: int, random_state: SeedLike = 0
) -> FederatedImages:
    """Load a data set and deal it to clients, with a test set.

    - MNIST: only its 10,000-image test set is registered, so a stratified
      ``n_test`` of it is held out for testing and each of ``n_clients`` clients
      gets ``per_client`` random images of the rest (IID, equal shares).
    - Fashion-MNIST: the same, from its 60,000 training images; the test
      images are drawn from its test set.
    - FEMNIST (LEAF sample): the clients are the writers (a natural, non-IID
      split; ``n_clients`` random writers, at most all of them), each keeping at
      most ``per_client`` random images of its LEAF training part; the test
      images are drawn from the writers' LEAF test parts. A stand-in without
      writers is dealt IID like the others.

    Parameters
    ----------
    name : {"MNIST", "Fashion-MNIST", "FEMNIST"}
        Data set (:data:`DATASETS`).
    n_clients : int
        ``N`` (FEMNIST: at most the number of writers).
    per_client : int
        Images per client (FEMNIST: at most, per writer).
    n_test : int
        Test images.
    random_state : int, numpy.random.Generator or None, default=0
        The split and the deal.

    Returns
    -------
    FederatedImages
        Clients' images and the test set.

    Raises
    ------
    ValueError
        If the clients need more images, or more writers, than there are.
    """
    rng = check_random_state(random_state)
    key = DATASETS[name]
    if key in ("mnist_test", "femnist_sample"):
        full = data.load_or_standin(key, random_state=rng)
        if "user_index" in full.extras:
            return _femnist_writers(full, n_clients, per_client, n_test, rng)
        pool, test = data.split_dataset(full, n_test, random_state=rng)
    else:
        pool = data.load_or_standin(key, random_state=rng)
        test_full = data.load_or_standin(f"{key}_test", random_state=rng)
        _, test = data.split_dataset(test_full, n_test, random_state=rng)
    need = n_clients * per_client
    if need > pool.n_samples:
        raise ValueError(
            f"{n_clients} clients x {per_client} images = {need} > the {pool.n_samples} images of {pool.name}."
        )
    rows = np.sort(rng.choice(pool.n_samples, size=need, replace=False))
    X = data.image_array(pool)[rows]
    y = np.asarray(pool.y, dtype=np.int64)[rows]
    clients = np.array_split(rng.permutation(need), n_clients)
    return FederatedImages(
        name=name + (" (stand-in)" if pool.is_standin else ""),
        X=X,
        y=y,
        clients=[np.sort(u) for u in clients],
        X_test=data.image_array(test),
        y_test=np.asarray(test.y, dtype=np.int64),
        is_standin=pool.is_standin,
        source=(
            f"{pool.source}; {n_clients} clients x {per_client} images drawn at random, {test.n_samples} test images"
        ),
    )


def _femnist_writers(full, n_clients: int, per_client: int, n_test: int, rng: np.random.Generator) -> FederatedImages:
    """FEMNIST's writers as clients: each keeps at most ``per_client`` of its LEAF training images."""
    rows, clients, test_rows = data.split_by_group(
        full.extras["user_index"],
        full.extras["is_test"],
        n_clients,
        max_per_client=per_client,
        test_size=n_test,
        random_state=rng,
    )
    images = data.image_array(full)
    labels = np.asarray(full.y, dtype=np.int64)
    return FederatedImages(
        name="FEMNIST",
        X=images[rows],
        y=labels[rows],
        clients=clients,
        X_test=images[test_rows],
        y_test=labels[test_rows],
        is_standin=False,
        source=f"{full.source}; {n_clients} writers as clients (non-IID), at most {per_client} training images each, "
        f"{test_rows.size} test images from their LEAF test parts",
    )


def design_table(n_clients: int, settings=SETTINGS, *, random_state: SeedLike = 0) -> pd.DataFrame:
    """ParGen's design (printed formulas, as the paper's experiments use) for each (γ, δ), and the global baseline.

    Parameters
    ----------
    n_clients : int
        ``N``.
    settings : sequence of (float, float), default=SETTINGS
        ``(γ, δ)`` pairs; ``ζ, ξ, σ, η`` are those of the worked example.
    random_state : int, numpy.random.Generator or None, default=0
        Unused (kept for a uniform signature); the design is deterministic.

    Returns
    -------
    pandas.DataFrame
        One row per setting: ``setting``, ``gamma``, ``delta``, ``k``, ``s``, ``degree m``,
        ``t = ceil(xi k)``, ``cap q = floor(zeta k)``, ``tau_seq (printed)``,
        ``k corrected`` (the corrected ParGen's ``k``, or "infeasible"); then the global
        model (``k = N``) without secure aggregation.
    """
    fixed = {key: paper.WORKED_EXAMPLE[key] for key in ("zeta", "xi", "sigma", "eta")}
    rows = []
    for gamma, delta in settings:
        design = pargen(n_clients, gamma=gamma, delta=delta, **fixed)
        try:
            corrected = pargen(n_clients, gamma=gamma, delta=delta, **fixed, variant="corrected").k
        except InfeasibleParameters as exc:
            needed = re.search(r"is k = (\d+)", str(exc))
            corrected = f"infeasible (k = {needed.group(1)} > N)" if needed else "infeasible"
        rows.append({
            "setting": f"γ={gamma:g}, δ={delta:g}",
            "gamma": gamma,
            "delta": delta,
            "k": design.k,
            "s": design.n_clusters,
            "degree m": design.degree,
            "t = ceil(xi k)": design.threshold,
            "cap q = floor(zeta k)": design.removal_cap,
            "tau_seq (printed)": design.tau_seq,
            "k corrected": corrected,
        })  # fmt: skip
    rows.append({
        "setting": GLOBAL, "gamma": np.nan, "delta": np.nan, "k": n_clients, "s": 1, "degree m": None,
        "t = ceil(xi k)": None, "cap q = floor(zeta k)": None, "tau_seq (printed)": None, "k corrected": None,
    })  # fmt: skip
    table = pd.DataFrame(rows)
    for column in ("k", "s", "degree m", "t = ceil(xi k)", "cap q = floor(zeta k)", "tau_seq (printed)"):
        table[column] = table[column].astype("Int64")
    return table


def build_system(
    images: FederatedImages,
    row: pd.Series,
    *,
    rounds: int,
    secure: bool,
    local: LocalSGD,
    eval_every: int = 1,
    dropout: float | None = None,
    model: str = "cnn_small",
    random_state: SeedLike = 0,
    device: str = "cpu",
) -> ClusteredUnlearning:
    """The clustered system of one row of :func:`design_table`, trained for ``rounds`` rounds on ``images``.

    Parameters
    ----------
    images : FederatedImages
        Clients and test set.
    row : pandas.Series
        A row of :func:`design_table`; the global row gives one cluster of all clients.
    rounds : int
        FedAvg rounds of training and of every retraining.
    secure : bool
        Secure aggregation in every round (never for the global row: a complete-graph SecAgg
        over all ``N`` clients is what clustering avoids).
    local : fedlib.learn.LocalSGD
        Local training.
    eval_every : int, default=1
        Rounds between test evaluations.
    dropout : float, optional
        Simulated per-round dropout rate; default the setting's ``δ`` (0 for the global row).
    model : str, default="cnn_small"
        A :data:`fedlib.learn.MODELS` name (``"cnn_paper"``: the two-layer CNN of the paper's MNIST runs).
    random_state : int, numpy.random.SeedSequence or None, default=0
        Root seed of the system.
    device : str, default="cpu"
        Where the cluster models train (``device`` of :class:`fedlib.unlearn.ClusteredUnlearning`).

    Returns
    -------
    fedlib.unlearn.ClusteredUnlearning
        Fitted, with ``removal_rate = ζ`` (Requirement 4 enforced at run time) for the clustered rows.
    """
    is_global = int(row["k"]) >= images.n_clients
    rate = 0.0 if is_global else float(row["delta"])
    system = ClusteredUnlearning(
        model,
        cluster_size=int(row["k"]),
        rounds=rounds,
        local=local,
        secure=secure and not is_global,
        degree=None if is_global else int(row["degree m"]),
        threshold_rate=paper.WORKED_EXAMPLE["xi"],
        share_holders="all",
        removal_rate=None if is_global else paper.WORKED_EXAMPLE["zeta"],
        dropout=rate if dropout is None else dropout,
        eval_every=eval_every,
        random_state=random_state,
        device=device,
    )
    return system.fit(images.X, images.y, parts=images.clients, test_data=(images.X_test, images.y_test))


#: Rough costs, only to start the longest of a call's parallel jobs first (the order changes no result, only the wall
#: time): one test prediction against one example's local training step, and secure aggregation against the local
#: training of the same round (about three times as much on the chapter's runs).
_PREDICTION_WORK, _SECURE_WORK = 0.15, 3.0


def _training_work(images: FederatedImages, row: pd.Series, *, secure: bool, rounds: int, eval_every: int = 1) -> float:
    """Rough cost of :func:`build_system` for one design row: examples trained, aggregated and predicted."""
    n_clusters = max(1, images.n_clients // int(row["k"]))
    secure = secure and int(row["k"]) < images.n_clients  # build_system: never for the global row
    examples = sum(len(u) for u in images.clients)
    evaluations = rounds // eval_every * n_clusters * len(images.y_test)
    return rounds * examples * (1.0 + (_SECURE_WORK if secure else 0.0)) + _PREDICTION_WORK * evaluations


def _system_seconds(system: ClusteredUnlearning) -> float:
    """Local training and aggregation seconds of a system's :meth:`~ClusteredUnlearning.fit`, all clusters summed."""
    return system.fit_report_.client_seconds + system.fit_report_.aggregation_seconds


def convergence(
    images: FederatedImages,
    design: pd.DataFrame,
    *,
    rounds: int,
    secure: bool,
    local: LocalSGD,
    eval_every: int = 1,
    model: str = "cnn_small",
    random_state: SeedLike = 0,
    done: dict[str, ClusteredUnlearning] | None = None,
    n_jobs: int = 1,
    device: str = "cpu",
) -> tuple[pd.DataFrame, dict[str, ClusteredUnlearning]]:
    """Train one system per design row and record test accuracy per round (Figs. 6-7).

    Parameters
    ----------
    images : FederatedImages
        Clients and test set.
    design : pandas.DataFrame
        :func:`design_table`.
    rounds : int
        FedAvg rounds.
    secure : bool
        Secure aggregation in the clustered systems.
    local : fedlib.learn.LocalSGD
        Local training.
    eval_every : int, default=1
        Rounds between evaluations.
    model : str, default="cnn_small"
        The architecture of every cluster model.
    random_state : int, numpy.random.SeedSequence or None, default=0
        Root seed of every system (the same for all rows).
    done : dict of str to ClusteredUnlearning, optional
        Systems already trained with these options (e.g. by :func:`build_system`), by setting: read, not
        trained again.
    n_jobs : int, default=1
        joblib processes, one row each; the systems do not depend on it (``seconds`` does).
    device : str, default="cpu"
        Where the systems train (:func:`build_system`).

    Returns
    -------
    curves : pandas.DataFrame
        Long format: ``setting``, ``k``, ``s``, ``round``, ``vote accuracy``, ``mean cluster accuracy``,
        ``min cluster accuracy``, ``max cluster accuracy``, ``tie rate``, ``seconds`` (the row's training time:
        local training and aggregation, summed over its clusters).
    systems : dict of str to ClusteredUnlearning
        The trained systems by setting, for unlearning.
    """
    done = done or {}
    options = {"rounds": rounds, "secure": secure, "local": local, "eval_every": eval_every, "model": model,
               "random_state": random_state, "device": device}  # fmt: skip
    rows = [row for _, row in design.iterrows()]
    todo = [row for row in rows if row["setting"] not in done]
    trained = run_jobs(
        [delayed(build_system)(images, row, **options) for row in todo],
        n_jobs=n_jobs,
        cost=[_training_work(images, row, secure=secure, rounds=rounds, eval_every=eval_every) for row in todo],
        desc=f"training ({images.name})",
    )
    made = {row["setting"]: system for row, system in zip(todo, trained, strict=True)}
    frames, systems = [], {}
    for row in rows:
        system = made[row["setting"]] if row["setting"] in made else done[row["setting"]]
        frame = pd.DataFrame(system.history_)
        frame.insert(0, "setting", row["setting"])
        frame.insert(1, "k", int(row["k"]))
        frame.insert(2, "s", system.n_clusters)
        frame["seconds"] = _system_seconds(system)
        frames.append(frame)
        systems[row["setting"]] = system
    return pd.concat(frames, ignore_index=True), systems


def convergence_summary(curves: pd.DataFrame, *, n_test: int) -> pd.DataFrame:
    """Final accuracies and speed of convergence per setting, from :func:`convergence` curves.

    Speed is the first evaluated round at which the vote reaches a common
    target: 95% of the lowest final vote accuracy among the settings, a level
    every setting reaches.

    Parameters
    ----------
    curves : pandas.DataFrame
        Output of :func:`convergence`.
    n_test : int
        Test-set size, for the binomial standard error of an accuracy.

    Returns
    -------
    pandas.DataFrame
        ``setting``, ``k``, ``s``, ``vote accuracy``, ``mean cluster accuracy``, ``vote gain``
        (vote minus mean cluster), ``tie rate``, ``rounds to target``, ``target``, ``std error``,
        ``seconds``.
    """
    final = curves.loc[curves.groupby("setting", sort=False)["round"].idxmax()].reset_index(drop=True)
    target = 0.95 * final["vote accuracy"].min()
    above = curves[curves["vote accuracy"] >= target]
    reached = above.groupby("setting", sort=False)["round"].min().rename("rounds to target")
    out = final[["setting", "k", "s", "vote accuracy", "mean cluster accuracy", "tie rate", "seconds"]].copy()
    out.insert(5, "vote gain", out["vote accuracy"] - out["mean cluster accuracy"])
    out = out.merge(reached, on="setting", how="left")
    out["target"] = target
    p = out["vote accuracy"].clip(0.01, 0.99)
    out["std error"] = np.sqrt(p * (1 - p) / n_test)
    return out


def replicate_seeds(seed: int, n_seeds: int) -> list[int]:
    """Training seeds of ``n_seeds`` replicates: ``seed`` itself first, then seeds spawned from it.

    The first replicate is the chapter's own run; the others differ in every training draw (clusters,
    initial models, dropouts, SGD order), never in the data.

    Examples
    --------
    >>> replicate_seeds(0, 3)[0], len(set(replicate_seeds(0, 3)))
    (0, 3)
    """
    children = np.random.SeedSequence(seed).spawn(max(n_seeds - 1, 0))
    return [int(seed)] + [int(child.generate_state(1)[0]) for child in children]


def _outcome(system: ClusteredUnlearning, after: float = np.nan) -> dict:
    """What the seed verdicts read from one trained system: final accuracies and the vote's curve."""
    history = pd.DataFrame(system.history_)
    return {
        "vote accuracy": float(history["vote accuracy"].iloc[-1]),
        "mean cluster accuracy": float(history["mean cluster accuracy"].iloc[-1]),
        "curve": history[["round", "vote accuracy"]].to_numpy(),
        "accuracy after": after,
    }


def _replicate_one(images, row, seed, requests, options) -> dict:
    system = build_system(images, row, secure=False, random_state=seed, **options)
    after = np.nan
    if requests is not None:
        events, _ = unlearning_run(system, requests, mode="batch")
        done = events[events["refused"] == ""]
        after = float(done["accuracy"].iloc[-1]) if len(done) else np.nan
    return _outcome(system, after)


def _replicate_work(images: FederatedImages, row: pd.Series, requests, *, rounds: int, eval_every: int) -> float:
    """Rough cost of :func:`_replicate_one`: training in the clear, then retraining the clusters a batch hits."""
    work = _training_work(images, row, secure=False, rounds=rounds, eval_every=eval_every)
    if requests is None:
        return work
    n_clusters = max(1, images.n_clients // int(row["k"]))
    sizes = [part.size for part in np.array_split(np.arange(images.n_clients), n_clusters)]
    retrained = expected_retrained(sizes, len(requests), "batch") / images.n_clients
    return work * (1.0 + retrained)


def seed_rows(design: pd.DataFrame, also=()) -> pd.DataFrame:
    """The rows of :func:`design_table` that the seed verdicts need: both clustered ends, global FedAvg, ``also``.

    The ends are the settings with the smallest and the largest ``k`` among those with at least two
    clusters (:func:`clustered_ends`).
    """
    clustered = design[(design["s"] >= 2) & (design["setting"] != GLOBAL)]
    keep = set(also) | {GLOBAL}
    if len(clustered):
        keep |= {clustered.loc[clustered["k"].idxmin(), "setting"], clustered.loc[clustered["k"].idxmax(), "setting"]}
    return design[design["setting"].isin(keep)]


def first_seed_after(replicates: pd.DataFrame, unlearning: pd.DataFrame, seed: int) -> pd.DataFrame:
    """``replicates`` with the first seed's ``accuracy after`` read from :func:`unlearning_table`'s batch rows.

    The chapter's own systems (the first seed) were unlearned by :func:`unlearning_table`; the replicates of the
    other seeds were unlearned by :func:`seed_replicates` with the same requests as one batch.
    """
    out = replicates.copy()
    first = out["seed"] == seed
    batch = unlearning.xs("batch", level="mode")["accuracy after"]
    out.loc[first, "accuracy after"] = out.loc[first, "setting"].map(batch).to_numpy(dtype=float)
    return out


def seed_replicates(
    images: FederatedImages,
    rows: pd.DataFrame,
    seeds,
    *,
    rounds: int,
    local: LocalSGD,
    eval_every: int = 1,
    model: str = "cnn_small",
    requests=None,
    done: dict | None = None,
    n_jobs: int = 1,
    device: str = "cpu",
) -> pd.DataFrame:
    """Train design rows from several seeds, in the clear, and optionally unlearn ``requests`` as one batch.

    The seed-to-seed spread of these runs is the yardstick of the chapter's learning verdicts: one run of one
    seed cannot tell a trend from the luck of a draw. Runs already made (the chapter's own, often with secure
    aggregation, which changes a model by rounding only) are passed in ``done`` and not repeated. After a batch
    the affected clusters are retrained from fresh models on their remaining clients, which is also what a
    sequence of single requests ends with, so the batch stands for both modes.

    Parameters
    ----------
    images : FederatedImages
        Clients and test set.
    rows : pandas.DataFrame
        Rows of :func:`design_table`.
    seeds : sequence of int
        Training seeds (:func:`replicate_seeds`).
    rounds, local, eval_every, model, device
        As for :func:`build_system`.
    requests : array-like of int, optional
        Clients to unlearn as one batch after training (column ``accuracy after``).
    done : dict, optional
        ``{(setting, seed): ClusteredUnlearning or (ClusteredUnlearning, accuracy after)}``: trained systems
        to read instead of training again.
    n_jobs : int, default=1
        joblib processes; the result does not depend on it.

    Returns
    -------
    pandas.DataFrame
        One row per setting and seed: ``setting``, ``k``, ``s``, ``seed``, ``vote accuracy``,
        ``mean cluster accuracy``, ``curve`` (evaluated rounds and the vote's accuracy, an array of shape
        ``(n_evaluations, 2)``) and ``accuracy after`` (NaN without ``requests``).
    """
    done = done or {}
    options = {"rounds": rounds, "local": local, "eval_every": eval_every, "model": model, "device": device}
    jobs = [(row, int(seed)) for _, row in rows.iterrows() for seed in seeds]
    todo = [(row, seed) for row, seed in jobs if (row["setting"], seed) not in done]
    work = [_replicate_work(images, row, requests, rounds=rounds, eval_every=eval_every) for row, _ in todo]
    results = run_jobs(
        [delayed(_replicate_one)(images, row, s, requests, options) for row, s in todo], n_jobs=n_jobs, cost=work
    )
    made = {(row["setting"], seed): result for (row, seed), result in zip(todo, results, strict=True)}
    out = []
    for row, seed in jobs:
        key = (row["setting"], seed)
        if key in made:
            outcome = made[key]
        else:
            given = done[key]
            outcome = _outcome(*given) if isinstance(given, tuple) else _outcome(given)
        n_clusters = 1 if int(row["k"]) >= images.n_clients else images.n_clients // int(row["k"])
        out.append({"setting": row["setting"], "k": int(row["k"]), "s": n_clusters, "seed": seed, **outcome})
    return pd.DataFrame(out)


def seed_interval(values, *, level: float = 0.95) -> tuple[float, float, int]:
    """Mean of per-seed values and the half-width of its Student-t interval at ``level``.

    Returns
    -------
    mean : float
    half_width : float
        ``t_{(1+level)/2, n-1} * sd / sqrt(n)``; infinite for fewer than two finite values.
    n : int
        Finite values used.

    Examples
    --------
    >>> mean, half, n = seed_interval([0.1, 0.2, 0.3])
    >>> round(mean, 3), round(half, 3), n
    (0.2, 0.248, 3)
    """
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    n = int(values.size)
    if n < 2:
        return (float(values.mean()) if n else np.nan), np.inf, n
    half = float(student_t.ppf(0.5 + level / 2, n - 1) * values.std(ddof=1) / np.sqrt(n))
    return float(values.mean()), half, n


def paired_change(reps: pd.DataFrame, column: str, k_from: int, k_to: int) -> np.ndarray:
    """Per seed, ``column`` at cluster size ``k_to`` minus at ``k_from`` (the same seeds at both)."""
    table = reps.pivot_table(index="seed", columns="k", values=column, aggfunc="first")
    return (table[k_to] - table[k_from]).to_numpy(dtype=float)


def rounds_to_target(reps: pd.DataFrame, *, fraction: float = 0.95) -> pd.Series:
    """First evaluated round at which the vote reaches ``fraction`` of the lowest final vote accuracy of its seed.

    The target is common to all settings of one seed, and every setting reaches it.
    """
    target = fraction * reps.groupby("seed")["vote accuracy"].transform("min")
    return pd.Series(
        [int(curve[curve[:, 1] >= level, 0].min()) for curve, level in zip(reps["curve"], target, strict=True)],
        index=reps.index,
        name="rounds to target",
    )


def change_verdict(changes, *, claimed: str, unit: str = "", decimals: int = 3) -> str:
    """Read per-seed changes against their seed-to-seed spread: the claim holds if the 95% interval excludes 0.

    Parameters
    ----------
    changes : array-like of float
        One change per seed (e.g. accuracy at the largest ``k`` minus at the smallest).
    claimed : {"lower", "higher"}
        The claimed sign of the change.
    unit : str, default=""
        Appended to the numbers ("rounds").
    decimals : int, default=3

    Returns
    -------
    str
        "supported", "contradicted" or "no clear change", with the mean change and its interval.
    """
    mean, half, n = seed_interval(changes)
    if n < 2:
        return f"not judged: {n} seed(s), no spread to judge with"
    side = compare_to_noise(mean, noise=half)
    word = "no clear change" if side == WITHIN_NOISE else ("supported" if side == claimed else "contradicted")
    return f"{word}: {mean:+.{decimals}f}{unit} ± {half:.{decimals}f} (95% interval over {n} seeds)"


def clustered_ends(reps: pd.DataFrame) -> tuple[int, int] | None:
    """Smallest and largest cluster size among settings with at least two clusters, or None if fewer than two.

    A setting whose ``k`` leaves one cluster (``s = 1``) is global FedAvg with dropouts, not a clustered
    scheme, so it says nothing about how the size of clusters acts.
    """
    ks = sorted({int(k) for k, s, name in zip(reps["k"], reps["s"], reps["setting"], strict=True)
                 if s >= 2 and name != GLOBAL})  # fmt: skip
    return (ks[0], ks[-1]) if len(ks) >= 2 else None


def figure67_verdicts(replicates: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Computed verdicts on Liu et al.'s sentences about Figs. 6-7 and Remark 5, per data set, over seeds.

    Each claim compares the clustered settings with the smallest and the largest ``k`` (settings with one
    cluster left out, see :func:`clustered_ends`), paired by training seed; a claim is supported when the 95%
    interval of the mean change over seeds excludes zero on the claimed side (:func:`change_verdict`).

    Parameters
    ----------
    replicates : dict of str to pandas.DataFrame
        :func:`seed_replicates` per data set; "MNIST" and "Fashion-MNIST" (the stand-in for the paper's
        "more complex" CIFAR-10 task) are also compared with each other.

    Returns
    -------
    pandas.DataFrame
        ``claim`` (a short name; the paper's sentences are quoted in the chapter), ``data``, ``k compared``,
        ``verdict``.
    """
    rows, changes = [], {}
    for name, reps in replicates.items():
        ends = clustered_ends(reps)
        if ends is None:
            text = "not testable: fewer than two settings with more than one cluster"
            for claim in ("faster convergence with larger k", "lower accuracy with larger k",
                          "the vote recovers lost accuracy (Remark 5)"):  # fmt: skip
                rows.append({"claim": claim, "data": name, "k compared": "—", "verdict": text})
            continue
        lo, hi = ends
        reps = reps.assign(**{"rounds to target": rounds_to_target(reps)})
        changes[name] = paired_change(reps, "vote accuracy", lo, hi)
        gain = reps.loc[reps["k"] == lo, "vote accuracy"] - reps.loc[reps["k"] == lo, "mean cluster accuracy"]
        compared = f"{lo} → {hi}"
        rows += [
            {"claim": "faster convergence with larger k", "data": name, "k compared": compared,
             "verdict": change_verdict(paired_change(reps, "rounds to target", lo, hi), claimed="lower",
                                       unit=" rounds", decimals=1)},
            {"claim": "lower accuracy with larger k", "data": name, "k compared": compared,
             "verdict": change_verdict(changes[name], claimed="lower")},
            {"claim": "the vote recovers lost accuracy (Remark 5)", "data": name, "k compared": f"{lo}",
             "verdict": change_verdict(gain, claimed="higher")},
        ]  # fmt: skip
    if {"MNIST", "Fashion-MNIST"} <= set(changes):
        easy, hard = changes["MNIST"], changes["Fashion-MNIST"]
        (m_easy, h_easy, n_easy), (m_hard, h_hard, n_hard) = seed_interval(easy), seed_interval(hard)
        se = np.hypot(np.std(easy, ddof=1) / np.sqrt(n_easy), np.std(hard, ddof=1) / np.sqrt(n_hard))
        half = float(student_t.ppf(0.975, min(n_easy, n_hard) - 1) * se)
        gap = m_hard - m_easy
        more = m_hard + h_hard < 0 and compare_to_noise(gap, noise=half) == "lower"
        rows.append({
            "claim": "the trend is more pronounced on the harder task", "data": "Fashion-MNIST vs MNIST",
            "k compared": "ends of each",
            "verdict": f"{'supported' if more else 'not seen'}: vote accuracy changes by {m_hard:+.3f} ± "
                       f"{h_hard:.3f} on Fashion-MNIST and {m_easy:+.3f} ± {h_easy:.3f} on MNIST; difference "
                       f"{gap:+.3f} ± {half:.3f}",
        })  # fmt: skip
    return pd.DataFrame(rows)


def secure_against_plain(secure: ClusteredUnlearning, plain: ClusteredUnlearning) -> dict[str, float]:
    """How far a secure run is from the same run in the clear (same seed, same clusters, same dropouts).

    Parameters
    ----------
    secure, plain : ClusteredUnlearning
        Trained systems that differ only in ``secure``.

    Returns
    -------
    dict of str to float
        ``max parameter difference`` (over all clusters), ``max rounding difference`` (over the
        clusters in which no secure round aborted: there the runs differ by the fixed-point rounding
        alone; NaN if every cluster aborted a round), ``max accuracy difference`` (over the evaluated
        rounds), ``secure aggregate seconds``, ``plain aggregate seconds``, ``secure MB sent``,
        ``plain MB sent``, ``aborted rounds`` (secure; the plain sum never aborts, so an aborted round
        is an update the plain run kept and the secure run skipped).
    """
    diffs = [float(np.abs(a.params_ - b.params_).max()) for a, b in zip(secure.trainers_, plain.trainers_, strict=True)]
    clean = [d for d, t in zip(diffs, secure.trainers_, strict=True) if not any(r.aborted for r in t.history_)]
    diff = max(diffs)
    points = zip(secure.history_, plain.history_, strict=True)
    acc = max(abs(a["vote accuracy"] - b["vote accuracy"]) for a, b in points)

    def total(system, attribute):
        return float(sum(getattr(r, attribute) for t in system.trainers_ for r in t.history_))

    return {
        "max parameter difference": diff,
        "max rounding difference": max(clean) if clean else float("nan"),
        "max accuracy difference": acc,
        "secure aggregate seconds": total(secure, "aggregate_seconds"),
        "plain aggregate seconds": total(plain, "aggregate_seconds"),
        "train seconds": total(plain, "train_seconds"),
        "secure MB sent": total(secure, "bytes_sent") / 1e6,
        "plain MB sent": total(plain, "bytes_sent") / 1e6,
        "aborted rounds": secure.aborted_rounds(),
    }


def draw_requests(n_clients: int, n_requests: int, *, random_state: SeedLike = 0) -> np.ndarray:
    """Uniformly random distinct clients to unlearn (honest clients, the paper's worst case), in request order.

    Parameters
    ----------
    n_clients : int
        ``N``.
    n_requests : int
        ``τ``.
    random_state : int, numpy.random.Generator or None, default=0
        The draw.

    Returns
    -------
    ndarray of int64
        Client ids.
    """
    return check_random_state(random_state).choice(n_clients, size=n_requests, replace=False).astype(np.int64)


def report_row(report: UnlearningReport) -> dict:
    """One :class:`~fedlib.unlearn.ClusteredUnlearning` unlearning report as scalars, for a table.

    Parameters
    ----------
    report : fedlib.base.UnlearningReport
        What ``ClusteredUnlearning.unlearn`` returned.

    Returns
    -------
    dict
        ``requests`` (clients forgotten), ``clusters retrained``, ``clients retrained``, ``rounds``,
        ``aborted rounds``, ``train seconds`` (local training), ``aggregate seconds``, ``MB sent``
        and ``accuracy`` (NaN without test data).
    """
    details = report.details
    return {
        "requests": len(report.forgotten_clients),
        "clusters retrained": len(details["clusters"]),
        "clients retrained": details["n_clients_retrained"],
        "rounds": report.rounds,
        "aborted rounds": details["aborted_rounds"],
        "train seconds": report.client_seconds,
        "aggregate seconds": report.aggregation_seconds,
        "MB sent": report.bytes_sent / 1e6,
        "accuracy": np.nan if details["accuracy"] is None else details["accuracy"],
    }


def unlearning_run(
    system: ClusteredUnlearning, requests, *, mode: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Unlearn ``requests`` from a copy of a trained system, one by one or as one batch (Figs. 8-9).

    A request refused by Requirement 4 is recorded and skipped (sequential) or
    refuses the whole batch.

    Parameters
    ----------
    system : ClusteredUnlearning
        A trained system; it is not changed (a deep copy is unlearned).
    requests : array-like of int
        Clients to unlearn, in order.
    mode : {"sequential", "batch"}
        One retraining per request, or one per affected cluster for all of them.

    Returns
    -------
    events : pandas.DataFrame
        One row per unlearning call: ``mode``, ``call``, ``clients`` (requested), ``refused``, and the columns
        of :func:`report_row`.
    curves : pandas.DataFrame
        ``mode``, ``call``, ``round``, ``vote accuracy``, ``mean cluster accuracy`` during each retraining.
    """
    events, curves = [], []
    for call, clients, report, _ in _unlearning_calls(system, _calls(requests, mode), retrain=True):
        if isinstance(report, UnlearningCapacityError):
            events.append({"mode": mode, "call": call, "clients": clients, "refused": str(report)})
            continue
        events.append({"mode": mode, "call": call, "clients": clients, "refused": "", **report_row(report)})
        for point in report.details["curve"]:
            curves.append({"mode": mode, "call": call, **point})
    return pd.DataFrame(events), pd.DataFrame(curves)


def unlearning_summary(events: pd.DataFrame, system: ClusteredUnlearning, n_requests: int) -> dict[str, float]:
    """Totals of one :func:`unlearning_run`, beside the expected number of retrained clients.

    Parameters
    ----------
    events : pandas.DataFrame
        The ``events`` of :func:`unlearning_run`.
    system : ClusteredUnlearning
        The trained system the run started from (for its cluster sizes).
    n_requests : int
        ``τ``.

    Returns
    -------
    dict
        ``retrainings``, ``refused``, ``clients retrained``, ``expected`` (:func:`expected_retrained`),
        ``train seconds``, ``aggregate seconds``, ``MB sent``, ``accuracy after``.
    """
    columns = ["clusters retrained", "clients retrained", "train seconds", "aggregate seconds", "MB sent", "accuracy"]
    done = events[events["refused"] == ""].reindex(columns=columns)  # a refused batch has no such column
    mode = str(events["mode"].iloc[0])
    return {
        "retrainings": int(done["clusters retrained"].sum()),
        "refused": int((events["refused"] != "").sum()),
        "clients retrained": int(done["clients retrained"].sum()),
        "expected": expected_retrained([c.size for c in system.clusters_], n_requests, mode),
        "train seconds": float(done["train seconds"].sum()),
        "aggregate seconds": float(done["aggregate seconds"].sum()),
        "MB sent": float(done["MB sent"].sum()),
        "accuracy after": float(done["accuracy"].iloc[-1]) if len(done) else np.nan,
    }


def _retraining_key(system: ClusteredUnlearning, cluster: int) -> tuple:
    """What retraining a cluster from scratch depends on besides the system's settings: the cluster, its generation
    (the seed of its fresh model) and its current clients."""
    return int(cluster), int(system.generation_[cluster]), tuple(system.members_[cluster].tolist())


def _calls(requests, mode: str) -> list[list[int]]:
    """The ``clients`` of each unlearning call: one call per request, or one for all of them."""
    return [[int(u)] for u in requests] if mode == "sequential" else [[int(u) for u in requests]]


def _unlearning_calls(system: ClusteredUnlearning, calls, *, retrain: bool):
    """Unlearn each call's clients in turn from a copy of ``system``: ``(call, clients, report, the copy)``.

    A call that Requirement 4 refuses changes nothing; its ``report`` is the :class:`UnlearningCapacityError`.
    """
    system = copy.deepcopy(system)
    for call, clients in enumerate(calls, start=1):
        try:
            report = system.unlearn(clients=clients, retrain=retrain)
        except UnlearningCapacityError as exc:
            report = exc
        yield call, clients, report, system


def _fresh_models(system: ClusteredUnlearning, calls) -> dict[tuple, object]:
    """The untrained cluster trainers that ``calls`` re-initialise, by :func:`_retraining_key`.

    The calls remove their clients from a copy of ``system`` without retraining (``retrain=False``): which clusters
    a call hits, and whether Requirement 4 refuses it, depend on the clients only, never on the cluster models.
    """
    return {
        _retraining_key(copied, i): copied.trainers_[i]
        for _, _, removed, copied in _unlearning_calls(system, calls, retrain=False)
        if not isinstance(removed, UnlearningCapacityError)
        for i in removed.details["clusters"]
    }


def _retrain(trainer, rounds: int):
    """One job of :func:`unlearning_table`: train a re-initialised cluster model from scratch."""
    return trainer.run(rounds)


def _replayed_events(system: ClusteredUnlearning, calls, mode: str, retrained: dict) -> pd.DataFrame:
    """The ``events`` of :func:`unlearning_run`, with each retrained cluster model taken from ``retrained``.

    Each call removes its clients from a copy of ``system`` without retraining, puts in the models its clusters
    retrain to (the same clients from the same generation's seed give the same model bit for bit: the exactness of
    :class:`ClusteredUnlearning`), and reports what ``system.unlearn(clients=...)`` reports (its class Notes).
    """
    events = []
    for call, clients, removed, copied in _unlearning_calls(system, calls, retrain=False):
        if isinstance(removed, UnlearningCapacityError):
            events.append({"mode": mode, "call": call, "clients": clients, "refused": str(removed)})
            continue
        clusters = removed.details["clusters"]
        for i in clusters:
            copied.trainers_[i] = retrained[_retraining_key(copied, i)]
        records = [record for i in clusters for record in copied.trainers_[i].history_]
        report = dataclasses.replace(
            removed,
            server_refit=True,
            rounds=copied.rounds,
            client_seconds=float(sum(r.train_seconds for r in records)),
            aggregation_seconds=float(sum(r.aggregate_seconds for r in records)),
            bytes_sent=int(sum(r.bytes_sent for r in records)),
            details={
                "clusters": clusters,
                "n_clients_retrained": removed.details["n_clients_retrained"],
                "aborted_rounds": int(sum(r.aborted for r in records)),
                "accuracy": None if removed.details["accuracy"] is None else copied.evaluate()["vote accuracy"],
                "curve": [],
                "retrain": True,
            },
        )
        events.append({"mode": mode, "call": call, "clients": clients, "refused": "", **report_row(report)})
    return pd.DataFrame(events)


def unlearning_table(
    systems: dict[str, ClusteredUnlearning], requests, *, n_requests: int, n_jobs: int = 1
) -> pd.DataFrame:
    """Sequential and batch unlearning of the same requests in every system (Figs. 8-9 and the baselines).

    Parameters
    ----------
    systems : dict of str to ClusteredUnlearning
        Trained systems by setting; they are not changed.
    requests : array-like of int
        Clients to unlearn, in order.
    n_requests : int
        ``τ`` (the length of ``requests``).
    n_jobs : int, default=1
        joblib processes, one retraining of one cluster each; the table does not depend on it (its seconds do).

    Returns
    -------
    pandas.DataFrame
        Indexed by (``setting``, ``mode``): ``k``, ``s`` and the columns of :func:`unlearning_summary`.

    Notes
    -----
    Every retraining from scratch is its own job. Which clusters each call retrains, and from which clients, is
    known before any of them is trained (:func:`_fresh_models`), and a retraining depends only on its cluster's
    clients and generation: the sequence's eighth retraining of global FedAvg does not wait for its first seven, so
    the cell is as long as its longest retraining on enough workers, not as long as a setting's whole sequence.
    The table is that of :func:`unlearning_run` in each mode. A retraining that both modes need (a cluster that
    loses a single client to the batch and lost that client first in the sequence) runs once, and its ``train
    seconds`` and ``aggregate seconds`` count in both rows.
    """
    fresh = {}
    for name, system in systems.items():
        for mode in ("sequential", "batch"):
            fresh.update({(name, *key): model for key, model in _fresh_models(system, _calls(requests, mode)).items()})
    keys = list(fresh)
    secure = {name: 1.0 + (_SECURE_WORK if system.secure else 0.0) for name, system in systems.items()}
    trained = run_jobs(
        [delayed(_retrain)(fresh[key], systems[key[0]].rounds) for key in keys],
        n_jobs=n_jobs,
        cost=[len(key[3]) * secure[key[0]] for key in keys],
        desc="unlearning",
    )
    retrained = dict(zip(keys, trained, strict=True))
    rows = []
    for name, system in systems.items():
        mine = {key[1:]: model for key, model in retrained.items() if key[0] == name}
        for mode in ("sequential", "batch"):
            events = _replayed_events(system, _calls(requests, mode), mode, mine)
            rows.append({"setting": name, "mode": mode, "k": system.cluster_size, "s": system.n_clusters,
                         **unlearning_summary(events, system, n_requests)})  # fmt: skip
    return pd.DataFrame(rows).set_index(["setting", "mode"])


def figure89_verdict(replicates: pd.DataFrame) -> pd.DataFrame:
    """Computed verdict on "a larger value of δ and γ typically leads to a lower accuracy of the unlearned model".

    Larger γ and δ act only through larger clusters, so the verdict compares the accuracy after unlearning at
    the clustered settings with the smallest and the largest ``k``, paired by seed (:func:`change_verdict`).

    Parameters
    ----------
    replicates : pandas.DataFrame
        :func:`seed_replicates` with ``requests``.

    Returns
    -------
    pandas.DataFrame
        ``claim``, ``k compared``, ``verdict``.
    """
    ends = clustered_ends(replicates)
    if ends is None:
        compared, verdict = "—", "not testable: fewer than two settings with more than one cluster"
    else:
        compared = f"{ends[0]} → {ends[1]}"
        verdict = change_verdict(paired_change(replicates, "accuracy after", *ends), claimed="lower")
    return pd.DataFrame([{"claim": paper.CLAIMS["fig89_gamma_delta"], "k compared": compared, "verdict": verdict}])


def comparable_verdict(replicates: pd.DataFrame, setting: str, *, margin: float = EQUIVALENCE_MARGIN) -> pd.DataFrame:
    """Computed verdict on "comparable unlearning effectiveness": an equivalence test over seeds.

    Per training seed, the accuracy after unlearning of the scheme's ``setting`` minus that of global FedAvg.
    "Comparable" is supported when the 90% interval of the mean difference lies within ``± margin`` (two
    one-sided tests at 5%), contradicted when the 90% interval lies wholly beyond it, and inconclusive
    otherwise: failing to find a difference is not evidence that there is none.

    Parameters
    ----------
    replicates : pandas.DataFrame
        :func:`seed_replicates` with ``requests``, including ``setting`` and the :data:`GLOBAL` row.
    setting : str
        The scheme's row.
    margin : float, default=EQUIVALENCE_MARGIN
        Largest difference in accuracy still called comparable, fixed before the runs.

    Returns
    -------
    pandas.DataFrame
        One row: ``seeds``, ``scheme`` and ``global FedAvg`` (mean ± sd over seeds), ``difference``
        (mean and 90% interval), ``margin``, ``verdict``.
    """
    table = replicates.pivot_table(index="seed", columns="setting", values="accuracy after", aggfunc="first")
    ours, base = table[setting].to_numpy(float), table[GLOBAL].to_numpy(float)
    mean, half, n = seed_interval(ours - base, level=0.90)
    low, high = mean - half, mean + half
    if n < 2:
        verdict = f"not judged: {n} seed(s), no spread to judge with"
    elif within(mean, margin, noise=half):
        verdict = f"supported: the 90% interval [{low:+.3f}, {high:+.3f}] lies within ±{margin:g}"
    elif low > margin or high < -margin:
        side = "better" if mean > 0 else "worse"
        verdict = f"contradicted: {side} by more than {margin:g} (90% interval [{low:+.3f}, {high:+.3f}])"
    else:
        verdict = (f"inconclusive: the 90% interval [{low:+.3f}, {high:+.3f}] reaches beyond ±{margin:g}; "
                   f"more seeds would narrow it")  # fmt: skip
    return pd.DataFrame([{
        "seeds": n,
        "scheme": f"{np.nanmean(ours):.3f} ± {np.nanstd(ours, ddof=1):.3f}",
        "global FedAvg": f"{np.nanmean(base):.3f} ± {np.nanstd(base, ddof=1):.3f}",
        "difference": f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]",
        "margin": f"±{margin:g}",
        "verdict": verdict,
    }])  # fmt: skip


def exactness_check(system: ClusteredUnlearning, client: int, X: np.ndarray) -> dict[str, object]:
    """Unlearn one client from a copy of ``system`` and compare with training from scratch on poisoned data.

    The reference is :meth:`ClusteredUnlearning.fresh_trainer` of the client's
    cluster, trained for the same rounds on ``X`` with the client's rows set to
    NaN: if retraining read any of them, the parameters would be NaN.

    Parameters
    ----------
    system : ClusteredUnlearning
        A trained system; it is not changed.
    client : int
        The client to unlearn.
    X : ndarray of float32
        The training images the system was built with.

    Returns
    -------
    dict
        ``client``, ``cluster``, ``identical`` (retrained model equals the reference bit for bit),
        ``max difference``, ``other clusters unchanged``.
    """
    after = copy.deepcopy(system)
    after.unlearn(clients=[client])
    cluster = int(np.flatnonzero([client in c for c in system.clusters_])[0])
    poisoned = X.copy()
    poisoned[system.parts_[client]] = np.nan
    reference = after.fresh_trainer(cluster, X=poisoned).run(system.rounds).params_
    retrained = after.trainers_[cluster].params_
    others = [i for i in range(system.n_clusters) if i != cluster]
    return {
        "client": client,
        "cluster": cluster,
        "identical": bool(np.array_equal(reference, retrained)),
        "max difference": float(np.nanmax(np.abs(reference - retrained))) if np.isfinite(reference).all() else np.inf,
        "other clusters unchanged": all(
            np.array_equal(after.trainers_[i].params_, system.trainers_[i].params_) for i in others
        ),
    }


def abort_probability(cluster_size: int, threshold: int, dropout: float) -> float:
    """Chance that fewer than ``t`` of a cluster's clients survive a round (Liu et al.'s Requirement 2 fails).

    Every client holds a share of every client's secrets, its own included
    (Liu et al.'s t-out-of-k sharing; Bonawitz et al. 2017, Fig. 4), so with
    at least ``t`` survivors every secret can be rebuilt; with each of the
    ``k`` clients dropping independently with probability ``dropout``. On the
    complete graph this is exactly the round's abort probability; on a sparse
    masking graph a round also aborts when its survivors fall apart
    (:func:`round_abort_probability`), so this is a lower bound there.

    Parameters
    ----------
    cluster_size : int
        Clients in the cluster now.
    threshold : int
        ``t``.
    dropout : float
        Per-client dropout probability.

    Returns
    -------
    float
        ``P[Binomial(k, 1 − dropout) < t]``.
    """
    return float(binom.cdf(threshold - 1, cluster_size, 1.0 - dropout))


def round_abort_probability(
    cluster_size: int,
    *,
    degree: int | None,
    threshold_rate: float,
    threshold: int | None,
    share_holders: str,
    dropout: float,
    n_patterns: int = 20_000,
    n_seatings: int = 20,
    random_state: SeedLike = 0,
) -> float:
    """Chance that one secure round of a cluster aborts, by Monte Carlo over dropout patterns and graph seatings.

    The cluster's round is :meth:`fedlib.secagg.SecAggConfig.for_cluster` with these parameters, a
    fresh Harary seating per batch of patterns (as :class:`fedlib.secagg.SecureAggregator` seats its
    clients anew every round), and each client dropping before its masked input with probability
    ``dropout``; :meth:`~fedlib.secagg.SecAggConfig.completes_without` decides every pattern. With
    shares among all clients it counts both causes of an abort: fewer than ``t`` survivors
    (Requirement 2, :func:`abort_probability`) and survivors that fall apart in the masking graph
    (fedlib refuses to unmask them: the server could compute each part's sum).

    Parameters
    ----------
    cluster_size : int
        Clients in the cluster now (``>= 3``).
    degree : int or None
        Harary degree ``m``; ``None`` for the complete graph.
    threshold_rate : float
        ``ξ``.
    threshold : int or None
        A fixed ``t`` (the cluster's as formed), or ``None`` for ``⌈ξ·h⌉``; a ``t`` above the
        cluster's size makes every round abort.
    share_holders : {"neighbors", "all"}
        Who holds a client's shares.
    dropout : float
        Per-client dropout probability.
    n_patterns : int, default=20000
        Dropout patterns drawn.
    n_seatings : int, default=20
        Graph seatings (batches of patterns).
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=0
        Seatings and patterns.

    Returns
    -------
    float
        The share of patterns whose round aborts.
    """
    k = int(cluster_size)
    if threshold is not None and threshold > k:
        return 1.0
    if dropout <= 0.0:
        n_patterns, n_seatings = 1, 1
    rng = check_random_state(random_state)
    completed = 0
    for batch in np.array_split(np.arange(n_patterns), max(1, min(n_seatings, n_patterns))):
        config = SecAggConfig.for_cluster(
            k, degree=degree, threshold_rate=threshold_rate, vector_length=1, share_holders=share_holders,
            threshold=threshold, random_state=rng,
        )  # fmt: skip
        completed += int(config.completes_without(rng.random((batch.size, k)) < dropout).sum())
    return 1.0 - completed / n_patterns


def dropout_table(system: ClusteredUnlearning, *, n_patterns: int = 20_000, random_state: SeedLike = 0) -> pd.DataFrame:
    """Aborted rounds of a trained secure system, measured and predicted.

    The prediction is :func:`round_abort_probability` for each cluster as it is now (its size, the
    system's Harary degree, its fixed threshold ``t_i`` and the system's dropout rate), times its
    rounds; beside it, what Requirement 2 alone predicts (:func:`abort_probability`), which misses
    the rounds whose survivors fall apart in the masking graph.

    Parameters
    ----------
    system : ClusteredUnlearning
        A trained secure system.
    n_patterns : int, default=20000
        Monte Carlo dropout patterns per cluster.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=0
        The Monte Carlo draws (cluster ``i`` uses child ``i`` of its root).

    Returns
    -------
    pandas.DataFrame
        Per cluster: ``cluster``, ``k_i``, ``t_i``, ``m``, ``dropout``, ``rounds``, ``aborted``,
        ``P(abort)`` (Monte Carlo), ``predicted aborted`` (rounds × ``P(abort)``) and
        ``Requirement 2 only`` (rounds × :func:`abort_probability`).
    """
    root = root_sequence(random_state)
    shares_all = system.share_holders == "all"
    rows = []
    for i, trainer in enumerate(system.trainers_):
        size, t = system.members_[i].size, system.thresholds[i]
        rounds = len(trainer.history_)
        p_abort = round_abort_probability(
            size, degree=system.degree, threshold_rate=system.threshold_rate, threshold=t if shares_all else None,
            share_holders=system.share_holders, dropout=system.dropout, n_patterns=n_patterns,
            random_state=child_sequence(root, i),
        )  # fmt: skip
        rows.append({
            "cluster": i, "k_i": size, "t_i": t, "m": system.degree, "dropout": system.dropout, "rounds": rounds,
            "aborted": int(sum(r.aborted for r in trainer.history_)),
            "P(abort)": p_abort,
            "predicted aborted": rounds * p_abort,
            "Requirement 2 only": rounds * abort_probability(size, t, system.dropout),
        })  # fmt: skip
    return pd.DataFrame(rows)
