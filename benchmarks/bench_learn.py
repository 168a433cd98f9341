"""Local-training benchmark: one FedAvg round of local SGD for many clients, client loop against torch.func vmap.

    python benchmarks/bench_learn.py [--repeat 3] [--seed 0] [--quick]

Every client runs one epoch of SGD from the same global parameters on its own 28x28 images (random pixels:
the arithmetic does not depend on them), as in one round of Liu et al.'s clustered FedAvg on an MNIST split
(fedlib.learn.train_clients). For each model and client regime the table prints the median seconds of a
round with the client loop (method="loop"), the speed-up of the vectorised path (method="vmap",
vmap(grad(loss)) over a stack of client parameter vectors) over it, measured in the same run with the calls
interleaved (> 1: vmap faster), and the path method="auto" picks (fedlib.learn.choose_method).

The regimes: the book's default (200 clients x 40 images, batches of 32 and of 10), fewer and larger clients
(50 x 160, 10 x 800), and ragged clients (sizes 10..70, mean 40, as a Dirichlet split gives). The last line
times a whole FedAvg round of the default configuration (FederatedTrainer.step with the plain sum and an
evaluation on 2,000 images), the number the book's run-time budget rests on.

torch runs on one thread, as in the simulations (torch.set_num_threads(1)); on a 2-core machine shared with
other jobs the absolute times vary by tens of percent, the ratios less.
"""

from __future__ import annotations

import argparse
import itertools
import time
from functools import partial

import numpy as np
import torch
from fedbook.bench import speed_ratios

from fedlib.learn import FederatedTrainer, LocalSGD, choose_method, get_flat, make_model, n_parameters, train_clients


def regimes(rng: np.random.Generator) -> dict[str, tuple[list[int], int]]:
    """Client sizes and batch size of each regime."""
    ragged = rng.integers(10, 71, size=200).tolist()
    return {
        "200 x 40, B=32": ([40] * 200, 32),
        "200 x 40, B=10": ([40] * 200, 10),
        "50 x 160, B=32": ([160] * 50, 32),
        "10 x 800, B=32": ([800] * 10, 32),
        "200 ragged, B=32": (ragged, 32),
    }


def median_seconds(func, repeat: int) -> float:
    func()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="only the book's default regime")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(args.seed)
    X = rng.random((8000, 1, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, size=8000)
    cases = regimes(rng)
    if args.quick:
        cases = {k: v for k, v in cases.items() if k == "200 x 40, B=32"}
    print("one round of local training (one epoch, SGD), one torch thread")
    print(f"{'model':10s} {'params':>9s} {'regime':18s} {'loop s/round':>13s} {'vmap vs loop':>13s} {'auto':>5s}")
    for name in ("cnn_small", "mlp", "softmax", "lenet5", "cnn_paper"):
        model = make_model(name, random_state=args.seed)
        start, d = get_flat(model), n_parameters(model)
        for label, (sizes, batch) in cases.items():
            if name == "cnn_paper" and label != "200 x 40, B=32":
                continue  # seconds per round on a CPU: the reason the book's default is cnn_small
            sizes_ = sizes[:20] if name == "cnn_paper" else sizes  # 20 clients only: minutes otherwise
            bounds = np.cumsum([0, *sizes_])
            clients = [np.arange(lo, hi) % len(X) for lo, hi in itertools.pairwise(bounds)]
            run = partial(train_clients, model, start, X, y, clients, config=LocalSGD(batch_size=batch), random_state=0)
            loop = median_seconds(partial(run, method="loop"), args.repeat)
            ratios = speed_ratios(
                {"loop": partial(run, method="loop"), "vmap": partial(run, method="vmap")},
                reference="loop",
                repeat=args.repeat,
            )
            shown = label if name != "cnn_paper" else "20 x 40, B=32"
            auto = choose_method(sizes_, d, batch)
            print(f"{name:10s} {d:9d} {shown:18s} {loop:12.3f}s {ratios['vmap']:12.2f}x {auto:>5s}", flush=True)

    clients = np.array_split(np.arange(8000), 200)
    X_test, y_test = rng.random((2000, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, size=2000)
    for name in ("cnn_small", "softmax"):
        trainer = FederatedTrainer(name, local=LocalSGD(lr=0.05, batch_size=32), random_state=args.seed).fit(
            X, y, parts=clients, test_data=(X_test, y_test), n_rounds=0
        )
        seconds = median_seconds(trainer.step, args.repeat)
        record = trainer.history_[-1]
        print(
            f"\nFedAvg round, {name}, 200 clients x 40 images, B=32, plain sum, test on 2,000 images: {seconds:.3f} s "
            f"(training {record.train_seconds:.3f} s with {choose_method([40] * 200, trainer.n_parameters, 32)}, "
            f"aggregation {record.aggregate_seconds * 1e3:.1f} ms)"
        )


if __name__ == "__main__":
    main()
