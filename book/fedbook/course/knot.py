"""Checks for the coding exercises of the KNOT chapters on clustered aggregation and on the comparison.

The simulated clock and FedBuff's buffered step (:class:`fedlib.learn.AsyncFederatedTrainer`), the rollback an
erasure triggers, and FedEraser's calibrated step (:class:`fedlib.unlearn.FedEraser`). The expected values come
from small runs of the library's trainers (a softmax model on a few random examples, a few milliseconds each).
"""

from __future__ import annotations

import copy
import heapq
from dataclasses import replace

import numpy as np

from fedbook.course._feedback import Wrong, call, exercise, expect, expect_array


def _toy_data(sizes, *, seed: int = 0, n_features: int = 4, n_classes: int = 3):
    """Random examples split into consecutive client parts of the given sizes."""
    rng = np.random.default_rng(seed)
    n = int(sum(sizes))
    X = rng.random((n, n_features), dtype=np.float32)
    y = rng.integers(0, n_classes, n)
    parts = np.split(np.arange(n), np.cumsum(sizes)[:-1])
    return X, y, parts


def _trainer(sizes, times, *, buffer, rounds, labels=None, concurrency=None, seed=0, **options):
    """A fitted AsyncFederatedTrainer (softmax) on toy data; every client in flight unless told otherwise."""
    from fedlib.learn import AsyncFederatedTrainer, LocalSGD

    X, y, parts = _toy_data(sizes, seed=seed)
    K = len(sizes)
    trainer = AsyncFederatedTrainer(
        "softmax",
        concurrency=K if concurrency is None else concurrency,
        buffer=buffer,
        local=LocalSGD(lr=0.2, batch_size=4),
        random_state=seed,
        **options,
    )
    return trainer.fit(X, y, parts=parts, training_times=np.asarray(times, dtype=float), cluster_labels=labels,
                       rounds=rounds)  # fmt: skip


# --- The simulated clock of FedBuff with every client in flight ------------------------------------------------------


def _clock_cases():
    """(name, training times, M, rounds): ties, a heavy tail, M = K (synchronous) and M = 1."""
    from fedlib.learn import pareto_training_times

    yield "6 clients, M = 2, times with ties", np.array([3.0, 1.0, 4.0, 1.5, 9.0, 2.5]), 2, 9
    yield "8 clients with Plato's Pareto times, M = 3", pareto_training_times(8, random_state=3), 3, 10
    yield "5 clients, M = K = 5 (synchronous)", np.array([2.0, 7.5, 1.0, 3.25, 4.0]), 5, 4
    yield "4 clients, M = 1", np.array([1.0, 2.0, 2.0, 5.0]), 1, 8


def _mistaken_clock(times, buffer, rounds, *, restart_at_arrival=False, ties_by_client=False):
    """Aggregation times and popped clients under a recognisable mistake (the check names it)."""
    K = len(times)
    queue = [(float(times[k]), k, k) for k in range(K)]
    heapq.heapify(queue)
    seq, out_t, out_c = K, [], []
    for _ in range(rounds):
        popped = [heapq.heappop(queue) for _ in range(buffer)]
        now = popped[-1][0]
        out_t.append(now)
        out_c.append([p[2] for p in popped])
        for finish, _, k in sorted(popped, key=lambda p: p[2]):
            start = finish if restart_at_arrival else now
            heapq.heappush(queue, (start + float(times[k]), k if ties_by_client else seq, k))
            seq += 1
    return np.array(out_t), np.array(out_c)


