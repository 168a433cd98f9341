"""SecAgg+ benchmark: fedlib's round and Flower's, side by side in one process, on the same inputs and dropouts.

    python benchmarks/bench_secagg.py [--clients 100] [--params 100000] [--neighbours 8] [--threshold 5]
                                      [--repeat 3] [--seed 0]

Ours: the whole protocol of Bell et al. (CCS'20) as fedlib runs it (fedlib.secagg.secure_aggregate): X25519 key
pairs and agreements with HKDF-SHA256, Shamir shares of two 32-byte secrets per client over GF(2^521 - 1) sealed
with AES-256-GCM, AES-256-CTR masks along a Harary graph, double masking, and the server's reconstruction; plus
the fixed-point encoding of the float updates into Z_2^32 (clip 1, resolution 2^-f, the finest f for N summands)
and the decoding of the sum. Rounds with 0 and with 10% of the clients dropping before their masked input are
timed (dropout sets are drawn until our round can complete; the share of random sets that would abort it is
printed: a client with fewer than t surviving share holders cannot be unmasked).

Flower: Flower's own SecAgg+ (``flwr.server.workflow.SecAggPlusWorkflow`` on the server,
``flwr.client.mod.secaggplus_mod`` in front of a NumPyClient whose ``fit`` returns the client's float32 update with
weight 1), without Ray: a small in-memory ``flwr.serverapp.Grid`` hands each message to the ClientApp of its node
(each node with its own Context) and returns the replies, so every step of the round is Flower's code. The grid
copies each message's content on delivery, as a transport would (the workflow sends one content object to all
nodes at setup, and the mod edits what it receives); the copies are timed apart and left out of Flower's times.
The same parameters map as follows:

- neighbours ``m`` (ours: each client masks with ``m`` graph neighbours and shares its secrets among them and
  itself, ``m + 1`` holders) -> ``num_shares = m + 1`` (Flower: each client's holders are itself and the
  ``num_shares // 2`` nodes on either side in a shuffled ring, i.e. the same Harary graph H(N, m)). Flower's ring
  has even degree, so the comparison needs an even ``m`` (default 8, 9 holders);
- threshold ``t`` (ours: shares needed to rebuild a secret, the holder's own share included) ->
  ``reconstruction_threshold = t`` (Flower: the same count among ``num_shares``), default 5 (above half of the 9
  holders, as Bell et al. take it);
- clip ``B = 1`` -> ``clipping_range = 1``; our step ``2^-f`` -> ``quantization_range = 2B * 2^f`` (Flower maps
  ``[-B, B]`` onto ``[0, quantization_range]``, so both steps are ``2^-f``; ``N * quantization_range < 2^32`` then
  holds as ``N B 2^f < 2^31`` does for us), ``modulus_range = 2^32`` (our ring);
- the same float32 updates (Flower's weight factor is 1: ``num_examples = max_weight``), and the same clients
  drop: a node of the drop set does not answer the collect-masked-vectors stage (nor, then, the unmask stage).

Our sum must equal the fixed-point sum of the survivors exactly; Flower's (its weighted mean times the number of
survivors) must be within its quantisation error of the survivors' float sum: per survivor, one step of
stochastic rounding and the rounding of ``x + B`` to float32 (at most half an ulp of ``2B``, which Flower computes
in float32 before scaling). Otherwise the script fails.

Timed, alternating ours and Flower's (ours, Flower, ours, Flower, ... ``--repeat`` times each) with BLAS pinned to
one thread: the median whole round, the clients' compute (all clients together) and the server's compute. Ours:
the clients' compute is the encoding plus their key-agreement, sharing and masking phases; the server's is the
rest of the round (its unmasking and bookkeeping, the decoding, and the in-process driver), so the split does not
flatter our server. Flower's: the clients' compute is the time inside the ClientApps; the server's is the rest of
the workflow (message copies excluded). Printed: our phase split, the ratio to a plain numpy sum of the same
float32 updates and to our SecAgg round on the complete graph (Bonawitz et al., CCS'17) with t = N/2 + 1,
measured in the same run, bytes per client, and Flower's medians with the measured ratios Flower / ours.
Without Flower (``pip install -r requirements-flower.txt``) the script says so and prints our table alone.
"""

from __future__ import annotations

