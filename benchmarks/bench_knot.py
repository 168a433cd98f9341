"""KNOT benchmarks: the exact lexicographic client-to-cluster assignment against K, and the simulator's overhead.

    python benchmarks/bench_knot.py [--clients 100 1000 10000] [--clusters 10] [--repeat 3] [--seed 0]
                                    [--aggregations 40]

For each K, integer ratings D_kn in 0..100 come from KNOT's match ratings (Su & Li, INFOCOM 2023, Sec. IV)
of Pareto-distributed training times and uniform disparities; the assignment puts every client in one of
N clusters with sizes in [K/(2N), K/2]. Timed, medians of --repeat runs:

- ``lexmin_flow``: fedlib's exact lexicographic minimum, a min-cost flow with Python-integer costs
  (K+1)^D_kn solved by successive shortest paths over the N clusters;
- ``minsum_flow``: the same solver with costs D_kn, the plain min-sum assignment of the same size
  (what the authors' public code means to solve), the reference of the ratio;
- ``network_simplex``: the lexicographic minimum by networkx's network simplex on the same integer costs
  (K <= 1,000 only; it takes minutes at 10,000);
- the paper's float LP is not timed: its weights (KN)^D_kn overflow float64 from K*N = 1,200 on.

The issue that introduced this benchmark set the goal at under 1 s for K = 1,000 (the paper reports under
1 s at K = 100 with a commercial LP solver).

Simulator overhead: the asynchronous trainer (fedlib.learn.AsyncFederatedTrainer) runs --aggregations
aggregations of the default-scale MNIST task of the KNOT chapters, with 5 random clusters, and the wall time of
each step that is neither local training nor testing (the queue, bookkeeping, averaging, checkpoints) is set
against the local training the step launched. Goal: under 5%.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from fedlib.cluster import lexmin_assignment, match_ratings, round_ratings

GOAL_SECONDS = 1.0
OVERHEAD_GOAL = 0.05


def instance(n_clients: int, n_clusters: int, rng: np.random.Generator) -> np.ndarray:
    """Integer ratings of a synthetic population: Pareto(shape 1.5) training times, uniform disparities."""
    T = 10.0 * (1.0 + rng.pareto(1.5, n_clients))
    S = rng.random(n_clients)
    return round_ratings(match_ratings(T, S, n_clusters))


def median_seconds(D: np.ndarray, method: str, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = lexmin_assignment(D, method=method)
        times.append(time.perf_counter() - start)
    return float(np.median(times)), out


def simulator_overhead(aggregations: int, seed: int) -> None:
    """Overhead of the simulator per aggregation, as a fraction of the local training it schedules."""
    from fedbook.knot import runs, tasks

    task = tasks.tasks("default")["MNIST"]
    data = tasks.prepare(task, random_state=seed)
    trainer = runs.build(task, data, "Random", seed).run(rounds=aggregations)
    steps = trainer.history_
    overhead = np.array([r.overhead_seconds for r in steps])
    train = np.array([r.train_seconds for r in steps])
    evaluation = np.array([r.eval_seconds for r in steps])
    ratio = overhead.sum() / train.sum()
    print(f"\nSimulator overhead, {task.name} (K = {task.n_clients}, P = {task.concurrency}, M = {task.buffer}, "
          f"5 random clusters, {len(steps)} aggregations)")
    print(f"  per aggregation: overhead {1e3 * overhead.mean():.2f} ms, local training {1e3 * train.mean():.1f} ms, "
          f"testing {1e3 * evaluation.mean():.1f} ms")
    verdict = "met" if ratio < OVERHEAD_GOAL else "MISSED"
    print(f"  overhead / local training = {100 * ratio:.2f}%  (goal: under {100 * OVERHEAD_GOAL:g}%: {verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--clusters", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--aggregations", type=int, default=40)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"KNOT assignment, N = {args.clusters} clusters, sizes in [K/(2N), K/2], medians of {args.repeat} runs")
    print(f"{'K':>7} {'lexmin s':>10} {'minsum s':>10} {'ratio':>7} {'simplex s':>10} {'sizes':>44} "
          f"{'max D lexmin/minsum':>20}")
    for K in args.clients:
        D = instance(K, args.clusters, rng)
        repeat = args.repeat if K <= 1000 else 1
        lex_s, lex = median_seconds(D, "lexmin_flow", repeat)
        sum_s, minsum = median_seconds(D, "minsum_flow", repeat)
        simplex = f"{median_seconds(D, 'network_simplex', 1)[0]:10.3f}" if K <= 1000 else f"{'-':>10}"
        floats = "overflows" if K * args.clusters * 1.0 > 10 ** (308 / 100) else "fits"
        print(
            f"{K:>7} {lex_s:>10.3f} {sum_s:>10.3f} {lex_s / sum_s:>7.2f} {simplex} {lex.sizes.tolist()!s:>44} "
            f"{int(lex.ratings.max()):>9}/{int(minsum.ratings.max()):<9}  paper's float weights {floats}"
        )
        if K == 1000:
            verdict = "met" if lex_s < GOAL_SECONDS else "MISSED"
            print(f"        goal: under {GOAL_SECONDS:g} s at K = 1000: {verdict} ({lex_s:.3f} s)")
    print(f"(the paper's weights (KN)^100 exceed float64 once KN > 10^{308 / 100:.2f} = {10 ** 3.08:.0f}; "
          f"log10 of (K+1)^100 at K = 10000: {100 * math.log10(10001):.0f} digits, exact in Python)")
    simulator_overhead(args.aggregations, args.seed)


if __name__ == "__main__":
    main()
