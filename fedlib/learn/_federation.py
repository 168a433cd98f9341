"""Clients whose examples live elsewhere: what a federated trainer asks of them, one round at a time.

:class:`~fedlib.learn.FederatedTrainer` trains on examples in this process (``fit(X, y, parts=...)``).
A :class:`Federation` stands in for ``X`` when the examples stay on the clients, e.g. on the nodes
of a Flower federation (:mod:`fedlib.flower`): the server keeps everything that is the server's
(the global model, the seeded choice of participants and dropouts, FedAvg's weights, the
aggregator's public parameters, the history), and each round asks the federation for the two
halves that are the clients': local training of the participants that stay (:meth:`Federation.train`,
a :class:`RoundRequest`), then the sum of their weighted updates by the round's aggregator
(:meth:`Federation.aggregate`), which a secure aggregator computes without the server seeing
any single update. The same seed gives the same model on both sides, because the request carries
everything that fixes a client's local training (its start, its example-order stream, its FedAvg
weight) and the sum is computed by the same aggregator from the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    import torch.nn as nn

    from fedlib.learn._local import LocalSGD


@dataclass(frozen=True)
class RoundRequest:
    """What the clients of one FedAvg round are asked to do (:meth:`Federation.train`).

    Parameters
    ----------
    model : torch.nn.Module
        The architecture; its parameters are ``start``.
    start : ndarray of float32, shape (d,)
        The global model every participant starts from.
    participants : ndarray of int64, shape (n,)
        The round's clients (their ids), in the order of the aggregator's rows.
    dropped : ndarray of int64
        Positions in ``participants`` of the clients that drop out before sending their update
        (the trainer's simulated dropouts): they do not train, and their rows are zero.
    weights : ndarray of float64, shape (n,)
        FedAvg weight of each participant (:func:`fedlib.learn.fedavg_weights`); a client sends
        ``(params - start) * float32(weight)``, or its bare update when every weight is 1.
    local : fedlib.learn.LocalSGD
        Local training.
    round_index : int
        Selects the clients' example orders (:func:`fedlib.learn.client_generator`).
    base_version : int
        Version of ``start`` (the server's round).
    random_state : numpy.random.SeedSequence
        The trainer's root seed, under which each client's order stream is named
        (round, client id): it fixes the order of the examples, nothing secret.
    method : {"auto", "vmap", "loop"}
        Local-training path (:func:`fedlib.learn.train_clients`).
    aggregator : fedlib.learn.Aggregator or None
        What sums the round (:meth:`Federation.aggregate`), e.g. :class:`fedlib.learn.PlainSum`
        (the clients send their updates) or :class:`fedlib.secagg.SecureAggregator` (they keep
        them for a SecAgg(+) round); ``None`` is :class:`fedlib.learn.PlainSum`.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import LocalSGD, RoundRequest, get_flat, make_model
    >>> model = make_model("softmax", 2, input_shape=(4,), random_state=0)
    >>> request = RoundRequest(
    ...     model=model, start=get_flat(model), participants=np.array([3, 5, 8]), dropped=np.array([1]),
    ...     weights=np.array([0.5, 1.0, 1.5]), local=LocalSGD(), round_index=0, base_version=0,
    ...     random_state=np.random.SeedSequence(0),
    ... )
    >>> request.participants[request.stays].tolist(), request.weighted
    ([3, 8], True)
    """

    model: nn.Module
    start: np.ndarray
    participants: np.ndarray
    dropped: np.ndarray
    weights: np.ndarray
    local: LocalSGD
    round_index: int
    base_version: int
    random_state: np.random.SeedSequence
    method: str = "auto"
    aggregator: Any = None

    @property
    def stays(self) -> np.ndarray:
        """Positions in ``participants`` of the clients that train (the others dropped)."""
        return np.setdiff1d(np.arange(self.participants.size), self.dropped)

    @property
    def weighted(self) -> bool:
        """Whether updates are scaled by their weights (``False`` when every weight of those who stay is 1)."""
        return not bool(np.all(self.weights[self.stays] == 1.0))


@runtime_checkable
class Federation(Protocol):
    """Clients that hold their own examples and run their half of each round (pass one as ``X`` to ``fit``).

    :class:`~fedlib.learn.FederatedTrainer` and :class:`~fedlib.unlearn.ClusteredUnlearning`
    accept a federation in place of the arrays: ``fit(federation)``. Per round the trainer calls
    :meth:`train` once, then :meth:`aggregate` once. :class:`fedlib.flower.FlowerFederation` is
    one (the clients are Flower nodes).

    Attributes
    ----------
    client_ids : ndarray of int64
        Every client's id.
    n_samples : ndarray of int64
        Examples per client, in the order of ``client_ids`` (FedAvg's weights).
    input_shape : tuple of int
        The shape of one example.
    n_classes : int
        Labels lie in ``[0, n_classes)``.

    Examples
    --------
    A federation of clients that keep their rows in this process trains the model of ``fit(X, y, parts=...)``:

    >>> import numpy as np
    >>> from fedlib.learn import FederatedTrainer, Federation, PlainSum, train_clients
    >>> class InProcess:
    ...     def __init__(self, X, y, parts):
    ...         self.X, self.y, self.parts = X, y, parts
    ...         self.client_ids, self.n_samples = np.arange(len(parts)), np.array([len(p) for p in parts])
    ...         self.input_shape, self.n_classes = X.shape[1:], int(y.max()) + 1
    ...     def train(self, request):
    ...         self.request, ids = request, request.participants[request.stays]
    ...         out = train_clients(request.model, request.start, self.X, self.y, [self.parts[i] for i in ids],
    ...                             config=request.local, round_index=request.round_index, client_ids=ids,
    ...                             random_state=request.random_state, method=request.method)
    ...         self.rows = np.zeros((request.participants.size, request.start.size), dtype=np.float32)
    ...         self.rows[request.stays] = out.deltas * request.weights[request.stays, None].astype(np.float32)
    ...         return out.seconds
    ...     def aggregate(self, *, random_state):
    ...         aggregator = self.request.aggregator or PlainSum()
    ...         return aggregator.aggregate(self.rows, dropped=self.request.dropped, random_state=random_state)
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((30, 4), dtype=np.float32), rng.integers(0, 2, 30)
    >>> parts = [np.arange(5), np.arange(5, 30)]
    >>> isinstance(InProcess(X, y, parts), Federation)
    True
    >>> remote = FederatedTrainer(rounds=2, random_state=0).fit(InProcess(X, y, parts))
    >>> local = FederatedTrainer(rounds=2, random_state=0).fit(X, y, parts=parts)
    >>> bool((remote.params_ == local.params_).all())
    True
    """

    client_ids: np.ndarray
    n_samples: np.ndarray
    input_shape: tuple[int, ...]
    n_classes: int

    def train(self, request: RoundRequest) -> float:
        """Train the participants that stay; each keeps its weighted update for :meth:`aggregate`.

        Parameters
        ----------
        request : RoundRequest
            The round.

        Returns
        -------
        float
            Seconds of local training (all clients together).
        """

    def aggregate(self, *, random_state: np.random.Generator) -> Any:
        """Sum the weighted updates of the last :meth:`train` with its request's aggregator.

        Parameters
        ----------
        random_state : numpy.random.Generator
            The aggregator's randomness for this round (as its ``aggregate`` would get it).

        Returns
        -------
        fedlib.learn.Aggregated
            The sum and who is in it; rows of clients that dropped or failed are not.
        """