@exercise("ex-knot-clock")
def _fedbuff_clock(answer) -> str:
    for name, times, M, rounds in _clock_cases():
        K = len(times)
        trainer = _trainer([3] * K, times, buffer=M, rounds=rounds)
        want_t = np.array([r.time for r in trainer.history_])
        want_c = np.stack([r.clients for r in trainer.history_])
        want_s = np.stack([r.staleness for r in trainer.history_])
        got = call(answer, times.copy(), M, rounds, what=f"fedbuff_clock on {name}")
        expect(
            isinstance(got, tuple) and len(got) == 3,
            f"fedbuff_clock should return a triple (times, clients, staleness); on {name} it returned "
            f"{type(got).__name__}",
        )
        got_t, got_c, got_s = (np.asarray(g) for g in got)
        expect(
            got_t.shape == want_t.shape,
            f"on {name}: the times have shape {got_t.shape}; expected ({rounds},), one per aggregation",
        )
        same_c = got_c.shape == want_c.shape and np.array_equal(got_c, want_c)
        if not (np.allclose(got_t, want_t, rtol=1e-12, atol=1e-9) and same_c):
            own_t, own_c = _mistaken_clock(times, M, rounds, restart_at_arrival=True)
            if np.allclose(got_t, own_t, rtol=1e-12, atol=1e-9) and got_c.shape == own_c.shape:
                raise Wrong(
                    f"on {name}: your clients start again the moment their own result arrives; a popped client "
                    "is sent the new model only at the aggregation, when the M-th result has arrived"
                )
            tie_t, tie_c = _mistaken_clock(times, M, rounds, ties_by_client=True)
            if np.allclose(got_t, tie_t, rtol=1e-12, atol=1e-9) and np.array_equal(got_c, tie_c):
                raise Wrong(
                    f"on {name}: two results arriving at the same time are ordered by client id; the one sent "
                    "earlier arrives first (client id breaks ties only among results sent at the same moment)"
                )
            expect_array(got_t, want_t, f"the aggregation times on {name}", rtol=1e-12, atol=1e-9)
        expect_array(got_c, want_c, f"the popped clients on {name} (row: aggregation, in order of arrival)",
                     exact=True)  # fmt: skip
        if got_s.shape == want_s.shape and np.array_equal(got_s, want_s + 1):
            raise Wrong(
                f"on {name}: every staleness is one too high; a result that joins the aggregation right after "
                "the one whose model it started from has staleness 0"
            )
        expect_array(got_s, want_s, f"the staleness on {name}", exact=True)
    return (
        "times, popped clients and staleness agree with fedlib's AsyncFederatedTrainer (P = K) on 4 cases "
        "(ties, Pareto times, M = K, M = 1)"
    )


# --- FedBuff's buffered step with staleness scaling -----------------------------------------------------------------


def _fedbuff_runs():
    """(name, trainer, scaling, server_lr): fedlib's FedBuff on 6 clients of unequal sizes, every update stored."""
    times = np.array([1.0, 2.5, 1.75, 4.0, 3.0, 6.5])
    sizes = [3, 8, 5, 6, 4, 9]
    for scaling, lr in ((True, 1.0), (True, 0.5), (False, 1.0)):
        trainer = _trainer(sizes, times, buffer=3, rounds=6, aggregation="fedbuff", staleness_scaling=scaling,
                           server_lr=lr, store_updates=1)  # fmt: skip
        name = f"fedlib's FedBuff run (staleness scaling {'on' if scaling else 'off'}, server_lr = {lr})"
        yield name, trainer, scaling, lr


def _fedbuff_formula(model, deltas, n_samples, staleness, server_lr, scaling):
    p = np.asarray(n_samples, float) / np.sum(n_samples)
    s = 1.0 / np.sqrt(1.0 + np.asarray(staleness, float)) if scaling else np.ones(len(p))
    return np.asarray(model, float) + server_lr * (p * s) @ np.asarray(deltas, float)


