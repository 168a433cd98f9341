"""The contract of every fedlib method that forgets: one verb, :meth:`UnlearningMixin.unlearn`, one report.

A method that can forget is an estimator: hyper-parameters in the constructor, data in ``fit(X, y=None, ...)``,
and ``unlearn(samples=..., clients=...)`` afterwards, which forgets rows of the ``X`` given to ``fit`` (by row
index) or whole clients, and returns an :class:`UnlearningReport` saying what was forgotten and what it cost.
Every request is checked the same way before anything changes (:meth:`UnlearningMixin.unlearn`): an empty
request, an id given twice, an id that was never fitted or is already forgotten raise
:class:`~fedlib.exceptions.UnlearningRequestError`; a request before ``fit`` raises scikit-learn's
``NotFittedError``. ``tests/unlearn/test_contract.py`` runs every such method through this contract.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedlib._typing import NDArrayInt
from fedlib._validation import check_ids, check_is_fitted
from fedlib.exceptions import UnlearningRequestError

__all__ = ["UnlearningMixin", "UnlearningReport"]


@dataclass(frozen=True)
class UnlearningReport:
    """What a request forgot and what it cost; also what training cost (``fit_report_``).

    One type for every method that forgets. Times are wall-clock seconds of the
    simulation split by role; clients run in parallel, so ``client_seconds`` is
    the slowest client's.

    Parameters
    ----------
    forgotten_samples : tuple of int, default=()
        Rows (of the ``X`` given to ``fit``) forgotten by this request, sorted.
    forgotten_clients : tuple of int, default=()
        Clients forgotten whole by this request, sorted.
    clients_retrained : tuple of int, default=()
        Clients whose local model was computed again (MUFC: re-seeded, Alg. 3;
        DC-KM: its leaf; retraining: every remaining client).
    server_refit : bool, default=False
        Whether the global model was computed again.
    rounds : int, default=0
        Communication rounds run to forget (aggregations, training rounds).
    client_seconds : float, default=0.0
        The slowest client's computation.
    aggregation_seconds : float, default=0.0
        Secure (or plaintext) aggregation.
    server_seconds : float, default=0.0
        The server's computation.
    bytes_sent : int, default=0
        Bytes the clients uploaded to forget (0 where the method does not count them).
    exact : bool, default=True
        Whether the model after the request is the one training without the
        forgotten data gives (in distribution, or bit for bit with the same
        randomness), as the method guarantees; ``False`` for approximate
        methods and for lazy updates that leave the server model as it was.
    details : mapping, default={}
        Method-specific costs and outcomes, documented by each method.

    Examples
    --------
    >>> report = UnlearningReport(forgotten_samples=(3,), clients_retrained=(0,), client_seconds=0.002)
    >>> report.seconds, report.forgotten
    (0.002, 'samples (3,)')
    """

    forgotten_samples: tuple[int, ...] = ()
    forgotten_clients: tuple[int, ...] = ()
    clients_retrained: tuple[int, ...] = ()
    server_refit: bool = False
    rounds: int = 0
    client_seconds: float = 0.0
    aggregation_seconds: float = 0.0
    server_seconds: float = 0.0
    bytes_sent: int = 0
    exact: bool = True
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        """Client plus server time, as MUFC times a federated run (aggregation excluded)."""
        return self.client_seconds + self.server_seconds

    @property
    def forgotten(self) -> str:
        """What the request forgot, in words."""
        parts = []
        if self.forgotten_samples:
            parts.append(f"samples {self.forgotten_samples}")
        if self.forgotten_clients:
            parts.append(f"clients {self.forgotten_clients}")
        return "; ".join(parts) or "nothing (training)"


class UnlearningMixin:
    """``unlearn(samples=..., clients=...)`` for estimators that forget: checks the request, then forgets.

    A subclass sets :attr:`unlearns` (what it can forget) and ``_fitted_attribute`` (set by ``fit``), and implements
    ``_unlearn(samples, clients, **options)``, which receives checked, sorted
    id arrays (and the method-specific options given to :meth:`unlearn`) and
    returns an :class:`UnlearningReport`. It also implements
    ``_held_samples()`` and ``_held_clients()``: the rows and clients the
    fitted model still holds, against which requests are checked.
    """

    #: What the method can forget: a subset of ``{"samples", "clients"}``.
    unlearns: frozenset[str] = frozenset({"samples", "clients"})

    def unlearn(self, samples=None, *, clients=None, **options) -> UnlearningReport:
        """Forget rows of the ``X`` given to ``fit``, whole clients, or both.

        The request is checked first; only then are ``options`` looked at, by
        the method.

        Parameters
        ----------
        samples : array-like of int, optional
            Row indices of the ``X`` given to ``fit``, each once.
        clients : array-like of int, optional
            Clients (0-based, in the order of ``fit``'s partition), each once.
        **options : dict
            Method-specific options, passed on to ``_unlearn``, e.g.
            :class:`~fedlib.unlearn.ClusteredUnlearning`'s ``retrain``. A method
            without options raises ``TypeError`` for any.

        Returns
        -------
        UnlearningReport
            What was forgotten and what it cost.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        fedlib.exceptions.UnlearningRequestError
            For an empty request, an id given twice, an id never fitted or
            already forgotten, or a kind of request the method cannot serve.
        """
        self._check_fitted_for_unlearning()
        samples = self._check_request(samples, "samples", self._held_samples)
        clients = self._check_request(clients, "clients", self._held_clients)
        if samples.size == 0 and clients.size == 0:
            raise UnlearningRequestError("nothing to unlearn: give samples or clients.")
        return self._unlearn(samples, clients, **options)

    def _check_request(self, ids, kind: str, held) -> NDArrayInt:
        if ids is None:
            return np.empty(0, dtype=np.int64)
        if kind not in self.unlearns:
            can = " and ".join(sorted(self.unlearns))
            raise UnlearningRequestError(f"{type(self).__name__} cannot unlearn {kind}; it unlearns {can}.")
        ids = check_ids(ids, kind)  # TypeError / ValueError for 3.7, NaN, booleans, strings
        if ids.size == 0:
            raise UnlearningRequestError(f"nothing to unlearn: {kind} is empty.")
        if np.unique(ids).size != ids.size:
            raise UnlearningRequestError(f"{kind} lists {_repeated(ids)} more than once.")
        unknown = ~np.isin(ids, held())
        if unknown.any():
            raise UnlearningRequestError(
                f"{kind} {ids[unknown].tolist()} are not held by the fitted model: never fitted, or already forgotten."
            )
        return np.sort(ids)

    #: The fitted attribute whose absence means "not fitted" (set by each subclass).
    _fitted_attribute: str

    def _check_fitted_for_unlearning(self) -> None:
        check_is_fitted(self, self._fitted_attribute)

    def _held_samples(self) -> NDArrayInt:
        raise NotImplementedError

    def _held_clients(self) -> NDArrayInt:
        raise NotImplementedError

    def _unlearn(self, samples: NDArrayInt, clients: NDArrayInt, **options) -> UnlearningReport:
        raise NotImplementedError


def _repeated(ids: NDArrayInt) -> list[int]:
    values, counts = np.unique(ids, return_counts=True)
    return values[counts > 1].tolist()
