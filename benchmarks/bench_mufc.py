"""MUFC benchmarks, as ratios measured in one run.

    python benchmarks/bench_mufc.py [--removals 50]

1. Unlearning against complete retraining, per dataset (random single-point removals).
2. MUFC's client seeding against a straightforward reimplementation of the authors'
   loop-based K-means++ (a Python loop over points, distances recomputed for every
   centre), on Celltype, checking that both reach the same loss ratio.
3. SCMA for L=100 clients and K=10: encode and decode time against the server's clustering time.
4. One removal that re-seeds nobody against client size (MUFC Theorem 5.4: O(R K), independent of n^(l)):
   the median time of such removals for one client of 1k to 256k points, as a ratio to the 1k client.

BLAS is pinned to one thread so that small matrix products are not slowed by thread pools.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from fedbook import mufc as experiments
from threadpoolctl import threadpool_limits

from fedlib.cluster import KMeans, kmeans_objective, kmeans_plusplus
from fedlib.data import make_blobs
from fedlib.unlearn import MUFC


def loop_kmeans_plusplus(X: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """The authors' approach (thupchnsky/mufc model.py): per-point loops, every distance recomputed per round."""
    n = X.shape[0]
    centers = [int(rng.integers(n))]
    for _ in range(1, k):
        probs = np.empty(n)
        for i in range(n):  # deliberately O(n K^2 d) with interpreter overhead, as in the reference code
            probs[i] = min(float(np.sum((X[i] - X[c]) ** 2)) for c in centers)
        probs /= probs.sum()
        centers.append(int(rng.choice(n, p=probs)))
    return np.array(centers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--removals", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    with threadpool_limits(1):
        print("1. Unlearning vs complete retraining (random removals; clients in parallel, SCMA excluded)")
        print(f"{'dataset':10s} {'kind':13s} {'median round, no re-seed':>25s} {'accumulated':>12s} {'re-seeds':>9s}")
        for name in ["Celltype", "Covtype", "Gaussian", "Postures", "TCGA", "TMI"]:
            problem = experiments.prepare(name, random_state=rng)
            run = experiments.removal_run(problem, n_removals=args.removals, random_state=rng)
            print(
                f"{name:10s} {problem.kind:13s} {run.no_retrain_speedups.median():24.0f}x "
                f"{run.accumulated_speedup:11.1f}x {int(run.rounds['reseeded'].sum()):9d}"
            )

        print("\n2. Client seeding: fedlib vs the authors' loop-based K-means++ (Celltype, largest client)")
        celltype = experiments.prepare("Celltype", random_state=rng)
        X = celltype.X[max(celltype.parts, key=len)]
        k = celltype.n_clusters
        start = time.perf_counter()
        loop_losses = [kmeans_objective(X, X[loop_kmeans_plusplus(X, k, rng)]) for _ in range(20)]
        loop_seconds = time.perf_counter() - start
        start = time.perf_counter()
        ours_losses = [kmeans_objective(X, kmeans_plusplus(X, k, random_state=rng)[0]) for _ in range(20)]
        ours_seconds = time.perf_counter() - start
        phi = KMeans(k, n_init=10, random_state=0).fit(X).inertia_
        print(
            f"  {len(X)} points: fedlib is {loop_seconds / ours_seconds:.0f}x faster; mean seeding loss ratio "
            f"{np.mean(ours_losses) / phi:.2f} (fedlib) vs {np.mean(loop_losses) / phi:.2f} (loop)"
        )

        print("\n3. SCMA, L=100 clients, K=10, B^d = 100^10, n = 30000")
        cost = experiments.scma_round_cost(
            n_clients=100, n_clusters=10, n_bins=100**10, n_samples=30000, random_state=rng
        )
        gauss = experiments.prepare("Gaussian", random_state=rng)
        start = time.perf_counter()
        KMeans(gauss.n_clusters, n_init=10, random_state=0).fit(gauss.X)
        server = time.perf_counter() - start
        print(
            f"  encode (all clients) / server clustering = {cost.encode_seconds / server:.2f}; "
            f"decode / server clustering = {cost.decode_seconds / server:.2f}; "
            f"{cost.scma_bits:,} bits per client"
        )


        print("\n4. A removal that re-seeds nobody, against client size (K=10, d=10, one big client + 9 small ones)")
        base = None
        for n_big in [1_000, 4_000, 16_000, 64_000, 256_000]:
            sizes = (n_big // 10,) * 10
            X, _ = make_blobs(sizes, 10, cluster_std=0.1, random_state=rng)
            small = 100
            parts = [np.arange(n_big)] + [n_big + small * j + np.arange(small) for j in range(9)]
            X = np.vstack([X, make_blobs((small * 9,), 10, random_state=rng)[0]])
            model = MUFC(10, aggregation="plaintext", server_n_init=1, random_state=rng).fit(X, parts=parts)
            ids = model.client_ids(0)
            is_seed = (X[ids][:, None, :] == model.client_centers_[0][None]).all(axis=2).any(axis=1)
            victims = rng.permutation(ids[~is_seed])[:200]
            times = [model.unlearn([int(v)]).client_seconds for v in victims]
            median = float(np.median(times))
            base = base or median
            print(
                f"  client of {n_big:>7,} points: median client time {median * 1e6:7.1f} us, "
                f"{median / base:5.2f}x the 1k client"
            )


if __name__ == "__main__":
    main()
