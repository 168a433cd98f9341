"""The contract of every fedlib method that forgets: one verb, :meth:`UnlearningMixin.unlearn`, one report.

A method that can forget is an estimator: hyper-parameters in the constructor, data in ``fit(X, y=None, ...)``,
and ``unlearn(samples=..., clients=...)`` afterwards, which forgets rows of the ``X`` given to ``fit`` (by row
index) or whole clients, and returns an :class:`UnlearningReport` saying what was forgotten and what it cost.
Every request is checked the same way before anything changes (:meth:`UnlearningMixin.unlearn`): an empty
request, an id given twice, an id that was never fitted or is already forgotten raise
:class:`~fedlib.exceptions.UnlearningRequestError`; a request before ``fit`` raises scikit-learn's
``NotFittedError``. ``tests/unlearn/test_contract.py`` runs every such method through this contract.

The federated clustering estimators share one more contract, :class:`FederatedClusterer`: ``fit(X, y=None, *,
parts=None)`` on the rows of ``X`` that each client holds, with the data, ``n_clusters`` and the partition checked
the same way in each.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import validate_data

from fedlib._typing import NDArrayFloat, NDArrayInt
from fedlib._validation import check_array, check_fit_partition, check_ids, check_is_fitted, check_n_clusters
from fedlib.exceptions import UnlearningRequestError

__all__ = ["FederatedClusterer", "UnlearningMixin", "UnlearningReport"]


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
    >>> from fedlib.base import UnlearningReport
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

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.base import UnlearningMixin
    >>> from fedlib.unlearn import MUFC
    >>> issubclass(MUFC, UnlearningMixin), sorted(MUFC.unlearns)
    (True, ['clients', 'samples'])
    >>> X = np.array([[0.0], [0.2], [5.0], [5.2], [0.1], [5.1]])
    >>> model = MUFC(n_clusters=2, random_state=0).fit(X, parts=[[0, 1, 2], [3, 4, 5]])
    >>> model.unlearn(samples=[0]).forgotten
    'samples (0,)'
    >>> model.unlearn(samples=[0])
    Traceback (most recent call last):
        ...
    fedlib.exceptions.UnlearningRequestError: samples [0] are not held by the fitted model: never fitted, or ...
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

    def _model_state(self) -> dict[str, np.ndarray]:
        """The arrays that identify the fitted model, by name (read by ``fedlib.audit``; copies).

        Default: every public fitted attribute (a name ending in ``_``) that holds an array. A method overrides
        it with what identifies its model: centres and seed rows for clustering, flat parameters for learned
        models.
        """
        names = [n for n, v in vars(self).items() if n.endswith("_") and not n.startswith("_")]
        return {n: np.array(getattr(self, n)) for n in names if isinstance(getattr(self, n), np.ndarray)}

    def _retrained_state(self) -> dict[str, np.ndarray]:
        """What retraining from scratch on the data still held gives, with the randomness the method couples to.

        Each name is one of :meth:`_model_state`'s; a method whose unlearning is exact bit for bit under that
        coupling (Ginart et al. 2019; MUFC Sec. 3) computes it without reading the forgotten rows. Default:
        no such coupling.
        """
        raise NotImplementedError(
            f"{type(self).__name__} promises no bitwise coupling to retraining: its unlearning is exact in "
            "distribution at most (test it with fedlib.audit's exactness_test) or approximate (measure it with "
            "model_distance)."
        )


class FederatedClusterer(BaseEstimator):
    """Base of the federated clustering estimators: ``fit(X, y=None, *, parts=None)`` on data split over clients.

    Every federated clustering estimator of fedlib (:class:`fedlib.cluster.OneShotFederatedKMeans`,
    :class:`fedlib.cluster.KFED`, :class:`fedlib.secagg.SecFC`, :class:`fedlib.unlearn.MUFC`,
    :class:`fedlib.unlearn.DCKMeans`) is fitted by ``fit(X, parts=parts)``, where ``parts[l]`` are the rows of
    ``X`` that client ``l`` holds; they must partition the rows, and ``parts=None`` puts every row on one client
    (as scikit-learn's checks call ``fit(X)``). It exposes fitted attributes with a trailing underscore, among
    them ``n_features_in_`` and ``federated_loss_`` (by :func:`fedlib.cluster.kmeans_objective`), and
    ``predict(X)``. Using it before ``fit`` raises :class:`sklearn.exceptions.NotFittedError`.

    As in every scikit-learn estimator, the constructor stores the hyper-parameters as given, among them
    ``n_clusters`` and ``random_state``; ``fit`` checks them. A subclass's ``fit`` starts with
    ``_check_fit_data``, which checks the data, ``n_clusters`` and the partition and sets
    ``n_features_in_``, then checks its own hyper-parameters; its ``predict`` starts with
    ``_check_predict_data``. It names in ``_fitted_attribute`` the attribute whose absence means "not
    fitted".

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.base import FederatedClusterer
    >>> class Means(FederatedClusterer):
    ...     _fitted_attribute = "client_means_"
    ...
    ...     def __init__(self, n_clusters=1):
    ...         self.n_clusters = n_clusters
    ...
    ...     def fit(self, X, y=None, *, parts=None):
    ...         X, parts, _ = self._check_fit_data(X, y, parts)
    ...         self.client_means_ = np.array([X[idx].mean(axis=0) for idx in parts])
    ...         return self
    >>> Means().fit([[0.0], [2.0], [10.0]], parts=[[0, 1], [2]]).client_means_.ravel().tolist()
    [1.0, 10.0]
    >>> Means().fit([[0.0], [2.0]], parts=[[0], [0, 1]])
    Traceback (most recent call last):
        ...
    ValueError: parts overlap: 1 row(s) (e.g. row 0) are held by more than one client (clients [0, 1]); ...
    """

    #: The fitted attribute whose absence means "not fitted" (set by each subclass).
    _fitted_attribute: str

    def _check_fit_data(self, X, y, parts) -> tuple[NDArrayFloat, list[NDArrayInt], int]:
        """Check the arguments of ``fit`` and ``n_clusters``, and set ``n_features_in_``.

        Returns ``(X, parts, n_clusters)``: ``X`` as a C-contiguous finite float64 array (complex,
        sparse, NaN and infinite data refused), the clients' row indices as int64 arrays that partition
        its rows (one client holding every row when ``parts`` is ``None``), and ``n_clusters`` as an int in
        ``[1, n_samples]``. Raises ``ValueError`` (or ``TypeError``) with the messages of those checks,
        and ``TypeError`` for a partition passed positionally as ``y``.
        """
        X = check_array(X)
        self.n_features_in_ = X.shape[1]
        n_clusters = check_n_clusters(self.n_clusters, X.shape[0])
        parts = check_fit_partition(parts, y, X.shape[0])
        return X, parts, n_clusters

    def _check_predict_data(self, X) -> NDArrayFloat:
        """Check the argument of ``predict``: ``X`` as float64 with ``n_features_in_`` columns, else ``ValueError``.

        Before ``fit`` (the attribute named by ``_fitted_attribute`` is missing), ``NotFittedError`` instead.
        """
        check_is_fitted(self, self._fitted_attribute)
        return validate_data(self, X, reset=False, dtype=np.float64, order="C")


def _repeated(ids: NDArrayInt) -> list[int]:
    values, counts = np.unique(ids, return_counts=True)
    return values[counts > 1].tolist()
