"""Checks for the coding exercises of the chapter "Training and unlearning with clusters" (Liu et al., TDSC 2025).

Expected values come from fedlib: :func:`fedlib.learn.server_update` with :func:`fedlib.learn.fedavg_weights`
and :class:`fedlib.secagg.FixedPoint` (the server's step), :meth:`fedlib.secagg.SecAggConfig.completes_without`
(whether a round completes), :func:`fedlib.unlearn.majority_vote` (the vote) and
:class:`fedlib.unlearn.ClusteredUnlearning` itself, fitted for zero rounds and unlearning without retraining
(which requests it refuses). No check trains a model.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from fedbook.course._feedback import Wrong, call, exercise, expect, expect_array

# -- ex-sfu-secure-mean: from the secure sum to the new cluster model ---------------------------------------------


def _server_cases():
    """Rounds of one cluster: every participant's sample count, the survivors, and the secure sum of their inputs."""
    from fedlib.secagg import FixedPoint

    rng = np.random.default_rng(20250507)
    specs = [
        ("4 clients of 40 examples each, none dropped", [40, 40, 40, 40], [0, 1, 2, 3], 5, 16),
        ("6 clients holding 10 to 60 examples, none dropped", [10, 20, 30, 40, 50, 60], range(6), 4, 16),
        ("6 clients holding 12 to 75 examples, clients 1 and 4 dropped", [12, 75, 30, 41, 9, 60], [0, 2, 3, 5], 6, 16),
        ("5 clients of unequal sizes, 10 fractional bits, client 0 dropped", [33, 7, 50, 18, 25], [1, 2, 3, 4], 3, 10),
        ("4 clients, every one dropped", [20, 35, 15, 30], [], 4, 16),
    ]
    for name, sizes, summed, d, frac_bits in specs:
        sizes = np.asarray(sizes, dtype=np.int64)
        summed = np.asarray(list(summed), dtype=np.int64)
        weights = sizes / sizes.mean()
        deltas = rng.uniform(-0.5, 0.5, (sizes.size, d)).astype(np.float32)
        words = FixedPoint(clip=4.0, frac_bits=frac_bits, max_summands=sizes.size).encode(
            deltas * weights[:, None].astype(np.float32)
        )
        total = words[summed].sum(axis=0, dtype=np.uint32) if summed.size else np.zeros(d, dtype=np.uint32)
        theta = rng.normal(size=d).astype(np.float32)
        yield name, theta, total, summed, sizes, frac_bits


def _server_variants(theta, total, summed, sizes, frac_bits) -> dict[str, np.ndarray]:
    """What typical mistakes return, to name the mistake (only computed when there is someone to divide by)."""
    signed = total.view(np.int32).astype(np.float64) / 2.0**frac_bits
    unsigned = total.astype(np.float64) / 2.0**frac_bits
    w = sizes / sizes.mean()
    return {
        "count": theta + signed / summed.size,
        "all weights": theta + signed / w.sum(),
        "sample counts": theta + signed / sizes[summed].sum(),
        "unsigned": theta + unsigned / w[summed].sum(),
    }


_SERVER_HINTS = {
    "count": "divides the decoded sum by the number of summed clients; their inputs were scaled by w_i = n_i / n̄, "
    "so the sum must be divided by the summed clients' weights (the count is right only when every n_i is equal)",
    "all weights": "divides by the weights of every participant, the dropped ones included; only the clients whose "
    "inputs are in the sum count",
    "sample counts": "divides by the summed clients' sample counts n_i; their inputs were scaled by w_i = n_i / n̄, "
    "not by n_i",
    "unsigned": "reads the words of Z_2^32 as unsigned numbers; the sum is in two's complement, so a word of 2^31 "
    "or more stands for a negative value",
}


