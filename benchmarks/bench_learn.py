"""Local-training benchmark: one FedAvg round of local SGD for many clients, client loop against torch.func vmap.

    python benchmarks/bench_learn.py [--repeat 3] [--seed 0] [--quick] [--fit]

Every client runs one epoch of SGD from the same global parameters on its own examples (random values: the
arithmetic does not depend on them), as in one round of Liu et al.'s clustered FedAvg on an MNIST split
(fedlib.learn.train_clients). For each model and client regime the table prints the median seconds of a
round with the client loop (method="loop"), the speed-up of the vectorised path (method="vmap",
vmap(grad(loss)) over a stack of client parameter vectors) over it, both from the same interleaved calls
(> 1: vmap faster), the speed-up fedlib.learn.choose_method's CPU cost model predicts, the path
method="auto" picks, and whether that is the faster path ("ok"; "tie" when the two are within 5%, where
either is fine; "MISS" otherwise). The last lines count the rows auto got right, and time a whole FedAvg round
of the book's default configuration (FederatedTrainer.step with the plain sum and an evaluation on 2,000
images), the number the book's run-time budget rests on.

Rows. The five models of the book on 28x28 images (cnn_small, mlp, softmax, lenet5 with max pooling, and
cnn_paper, FedAvg's CNN, in one regime only: seconds per round on a CPU) in five regimes: the book's default
(200 clients x 40 images, batches of 32 and of 10), fewer and larger clients (50 x 160, 10 x 800), and
ragged clients (sizes 10..70, mean 40, as a Dirichlet split gives). These 21 rows ("fit") were used, with the
calibration grid below, to choose the cost model's terms and to fit its constants. The other rows ("held-out")
only test it: other client counts, sizes, batch sizes and padding (log-normal sizes), the character model
(char_mlp: an embedding), a wider MLP on 600 features with 100 classes (Purchase-like), softmax regression on
the same, and cnn_small with FEMNIST's 62 classes.

--fit times the calibration grid (each make_model model, and the MLP with 512 hidden units, without which the
linear layers' multiply-adds and their activations cannot be told apart; 1, 8, 64 and 512 clients of 1 and of 6
batches each; batch sizes 1, 8 and 64; runs over a size cap skipped; both paths interleaved) and the 21 fit rows,
and fits the constants of choose_method's cost model (fedlib.learn.PATH_COSTS), weighting
the ratio of the two paths over their common level (see fit); it prints them next to the ones in fedlib, with
the fit's errors. It takes about 7 minutes.

torch runs on one thread, as in the simulations (torch.set_num_threads(1)); on a 2-core machine shared with
other jobs the absolute times vary by tens of percent, the ratios less (calls interleaved), but ratios within
10-20% of 1 may change sides from run to run.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import time
from collections.abc import Callable
from functools import partial

import numpy as np
import torch
from fedbook.bench import interleaved_medians
from scipy.optimize import least_squares, nnls

from fedlib.learn import (
    PATH_COSTS,
    FederatedTrainer,
    LocalSGD,
    PathCost,
    choose_method,
    get_flat,
    make_model,
    n_parameters,
    path_seconds,
    train_clients,
)

#: A ratio within this factor of 1 is a tie: either path is fine.
TIE = 1.05

#: Models by name: (make_model arguments, kind of examples).
MODELS = {
    "cnn_small": (("cnn_small",), {}, "image"),
    "mlp": (("mlp",), {}, "image"),
    "softmax": (("softmax",), {}, "image"),
    "lenet5": (("lenet5",), {}, "image"),
    "cnn_paper": (("cnn_paper",), {}, "image"),
    "char_mlp": (("char_mlp", 65), {"input_shape": (8,), "hidden": 128, "embed": 16}, "text"),
    "mlp600h256": (("mlp", 100), {"input_shape": (600,), "hidden": 256}, "features"),
    "softmax600": (("softmax", 100), {"input_shape": (600,)}, "features"),
    "cnn_small62": (("cnn_small", 62), {}, "image"),
    "mlp512": (("mlp",), {"hidden": 512}, "image"),
}


def build(name: str, seed: int) -> torch.nn.Module:
    """The model of a row."""
    args, kwargs, _ = MODELS[name]
    return make_model(*args, random_state=seed, **kwargs)


def lognormal_sizes(rng: np.random.Generator, n: int, mean: float, sigma: float) -> list[int]:
    """``n`` client sizes with a log-normal spread (``sigma``) around ``mean``: a long tail of large clients."""
    s = rng.lognormal(0.0, sigma, n)
    return np.maximum(1, np.round(s / s.mean() * mean)).astype(int).tolist()


def regimes(seed: int) -> dict[str, tuple[list[int], int]]:
    """Client sizes and batch size of each regime (the ragged ones drawn from their own streams of ``seed``)."""
    return {
        "200 x 40, B=32": ([40] * 200, 32),
        "200 x 40, B=10": ([40] * 200, 10),
        "50 x 160, B=32": ([160] * 50, 32),
        "10 x 800, B=32": ([800] * 10, 32),
        "200 ragged, B=32": (np.random.default_rng([seed, 1]).integers(10, 71, size=200).tolist(), 32),
        "20 x 40, B=32": ([40] * 20, 32),
        "500 x 20, B=16": ([20] * 500, 16),
        "1000 x 10, B=10": ([10] * 1000, 10),
        "100 x 40, B=4": ([40] * 100, 4),
        "100 x 100, B=64": ([100] * 100, 64),
        "20 x 300, B=16": ([300] * 20, 16),
        "30 x 64, B=64": ([64] * 30, 64),
        "5 x 2000, B=32": ([2000] * 5, 32),
        "50 lognormal, B=10": (lognormal_sizes(np.random.default_rng([seed, 2]), 50, 100, 0.7), 10),
        "200 lognormal, B=32": (lognormal_sizes(np.random.default_rng([seed, 3]), 200, 40, 1.0), 32),
    }


FIT_REGIMES = ["200 x 40, B=32", "200 x 40, B=10", "50 x 160, B=32", "10 x 800, B=32", "200 ragged, B=32"]

#: The rows: model -> regimes (fit rows first). Held-out rows were chosen to test the rule where it is
#: least obvious, at a cost that keeps the whole run near 5 minutes on a 2-core machine.
ROWS = {
    "cnn_small": [
        *FIT_REGIMES,
        "100 x 40, B=4",
        "100 x 100, B=64",
        "20 x 300, B=16",
        "5 x 2000, B=32",
        "50 lognormal, B=10",
    ],
    "mlp": [*FIT_REGIMES, "1000 x 10, B=10", "100 x 40, B=4", "30 x 64, B=64", "5 x 2000, B=32", "50 lognormal, B=10"],
    "softmax": [
        *FIT_REGIMES,
        "500 x 20, B=16",
        "100 x 40, B=4",
        "5 x 2000, B=32",
        "50 lognormal, B=10",
        "200 lognormal, B=32",
    ],
    "lenet5": [*FIT_REGIMES, "100 x 40, B=4", "30 x 64, B=64"],
    "cnn_paper": ["20 x 40, B=32"],
    "char_mlp": ["200 x 40, B=32", "10 x 800, B=32", "200 ragged, B=32", "100 x 40, B=4", "5 x 2000, B=32"],
    "mlp600h256": ["200 x 40, B=32", "50 x 160, B=32", "1000 x 10, B=10", "100 x 40, B=4", "20 x 300, B=16"],
    "softmax600": ["200 x 40, B=32", "10 x 800, B=32", "100 x 100, B=64", "1000 x 10, B=10"],
    "cnn_small62": ["200 x 40, B=32", "100 x 100, B=64", "20 x 300, B=16"],
}


def is_fit_row(name: str, regime: str) -> bool:
    """Whether a row is one of the 21 the cost model was fitted to (the others are held out)."""
    return name == "cnn_paper" or (name in ("cnn_small", "mlp", "softmax", "lenet5") and regime in FIT_REGIMES)


def data(kind: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """``n`` random examples of a kind (28x28 images, 600 features, windows of 8 character codes)."""
    if kind == "image":
        return rng.random((n, 1, 28, 28), dtype=np.float32), 10
    if kind == "features":
        return rng.random((n, 600), dtype=np.float32), 100
    return rng.integers(0, 65, size=(n, 8)).astype(np.float32), 65


def runner(model, X, y, sizes, batch_size: int) -> Callable[[str], Callable[[], object]]:
    """``method -> function of no argument`` training clients of these sizes for one epoch."""
    bounds = np.cumsum([0, *sizes])
    clients = [np.arange(lo, hi) % len(X) for lo, hi in itertools.pairwise(bounds)]
    start = get_flat(model)
    config = LocalSGD(batch_size=batch_size)
    fixed = {"config": config, "random_state": 0}
    return lambda method: partial(train_clients, model, start, X, y, clients, method=method, **fixed)


def rows(args: argparse.Namespace, *, fit_only: bool = False):
    """``(name, model, X, regime, sizes, batch, seconds)`` of each row, ``seconds`` of both paths, interleaved."""
    rng = np.random.default_rng(args.seed)
    arrays = {kind: data(kind, 8000, rng) for kind in ("image", "features", "text")}
    cases = regimes(args.seed)
    for name, labels in ROWS.items():
        model = build(name, args.seed)
        X, n_classes = arrays[MODELS[name][2]]
        y = np.random.default_rng(args.seed).integers(0, n_classes, size=len(X))
        for label in labels:
            if (args.quick and label != "200 x 40, B=32" and name != "cnn_paper") or (
                fit_only and not is_fit_row(name, label)
            ):
                continue
            sizes, batch = cases[label]
            run = runner(model, X, y, sizes, batch)
            seconds = interleaved_medians({"loop": run("loop"), "vmap": run("vmap")}, args.repeat)
            yield name, model, X, label, sizes, batch, seconds


def table(args: argparse.Namespace) -> None:
    """The rows: measured and predicted ratios, auto's pick, and the count of right picks."""
    print("one round of local training (one epoch, SGD), one torch thread")
    print(
        f"{'model':11s} {'params':>8s} {'regime':20s} {'set':8s} {'loop s/round':>12s} {'vmap vs loop':>12s} "
        f"{'predicted':>9s} {'auto':>5s}  faster?"
    )
    tally = {"fit": [0, 0, 0], "held-out": [0, 0, 0]}  # rows, right (tie included), ties
    for name, model, X, label, sizes, batch, seconds in rows(args):
        d = n_parameters(model)
        ratio = seconds["loop"] / seconds["vmap"]
        predicted = path_seconds(sizes, model, batch, input_shape=X.shape[1:])
        loop_s, vmap_s = predicted["loop"], predicted["vmap"]
        auto = choose_method(sizes, model, batch, input_shape=X.shape[1:])
        faster = "vmap" if ratio > 1 else "loop"
        tie = max(ratio, 1 / ratio) < TIE
        verdict = "tie" if tie else ("ok" if auto == faster else "MISS")
        part = "fit" if is_fit_row(name, label) else "held-out"
        tally[part][0] += 1
        tally[part][1] += verdict != "MISS"
        tally[part][2] += tie
        print(
            f"{name:11s} {d:8d} {label:20s} {part:8s} {seconds['loop']:11.3f}s {ratio:11.2f}x "
            f"{loop_s / vmap_s:8.2f}x {auto:>5s}  {verdict}",
            flush=True,
        )
    total = sum(t[0] for t in tally.values())
    right = sum(t[1] for t in tally.values())
    ties = sum(t[2] for t in tally.values())
    print(f"\nauto picked the faster path in {right} of {total} rows ({ties} rows within 5%, where either is fine)")
    for part, (n, ok, k) in tally.items():
        if n:
            print(f"  {part}: {ok} of {n} ({k} within 5%)")


