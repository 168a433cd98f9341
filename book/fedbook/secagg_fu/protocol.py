"""Drivers of the SecAgg+ chapter: Liu et al.'s eight-client example, thresholds, coalitions, dropouts and cost.

Every number comes from real protocol runs (:func:`fedlib.secagg.secure_aggregate`) or from the
vectorised completion test of :meth:`fedlib.secagg.SecAggConfig.completes_without`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from fedbook.papers import secagg_fu as paper
from fedlib.exceptions import PrivacyViolationError, SecAggAbort
from fedlib.secagg import (
    PHASES,
    FixedPoint,
    MaskingGraph,
    SecAggClient,
    SecAggConfig,
    SecAggResult,
    SecAggServer,
    Stage,
    harary_graph,
    leaked_partial_sums,
    secure_aggregate,
    strip_pairwise_masks,
    unmask_with_coalition,
)
from fedlib.unlearn import assign_clusters
from fedlib.utils import SeedLike, check_random_state, child_sequence, progress, root_sequence, spawn_generators

#: Liu et al. 2025, Fig. 3: who is dropped, unlearned or adversarial in each panel (0-based ids: u1 is 0).
FIGURE3_ROLES = paper.FIGURE3_ROLES


def _values(value) -> object:
    """A list of numbers as text: all of them when short, else its start, its end and how many."""
    if not isinstance(value, (list, tuple)):
        return value
    if len(value) <= 10:
        return ", ".join(map(str, value))
    evenly_spaced = len({b - a for a, b in itertools.pairwise(value)}) == 1
    start = value[:2] if evenly_spaced else value[:3]
    return ", ".join(map(str, start)) + f", …, {value[-1]} ({len(value)} values)"


def settings_table(settings: dict, *, name: str = "value") -> pd.DataFrame:
    """A chapter's settings as a table with one row per setting; a long list shows as its ends and its length.

    Parameters
    ----------
    settings : dict
        Setting name to a number or a list of numbers.
    name : str, default="value"
        Column header.

    Returns
    -------
    pandas.DataFrame
        One column, indexed by the setting names.

    Examples
    --------
    >>> settings_table({"clients": list(range(50, 501, 10)), "repeats": 3})["value"].tolist()
    ['50, 60, …, 500 (46 values)', 3]
    """
    return pd.DataFrame({name: [_values(value) for value in settings.values()]}, index=list(settings))


def figure3_graph() -> MaskingGraph:
    """The masking graph of Liu et al. 2025, Fig. 3: the Harary graph ``H(8, 3)`` in order (a ring plus diameters).

    Returns
    -------
    MaskingGraph
        Eight clients; ``u1–u5`` and ``u3–u7`` are diameters, as the figure's partial sums imply.
    """
    return harary_graph(8, 3, shuffle=False)


def _dropouts(roles: dict[int, str]) -> dict[Stage, list[int]]:
    """Unlearned clients are gone before the round; dropped clients go silent before their masked input."""
    return {
        Stage.ADVERTISE_KEYS: [u for u, r in roles.items() if r == "unlearned"],
        Stage.MASKED_INPUT: [u for u, r in roles.items() if r == "dropped"],
    }


@dataclass(frozen=True)
class Figure3Run:
    """The eight-client example run through the real protocol, once per panel of Liu et al.'s Fig. 3.

    Parameters
    ----------
    graph : MaskingGraph
        ``H(8, 3)``.
    inputs : ndarray of uint32, shape (8, d)
        The clients' (small, readable) inputs.
    results : dict of str to SecAggResult
        One round per panel, of the protocol as printed (``allow_partial_sums=True``).
    leaks : pandas.DataFrame
        Per panel and component of honest survivors: the members, the sum the server computes, the true sum.
    default : pandas.DataFrame
        Per panel, the same round under fedlib's default (``allow_partial_sums=False``): ``panel``,
        ``printed protocol`` and ``fedlib default`` ("completes" or "aborts"), ``components summed
        (printed)`` and ``components summed (default)``, the components the server (with its coalition)
        sums in each (NA after an abort), ``honest survivors``, ``honest clients refusing`` (those who
        refuse to unmask when a server skips its own check) and the ``abort`` message.
    """

    graph: MaskingGraph
    inputs: np.ndarray
    results: dict[str, SecAggResult]
    leaks: pd.DataFrame
    default: pd.DataFrame


def figure3_run(*, threshold: int = 3, vector_length: int = 4, random_state: SeedLike = 0) -> Figure3Run:
    """Run Liu et al.'s Fig. 3 scenarios and compute what the server learns in each.

    Shares go to every client of the cluster, as Liu et al. describe ("t-out-of-k within each
    cluster"); with shares only along the three edges of ``H(8, 3)`` (and the client itself), client u1
    would keep two live share holders in panel (b), itself and u5, and the round would abort instead
    of leaking (:func:`figure3_neighbour_shares`).

    The leak table runs the protocol as printed (``allow_partial_sums=True``): a round completes
    whenever every secret keeps ``t`` live holders, even if the survivors fall apart in the masking
    graph. :attr:`Figure3Run.default` runs the same panels under fedlib's default, which aborts a
    round whose survivors ``U3`` are not one connected component: the server refuses in
    ``collect_masked_inputs``, and every honest survivor refuses to unmask such a list even if a
    server skips that check. Panel (b) aborts. Panel (c) completes all the same: its survivors,
    ``u2`` among them, are connected, and it is ``u2``'s collusion with the server that splits
    them. No check on the survivor list can see a corrupted client; only Requirement 3 (the graph
    stays connected without the adversarial clients too) protects against it.

    Parameters
    ----------
    threshold : int, default=3
        ``t``.
    vector_length : int, default=4
        ``d``.
    random_state : int, numpy.random.Generator or None, default=0
        Inputs and every party's keys.

    Returns
    -------
    Figure3Run
        The rounds, the leak table and the outcomes under fedlib's default.
    """
    rng = check_random_state(random_state)
    graph = figure3_graph()
    printed = SecAggConfig(graph, threshold=threshold, vector_length=vector_length, share_holders="all",
                           allow_partial_sums=True)  # fmt: skip
    x = rng.integers(0, 10, size=(8, vector_length)).astype(np.uint32)
    results, rows = {}, []
    for panel, roles in FIGURE3_ROLES.items():
        result = secure_aggregate(x, printed, dropouts=_dropouts(roles), random_state=rng)
        results[panel] = result
        coalition = [result.clients[u].corrupt() for u, r in roles.items() if r == "adversarial"]
        for members, total in leaked_partial_sums(result.server, coalition):
            rows.append(
                {
                    "panel": panel,
                    "component": " + ".join(f"x{int(i) + 1}" for i in members),
                    "server computes": total.tolist(),
                    "true sum": x[members].sum(axis=0, dtype=np.uint32).tolist(),
                }
            )
    leaks = pd.DataFrame(rows)
    leaks["learned exactly"] = [a == b for a, b in zip(leaks["server computes"], leaks["true sum"], strict=True)]
    # fedlib's default on the same panels, drawn after the printed rounds so that theirs are unchanged.
    default = SecAggConfig(graph, threshold=threshold, vector_length=vector_length, share_holders="all")
    components = leaks.groupby("panel", sort=False).size()
    outcomes = pd.DataFrame(
        [
            {"panel": panel, "printed protocol": "completes", "components summed (printed)": int(components[panel]),
             **_default_round(x, default, roles, rng)}
            for panel, roles in FIGURE3_ROLES.items()
        ]
    )  # fmt: skip
    outcomes["components summed (default)"] = outcomes["components summed (default)"].astype("Int64")
    return Figure3Run(graph, x, results, leaks, outcomes)


def _default_round(x: np.ndarray, config: SecAggConfig, roles: dict[int, str], rng: np.random.Generator) -> dict:
    """One Fig. 3 panel under ``config``: the round's outcome, and how many honest survivors refuse to unmask."""
    try:
        result = secure_aggregate(x, config, dropouts=_dropouts(roles), random_state=rng)
    except SecAggAbort as error:
        outcome, components, message = "aborts", None, str(error)
    else:
        coalition = [result.clients[u].corrupt() for u, r in roles.items() if r == "adversarial"]
        outcome, components, message = "completes", len(leaked_partial_sums(result.server, coalition)), ""
    honest, refusing = _honest_refusals(x, config, roles, rng)
    return {
        "fedlib default": outcome,
        "components summed (default)": components,
        "honest survivors": honest,
        "honest clients refusing": refusing,
        "abort": message,
    }


def _honest_refusals(
    x: np.ndarray, config: SecAggConfig, roles: dict[int, str], rng: np.random.Generator
) -> tuple[int, int]:
    """A server that skips its own survivor check: how many honest survivors are asked to unmask, and refuse.

    The round runs stage by stage up to the masked inputs, with unlearned clients gone from the start
    and dropped clients silent from their masked input on; then every honest survivor is handed the
    survivor list ``U3`` directly, as a cheating server would, and either answers or raises
    :class:`fedlib.exceptions.PrivacyViolationError`.
    """
    gone = {u for u, r in roles.items() if r == "unlearned"}
    dropped = {u for u, r in roles.items() if r == "dropped"}
    streams = spawn_generators(rng, config.n_clients)
    clients = {i: SecAggClient(i, x[i], config, random_state=s) for i, s in enumerate(streams) if i not in gone}
    server = SecAggServer(config)
    bundles = server.collect_keys([u.advertise_keys() for u in clients.values()])
    u2, deliveries = server.route_shares({i: u.share_keys(bundles[i]) for i, u in clients.items()})
    u3 = [i for i in clients if i not in dropped]
    for i in u3:
        clients[i].masked_input(u2, deliveries[i])
    honest = [i for i in u3 if roles.get(i) != "adversarial"]
    refusing = 0
    for i in honest:
        try:
            clients[i].unmask(u3)
        except PrivacyViolationError:
            refusing += 1
    return len(honest), refusing


def figure3_neighbour_shares(*, threshold: int = 3, vector_length: int = 4, random_state: SeedLike = 0) -> pd.DataFrame:
    """Liu et al.'s Fig. 3 panels with SecAgg+ shares: each client's shares go to its three neighbours and itself.

    Like :func:`figure3_run`, the rounds run the protocol as printed (``allow_partial_sums=True``), so
    that an abort here comes from the shares alone: a secret left with fewer than ``t`` live holders.
    (fedlib's default would abort panel (b) one step earlier, its survivors being split.)

    Parameters
    ----------
    threshold : int, default=3
        ``t``.
    vector_length : int, default=4
        ``d``.
    random_state : int, numpy.random.Generator or None, default=0
        Inputs and every party's keys.

    Returns
    -------
    pandas.DataFrame
        Per panel: whether the round completes, the number of components of honest survivors the server
        sums separately (``None`` after an abort), the fewest live share holders of any client (itself
        included), and the abort message if any.
    """
    rng = check_random_state(random_state)
    graph = figure3_graph()
    config = SecAggConfig(graph, threshold=threshold, vector_length=vector_length, allow_partial_sums=True)
    x = rng.integers(0, 10, size=(8, vector_length)).astype(np.uint32)
    rows = []
    for panel, roles in FIGURE3_ROLES.items():
        gone = {u for u, r in roles.items() if r in ("dropped", "unlearned")}
        live = [len(set(config.holders(i).tolist()) - gone) for i in range(8)]
        try:
            result = secure_aggregate(x, config, dropouts=_dropouts(roles), random_state=rng)
        except SecAggAbort as error:
            completes, components, message = False, None, str(error)
        else:
            coalition = [result.clients[u].corrupt() for u, r in roles.items() if r == "adversarial"]
            completes, components, message = True, len(leaked_partial_sums(result.server, coalition)), ""
        rows.append(
            {
                "panel": panel,
                "completes": completes,
                "components summed": components,
                "fewest live holders": min(live),
                "client with fewest": f"u{int(np.argmin(live)) + 1}",
                "abort": message,
            }
        )
    table = pd.DataFrame(rows)
    table["components summed"] = table["components summed"].astype("Int64")
    return table


def threshold_table(
    *, n_clients: int = 8, threshold: int = 3, vector_length: int = 4, random_state: SeedLike = 0
) -> pd.DataFrame:
    """One round per number of dropouts on the complete graph: the exact sum down to ``t`` survivors, then an abort.

    Every client holds a share of its own secrets, so a survivor's self-mask seed keeps ``t`` live holders
    as long as ``t`` clients survive (Bonawitz et al. 2017, Fig. 4).

    Parameters
    ----------
    n_clients : int, default=8
        ``n``.
    threshold : int, default=3
        ``t``.
    vector_length : int, default=4
        ``d``.
    random_state : int, numpy.random.Generator or None, default=0
        Inputs, dropout sets and keys.

    Returns
    -------
    pandas.DataFrame
        Per number of dropped clients: survivors, whether the output equals the plain sum of the survivors,
        and the abort message otherwise.
    """
    rng = check_random_state(random_state)
    config = SecAggConfig(MaskingGraph.complete(n_clients), threshold=threshold, vector_length=vector_length)
    x = rng.integers(0, 2**32, size=(n_clients, vector_length), dtype=np.uint32)
    rows = []
    for n_dropped in range(n_clients):
        dropped = rng.choice(n_clients, n_dropped, replace=False)
        survivors = np.setdiff1d(np.arange(n_clients), dropped)
        try:
            result = secure_aggregate(x, config, dropouts={Stage.MASKED_INPUT: dropped}, random_state=rng)
            exact = bool(np.array_equal(result.total, x[survivors].sum(axis=0, dtype=np.uint32)))
            outcome = "sum of the survivors" if exact else "WRONG SUM"
        except SecAggAbort as error:
            exact, outcome = None, f"abort: {error}"
        rows.append({"dropped": n_dropped, "survivors": len(survivors), "exact sum": exact, "outcome": outcome})
    return pd.DataFrame(rows)


def coalition_table(
    *, n_clients: int = 10, degree: int = 6, threshold: int = 4, vector_length: int = 16, random_state: SeedLike = 0
) -> pd.DataFrame:
    """The server with a growing coalition of the target's share holders: nothing below ``t``, everything at ``t``.

    The target survives, so it reveals its own share of ``b`` and never of ``s^SK``: the coalition is
    drawn from its holders other than itself, and needs ``t`` of them.

    Parameters
    ----------
    n_clients : int, default=10
        ``n``.
    degree : int, default=6
        Harary degree ``m`` (shares go to the ``m`` neighbours, SecAgg+).
    threshold : int, default=4
        ``t``.
    vector_length : int, default=16
        ``d``.
    random_state : int, numpy.random.Generator or None, default=0
        Inputs, graph and keys.

    Returns
    -------
    pandas.DataFrame
        Per coalition size: whether the server recovers the target's input, and why not otherwise.
    """
    rng = check_random_state(random_state)
    config = SecAggConfig(
        harary_graph(n_clients, degree, random_state=rng), threshold=threshold, vector_length=vector_length
    )
    x = rng.integers(0, 2**32, size=(n_clients, vector_length), dtype=np.uint32)
    result = secure_aggregate(x, config, random_state=rng)
    target = 0
    holders = [int(j) for j in config.holders(target) if j != target]
    rows = []
    for size in range(min(threshold, len(holders)) + 1):
        coalition = [result.clients[j].corrupt() for j in holders[:size]]
        try:
            recovered = unmask_with_coalition(target, coalition, result.server)
            outcome = "x_target recovered" if np.array_equal(recovered, x[target]) else "wrong value"
        except ValueError as error:
            outcome = str(error)
        rows.append({"coalition of holders": size, "outcome": outcome})
    return pd.DataFrame(rows)


def late_input_demo(*, n_clients: int = 8, vector_length: int = 10_000, random_state: SeedLike = 0) -> dict:
    """A client whose masked input arrives after the server asked for its mask key: the self mask keeps it hidden.

    The server rebuilds the late client's ``s^SK`` and strips its pairwise masks; what is left is
    ``x + PRG(b)``. Its inputs are all zeros here, so any structure would show.

    Parameters
    ----------
    n_clients : int, default=8
        ``n`` (Harary degree 4, ``t = 3``).
    vector_length : int, default=10000
        ``d``.
    random_state : int, numpy.random.Generator or None, default=0
        Keys.

    Returns
    -------
    dict
        ``zero_words_left``: share of zero words in what the server is left with (``2^-32`` expected for
        uniform words); ``self_mask_shares_revealed``: how many shares of the late client's ``b`` reached the
        server; ``server_alone_error``: the message when the server tries to unmask it alone.
    """
    rng = check_random_state(random_state)
    config = SecAggConfig(harary_graph(n_clients, 4, random_state=rng), threshold=3, vector_length=vector_length)
    x = np.zeros((n_clients, vector_length), dtype=np.uint32)
    late = 1
    result = secure_aggregate(x, config, late=[late], random_state=rng)
    server = result.server
    left = strip_pairwise_masks(late, server, late_inputs=result.late_inputs)  # x + PRG(b), x = 0
    try:
        unmask_with_coalition(late, [], server, late_inputs=result.late_inputs)
        alone = "recovered (this must not happen)"
    except ValueError as error:
        alone = str(error)
    revealed = sum(late in r.self_mask_shares for r in server.view[Stage.UNMASKING])
    return {
        "zero_words_left": float(np.mean(left == 0)),
        "self_mask_shares_revealed": int(revealed),
        "server_alone_error": alone,
        "late_client": late,
    }


def secagg_config(cluster_size: int, **kwargs) -> SecAggConfig:
    """:meth:`fedlib.secagg.SecAggConfig.for_cluster`, the configuration of one cluster.

    Parameters
    ----------
    cluster_size : int
        ``k``.
    **kwargs
        ``degree``, ``threshold_rate``, ``vector_length``, ``share_holders``, ``random_state``.

    Returns
    -------
    SecAggConfig
        The configuration.
    """
    return SecAggConfig.for_cluster(cluster_size, **kwargs)


def dropout_abort_rates(
    *,
    cluster_size: int,
    degrees,
    threshold_rate: float,
    dropout_rates,
    n_trials: int,
    n_seatings: int = 20,
    random_state: SeedLike = 0,
) -> pd.DataFrame:
    """How often a cluster's round aborts when each client drops independently with probability ``δ``, and what leaks.

    Compares SecAgg+ with shares among the ``m`` neighbours and the client itself (Bell et al. 2020;
    ``t = ⌈ξ(m + 1)⌉``) with shares among the whole cluster (Liu et al.'s reading, ``t = ⌈ξk⌉``),
    masking along the complete graph and along a Harary graph of the smallest degree in ``degrees``
    (Liu et al.'s protocol: a sparse graph, shares among all). Requirement 2 of Liu et al. counts
    live clients per cluster, which is exactly what the whole-cluster round on the complete graph
    needs; a SecAgg+ round needs ``t`` live holders in *every* neighbourhood; and on a sparse graph
    fedlib's default (``allow_partial_sums=False``) also aborts a round whose survivors fall apart.

    The leak side compares each configuration with its copy with ``allow_partial_sums=True``, the
    protocol as printed, on the same dropout patterns: a round that copy completes while the default
    aborts would have let the server compute the sum of each component of the survivors (Liu et al.
    Fig. 3), and of a single client's input when a survivor has no surviving neighbour.

    Parameters
    ----------
    cluster_size : int
        ``k``.
    degrees : sequence of int
        Harary degrees ``m`` to compare.
    threshold_rate : float
        ``ξ``.
    dropout_rates : sequence of float
        ``δ`` values.
    n_trials : int
        Dropout patterns per point (one vectorised completion test each).
    n_seatings : int, default=20
        Harary seatings of the whole-cluster sparse configuration per ``δ`` (a fresh seating per batch of
        ``n_trials / n_seatings`` patterns, as a real system seats clients anew every round).
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=0
        Graphs and dropout patterns. The SecAgg+ and complete-graph rows draw from it as they always
        did; the whole-cluster sparse rows from a separate child stream (:func:`fedlib.utils.child_sequence`,
        key 1), drawn afterwards, so that adding them changed none of the other rows.

    Returns
    -------
    pandas.DataFrame
        Columns ``shares``, ``m``, ``t``, ``δ``, ``abort rate`` (fedlib's default) and its 95% Wilson
        half-width ``±``; ``abort rate (printed)`` (``allow_partial_sums=True``); ``completed (printed)``,
        the number of patterns the printed protocol completes; ``leaks partial sums`` and ``leaks an input``,
        the share of those completed rounds whose survivors fall apart, and in which one of them is alone.
    """
    rng = check_random_state(random_state)
    k = int(cluster_size)
    configs = [
        (
            f"neighbours (SecAgg+, m = {m})",
            m,
            secagg_config(k, degree=m, threshold_rate=threshold_rate, vector_length=1, random_state=rng),
        )
        for m in degrees
    ]
    configs.append(
        ("whole cluster (Liu et al.)", k - 1,
         secagg_config(k, degree=None, threshold_rate=threshold_rate, vector_length=1, share_holders="all"))
    )  # fmt: skip
    rows = []
    for delta in dropout_rates:
        patterns = rng.random((n_trials, k)) < delta
        for label, m, config in configs:
            rows.append(_abort_row(label, m, config.threshold, delta, [_outcomes(config, patterns)], n_trials))
    # Liu et al.'s protocol: shares among the whole cluster, masks along a sparse Harary graph, seated anew per batch.
    sparse = np.random.default_rng(child_sequence(root_sequence(random_state), 1))
    m = int(min(degrees))
    label = f"whole cluster, Harary m = {m} (Liu et al.)"
    batches = [b.size for b in np.array_split(np.arange(n_trials), max(1, min(int(n_seatings), n_trials)))]
    for delta in dropout_rates:
        counts = []
        for size in batches:
            config = secagg_config(k, degree=m, threshold_rate=threshold_rate, vector_length=1, share_holders="all",
                                   random_state=sparse)  # fmt: skip
            counts.append(_outcomes(config, sparse.random((size, k)) < delta))
        rows.append(_abort_row(label, config.graph.degree, config.threshold, delta, counts, n_trials))
    return pd.DataFrame(rows)


def _outcomes(config: SecAggConfig, patterns: np.ndarray) -> tuple[int, int, int, int]:
    """Over dropout patterns: rounds fedlib's default completes, the printed protocol completes, leaks, leaks an input.

    A leaky round is one the printed protocol (``allow_partial_sums=True``) completes and the default
    refuses: its survivors fall into several components. It leaks an individual input when some
    survivor has no surviving neighbour (a component of one client).
    """
    strict = config.completes_without(patterns)
    loose = dataclasses.replace(config, allow_partial_sums=True).completes_without(patterns)
    leaky = loose & ~strict
    alive = ~patterns[leaky]
    live_neighbours = (config.graph.adjacency.astype(np.int32) @ alive.T.astype(np.int32)).T
    single = np.any(alive & (live_neighbours == 0), axis=1)
    return int(strict.sum()), int(loose.sum()), int(leaky.sum()), int(single.sum())


def _abort_row(label: str, m: int, t: int, delta: float, counts, n_trials: int) -> dict:
    """One row of :func:`dropout_abort_rates` from the summed :func:`_outcomes` of its batches."""
    done, printed, leaky, single = (int(sum(c[i] for c in counts)) for i in range(4))
    rate = 1.0 - done / n_trials
    half = 1.96 * math.sqrt(max(rate * (1 - rate), 1.0 / n_trials) / n_trials)
    return {
        "shares": label, "m": m, "t": t, "δ": delta, "abort rate": rate, "±": half,
        "abort rate (printed)": 1.0 - printed / n_trials, "completed (printed)": printed,
        "leaks partial sums": leaky / printed if printed else math.nan,
        "leaks an input": single / printed if printed else math.nan,
    }  # fmt: skip


def _round_cost(config: SecAggConfig, dropout_rate: float, rng: np.random.Generator) -> dict:
    n, d = config.n_clients, config.vector_length
    fixed = FixedPoint.for_summands(n, clip=1.0)
    updates = rng.normal(scale=0.05, size=(n, d)).astype(np.float32)
    for _ in range(100):  # a dropout pattern the round survives (it would abort otherwise)
        dropped = np.flatnonzero(rng.random(n) < dropout_rate)
        mask = np.zeros(n, dtype=bool)
        mask[dropped] = True
        if config.completes_without(mask):
            break
    else:
        raise SecAggAbort(f"no dropout pattern at rate {dropout_rate} lets a round of {n} clients complete")
    start = time.perf_counter()
    result = secure_aggregate(fixed.encode(updates), config, dropouts={Stage.MASKED_INPUT: dropped}, random_state=rng)
    seconds = time.perf_counter() - start
    keep = np.setdiff1d(np.arange(n), dropped)
    if not np.array_equal(result.total, fixed.encode(updates[keep]).sum(axis=0, dtype=np.uint32)):
        raise AssertionError("secure sum differs from the plain sum of the survivors")
    return {
        "seconds": seconds,
        **{f"{p} s": result.seconds[p] for p in PHASES},
        "KiB up per client": float(result.bytes_sent[keep].mean()) / 1024,
        "KiB down per client": float(result.bytes_received[keep].mean()) / 1024,
        "KiB per cluster": float(result.bytes_sent.sum() + result.bytes_received.sum()) / 1024,
    }


def aggregation_cost(
    cluster_sizes,
    *,
    degrees: dict[str, object],
    threshold_rate: float,
    vector_length: int,
    dropout_rate: float = 0.0,
    repeats: int = 1,
    random_state: SeedLike = 0,
) -> pd.DataFrame:
    """Time and bytes of one real SecAgg(+) round inside a cluster, against the cluster size ``k``.

    Parameters
    ----------
    cluster_sizes : sequence of int
        ``k`` values.
    degrees : dict of str to callable or None
        Per label, ``k -> m`` (a Harary degree) or ``None`` for the complete graph (SecAgg).
    threshold_rate : float
        ``ξ``; ``t = ⌈ξ(m + 1)⌉`` with shares among the neighbours and the client itself, as in SecAgg+.
    vector_length : int
        ``d``, model parameters.
    dropout_rate : float, default=0.0
        Each client drops before its masked input with this probability.
    repeats : int, default=1
        Rounds per point; the median time is kept.
    random_state : int, numpy.random.Generator or None, default=0
        Graphs, inputs, dropouts and keys.

    Returns
    -------
    pandas.DataFrame
        Per label and ``k``: ``m``, ``t``, seconds per round (all parties, one process), per phase,
        and KiB sent and received per surviving client.
    """
    rng = check_random_state(random_state)
    rows = []
    with threadpool_limits(1):
        for k in progress(list(cluster_sizes), desc="cluster sizes"):
            for label, degree in degrees.items():
                m = None if degree is None else int(degree(int(k)))
                config = secagg_config(int(k), degree=m, threshold_rate=threshold_rate,
                                       vector_length=vector_length, random_state=rng)  # fmt: skip
                runs = [_round_cost(config, dropout_rate, rng) for _ in range(repeats)]
                row = {key: float(np.median([r[key] for r in runs])) for key in runs[0]}
                rows.append({"graph": label, "k": int(k), "m": config.graph.degree, "t": config.threshold, **row})
    return pd.DataFrame(rows)


def cost_table(cost: pd.DataFrame, labels: dict[str, str] | None = None) -> pd.DataFrame:
    """:func:`aggregation_cost` as the chapter shows it: one row per ``k`` and graph, the times in milliseconds.

    Parameters
    ----------
    cost : pandas.DataFrame
        The output of :func:`aggregation_cost`.
    labels : dict of str to str, optional
        Shorter names for the graphs.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``k`` and graph; columns ``m`` and ``t``, the round's time and each phase's in milliseconds
        to 3 significant digits (all parties, one process), and the KiB a surviving client uploads.
    """
    labels = labels or {}
    table = cost.assign(graph=cost["graph"].map(lambda graph: labels.get(graph, graph))).set_index(["k", "graph"])
    times = (1000 * table[["seconds", *(f"{phase} s" for phase in PHASES)]]).map(lambda ms: float(f"{ms:.3g}"))
    parts = {"": table[["m", "t"]], "milliseconds per round": times.set_axis(["total", *PHASES], axis=1),
             "KiB": table[["KiB up per client"]].set_axis(["up per client"], axis=1)}  # fmt: skip
    return pd.concat(parts, axis=1)


def aggregation_cost_by_clients(
    n_clients_grid,
    *,
    cluster_size: int,
    degree,
    threshold_rate: float,
    vector_length: int,
    leftovers: str = "random",
    random_state: SeedLike = 0,
) -> pd.DataFrame:
    """Per-round SecAgg+ cost of the slowest cluster against the number of clients ``N`` (Liu et al. Figs. 10-11).

    Clients are clustered as in Liu et al.'s Alg. 1 (``⌊N/k⌋`` clusters, the ``N − sk`` leftover clients
    placed at random or round robin); clusters aggregate in parallel, so a round lasts as long as the
    largest cluster's. Each distinct cluster size is timed once with a real round.

    Parameters
    ----------
    n_clients_grid : sequence of int
        ``N`` values.
    cluster_size : int
        ``k`` from ParGen.
    degree : callable
        ``k -> m``, the Harary degree of a cluster of ``k`` clients.
    threshold_rate : float
        ``ξ``.
    vector_length : int
        ``d``.
    leftovers : {"random", "round_robin"}, default="random"
        Placement of the leftover clients.
    random_state : int, numpy.random.Generator or None, default=0
        Clusterings and rounds.

    Returns
    -------
    pandas.DataFrame
        Per ``N``: number of clusters, largest cluster, seconds per round of the largest cluster, KiB sent
        per client in it.
    """
    rng = check_random_state(random_state)
    timed: dict[int, dict] = {}
    rows = []
    with threadpool_limits(1):
        for n in progress(list(n_clients_grid), desc="N"):
            sizes = [len(c) for c in assign_clusters(int(n), cluster_size, leftovers=leftovers, random_state=rng)]
            largest = max(sizes)
            if largest not in timed:
                config = secagg_config(largest, degree=degree(largest), threshold_rate=threshold_rate,
                                       vector_length=vector_length, random_state=rng)  # fmt: skip
                timed[largest] = _round_cost(config, 0.0, rng)
            rows.append(
                {
                    "N": int(n),
                    "leftovers": leftovers,
                    "clusters": len(sizes),
                    "largest cluster": largest,
                    "seconds per round": timed[largest]["seconds"],
                    "KiB up per client": timed[largest]["KiB up per client"],
                    "KiB per cluster": timed[largest]["KiB per cluster"],
                }
            )
    return pd.DataFrame(rows)
