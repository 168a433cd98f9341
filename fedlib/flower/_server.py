"""The nodes of a Flower run as a :class:`fedlib.learn.Federation`: fedlib's server logic inside a ``ServerApp``.

A fedlib trainer fitted on a :class:`FlowerFederation` keeps the whole server side (participants,
simulated dropouts, FedAvg weights, the aggregator's public parameters, clusters, unlearning) and
sends each round's client half to the nodes through Flower's ``Grid``: one ``TRAIN`` message per
participant, then either the updates come back in the clear (:class:`fedlib.learn.PlainSum`) or
the nodes run a SecAgg(+) round as fedlib's parties (:class:`fedlib.secagg.SecureAggregator`),
four message exchanges routed by the server's :class:`fedlib.secagg.SecAggServer`, which sees
masked inputs only.

Why fedlib's SecAgg+ and not Flower's ``SecAggPlusWorkflow``: Flower's workflow belongs to its
legacy strategy API (``FitIns``/``FitRes`` of one ``DefaultWorkflow`` over the round's sampled
nodes) and quantises updates stochastically with its own clipping range; Liu et al.'s clusters
need one round per cluster with the cluster's fixed threshold ``t = ⌈ξ k_i⌉``, and the same
fixed-point encoding as the in-process simulator is what makes a Flower run give the simulator's
model bit for bit (:mod:`fedlib.flower`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import replace

import numpy as np
from flwr.app import ConfigRecord, Message, RecordDict
from flwr.serverapp import Grid

from fedlib._validation import check_option, check_scalar
from fedlib.flower._records import (
    HELLO,
    MASKED_INPUT,
    SECAGG,
    SETUP,
    SHARE_KEYS,
    TRAIN,
    UNMASK,
    one_array,
    train_content,
)
from fedlib.learn import PlainSum, RoundRequest
from fedlib.secagg import (
    EncryptedShare,
    KeyAdvertisement,
    MaskedInput,
    SecAggServer,
    SecureAggregator,
    SecureSum,
    UnmaskingResponse,
)


class FlowerFederation:
    """The nodes of a Flower run as the clients of a fedlib trainer (a :class:`fedlib.learn.Federation`).

    Each node runs :func:`client_app`. At construction the federation waits until ``n_nodes`` nodes
    are listed, asks every listed node for its client id, its number of examples and their shape,
    and keeps those that answer within ``wait`` seconds (at least ``n_nodes``).

    Parameters
    ----------
    grid : flwr.serverapp.Grid
        The ``Grid`` a ``ServerApp``'s main function receives.
    n_nodes : int
        Nodes to wait for: the fewest clients the federation may have.
    n_classes : int
        Output units of the model (labels lie in ``[0, n_classes)``; each node checks its own).
    timeout : float or None, default=None
        Seconds to wait for replies to one exchange; a node that does not answer in time has
        dropped out of that round. ``None`` waits for every reply.
    on_error : {"raise", "drop"}, default="raise"
        A node that answers with an error (its ClientApp raised): ``"raise"`` stops the run
        with the node's error, since a bug must not pass for a dropout; ``"drop"`` counts it as
        dropped out of that round (as a deployment over unreliable nodes may want).
    wait : float, default=60.0
        Seconds to wait for ``n_nodes`` nodes to connect, and for each to say who it is.

    Attributes
    ----------
    client_ids : ndarray of int64
        The nodes' client ids, sorted.
    n_samples : ndarray of int64
        Examples per client.
    input_shape : tuple of int
        Shape of one example (the same on every node).
    n_classes : int
        As given.
    node_ids : dict of int to int
        Client id -> Flower node id.
    failures : list of str
        Every error a node replied with, in order (with ``on_error="drop"``, a dropout as the trainer saw it).

    Raises
    ------
    TimeoutError
        If fewer than ``n_nodes`` nodes connect, or answer, within ``wait`` seconds.
    ValueError
        If two nodes claim one client id, their examples differ in shape, or ``on_error`` is unknown.
    RuntimeError
        If a node answers with an error and ``on_error="raise"`` (here or in any later round).

    Notes
    -----
    Secure rounds use fedlib's SecAgg(+) between the nodes, and the nodes' keys always come
    from their operating system's CSPRNG: ``insecure_seeded_secrets`` of the aggregator, a
    simulation switch, does not reach a real node. The model is the same either way (the sum
    is exact whatever the masks).

    Examples
    --------
    In a Flower app's ``server_app.py``, FedAvg over the nodes that run :func:`client_app`::

        from flwr.serverapp import ServerApp
        from fedlib.flower import FlowerFederation
        from fedlib.learn import FederatedTrainer

        app = ServerApp()

        @app.main()
        def main(grid, context):
            federation = FlowerFederation(grid, n_nodes=10, n_classes=10)
            trainer = FederatedTrainer("softmax", rounds=3, random_state=0).fit(federation)

    The federation first waits for its nodes; on a grid where none connects:

    >>> from fedlib.flower import FlowerFederation
    >>> class NoNodes:
    ...     def get_node_ids(self):
    ...         return []
    >>> try:
    ...     FlowerFederation(NoNodes(), n_nodes=2, n_classes=10, wait=0.0)
    ... except TimeoutError as error:
    ...     print(error)
    0 of 2 Flower nodes connected within 0.0 s.
    """

    def __init__(
        self,
        grid: Grid,
        *,
        n_nodes: int,
        n_classes: int,
        timeout: float | None = None,
        on_error: str = "raise",
        wait: float = 60.0,
    ) -> None:
        self.grid = grid
        self.on_error = check_option(on_error, "on_error", ("raise", "drop"))
        self.n_classes = int(n_classes)
        self.timeout = timeout
        self.failures: list[str] = []
        self._pending: dict | None = None
        self._group = self._secure_rounds = 0
        n_nodes = check_scalar(n_nodes, "n_nodes", "int", min_val=1)
        nodes = self._wait_for_nodes(n_nodes, float(wait))
        # every listed node is asked who it is; those that answer within `wait` are the federation (a SuperLink
        # may still list a node that has gone, which must not hold up every round)
        replies = self._exchange({node: RecordDict({}) for node in nodes}, HELLO, timeout=float(wait))
        infos = {node: reply["info"] for node, reply in replies.items()}
        if len(infos) < n_nodes:
            errors = f"; their errors: {self.failures}" if self.failures else ""
            raise TimeoutError(
                f"{len(infos)} of the {len(nodes)} listed Flower nodes said who they are within {wait} s; "
                f"{n_nodes} are needed{errors}."
            )
        ids = [int(info["client_id"]) for info in infos.values()]
        if len(set(ids)) != len(ids):
            raise ValueError(f"two nodes claim the same client id: {sorted(ids)}.")
        shapes = {tuple(int(k) for k in info["input_shape"]) for info in infos.values()}
        if len(shapes) != 1:
            raise ValueError(f"the nodes' examples differ in shape: {sorted(shapes)}.")
        by_id = sorted((int(info["client_id"]), node, int(info["n_samples"])) for node, info in infos.items())
        self.client_ids = np.array([c for c, _, _ in by_id], dtype=np.int64)
        self.n_samples = np.array([n for _, _, n in by_id], dtype=np.int64)
        self.node_ids = {c: node for c, node, _ in by_id}
        self.input_shape = shapes.pop()

    def _wait_for_nodes(self, n_nodes: int, wait: float) -> list[int]:
        deadline = time.monotonic() + wait
        while len(nodes := sorted(self.grid.get_node_ids())) < n_nodes:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(nodes)} of {n_nodes} Flower nodes connected within {wait} s.")
            time.sleep(0.05)
        return nodes

    def _exchange(
        self, contents: dict[int, RecordDict], message_type: str, *, timeout: float | None = None
    ) -> dict[int, RecordDict]:
        """Send one message per node, wait for the replies; nodes that fail are left out (and noted)."""
        self._group += 1
        messages = [
            Message(content, dst_node_id=node, message_type=message_type, group_id=str(self._group))
            for node, content in contents.items()
        ]
        replies: Iterable[Message] = self.grid.send_and_receive(
            messages, timeout=self.timeout if timeout is None else timeout
        )
        out = {}
        for reply in replies:
            if reply.has_error():
                self.failures.append(f"node {reply.metadata.src_node_id}: {reply.error.reason}")
                if self.on_error == "raise":
                    raise RuntimeError(
                        f"Flower node {reply.metadata.src_node_id} failed on a {message_type} message: "
                        f"{reply.error.reason} (FlowerFederation(on_error='drop') counts such nodes as dropouts)."
                    )
            else:
                out[int(reply.metadata.src_node_id)] = reply.content
        return out

    # -- fedlib.learn.Federation ---------------------------------------------------------------------------------------

    def train(self, request: RoundRequest) -> float:
        """Send the round's participants that stay a training request (see :class:`fedlib.learn.Federation`).

        Parameters
        ----------
        request : fedlib.learn.RoundRequest
            The round.

        Returns
        -------
        float
            The nodes' training seconds, summed.

        Raises
        ------
        TypeError
            For an aggregator other than :class:`fedlib.learn.PlainSum` and :class:`fedlib.secagg.SecureAggregator`.
        """
        aggregator = PlainSum() if request.aggregator is None else request.aggregator
        if not isinstance(aggregator, PlainSum | SecureAggregator):
            raise TypeError(
                "a FlowerFederation sums with fedlib.learn.PlainSum or fedlib.secagg.SecureAggregator, whose client "
                f"half runs on the nodes; got {type(aggregator).__name__}."
            )
        secure = isinstance(aggregator, SecureAggregator)
        stays = request.stays
        nodes = {self.node_ids[int(request.participants[p])]: p for p in stays}
        replies = self._exchange(
            {node: train_content(request, p, keep=secure) for node, p in nodes.items()}, TRAIN
        )
        trained = np.array(sorted(nodes[node] for node in replies), dtype=np.int64)
        self._pending = {
            "request": request, "aggregator": aggregator, "replies": {nodes[n]: r for n, r in replies.items()},
            "dropped": np.setdiff1d(np.arange(request.participants.size), trained),
        }  # fmt: skip
        return float(sum(float(r["metrics"]["seconds"]) for r in replies.values()))

    def aggregate(self, *, random_state: np.random.Generator):
        """Sum the updates of the last :meth:`train` (see :class:`fedlib.learn.Federation`).

        Parameters
        ----------
        random_state : numpy.random.Generator
            The aggregator's randomness of the round.

        Returns
        -------
        fedlib.learn.PlainTotal or fedlib.secagg.SecureSum
            What the aggregator returns in fedlib's simulator for the same rows.

        Raises
        ------
        RuntimeError
            Without a :meth:`train` before.
        fedlib.exceptions.SecAggAbort
            If a secure round cannot complete.
        """
        if self._pending is None:
            raise RuntimeError("aggregate() needs a train() first: no round is under way.")
        pending, self._pending = self._pending, None
        request, aggregator = pending["request"], pending["aggregator"]
        n, d = request.participants.size, request.start.size
        if isinstance(aggregator, PlainSum):
            inputs = np.zeros((n, d), dtype=np.float32)
            for p, reply in pending["replies"].items():
                inputs[p] = one_array(reply["update"], f"client {int(request.participants[p])}'s update", length=d)
            return aggregator.aggregate(inputs, dropped=pending["dropped"], random_state=random_state)
        return self._secure_round(aggregator, request, pending["dropped"], random_state)

    def _secure_round(self, aggregator: SecureAggregator, request: RoundRequest, dropped, rng) -> SecureSum:
        """SecAgg(+) among the round's participants, each node running its own party (Bonawitz et al. 2017)."""
        n, d = request.participants.size, request.start.size
        config, fixed = aggregator.plan(n, d, random_state=rng)
        self._secure_rounds += 1  # a new round id: messages of one round cannot be replayed in another
        config = replace(config, round_id=self._secure_rounds % 2**32)
        server = SecAggServer(config)
        node_of = {p: self.node_ids[int(request.participants[p])] for p in range(n)}
        position_of = {node: p for p, node in node_of.items()}
        sent = received = 0

        def exchange(positions, stage: str, payload) -> dict[int, ConfigRecord]:
            nonlocal sent, received
            contents = {}
            for p in positions:
                record = ConfigRecord({"stage": stage, **payload(p)})
                received += _nbytes(record)
                contents[node_of[p]] = RecordDict({"request": record})
            replies = {position_of[node]: r["reply"] for node, r in self._exchange(contents, SECAGG).items()}
            sent += sum(_nbytes(r) for r in replies.values())
            return replies

        began = time.perf_counter()
        setup = config.to_bytes()
        round_index = int(request.round_index)
        adverts = exchange(
            range(n), SETUP,
            lambda p: {"config": setup, "position": p, "clip": float(aggregator.clip), "round_index": round_index},
        )  # fmt: skip
        bundles = server.collect_keys(
            [KeyAdvertisement.from_bytes(bytes(r["advert"]), config) for r in adverts.values()]
        )
        outboxes = exchange(
            sorted(bundles), SHARE_KEYS, lambda p: {"adverts": [a.to_bytes(config) for a in bundles[p].values()]}
        )
        u2, deliveries = server.route_shares(
            {p: [EncryptedShare.from_bytes(bytes(b), config) for b in r.get("shares", [])] for p, r in outboxes.items()}
        )
        survivors2 = sorted(u2)
        leaving = set(dropped.tolist())
        masked = exchange(
            [p for p in survivors2 if p not in leaving], MASKED_INPUT,
            lambda p: {"survivors": survivors2, "shares": [s.to_bytes(config) for s in deliveries[p]]},
        )  # fmt: skip
        u3 = server.collect_masked_inputs(
            [MaskedInput.from_bytes(bytes(r["masked"]), config) for r in masked.values()]
        )
        survivors3 = sorted(u3)
        responses = exchange(survivors3, UNMASK, lambda p: {"survivors": survivors3})
        total = server.unmask(
            [UnmaskingResponse.from_bytes(bytes(r["response"]), config) for r in responses.values()]
        )
        return SecureSum(
            total=fixed.decode_sum(total),
            summed=np.array(survivors3, dtype=np.int64),
            bytes_sent=int(sent),
            bytes_received=int(received),
            seconds={"round trip": time.perf_counter() - began},
            resolution=1.0 / fixed.scale,
        )


def _nbytes(record: ConfigRecord) -> int:
    """Payload bytes of a record's byte strings (what the protocol sends; Flower's framing is not counted)."""
    total = 0
    for value in record.values():
        if isinstance(value, bytes):
            total += len(value)
        elif isinstance(value, list):
            total += sum(len(v) for v in value if isinstance(v, bytes))
    return total