@exercise("ex-knot-fedbuff-step")
def _fedbuff_step(answer) -> str:
    # A hand-made buffer first: its staleness separates the usual mistakes clearly.
    model = np.array([1.0, -2.0, 0.5])
    deltas = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, -1.0], [-2.0, 1.0, 1.0]])
    n_samples, staleness = np.array([10, 30, 20]), np.array([0, 3, 8])
    want = _fedbuff_formula(model, deltas, n_samples, staleness, 1.0, True)
    name = "a buffer of 3 results with staleness (0, 3, 8) and 10, 30, 20 examples"
    got = call(answer, model.copy(), deltas.copy(), n_samples.copy(), staleness.copy(), 1.0, True,
               what=f"fedbuff_update on {name}")  # fmt: skip
    got = np.asarray(got, dtype=float) if np.ndim(got) == 1 else got
    if np.shape(got) == want.shape:
        p = n_samples / n_samples.sum()
        s = 1.0 / np.sqrt(1.0 + staleness)
        hints = [
            (model + (p * s) @ deltas / (p * s).sum(), "the weights were renormalised after the staleness scaling; "
             "FedBuff (and fedlib) multiply each delta by s(τ) and do not divide by Σ p_i s(τ_i), so a stale "
             "buffer moves the model less"),
            (model + (s / 3) @ deltas, "the weights ignore the clients' example counts: p_i = n_i / Σ n"),
            (model + (p / (1.0 + staleness)) @ deltas, "the staleness scaling is 1/(1 + τ); use 1/√(1 + τ)"),
            (model + p @ deltas, "the staleness scaling is missing (scaling=True asks for s(τ) = 1/√(1 + τ))"),
        ]  # fmt: skip
        for wrong, hint in hints:
            if np.allclose(got, wrong) and not np.allclose(wrong, want):
                raise Wrong(f"on {name}: {hint}")
    expect_array(got, want, f"fedbuff_update on {name}", rtol=1e-9, atol=1e-12)
    n_checked = 0
    for name, trainer, scaling, lr in _fedbuff_runs():
        for stored, record in zip(trainer.stored_updates_, trainer.history_, strict=True):
            r = record.round_index
            tau = dict(zip(record.clients.tolist(), record.staleness.tolist(), strict=True))
            staleness = np.array([tau[k] for k in stored.clients.tolist()])
            before = trainer.checkpoints_[0][r - 1].astype(np.float32)
            got = call(answer, before.copy(), stored.updates.copy(), stored.n_samples.copy(), staleness, lr,
                       scaling, what=f"fedbuff_update on aggregation {r} of {name}")  # fmt: skip
            expect_array(got, trainer.checkpoints_[0][r], f"the new model after aggregation {r} of {name}",
                         rtol=1e-5, atol=1e-6)  # fmt: skip
            n_checked += 1
    return (
        f"the step is right on a hand-made buffer and reproduces {n_checked} aggregations of fedlib's FedBuff "
        "(staleness scaling on and off, server_lr 1 and 0.5, unequal client sizes)"
    )


# --- The rollback an erasure triggers ----------------------------------------------------------------------------


def _rollback_cases():
    """(name, trainer, erased): 12 clients in 3 clusters under Plato's global schedule, and one cluster (FedBuff)."""
    times = np.linspace(1.0, 4.0, 12)[np.random.default_rng(1).permutation(12)]
    labels = np.arange(12) % 3
    clustered = _trainer([4] * 12, times, buffer=2, rounds=6, labels=labels, concurrency=5, seed=1)
    first, points = clustered.first_selected_, clustered.checkpoints_

    def latest(n, k):
        return max(v for v in points[n] if v <= first[k] - 1)

    took = [k for k in range(12) if first[k] > 0]
    yield "a client of the first round", clustered, [min(k for k in took if first[k] == 1)]
    gap = [k for k in took if 0 < latest(labels[k], k) < first[k] - 1]
    if gap:
        yield f"a client first sent a model in round {first[gap[0]]}", clustered, [gap[0]]
    never = [k for k in range(12) if first[k] < 0]
    if never:
        yield "a client never sent a model", clustered, [never[0]]
    pairs = [
        (a, b)
        for a in took
        for b in took
        if labels[a] == labels[b] and first[a] > first[b] and latest(labels[a], a) > latest(labels[b], b)
    ]
    if pairs:
        yield "two clients of one cluster (rounds differ)", clustered, [int(pairs[0][1]), int(pairs[0][0])]
    spread = [min(k for k in took if labels[k] == n) for n in (0, 2)] + never[:1]
    yield "clients of two clusters, and one never sent a model", clustered, spread
    single = _trainer([4] * 8, np.linspace(1.0, 3.0, 8), buffer=2, rounds=5, concurrency=4, seed=2)
    yield "one cluster (FedBuff)", single, [int(np.argmax(single.first_selected_))]