def fedavg_rounds(args: argparse.Namespace) -> None:
    """A whole FedAvg round of the book's default configuration, for cnn_small and softmax."""
    rng = np.random.default_rng(args.seed)
    X = rng.random((8000, 1, 28, 28), dtype=np.float32)
    y = rng.integers(0, 10, size=8000)
    clients = np.array_split(np.arange(8000), 200)
    X_test, y_test = rng.random((2000, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, size=2000)
    for name in ("cnn_small", "softmax"):
        trainer = FederatedTrainer(name, local=LocalSGD(lr=0.05, batch_size=32), random_state=args.seed).fit(
            X, y, parts=clients, test_data=(X_test, y_test), n_rounds=0
        )
        seconds = interleaved_medians({"step": trainer.step}, args.repeat)["step"]
        record = trainer.history_[-1]
        method = choose_method([40] * 200, build(name, args.seed), 32)
        print(
            f"\nFedAvg round, {name}, 200 clients x 40 images, B=32, plain sum, test on 2,000 images: {seconds:.3f} s "
            f"(training {record.train_seconds:.3f} s with {method}, "
            f"aggregation {record.aggregate_seconds * 1e3:.1f} ms)"
        )


def unit_costs() -> dict[str, PathCost]:
    """One PathCost per constant, 1 for it and 0 for the others: path_seconds then gives that term's work."""
    fields = [f.name for f in dataclasses.fields(PathCost)]
    return {f: PathCost(**{g: float(g == f) for g in fields}) for f in fields}


def term_work(model, input_shape, sizes, batch: int, method: str) -> dict[str, float]:
    """The work of each term of the cost model for one call of one path (path_seconds with unit costs)."""
    return {f: path_seconds(sizes, model, batch, input_shape=input_shape, costs={"loop": unit, "vmap": unit})[method]
            for f, unit in unit_costs().items()}  # fmt: skip


def calibration_cap(model, input_shape) -> int:
    """Most examples per calibration run of a model: fewer for models that cost more per example."""
    per_example = term_work(model, input_shape, [1], 1, "loop")
    macs = per_example["mac_linear"] + per_example["mac_conv"] + per_example["embedding"]
    return max(768, int(2**17 / (1 + macs / 1e4)))


#: Weight of the common level of the two paths' errors in the fit, against 1 for their ratio.
COMMON_WEIGHT = 0.3


def fit(args: argparse.Namespace) -> None:
    """Time the calibration grid and the fit rows, fit the cost model's constants, print them and the fit's errors.

    With ``e = log(predicted / measured)`` of each path, the fit minimises, over non-negative
    constants, the sum over the timings of ``(e_loop - e_vmap)**2 + (COMMON_WEIGHT * (e_loop + e_vmap) / 2)**2``:
    the ratio of the two paths, which the choice depends on and which interleaved calls measure
    well, counts more than their common level, which the load of a shared machine moves. It starts
    from non-negative least squares on the relative errors of the seconds themselves.
    """
    rng = np.random.default_rng(args.seed)
    arrays = {kind: data(kind, 20000, rng) for kind in ("image", "text")}
    fields = [f.name for f in dataclasses.fields(PathCost)]
    columns = [(f, "loop") for f in fields if f != "mmap"] + [(f, "vmap") for f in fields if f != "mmap"]
    columns.append(("mmap", "both"))  # one constant for both paths: page faults cost the same
    design: dict[str, list[list[float]]] = {"loop": [], "vmap": []}
    times: dict[str, list[float]] = {"loop": [], "vmap": []}
    labels = []
    print("calibration grid: median seconds of one epoch, both paths interleaved")
    for name in ("softmax", "mlp", "mlp512", "char_mlp", "cnn_small", "lenet5", "cnn_paper"):
        model = build(name, args.seed)
        X, n_classes = arrays[MODELS[name][2]]
        y = np.random.default_rng(args.seed).integers(0, n_classes, size=len(X))
        cap = calibration_cap(model, tuple(X.shape[1:]))
        for n, batch, steps in itertools.product((1, 8, 64, 512), (1, 8, 64), (1, 6)):
            sizes = np.full(n, steps * batch, dtype=np.int64)
            if sizes.sum() > cap:
                continue
            run = runner(model, X, y, sizes, batch)
            seconds = interleaved_medians({"loop": run("loop"), "vmap": run("vmap")}, args.repeat)
            print(
                f"  {name:10s} {n:4d} clients x {steps * batch:3d}, B={batch:2d}: "
                f"loop {seconds['loop']:.4f} s, vmap {seconds['vmap']:.4f} s",
                flush=True,
            )
            labels.append(f"{name} {n} x {steps * batch}, B={batch}")
            for method in ("loop", "vmap"):
                unit_seconds = term_work(model, tuple(X.shape[1:]), sizes, batch, method)
                design[method].append([unit_seconds[f] if m in (method, "both") else 0.0 for f, m in columns])
                times[method].append(seconds[method])
    print("the 21 fit rows of the table: median seconds of one epoch, both paths interleaved")
    for name, model, X, label, sizes, batch, seconds in rows(args, fit_only=True):
        print(f"  {name:10s} {label:20s}: loop {seconds['loop']:.4f} s, vmap {seconds['vmap']:.4f} s", flush=True)
        labels.append(f"{name} {label}")
        for method in ("loop", "vmap"):
            unit_seconds = term_work(model, tuple(X.shape[1:]), sizes, batch, method)
            design[method].append([unit_seconds[f] if m in (method, "both") else 0.0 for f, m in columns])
            times[method].append(seconds[method])
    A_loop, A_vmap = np.array(design["loop"]), np.array(design["vmap"])
    t_loop, t_vmap = np.array(times["loop"]), np.array(times["vmap"])
    scale = np.maximum(A_loop.max(axis=0), A_vmap.max(axis=0))
    scale[scale == 0] = 1.0

    def errors(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.log(A_loop @ x / t_loop), np.log(A_vmap @ x / t_vmap)

    def residuals(x: np.ndarray) -> np.ndarray:
        e_loop, e_vmap = errors(x / scale)
        return np.concatenate([e_loop - e_vmap, COMMON_WEIGHT * (e_loop + e_vmap) / 2])

    A, t = np.vstack([A_loop, A_vmap]), np.concatenate([t_loop, t_vmap])
    start, _ = nnls(A / scale / t[:, None], np.ones_like(t))
    coef = least_squares(residuals, np.maximum(start, 1e-6), bounds=(0.0, np.inf)).x / scale
    fitted: dict[str, dict[str, float]] = {"loop": {}, "vmap": {}}
    for (f, m), c in zip(columns, coef, strict=True):
        for method in ("loop", "vmap") if m == "both" else (m,):
            fitted[method][f] = float(c)
    current = PATH_COSTS
    current_coef = np.array([getattr(current["loop" if m == "both" else m], f) for f, m in columns])
    print(f"\n{len(labels)} timings; rms of log(predicted / measured) of the vmap/loop ratio, and of the seconds:")
    for label, x in (("fitted", coef), ("fedlib's", current_coef)):
        e_loop, e_vmap = errors(x)
        ratio, level = np.sqrt(np.mean((e_loop - e_vmap) ** 2)), np.sqrt(np.mean(np.r_[e_loop, e_vmap] ** 2))
        print(f"  {label:9s} constants: ratio {ratio:.3f}, seconds {level:.3f}")
    print(f"{'constant':12s} {'loop':>9s} {'vmap':>9s}   (fedlib: loop, vmap)")
    for f in fields:
        print(
            f"{f:12s} {fitted['loop'][f]:9.2g} {fitted['vmap'][f]:9.2g}   "
            f"({getattr(current['loop'], f):.2g}, {getattr(current['vmap'], f):.2g})"
        )
    e_loop, e_vmap = errors(coef)
    print("largest errors of the predicted ratio (predicted / measured speed-up of vmap):")
    for i in np.argsort(-np.abs(e_loop - e_vmap))[:8]:
        print(f"  {labels[i]}: {np.exp(e_loop[i] - e_vmap[i]):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="only the book's default regime")
    parser.add_argument("--fit", action="store_true", help="fit choose_method's constants on the calibration grid")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.fit:
        fit(args)
        return
    began = time.perf_counter()
    table(args)
    fedavg_rounds(args)
    print(f"\n(benchmark took {math.ceil(time.perf_counter() - began)} s)")


if __name__ == "__main__":
    main()