import argparse
import copy
import logging
import random
import time

import numpy as np
from threadpoolctl import threadpool_limits

from fedlib.secagg import PHASES, FixedPoint, MaskingGraph, SecAggConfig, Stage, harary_graph, secure_aggregate

CLIP = 1.0
"""``B``: both protocols clip the updates to ``[-B, B]``."""

CLIENT_PHASES = ("key agreement", "sharing", "masking")
"""The phases of :data:`PHASES` that our clients spend; the server's unmasking is the fourth."""

RATES = (0.0, 0.1)
"""Shares of the clients that drop before sending their masked input."""


def one_round(updates: np.ndarray, config: SecAggConfig, dropped: np.ndarray, seed: int):
    """Encode, aggregate securely, decode: returns (timings, result, decoded sum).

    ``timings`` holds the whole round's seconds and the clients' and the server's compute: the clients' is the
    encoding plus their phases, the server's the rest.
    """
    fixed = FixedPoint.for_summands(len(updates), clip=CLIP)
    start = time.perf_counter()
    words = fixed.encode(updates)
    encoded = time.perf_counter()
    result = secure_aggregate(words, config, dropouts={Stage.MASKED_INPUT: dropped}, random_state=seed)
    total = fixed.decode_sum(result.total)
    seconds = time.perf_counter() - start
    clients = (encoded - start) + sum(result.seconds[p] for p in CLIENT_PHASES)
    return {"round": seconds, "server": seconds - clients, "clients": clients}, result, total


def completing_dropouts(config: SecAggConfig, n_dropped: int, rng: np.random.Generator, trials: int = 2000):
    """A dropout set with which the round completes, and the share of random sets that would abort it."""
    n = config.n_clients
    patterns = np.zeros((trials, n), dtype=bool)
    picks = np.argsort(rng.random((trials, n)), axis=1)[:, :n_dropped]
    np.put_along_axis(patterns, picks, True, axis=1)
    completes = config.completes_without(patterns)
    if not completes.any():
        raise RuntimeError(f"no random set of {n_dropped} dropouts lets the round complete")
    return np.flatnonzero(patterns[np.argmax(completes)]), 1.0 - completes.mean()


def flower_unavailable(neighbours: int) -> str | None:
    """Why Flower's SecAgg+ cannot run beside ours here, or None if it can."""
    try:
        import flwr  # noqa: F401
    except ImportError:
        return "Flower is not installed (pip install -r requirements-flower.txt): no side-by-side timing"
    if neighbours % 2:
        return (
            f"--neighbours {neighbours} is odd: Flower's SecAgg+ ring has even degree (num_shares = neighbours + 1 "
            "must be odd), so it cannot run the same graph; no side-by-side timing"
        )
    return None