@exercise("ex-sfu-secure-mean")
def _secure_mean(answer) -> str:
    from fedlib.learn import fedavg_weights, server_update
    from fedlib.secagg import FixedPoint

    for name, theta, total, summed, sizes, frac_bits in _server_cases():
        got = call(
            answer, theta.copy(), total.copy(), summed.copy(), sizes.copy(), frac_bits, what=f"server_step on {name}"
        )
        decoded = FixedPoint(clip=4.0, frac_bits=frac_bits, max_summands=sizes.size).decode_sum(total)
        want = server_update(theta, SimpleNamespace(total=decoded, summed=summed), weights=fedavg_weights(sizes))
        try:
            arr = np.asarray(got)
        except Exception:
            raise Wrong(f"server_step on {name} returned something that is not an array") from None
        expect(arr.shape == want.shape, f"server_step on {name} has shape {arr.shape}; expected {want.shape}")
        expect(np.issubdtype(arr.dtype, np.floating), f"server_step on {name} returns dtype {arr.dtype}; expected "
               "float32 parameters")  # fmt: skip
        if summed.size == 0:
            expect_array(arr.astype(np.float64), want.astype(np.float64), f"server_step on {name} (nobody was "
                         "summed, so the model must stay as it was)", rtol=0.0, atol=0.0)  # fmt: skip
        elif not np.allclose(arr.astype(np.float64), want, rtol=1e-6, atol=1e-6):
            for key, value in _server_variants(theta, total, summed, sizes, frac_bits).items():
                if np.allclose(arr.astype(np.float64), value, rtol=1e-6, atol=1e-6):
                    raise Wrong(f"on {name}, your step {_SERVER_HINTS[key]}")
            expect_array(arr.astype(np.float64), want.astype(np.float64), f"server_step on {name}",
                         rtol=1e-6, atol=1e-6)  # fmt: skip
        expect(arr.dtype == np.float32, f"server_step on {name} returns dtype {arr.dtype}; the model is float32")
    return (
        "the new model agrees with fedlib.learn.server_update on 5 rounds (equal and unequal sizes, dropped "
        "clients, negative sums, 10 and 16 fractional bits, a round with no survivor)"
    )


# -- ex-sfu-dropouts: does a secure round complete? ---------------------------------------------------------------


def _round_cases():
    """Masking graphs of one cluster, a fixed threshold, and dropout patterns of every kind."""
    from fedlib.secagg import MaskingGraph, harary_graph

    rng = np.random.default_rng(20250611)
    graphs = [
        ("a ring of 9 clients, H(9, 2)", harary_graph(9, 2, shuffle=False), 5),
        ("H(12, 4), clients seated at random", harary_graph(12, 4, random_state=1), 7),
        ("the complete graph on 8 clients (SecAgg)", MaskingGraph.complete(8), 5),
        ("H(20, 4), clients seated at random", harary_graph(20, 4, random_state=3), 12),
    ]
    for name, graph, t in graphs:
        k = graph.n_clients
        patterns = [np.zeros(k, dtype=bool)]
        for n_drop in (k - t, k - t + 1):  # exactly t survivors, then t - 1
            patterns.append(np.isin(np.arange(k), rng.choice(k, n_drop, replace=False)))
        for rate in (0.1, 0.2, 0.3, 0.45):
            patterns.extend(rng.random((40, k)) < rate)
        yield name, graph, t, np.array(patterns)


def _describe(dropped: np.ndarray) -> str:
    gone = np.flatnonzero(dropped).tolist()
    return f"clients {gone} dropped" if gone else "no client dropped"


@exercise("ex-sfu-dropouts")
def _round_completes(answer) -> str:
    from fedlib.secagg import SecAggConfig

    n_patterns = 0
    for name, graph, t, patterns in _round_cases():
        config = SecAggConfig(graph, threshold=t, vector_length=1, share_holders="all")
        want = config.completes_without(patterns)
        adjacency = graph.adjacency.toarray() > 0
        for dropped, expected in zip(patterns, want, strict=True):
            n_patterns += 1
            got = call(answer, adjacency.copy(), t, dropped.copy(),
                       what=f"round_completes on {name} with {_describe(dropped)}")  # fmt: skip
            expect(
                isinstance(got, (bool, np.bool_)),
                f"round_completes should return True or False; on {name} it returned {type(got).__name__}",
            )
            if bool(got) == bool(expected):
                continue
            alive = int((~dropped).sum())
            where = f"on {name}, t = {t}, with {_describe(dropped)} ({alive} survivors),"
            if expected:
                raise Wrong(f"{where} your function says the round aborts, but it completes: at least t clients "
                            "survive and the survivors form one connected piece of the masking graph")  # fmt: skip
            if alive < t:
                raise Wrong(f"{where} your function says the round completes, but fewer than t = {t} clients survive: "
                            "their shares cannot rebuild the secrets (Requirement 2)")  # fmt: skip
            pieces = len(graph.components(~dropped))
            raise Wrong(f"{where} your function says the round completes, but the survivors fall into {pieces} pieces "
                        "of the masking graph: unmasking would hand the server the sum of each piece (Fig. 3), so the "
                        "round must abort")  # fmt: skip
    return (
        f"agrees with fedlib's SecAggConfig.completes_without on {n_patterns} dropout patterns of 4 masking graphs "
        "(a ring, two Harary graphs seated at random, the complete graph)"
    )


