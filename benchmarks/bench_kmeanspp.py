"""K-means++ seeding: fedlib against scikit-learn, as speed ratios measured in one run.

    python benchmarks/bench_kmeanspp.py [--repeat 7]

Uses the real Covtype and FEMNIST sample when the data can be had, labelled stand-ins of the same shape
otherwise. BLAS is pinned to one thread so the ratio compares the algorithms, not the thread pools.
"""

from __future__ import annotations

import argparse
from functools import partial

from fedbook.bench import speed_ratios
from sklearn.cluster import kmeans_plusplus as sklearn_kmeans_plusplus
from threadpoolctl import threadpool_limits

from fedlib import data
from fedlib.cluster import kmeans_plusplus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(f"{'dataset':28s} {'n':>6s} {'d':>4s} {'K':>3s}  vs sklearn greedy  vs sklearn 1 trial")
    with threadpool_limits(1):
        for name in ["covtype", "femnist_sample"]:
            ds = data.load_or_standin(name, random_state=0)
            X, K = ds.X, ds.n_clusters
            ratios = speed_ratios(
                {
                    "fedlib": partial(kmeans_plusplus, X, K, random_state=0),
                    "greedy": partial(sklearn_kmeans_plusplus, X, K, random_state=0),
                    "single": partial(sklearn_kmeans_plusplus, X, K, random_state=0, n_local_trials=1),
                },
                reference="fedlib",
                repeat=args.repeat,
            )
            print(
                f"{ds.name:28s} {ds.n_samples:6d} {ds.n_features:4d} {K:3d}  "
                f"{1 / ratios['greedy']:16.2f}x  {1 / ratios['single']:16.2f}x"
            )
    print("(ratio = sklearn time / fedlib time; above 1 means fedlib is faster)")


if __name__ == "__main__":
    main()