class FlowerSecAggPlus:
    """Rounds of Flower's own SecAgg+ among ``n`` in-process nodes; node ``i + 1`` holds ``updates[i]``.

    Parameters
    ----------
    updates : ndarray of float32, shape (n, d)
        The clients' updates.
    neighbours, threshold : int
        Our ``m`` and ``t`` (``num_shares = m + 1``, ``reconstruction_threshold = t``).
    frac_bits : int
        Our ``f``: Flower's ``quantization_range`` is ``2B·2^f``.
    """

    def __init__(self, updates: np.ndarray, neighbours: int, threshold: int, frac_bits: int) -> None:
        import flwr
        from flwr.server.workflow import SecAggPlusWorkflow

        self.version = flwr.__version__
        self.updates = updates
        self._grid_class, self._strategy_class = _flower_grid_class(), _flower_strategy_class()
        self.workflow = SecAggPlusWorkflow(
            num_shares=neighbours + 1,
            reconstruction_threshold=threshold,
            max_weight=1.0,
            clipping_range=CLIP,
            quantization_range=round(2 * CLIP * 2**frac_bits),
            modulus_range=2**32,
        )

    def run(self, dropped: np.ndarray, seed: int) -> tuple[dict[str, float], np.ndarray]:
        """One round in which the clients ``dropped`` do not send their masked vectors.

        Returns the timings (whole round, server, clients, and the grid's message copies, which the others leave
        out) and the float sum of the survivors' updates as Flower unmasked it (its mean times their number).
        """
        from flwr.app import ArrayRecord, ConfigRecord, Context, RecordDict
        from flwr.common import parameters_to_ndarrays
        from flwr.common.constant import SUPERLINK_NODE_ID
        from flwr.server import ServerConfig, SimpleClientManager
        from flwr.server.compat.grid_client_proxy import GridClientProxy
        from flwr.server.compat.legacy_context import LegacyContext
        from flwr.server.workflow.constant import MAIN_CONFIGS_RECORD, MAIN_PARAMS_RECORD, Key
        from flwr.supercore.task_identity import TaskIdentity

        n = len(self.updates)
        grid = self._grid_class(self.updates, silent={int(i) + 1 for i in dropped})
        strategy = self._strategy_class()
        manager = SimpleClientManager()
        for node in grid.get_node_ids():
            manager.register(GridClientProxy(node_id=node, grid=grid, run_id=grid.run_id))
        server = Context(run_id=grid.run_id, node_id=0, node_config={}, state=RecordDict(), run_config={})
        context = LegacyContext(server, config=ServerConfig(num_rounds=1), strategy=strategy, client_manager=manager)
        context.state.config_records[MAIN_CONFIGS_RECORD] = ConfigRecord({Key.CURRENT_ROUND: 1})
        context.state.array_records[MAIN_PARAMS_RECORD] = ArrayRecord()
        random.seed(seed)  # Flower shuffles its ring with the random module (its stochastic rounding uses numpy's)
        flwr_logger = logging.getLogger("flwr")
        level = flwr_logger.level
        flwr_logger.setLevel(logging.WARNING)  # the workflow logs every stage at INFO
        # The server's messages take their sender from the process's task identity, as in Flower's ServerApp.
        identity = {key: getattr(TaskIdentity, f"_{key}") for key in ("task_id", "run_id", "node_id")}
        TaskIdentity.task_id, TaskIdentity.run_id, TaskIdentity.node_id = 1, grid.run_id, SUPERLINK_NODE_ID
        try:
            start = time.perf_counter()
            self.workflow(grid, context)
            seconds = time.perf_counter() - start
        finally:
            flwr_logger.setLevel(level)
            for key, value in identity.items():
                setattr(TaskIdentity, key, value)
        if strategy.parameters is None:
            raise RuntimeError(
                f"Flower's SecAgg+ round halted (too few shares or neighbours with clients {sorted(dropped.tolist())} "
                "dropped): no sum to compare"
            )
        (mean,) = parameters_to_ndarrays(strategy.parameters)
        survivors = n - len(dropped)
        compute = seconds - grid.copy_seconds
        timings = {
            "round": compute,
            "server": compute - grid.client_seconds,
            "clients": grid.client_seconds,
            "copies": grid.copy_seconds,
        }
        return timings, mean * survivors


def _flower_grid_class():
    """The in-memory Grid (defined on first use: Flower is optional)."""
    from flwr.app import Context, Message, RecordDict
    from flwr.client import NumPyClient
    from flwr.client.mod import secaggplus_mod
    from flwr.clientapp import ClientApp
    from flwr.common.secure_aggregation.secaggplus_constants import RECORD_KEY_CONFIGS
    from flwr.common.secure_aggregation.secaggplus_constants import Key as SecAggKey
    from flwr.common.secure_aggregation.secaggplus_constants import Stage as SecAggStage
    from flwr.serverapp import Grid

    class UpdateClient(NumPyClient):
        """Returns its fixed update with weight 1 (``num_examples = max_weight``)."""

        def __init__(self, update: np.ndarray) -> None:
            self.update = update

        def fit(self, parameters, config):
            return [self.update], 1, {}

    class LocalGrid(Grid):
        """Hands each message to its node's ClientApp in this process; silent nodes skip the masked-vector stage."""

        run_id = 1

        def __init__(self, updates: np.ndarray, silent: set[int]) -> None:
            self.app = ClientApp(
                client_fn=lambda context: UpdateClient(updates[context.node_id - 1]).to_client(),
                mods=[secaggplus_mod],
            )
            self.nodes = {
                i + 1: Context(run_id=self.run_id, node_id=i + 1, node_config={}, state=RecordDict(), run_config={})
                for i in range(len(updates))
            }
            self.silent = silent
            self.client_seconds = 0.0
            self.copy_seconds = 0.0
            self._sent = 0

        def set_run(self, run) -> None:
            raise NotImplementedError("the benchmark's grid has one fixed run")

        @property
        def run(self):
            raise NotImplementedError("the benchmark's grid has one fixed run")

        def create_message(self, content, message_type, dst_node_id, group_id, ttl=None):
            return Message(content, dst_node_id, message_type, ttl=ttl, group_id=group_id)

        def get_node_ids(self):
            return list(self.nodes)

        def push_messages(self, messages):
            raise NotImplementedError("the benchmark's grid only delivers through send_and_receive")

        def pull_messages(self, message_ids):
            raise NotImplementedError("the benchmark's grid only delivers through send_and_receive")

        def send_and_receive(self, messages, *, timeout=None):
            replies = []
            for message in messages:
                node = message.metadata.dst_node_id
                stage = message.content.config_records[RECORD_KEY_CONFIGS].get(SecAggKey.STAGE)
                if node in self.silent and stage == SecAggStage.COLLECT_MASKED_VECTORS:
                    continue  # dropped before its masked input: no reply, as after a timeout
                start = time.perf_counter()
                self._sent += 1
                message.metadata.__dict__["_message_id"] = str(self._sent)
                delivered = Message(content=copy.deepcopy(message.content), metadata=copy.copy(message.metadata))
                copied = time.perf_counter()
                replies.append(self.app(delivered, self.nodes[node]))
                self.client_seconds += time.perf_counter() - copied
                self.copy_seconds += copied - start
            return replies

    return LocalGrid