# -- ex-sfu-vote-ties: the majority vote and its ties --------------------------------------------------------------


def _vote_cases():
    """Scores that are exact in binary (multiples of 1/8 or 1/16), so that sums tie exactly whatever the order."""
    yield (
        "3 models, 1 query: two votes for label 0 against one confident vote for label 1",
        np.array([[[0.5, 0.25, 0.25]], [[0.5, 0.25, 0.25]], [[0.0, 1.0, 0.0]]]),
    )
    yield (
        "2 models, 1 query: one vote each for labels 0 and 1, label 1 with the larger summed probability",
        np.array([[[0.625, 0.375, 0.0]], [[0.125, 0.875, 0.0]]]),
    )
    yield (
        "2 models, 1 query: labels 0 and 1 tie in votes and in summed probability, label 2 sums more",
        np.array([[[0.5, 0.0625, 0.4375]], [[0.0625, 0.5, 0.4375]]]),
    )
    yield (
        "3 models, 1 query: the first model's own probabilities tie between labels 0 and 1",
        np.array([[[0.5, 0.5, 0.0]], [[0.0, 0.5, 0.5]], [[0.375, 0.0, 0.625]]]),
    )
    rng = np.random.default_rng(20250612)
    yield "1 model, 20 queries, 4 classes", rng.multinomial(16, [0.25] * 4, size=(1, 20)) / 16.0
    yield "4 models, 60 queries, 3 classes", rng.multinomial(8, [1 / 3] * 3, size=(4, 60)) / 8.0
    yield "5 models, 60 queries, 4 classes", rng.multinomial(16, [0.25] * 4, size=(5, 60)) / 16.0


@exercise("ex-sfu-vote-ties")
def _vote_ties(answer) -> str:
    from fedlib.unlearn import majority_vote

    for name, P in _vote_cases():
        got = call(answer, P.copy(), what=f"vote on {name}")
        want = majority_vote(P).labels
        try:
            arr = np.asarray(got)
        except Exception:
            raise Wrong(f"vote on {name} returned something that is not an array") from None
        expect(arr.shape == want.shape, f"vote on {name} returns shape {arr.shape}; expected {want.shape}")
        expect(np.issubdtype(arr.dtype, np.integer), f"vote on {name} returns dtype {arr.dtype}; expected integers")
        if np.array_equal(arr, want):
            continue
        soft = P.sum(axis=0).argmax(axis=1)
        votes = np.zeros((*want.shape, P.shape[2]), dtype=np.int64)
        np.add.at(votes, (np.broadcast_to(np.arange(P.shape[1]), P.shape[:2]), P.argmax(axis=2)), 1)
        lowest = votes.argmax(axis=1)
        if np.array_equal(arr, soft):
            raise Wrong(f"on {name}, you return the label with the largest summed probability over all labels (a soft "
                        "vote); each model votes for one label, and summed probabilities only break ties among the "
                        "labels with the most votes")  # fmt: skip
        if np.array_equal(arr, lowest):
            raise Wrong(f"on {name}, a tie of votes goes to the lowest label; it must go to the tied label with the "
                        "largest summed probability (the lowest label only when those sums tie too)")  # fmt: skip
        expect_array(arr, want, f"vote on {name}", exact=True)
    return (
        "labels agree with fedlib.unlearn.majority_vote on 7 cases (a confident minority, ties of votes, ties of "
        "summed probabilities, a model's own tie, one model, random scores with many ties)"
    )


# -- ex-sfu-targeted: which requests are admitted, and what each costs -----------------------------------------------


def _request_cases():
    """(name, N, k, zeta, rounds, how to pick the requests from the clusters)."""

    def targeted(clusters, rng):
        big = int(np.argmax([c.size for c in clusters]))
        return clusters[big][:4]

    def spread(clusters, rng):
        return rng.permutation(np.concatenate(clusters))[:16]

    def one_cluster(clusters, rng):
        return rng.permutation(clusters[0])[:31]

    return [
        ("23 clients in clusters of {sizes}, zeta = 0.25, every request in the largest cluster", 23, 7, 0.25, 3,
         targeted),
        ("40 clients in clusters of {sizes}, zeta = 0.25, 16 random requests", 40, 8, 0.25, 4, spread),
        ("one cluster of 100 clients, zeta = 0.29 (0.29 * 100 = 28.999999999999996 in floating point)",
         100, 100, 0.29, 2, one_cluster),
        ("30 clients in clusters of {sizes}, zeta = 0 (no removal allowed)", 30, 10, 0.0, 5, spread),
    ]  # fmt: skip