@exercise("ex-knot-rollback")
def _rollback_plan(answer) -> str:
    for name, trainer, erased in _rollback_cases():
        labels = trainer.cluster_labels_.copy()
        first = trainer.first_selected_.copy()
        rounds = [sorted(points) for points in trainer.checkpoints_]
        report = copy.deepcopy(trainer).unlearn(clients=erased)
        want = {int(n): int(v) for n, v in report.details["rolled_back_to"].items()}
        rolled = np.flatnonzero(np.isin(labels, list(want)))
        want_retrain = np.setdiff1d(rolled, erased)
        got = call(answer, labels, first, rounds, np.array(erased), what=f"rollback_plan on {name}")
        expect(
            isinstance(got, tuple) and len(got) == 2,
            f"rollback_plan should return a pair (rolled_back, retrain); on {name} it returned {type(got).__name__}",
        )
        plan, retrain = got
        expect(isinstance(plan, dict), f"on {name}: rolled_back should be a dict cluster -> round, not "
                                       f"{type(plan).__name__}")  # fmt: skip
        try:
            plan = {int(n): int(v) for n, v in plan.items()}
        except (TypeError, ValueError) as exc:
            raise Wrong(f"on {name}: rolled_back must map cluster numbers to round numbers: {exc}") from None
        if set(plan) != set(want):
            if any(first[k] < 0 for k in erased) and set(want) < set(plan):
                raise Wrong(
                    f"on {name}: a cluster rolls back although its erased client was never sent a model: "
                    "nothing of that client is in it"
                )
            raise Wrong(f"on {name}: the clusters rolled back are {sorted(plan)}; expected {sorted(want)}")
        for n, v in want.items():
            if plan[n] != v:
                firsts = [int(first[k]) for k in erased if labels[k] == n and first[k] > 0]
                if plan[n] == min(firsts) - 1:
                    raise Wrong(
                        f"on {name}: cluster {n} goes back to round {plan[n]}, but it has no checkpoint there: a "
                        "cluster is checkpointed only after aggregations that changed it "
                        f"(its checkpoints: {rounds[n]})"
                    )
                if len(firsts) > 1 and plan[n] == max(u for u in rounds[n] if u <= max(firsts) - 1):
                    raise Wrong(
                        f"on {name}: cluster {n} goes back to checkpoint {plan[n]}, before the later of its erased "
                        "clients; the earliest first round among them decides (the model must hold none of them)"
                    )
                raise Wrong(f"on {name}: cluster {n} goes back to checkpoint {plan[n]}; expected {v}")
        expect_array(np.asarray(retrain), want_retrain, f"the clients that retrain on {name} (sorted)", exact=True)
    return (
        "rollback checkpoints agree with fedlib's AsyncFederatedTrainer.unlearn, and the retraining clients are "
        "right, on 6 erasures (first round, a round without checkpoint, never selected, two clients, FedBuff)"
    )


# --- FedEraser's calibrated step ---------------------------------------------------------------------------------


def _calibrated_formula(model, stored, fresh, n_samples):
    stored, fresh = np.asarray(stored, float), np.asarray(fresh, float)
    lengths = np.linalg.norm(fresh, axis=1)
    scale = np.divide(np.linalg.norm(stored, axis=1), lengths, out=np.zeros_like(lengths), where=lengths > 0)
    p = np.asarray(n_samples, float) / np.sum(n_samples)
    return np.asarray(model, float) + (p * scale) @ fresh