def _flower_strategy_class():
    """A Strategy that samples every node and keeps the workflow's unmasked result (Flower is optional)."""
    from flwr.common import FitIns, Parameters
    from flwr.server.strategy import Strategy

    class KeepResult(Strategy):
        """Every node trains, with no global model sent; ``aggregate_fit`` keeps what SecAgg+ unmasked."""

        def __init__(self) -> None:
            self.parameters = None

        def initialize_parameters(self, client_manager):
            return None

        def configure_fit(self, server_round, parameters, client_manager):
            empty = Parameters(tensors=[], tensor_type="numpy.ndarray")
            return [(proxy, FitIns(empty, {})) for proxy in client_manager.all().values()]

        def aggregate_fit(self, server_round, results, failures):
            if failures:
                raise RuntimeError(f"Flower's SecAgg+ round had failures: {failures}")
            # SecAggPlusWorkflow put the unmasked weighted mean into every result.
            self.parameters = results[0][1].parameters
            return self.parameters, {}

        def configure_evaluate(self, server_round, parameters, client_manager):
            return []

        def aggregate_evaluate(self, server_round, results, failures):
            return None, {}

        def evaluate(self, server_round, parameters):
            return None

    return KeepResult


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its tables (``argv``: the command-line arguments, default ``sys.argv``)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--params", type=int, default=100_000)
    parser.add_argument("--neighbours", type=int, default=8)
    parser.add_argument("--threshold", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    n, d = args.clients, args.params
    updates = rng.normal(scale=0.05, size=(n, d)).astype(np.float32)
    plus = SecAggConfig(harary_graph(n, args.neighbours, random_state=rng), threshold=args.threshold, vector_length=d)
    complete = SecAggConfig(MaskingGraph.complete(n), threshold=n // 2 + 1, vector_length=d)
    fixed = FixedPoint.for_summands(n, CLIP)
    missing = flower_unavailable(args.neighbours)
    flower = None if missing else FlowerSecAggPlus(updates, args.neighbours, args.threshold, fixed.frac_bits)

    with threadpool_limits(1):
        start = time.perf_counter()
        for _ in range(args.repeat):
            updates.sum(axis=0, dtype=np.float32)
        plain = (time.perf_counter() - start) / args.repeat
        complete_timings, _, _ = one_round(updates, complete, np.array([], dtype=np.int64), args.seed)

        print(
            f"SecAgg+ round: N={n} clients, d={d} float32 parameters, {args.neighbours} neighbours "
            f"({args.neighbours + 1} share holders), t={args.threshold}, clip {CLIP:g}, step 2^-{fixed.frac_bits}"
        )
        header = f"{'dropouts':>9s} {'s/round':>8s} " + " ".join(f"{p:>13s}" for p in PHASES)
        print(header + f" {'vs numpy sum':>13s} {'vs SecAgg':>10s} {'KiB up/client':>13s} {'abort rate':>11s}")
        compared = []
        for rate in RATES:
            dropped, abort_rate = completing_dropouts(plus, round(rate * n), rng)
            keep = np.setdiff1d(np.arange(n), dropped)
            ours, theirs = [], []
            for r in range(args.repeat):  # alternating: ours, Flower's, ours, Flower's, ...
                ours.append(one_round(updates, plus, dropped, args.seed + r))
                if flower is not None:
                    theirs.append(flower.run(dropped, args.seed + r))
            _, result, _ = ours[0]
            expected = fixed.encode(updates[keep]).sum(axis=0, dtype=np.uint32)
            for _, result_r, total_r in ours:
                exact = np.array_equal(result_r.total, expected) and np.allclose(
                    total_r, updates[keep].sum(axis=0, dtype=np.float64), rtol=0, atol=len(keep) / fixed.scale
                )
                if not exact:
                    raise AssertionError("our secure sum differs from the plain sum of the survivors")
            plain_sum = updates[keep].sum(axis=0, dtype=np.float64)
            # Per survivor: one step of stochastic rounding, and the float32 rounding of x + B (half an ulp of 2B).
            bound = len(keep) * (1 / fixed.scale + float(np.spacing(np.float32(2 * CLIP))) / 2)
            error = max((float(np.max(np.abs(total - plain_sum))) for _, total in theirs), default=0.0)
            if error > bound:
                raise AssertionError(
                    f"Flower's secure sum differs from the plain sum of the survivors by {error:.3g}, beyond its "
                    f"quantisation error {bound:.3g}"
                )
            seconds = float(np.median([t["round"] for t, _, _ in ours]))
            split = " ".join(f"{result.seconds[p]:12.3f}s" for p in PHASES)
            up = result.bytes_sent[keep].mean() / 1024
            print(
                f"{rate:9.0%} {seconds:7.3f}s {split} {seconds / plain:12.0f}x "
                f"{complete_timings['round'] / seconds:9.1f}x {up:13.1f} {abort_rate:10.1%}"
            )
            if theirs:
                compared.append((rate, [t for t, _, _ in ours], [t for t, _ in theirs], error, bound))
        print(
            f"\nplain numpy sum of the float32 updates: {plain * 1e3:.2f} ms; "
            f"complete-graph SecAgg round (t={complete.threshold}): {complete_timings['round']:.2f} s"
        )

    if flower is None:
        print(missing)
        return
    parts = ("round", "server", "clients")
    print(
        f"\nFlower {flower.version} SecAgg+ (num_shares={args.neighbours + 1}, reconstruction_threshold="
        f"{args.threshold}, clipping_range={CLIP:g}, quantization_range=2^{fixed.frac_bits + 1}), same updates and "
        f"dropouts, alternating with ours; medians of {args.repeat}, seconds of compute"
    )
    print(
        f"{'dropouts':>9s} | {'ours':^26s} | {'Flower':^26s} | {'Flower / ours':^26s} | Flower's sum checked\n"
        f"{'':9s} | " + " | ".join(" ".join(f"{p:>8s}" for p in parts) for _ in range(3)) + " |"
    )
    copies = []
    for rate, ours_t, theirs_t, error, bound in compared:
        ours_m = {p: float(np.median([t[p] for t in ours_t])) for p in parts}
        theirs_m = {p: float(np.median([t[p] for t in theirs_t])) for p in parts}
        copies.extend(t["copies"] for t in theirs_t)
        print(
            f"{rate:9.0%} | "
            + " ".join(f"{ours_m[p]:7.3f}s" for p in parts)
            + " | "
            + " ".join(f"{theirs_m[p]:7.3f}s" for p in parts)
            + " | "
            + " ".join(f"{theirs_m[p] / ours_m[p]:7.1f}x" for p in parts)
            + f" | max |error| {error:.2g} <= {bound:.2g}"
        )
    print(
        "ours: clients = encoding + key agreement + sharing + masking, server = the rest of the round; Flower: "
        "clients = inside the ClientApps, server = the rest of the workflow, without the in-memory grid's message "
        f"copies ({np.median(copies) * 1e3:.1f} ms per round)"
    )


if __name__ == "__main__":
    main()