def _library_costs(n_clients: int, k: int, zeta: float, rounds: int, pick, seed: int):
    """The clusters ClusteredUnlearning forms, the requests, and what it admits (cost in client-rounds, or -1)."""
    from fedlib.exceptions import UnlearningCapacityError
    from fedlib.unlearn import ClusteredUnlearning

    X = np.zeros((n_clients, 2), dtype=np.float32)
    y = np.arange(n_clients) % 2
    system = ClusteredUnlearning("softmax", cluster_size=k, rounds=rounds, secure=False, removal_rate=zeta,
                                 random_state=seed)  # fmt: skip
    system.fit(X, y, parts=[[u] for u in range(n_clients)], n_rounds=0)
    clusters = [c.copy() for c in system.clusters_]
    requests = np.asarray(pick(clusters, np.random.default_rng(seed)), dtype=np.int64)
    costs = []
    for u in requests.tolist():
        try:
            report = system.unlearn(clients=[u], retrain=False)
        except UnlearningCapacityError:
            costs.append(-1)
            continue
        costs.append(report.details["n_clients_retrained"] * rounds)
    return clusters, requests, np.array(costs, dtype=np.int64)


@exercise("ex-sfu-targeted")
def _targeted(answer) -> str:
    for seed, (template, n_clients, k, zeta, rounds, pick) in enumerate(_request_cases()):
        clusters, requests, want = _library_costs(n_clients, k, zeta, rounds, pick, seed)
        name = template.format(sizes=", ".join(str(c.size) for c in clusters))
        got = call(answer, [c.copy() for c in clusters], zeta, requests.copy(), rounds,
                   what=f"unlearning_costs on {name}")  # fmt: skip
        try:
            arr = np.asarray(got)
        except Exception:
            raise Wrong(f"unlearning_costs on {name} returned something that is not an array") from None
        expect(arr.shape == want.shape, f"unlearning_costs on {name} returns shape {arr.shape}; expected {want.shape}")
        expect(
            arr.dtype != object and np.issubdtype(arr.dtype, np.number),
            f"unlearning_costs on {name} returns dtype {arr.dtype}; expected integers",
        )
        if np.array_equal(arr, want):
            continue
        admitted = want >= 0
        shown = f"requests {requests.tolist()}" if requests.size <= 16 else f"{requests.size} requests"
        where = f"on {name} ({shown})"
        if np.array_equal(arr >= 0, admitted):
            if np.array_equal(arr[admitted], want[admitted] + rounds):
                raise Wrong(f"{where}, every admitted request costs {rounds} client-rounds too many: the forgotten "
                            "client does not retrain with its cluster (the paper's prose counts it: 'the initial "
                            "unlearning request leads to the retraining of k users')")  # fmt: skip
            if np.array_equal(arr[admitted] * rounds, want[admitted]):
                raise Wrong(f"{where}, the costs count clients, not client-rounds: every retraining client trains "
                            f"for all {rounds} rounds")  # fmt: skip
            expect_array(arr, want, f"unlearning_costs {where}", exact=True)
        first = int(np.flatnonzero((arr >= 0) != admitted)[0])
        cluster = next(i for i, c in enumerate(clusters) if requests[first] in c)
        size = clusters[cluster].size
        earlier = int(sum(1 for j in range(first) if admitted[j] and requests[j] in clusters[cluster]))
        which = f"request no. {first + 1} (client {int(requests[first])})"
        if admitted[first]:
            float_hint = (" (compute the floor of zeta * k_i for zeta as typed, not of its floating-point product)"
                          if zeta * size != round(zeta * size) else "")  # fmt: skip
            raise Wrong(f"{where}, {which} is refused, but its cluster of {size} clients has lost only {earlier} so "
                        f"far and its cap floor(zeta * k_i) allows one more{float_hint}")  # fmt: skip
        raise Wrong(f"{where}, {which} is admitted, but its cluster of {size} clients has already lost {earlier}, its "
                    "cap floor(zeta * k_i) (Requirement 4): it must be refused, and then change nothing")  # fmt: skip
    return (
        "admissions and costs agree with fedlib's ClusteredUnlearning (removal_rate = zeta) on 4 request sequences "
        "(one cluster targeted, random requests, zeta * k_i just below an integer in floating point, zeta = 0)"
    )