@exercise("ex-knot-calibrate")
def _calibrated_step(answer) -> str:
    from fedlib.learn import LocalSGD, fedavg_mean
    from fedlib.unlearn import FedEraser

    rng = np.random.default_rng(11)
    model = rng.normal(size=5)
    stored = rng.normal(size=(3, 5))
    fresh = rng.normal(size=(3, 5)) * np.array([[0.1], [4.0], [1.0]])
    n_samples = np.array([5, 20, 15])
    zero = fresh.copy()
    zero[1] = 0.0
    cases = [
        ("3 clients of 5, 20 and 15 examples", model, stored, fresh, n_samples),
        ("a calibrating client whose fresh update is zero", model, stored, zero, n_samples),
    ]
    for name, m, s, f, n in cases:
        want = _calibrated_formula(m, s, f, n)
        got = call(answer, m.copy(), s.copy(), f.copy(), n.copy(), what=f"calibrated_step on {name}")
        got_arr = np.asarray(got, dtype=float) if np.ndim(got) == 1 else got
        if np.shape(got_arr) == want.shape and np.all(np.isfinite(got_arr)):
            p, lengths = n / n.sum(), np.linalg.norm(f, axis=1)
            uniform = np.divide(np.linalg.norm(s, axis=1), lengths, out=np.zeros(3), where=lengths > 0) / 3
            hints = [
                (m + p @ f, "the fresh updates are applied as they are; each must be rescaled to the length of the "
                 "stored update of the same client"),
                (m + p @ s, "the stored updates are applied as they are; FedEraser keeps only their lengths and takes "
                 "the directions from the fresh (calibration) updates"),
                (m + uniform @ f, "the clients are averaged uniformly; FedEraser uses FedAvg's weights n_k / Σ n"),
            ]  # fmt: skip
            for wrong, hint in hints:
                if np.allclose(got_arr, wrong) and not np.allclose(wrong, want):
                    raise Wrong(f"on {name}: {hint}")
        elif np.shape(got_arr) == want.shape:
            raise Wrong(f"on {name}: the new model holds NaN or infinity: a zero fresh update has no direction, "
                        "and such a client contributes nothing")  # fmt: skip
        expect_array(got_arr, want, f"calibrated_step on {name}", rtol=1e-9, atol=1e-12)
    # Replay fedlib's FedEraser with the answer as its calibrated step: the rebuilt model must be fedlib's.
    X, y, parts = _toy_data([4, 6, 5, 7, 5, 6, 4, 8], seed=5)
    local = LocalSGD(lr=0.1, batch_size=4, epochs=2)  # r · E = 0.5 · 2: one calibration epoch
    eraser = FedEraser("softmax", concurrency=4, buffer=2, local=local, interval=2, ratio=0.5, random_state=0)
    eraser.fit(X, y, parts=parts, training_times=np.arange(1.0, 9.0), rounds=8)
    forgotten = int(eraser.history_[0].clients[0])
    report = eraser.unlearn(clients=[forgotten])
    params, steps = eraser.checkpoints_[0][0].astype(np.float32).copy(), 0
    for stored in eraser.stored_updates_:
        keep = stored.clients != forgotten
        if not keep.any():
            continue
        ids, updates, n = stored.clients[keep], stored.updates[keep], stored.n_samples[keep]
        if steps == 0:  # the first stored round is applied without calibration
            params = (params + fedavg_mean(updates.astype(np.float64), n)).astype(np.float32)
        else:
            fresh = eraser.local_updates(params, ids, local=replace(local, epochs=1), round_index=stored.round_index,
                                         random_state=0).deltas  # fmt: skip
            got = call(answer, params.astype(np.float64), updates.astype(np.float64), fresh.astype(np.float64),
                       n.copy(), what=f"calibrated_step on replayed round {stored.round_index}")  # fmt: skip
            expect(np.shape(got) == params.shape, f"calibrated_step returned shape {np.shape(got)} on replayed "
                                                  f"round {stored.round_index}; expected {params.shape}")  # fmt: skip
            params = np.asarray(got, dtype=np.float64).astype(np.float32)
        steps += 1
    expect_array(params, eraser.params_[0], "the model rebuilt with your step (replaying fedlib's FedEraser run)",
                 rtol=1e-5, atol=1e-6)  # fmt: skip
    return (
        "the step is right on 2 hand-made cases (unequal sizes, a zero calibration update) and rebuilds fedlib's "
        f"FedEraser model over {len(report.details['replayed'][0])} replayed rounds"
    )
