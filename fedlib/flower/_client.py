"""fedlib's client half as a Flower ``ClientApp``: local SGD on the node's own examples, and its SecAgg(+) party.

A node answers three kinds of message (:mod:`fedlib.flower._records`): who it is (its client id,
its number of examples and their shape), a training request (FedAvg's ClientUpdate from the server's
model, with the example order of :func:`fedlib.learn.client_generator` for its id and the round, so
it trains exactly what fedlib's in-process simulator trains for that client), and the four stages
of a SecAgg(+) round (:class:`fedlib.secagg.SecAggClient`). Between messages a node keeps its
weighted update and its SecAgg party only in its Flower ``context.state``, which never leaves it;
the party's private keys are serialised there (:meth:`fedlib.secagg.SecAggClient.to_bytes`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp

from fedlib.flower._records import (
    HELLO,
    MASKED_INPUT,
    SECAGG,
    SETUP,
    SHARE_KEYS,
    TRAIN,
    UNMASK,
    one_array,
    read_local,
    read_seed,
)
from fedlib.learn import check_training_data, make_model, n_parameters, train_clients
from fedlib.secagg import (
    EncryptedShare,
    FixedPoint,
    KeyAdvertisement,
    SecAggClient,
    SecAggConfig,
)

#: Keys of a node's ``context.state``.
_UPDATE, _UPDATE_ROUND, _PARTY = "fedlib.update", "fedlib.update_round", "fedlib.secagg"

LoadData = Callable[[Context], tuple[Any, Any]]


def _partition_id(context: Context) -> int:
    """The client id of a node: its ``partition-id`` (what Flower's simulation engine numbers its nodes by)."""
    if "partition-id" not in context.node_config:
        raise ValueError(
            "the node has no 'partition-id' in its node config: pass client_id= to client_app to say which "
            "fedlib client it is."
        )
    return int(context.node_config["partition-id"])


class Partitions:
    """``load_data`` for a simulation: node ``partition-id = u`` holds rows ``parts[u]`` of one array.

    Flower's simulation engine numbers its nodes ``0..N-1`` by ``partition-id``; this hands node
    ``u`` the examples of fedlib's client ``u``, as ``fit(X, y, parts=parts)`` would.

    Parameters
    ----------
    X : ndarray of float, shape (n_samples, ...)
        All clients' examples.
    y : array-like of int, shape (n_samples,)
        Labels.
    parts : sequence of array-like of int
        Client ``u``'s rows.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.flower import Partitions
    >>> X, y = np.zeros((6, 2), np.float32), np.array([0, 1, 0, 1, 0, 1])
    >>> load = Partitions(X, y, [[0, 1, 2], [3, 4, 5]])
    >>> len(load.parts), load.parts[1].tolist()
    (2, [3, 4, 5])

    What node ``partition-id = 1`` of a simulation loads:

    >>> from flwr.app import Context, RecordDict
    >>> context = Context(run_id=1, node_id=7, node_config={"partition-id": 1}, state=RecordDict(), run_config={})
    >>> X_node, y_node = load(context)
    >>> X_node.shape, y_node.tolist()
    ((3, 2), [1, 0, 1])
    """

    def __init__(self, X, y, parts) -> None:
        self.X, self.y = np.asarray(X), np.asarray(y)
        self.parts = [np.asarray(p, dtype=np.int64) for p in parts]

    def __call__(self, context: Context) -> tuple[np.ndarray, np.ndarray]:
        """The examples and labels of the node's partition.

        Parameters
        ----------
        context : flwr.app.Context
            The node's context (its ``partition-id``).

        Returns
        -------
        X, y : ndarray
            The partition's rows.
        """
        rows = self.parts[_partition_id(context)]
        return self.X[rows], self.y[rows]


def client_app(
    load_data: LoadData,
    model: str | torch.nn.Module,
    *,
    n_classes: int | None = None,
    client_id: Callable[[Context], int] | None = None,
) -> ClientApp:
    """A Flower ``ClientApp`` that trains with fedlib's local SGD and takes part in fedlib's SecAgg(+).

    The server side is any fedlib trainer fitted on a :class:`FlowerFederation`
    (:class:`fedlib.learn.FederatedTrainer`, :class:`fedlib.unlearn.ClusteredUnlearning`).

    Parameters
    ----------
    load_data : callable
        ``load_data(context) -> (X, y)``: this node's examples and integer labels (checked as
        :func:`fedlib.learn.check_training_data` checks them). Called once per node and run in each
        process that serves the node: once in the simulation runtime, once per message in the
        deployment runtime's default isolation (a fresh ClientApp process per message).
    model : str or torch.nn.Module
        The architecture, as the server's trainer has it: a :data:`fedlib.learn.MODELS` name
        (built for the examples' shape and ``n_classes``) or a module. The server sends its
        parameters; a model of another size is refused.
    n_classes : int, optional
        Output units when ``model`` is a name (the server's ``n_classes``).
    client_id : callable, optional
        ``client_id(context) -> int``; default the node's ``partition-id``.

    Returns
    -------
    flwr.clientapp.ClientApp
        Handlers for the messages of a fedlib federation.

    Raises
    ------
    ValueError
        If ``model`` is a name and ``n_classes`` is not given.

    Examples
    --------
    In a Flower app's ``client_app.py`` (data from the node's ``partition-id``)::

        from fedlib.flower import client_app

        def load_data(context):
            X, y = my_partition(int(context.node_config["partition-id"]))
            return X, y

        app = client_app(load_data, "softmax", n_classes=10)

    In a simulation, every node takes its rows of one array (:class:`Partitions`):

    >>> import numpy as np
    >>> from flwr.clientapp import ClientApp
    >>> from fedlib.flower import Partitions, client_app
    >>> X, y = np.zeros((6, 2), np.float32), np.array([0, 1, 0, 1, 0, 1])
    >>> app = client_app(Partitions(X, y, [[0, 1, 2], [3, 4, 5]]), "softmax", n_classes=2)
    >>> isinstance(app, ClientApp)
    True
    >>> client_app(Partitions(X, y, [[0, 1, 2], [3, 4, 5]]), "softmax")
    Traceback (most recent call last):
    ...
    ValueError: client_app: a model given by name needs n_classes (the server trainer's output units).
    """
    if isinstance(model, str) and n_classes is None:
        raise ValueError("client_app: a model given by name needs n_classes (the server trainer's output units).")
    identify = _partition_id if client_id is None else client_id
    cache: dict[tuple[int, int], tuple] = {}  # (run, node) -> (id, X, y, model): data loads once per process

    def node(context: Context) -> tuple[int, torch.Tensor, torch.Tensor, torch.nn.Module]:
        key = (int(context.run_id), int(context.node_id))
        if key not in cache:
            X, y, _ = check_training_data(*load_data(context))
            net = model
            if isinstance(net, str):
                net = make_model(net, int(n_classes), random_state=0, input_shape=tuple(X.shape[1:]))
            with torch.no_grad():
                n_out = int(net(X[:1]).shape[-1])
            if int(y.max()) >= n_out:
                found = int(y.max())
                raise ValueError(f"labels must lie in [0, {n_out}) for a model with {n_out} outputs; found {found}.")
            cache[key] = (int(identify(context)), X, y, net)
        return cache[key]

    app = ClientApp()

    @app.query(HELLO.partition(".")[2])
    def hello(message: Message, context: Context) -> Message:
        cid, X, _, net = node(context)
        info = {"client_id": cid, "n_samples": int(X.shape[0]), "input_shape": [int(k) for k in X.shape[1:]]}
        info["n_parameters"] = n_parameters(net)
        return Message(RecordDict({"info": ConfigRecord(info)}), reply_to=message)

    @app.train(TRAIN.partition(".")[2])
    def train(message: Message, context: Context) -> Message:
        cid, X, y, net = node(context)
        config = message.content["config"]
        if int(config["client_id"]) != cid:
            raise ValueError(f"a training request for client {int(config['client_id'])} reached client {cid}.")
        start = one_array(message.content["start"], "start", length=n_parameters(net))
        updates = train_clients(
            net, start, X, y, [np.arange(X.shape[0])], config=read_local(config),
            round_index=int(config["round_index"]), client_ids=[cid], base_version=int(config["base_version"]),
            random_state=read_seed(config), method=str(config["method"]),
        )  # fmt: skip
        update = updates.deltas[0]
        if bool(config["weighted"]):
            update = update * np.float32(float(config["weight"]))  # as the simulator scales its row
        metrics = MetricRecord({"seconds": float(updates.seconds), "n_samples": int(X.shape[0])})
        if bool(config["keep"]):  # summed by SecAgg: the update stays on the node
            context.state[_UPDATE] = ArrayRecord([np.ascontiguousarray(update, dtype=np.float32)])
            context.state[_UPDATE_ROUND] = ConfigRecord({"round_index": int(config["round_index"])})
            return Message(RecordDict({"metrics": metrics}), reply_to=message)
        return Message(RecordDict({"metrics": metrics, "update": ArrayRecord([update])}), reply_to=message)

    @app.train(SECAGG.partition(".")[2])
    def secagg(message: Message, context: Context) -> Message:
        return Message(RecordDict({"reply": ConfigRecord(_secagg_stage(message, context))}), reply_to=message)

    return app


def _survivors(request, n_clients: int) -> list[int]:
    """The server's list of survivors, strictly: distinct, ascending ids of the round's clients."""
    ids = [int(i) for i in request.get("survivors", [])]
    if any(i < 0 or i >= n_clients for i in ids) or ids != sorted(set(ids)):
        raise ValueError(f"survivors must be distinct ascending ids in [0, {n_clients}), got {ids}.")
    return ids


def _secagg_stage(message: Message, context: Context) -> dict:
    """One stage of this node's SecAgg(+) party; its state lives in ``context.state`` between stages."""
    request = message.content["request"]
    stage = str(request["stage"])
    if stage == SETUP:
        config = SecAggConfig.from_bytes(bytes(request["config"]))
        position = int(request["position"])
        fixed = FixedPoint.for_summands(config.n_clients, float(request["clip"]))
        kept = _UPDATE in context.state and int(context.state[_UPDATE_ROUND]["round_index"]) == int(
            request["round_index"]
        )
        if kept:
            update = one_array(context.state[_UPDATE], "the kept update", length=config.vector_length)
        else:  # a participant that dropped before training (the simulator's zero row); it never sends y_i
            update = np.zeros(config.vector_length, dtype=np.float32)
        if _UPDATE in context.state:
            del context.state[_UPDATE], context.state[_UPDATE_ROUND]
        party = SecAggClient(position, fixed.encode(update[None, :])[0], config)
        reply = {"advert": party.advertise_keys().to_bytes(config)}
    else:
        if _PARTY not in context.state:
            raise ValueError(f"a SecAgg {stage} message reached a node with no SecAgg round under way.")
        party = SecAggClient.from_bytes(bytes(context.state[_PARTY]["state"]))
        config = party.config
        if stage == SHARE_KEYS:
            bundle = [KeyAdvertisement.from_bytes(bytes(b), config) for b in request.get("adverts", [])]
            shares = party.share_keys({a.sender: a for a in bundle})
            reply = {"shares": [s.to_bytes(config) for s in shares]}
        elif stage == MASKED_INPUT:
            shares = [EncryptedShare.from_bytes(bytes(b), config) for b in request.get("shares", [])]
            survivors = _survivors(request, config.n_clients)
            reply = {"masked": party.masked_input(survivors, shares).to_bytes(config)}
        elif stage == UNMASK:
            reply = {"response": party.unmask(_survivors(request, config.n_clients)).to_bytes(config)}
        else:
            raise ValueError(f"unknown SecAgg stage {stage!r}.")
    if stage == UNMASK:
        del context.state[_PARTY]
    else:
        context.state[_PARTY] = ConfigRecord({"state": party.to_bytes()})
    return reply
