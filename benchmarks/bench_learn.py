"""Local training benchmark: one FedAvg round of local SGD for many clients, client loop against torch.func vmap.

    python benchmarks/bench_learn.py [--clients 200] [--per-client 40] [--repeat 3] [--seed 0]

Every client holds ``--per-client`` 28x28 images (random pixels: the arithmetic does not depend on them) and
runs one epoch of SGD with batches of 32 from the same global parameters, as in one round of Liu et al.'s
clustered FedAvg on the MNIST split. Printed per model: seconds per round with the default client loop
(fedlib.learn.train_clients) and the speed-up of ``vectorise=True`` (vmap(grad(loss)) over clients) over it,
measured in the same run (> 1: vmap faster). torch runs on one thread, as in the simulations.
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import torch

from fedlib.bench import speed_ratios
from fedlib.learn import MODELS, get_flat, make_model, n_parameters, train_clients


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--per-client", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(args.seed)
    X = torch.rand(args.clients, args.per_client, 1, 28, 28, generator=generator)
    Y = torch.randint(0, 10, (args.clients, args.per_client), generator=generator)
    print(f"{args.clients} clients x {args.per_client} images, one epoch, batch 32, one torch thread")
    print(f"{'model':10s} {'parameters':>11s} {'loop s/round':>13s} {'vmap vs loop':>13s}")
    for name in MODELS:
        model = make_model(name, seed=args.seed)
        if name == "cnn_paper" and args.clients * args.per_client > 2000:
            continue  # minutes per round on a CPU: the reason the book's default uses cnn_small
        start = get_flat(model)
        run = partial(train_clients, model, start, X, Y, random_state=args.seed)
        begin = time.perf_counter()
        for _ in range(args.repeat):
            run()
        loop_seconds = (time.perf_counter() - begin) / args.repeat
        ratios = speed_ratios({"loop": run, "vmap": partial(run, vectorise=True)}, reference="loop", repeat=args.repeat)
        print(f"{name:10s} {n_parameters(model):11d} {loop_seconds:12.3f}s {ratios['vmap']:12.2f}x")


if __name__ == "__main__":
    main()
