"""What the server sees in each system, and what hiding it costs: the secure against the plain variant of one run."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from fedbook.mufc import prepare
from fedbook.secagg_fu.learning import load_federated_images
from fedlib.cluster import centralized_lloyd
from fedlib.data import iid_partition
from fedlib.learn import LocalSGD
from fedlib.secagg import SecFC
from fedlib.unlearn import MUFC, ClusteredUnlearning
from fedlib.utils import child_sequence, root_sequence

#: What each system's server receives from the clients, while training and while forgetting (the protocols as
#: fedlib runs them; the papers' sections in brackets). Descriptions, not measurements: the costs are measured
#: by :func:`hiding_cost`.
SERVER_VIEW = pd.DataFrame(
    [
        ("clustering", "MUFC", "the sum of the clients' quantised seed histograms, by SCMA (MUFC Alg. 2)",
         "the same sum again, without the client; a client that lost a seed re-seeds locally (Alg. 3, 4)",
         "SCMA: secure; the plaintext variant sends each client's seeds"),
        ("clustering", "DC-KM", "every leaf's K-means centres, in the clear (Ginart et al. 2019)",
         "the forgotten client's leaf retrains and sends new centres up its branch", "none"),
        ("clustering", "K-FED", "every client's local centres, in the clear (Dennis et al. 2021)",
         "retraining: every remaining client's centres again", "none"),
        ("clustering", "SecFC", "LCC-coded data; the server decodes point-to-centre distances and each point's "
         "cluster, which reveal the data up to a rigid motion (SecFC Sec. 6; the SecFC chapter's trilateration)",
         "retraining: the whole protocol again", "LCC: secure against t colluding clients"),
        ("clustering", "K-means++ seeding", "every point (a centralised method: the seeding must see the data)",
         "which seeds the forgotten rows were (MUFC Alg. 3)", "none"),
        ("learning", "retraining (FedAvg)", "each client's model update, in the clear",
         "every remaining client's updates, for all rounds again", "none (a secure sum would fit)"),
        ("learning", "Liu et al. (clustered)", "the sum of each cluster's updates, by SecAgg+ (Liu et al. Fig. 1)",
         "the sums of the forgotten client's cluster, retrained", "SecAgg+: secure, with dropouts"),
        ("learning", "KNOT", "each client's model update, in the clear, asynchronously (Su & Li Sec. III)",
         "the rolled-back cluster's clients' updates until it catches up", "none (asynchronous secure "
         "aggregation is an open problem)"),
        ("learning", "FedEraser", "each client's model update; the server also stores them every Δt rounds",
         "calibration updates of the remaining clients, replayed against the stored ones", "none: the stored "
         "updates are the method"),
        ("learning", "rapid retraining", "each client's model update and its diagonal Fisher information",
         "the same, from scratch, for fewer rounds", "none"),
        ("learning", "fine-tuning", "each client's model update, in the clear",
         "the remaining clients' updates for a few more rounds", "none"),
    ],
    columns=["domain", "system", "while training", "while forgetting", "hiding"],
)

#: Sizes of the cost-of-hiding runs per scale: clustering rows, clients; learning clients, images each, rounds.
SCALES = {
    "ci": {"rows": 600, "learning_clients": 12, "per_client": 20, "rounds": 2, "cluster_size": 6},
    "default": {"rows": 2000, "learning_clients": 30, "per_client": 40, "rounds": 4, "cluster_size": 10},
    "paper": {"rows": 6000, "learning_clients": 100, "per_client": 100, "rounds": 10, "cluster_size": 20},
}


def _pair(variant: str, system: str, secure: str, plain: str, fit_a, fit_b, forget_a, forget_b, same) -> list[dict]:
    rows = []
    for kind, name, fit, forget in (("secure", secure, fit_a, forget_a), ("plain", plain, fit_b, forget_b)):
        rows.append(
            {
                "system": system,
                "variant": f"{name} ({kind})",
                "train seconds": fit["seconds"],
                "train MB": fit["bytes"] / 1e6,
                "forget seconds": np.nan if forget is None else forget["seconds"],
                "forget MB": np.nan if forget is None else forget["bytes"] / 1e6,
                "same model": same,
                "kind": kind,
                "pair": variant,
            }
        )
    return rows


def _report_cost(report) -> dict:
    return {"seconds": report.client_seconds + report.aggregation_seconds + report.server_seconds,
            "bytes": report.bytes_sent}  # fmt: skip


def _warm_up() -> None:
    """Run each protocol once on tiny data, so that no timed run pays for first-call imports and set-up."""
    rng = np.random.default_rng(0)
    X = rng.random((24, 2))
    parts = np.array_split(np.arange(24), 4)
    MUFC(2, aggregation="scma", random_state=0).fit(X, parts=parts)
    SecFC(2, random_state=0).fit(X, parts=parts)
    ClusteredUnlearning("softmax", cluster_size=4, rounds=1, random_state=0).fit(
        X.astype(np.float32), rng.integers(0, 2, 24), parts=parts
    )


def hiding_cost(scale: str, seed: int) -> pd.DataFrame:
    """The secure against the plain variant of the same run, for the three systems that hide something.

    - MUFC on Celltype (a subsample): SCMA against plaintext aggregation, training and forgetting one client;
      the seeds are the same, and so are the centres when SCMA's quantisation grid keeps every seed apart.
    - SecFC against the same Lloyd iterations in the clear on the quantised data (:func:`centralized_lloyd`,
      what SecFC Theorem 1 says it computes exactly); forgetting is retraining for both.
    - Liu et al.'s clustered learning on FEMNIST writers: SecAgg+ against plain sums, training and forgetting
      one client; the models differ by fixed-point rounding only.

    Seconds are every party's compute in this one process (clients summed where the report sums them, as
    each report documents); bytes are the clients' uploads as the protocols count them.

    Parameters
    ----------
    scale : {"ci", "default", "paper"}
        Sizes (:data:`SCALES`).
    seed : int
        Root seed.

    Returns
    -------
    pandas.DataFrame
        Two rows per system: ``system``, ``variant``, ``train seconds``, ``train MB``, ``forget seconds``,
        ``forget MB``, ``same model`` (computed), ``kind`` ("secure"/"plain"), ``pair``.
    """
    size = SCALES[scale]
    root = root_sequence(seed)
    _warm_up()
    rows: list[dict] = []

    problem = prepare(
        "Celltype", max_samples=size["rows"], n_init=3, random_state=np.random.default_rng(child_sequence(root, 0))
    )
    forget = int(np.argmax([p.size for p in problem.parts]))
    mufc = {}
    for aggregation in ("scma", "plaintext"):
        model = MUFC(problem.n_clusters, aggregation=aggregation, random_state=seed).fit(problem.X, parts=problem.parts)
        report = model.unlearn(clients=[forget])
        mufc[aggregation] = (model, _report_cost(model.fit_report_), _report_cost(report))
    same = bool(np.array_equal(mufc["scma"][0].server_centers_, mufc["plaintext"][0].server_centers_))
    rows += _pair("MUFC", "MUFC", "SCMA", "plaintext", mufc["scma"][1], mufc["plaintext"][1], mufc["scma"][2],
                  mufc["plaintext"][2], "yes" if same else "no")  # fmt: skip

    parts = iid_partition(problem.X.shape[0], 8, random_state=seed)
    began = time.perf_counter()
    secfc = SecFC(problem.n_clusters, random_state=seed).fit(problem.X, parts=parts)
    secure_seconds = time.perf_counter() - began
    began = time.perf_counter()
    reference = centralized_lloyd(problem.X, problem.n_clusters, scale=secfc.scale_, random_state=seed)
    plain_seconds = time.perf_counter() - began
    same = len(reference.history) == len(secfc.history_) and all(
        np.array_equal(a, b) for a, b in zip(reference.history, secfc.history_, strict=True)
    )
    rows += _pair(
        "SecFC", "SecFC", "LCC", "Lloyd in the clear",
        {"seconds": secure_seconds, "bytes": 0}, {"seconds": plain_seconds, "bytes": 0}, None, None,
        "yes" if same else "no",
    )  # fmt: skip

    images = load_federated_images(
        "FEMNIST", n_clients=size["learning_clients"], per_client=size["per_client"], n_test=200,
        random_state=np.random.default_rng(child_sequence(root, 1)),
    )  # fmt: skip
    systems = {}
    for secure in (True, False):
        system = ClusteredUnlearning(
            "softmax", cluster_size=size["cluster_size"], rounds=size["rounds"], secure=secure,
            local=LocalSGD(lr=0.05, batch_size=10), random_state=seed,
        ).fit(images.X, images.y, parts=images.clients)  # fmt: skip
        report = system.unlearn(clients=[0])
        systems[secure] = (system, _report_cost(system.fit_report_), _report_cost(report))
    diff = max(
        float(np.abs(a.params_ - b.params_).max())
        for a, b in zip(systems[True][0].trainers_, systems[False][0].trainers_, strict=True)
    )
    rows += _pair("Liu et al.", "Liu et al. (clustered)", "SecAgg+", "plain sums", systems[True][1],
                  systems[False][1], systems[True][2], systems[False][2], f"within {diff:.1e}")  # fmt: skip
    frame = pd.DataFrame(rows)
    frame.attrs["secfc bytes"] = "not counted by SecFC's simulation"
    return frame


def hiding_ratios(cost: pd.DataFrame) -> pd.DataFrame:
    """Secure over plain, per system and quantity: what hiding costs, as a factor.

    Parameters
    ----------
    cost : pandas.DataFrame
        Output of :func:`hiding_cost`.

    Returns
    -------
    pandas.DataFrame
        ``system``, ``train time ×``, ``train bytes ×``, ``forget time ×``, ``forget bytes ×`` (NaN where a
        quantity is not measured or zero in the clear).
    """
    rows = []
    for system, pair in cost.groupby("system", sort=False):
        secure, plain = pair[pair["kind"] == "secure"].iloc[0], pair[pair["kind"] == "plain"].iloc[0]

        def ratio(column: str, a=secure, b=plain) -> float:
            return float(a[column] / b[column]) if b[column] and np.isfinite(b[column]) else np.nan

        rows.append(
            {
                "system": system,
                "train time ×": ratio("train seconds"),
                "train bytes ×": ratio("train MB"),
                "forget time ×": ratio("forget seconds"),
                "forget bytes ×": ratio("forget MB"),
            }
        )
    return pd.DataFrame(rows)
