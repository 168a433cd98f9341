"""Unlearning by retraining from scratch: the exact baseline every method that forgets is measured against."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator, clone

from fedlib._typing import NDArrayInt
from fedlib._validation import check_array, check_is_fitted, check_partition
from fedlib.base import UnlearningMixin, UnlearningReport
from fedlib.exceptions import UnlearningRequestError


class Retrain(UnlearningMixin, BaseEstimator):
    """Forget by fitting a fresh copy of ``estimator`` on what remains, with the same hyper-parameters.

    The definition of exact unlearning (Ginart et al. 2019; MUFC Sec. 3): the
    model after a request is the one training on the remaining data gives.
    Every request refits a clone of ``estimator`` (same ``random_state``) on
    the remaining rows, renumbered in their original order, with the remaining
    clients' partition; the cost is a whole training.

    Parameters
    ----------
    estimator : estimator
        Any fedlib or scikit-learn estimator whose ``fit(X, y=None, ...)``
        takes ``parts=`` when a partition is given.

    Attributes
    ----------
    estimator_ : estimator
        The model fitted on the data that remains.
    n_features_in_ : int
        Features of the data given to ``fit``.
    fit_report_ : UnlearningReport
        The first training's cost.

    Notes
    -----
    A request's report copies the refitted estimator's ``fit_report_`` times
    when it has one (else the refit's wall time as server time) and lists every
    remaining client as retrained.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import make_blobs
    >>> from fedlib.unlearn import MUFC, Retrain
    >>> X, _ = make_blobs((30, 30), 2, cluster_std=0.05, random_state=0)
    >>> parts = [np.arange(0, 30), np.arange(30, 60)]
    >>> model = Retrain(MUFC(2, aggregation="plaintext", random_state=0)).fit(X, parts=parts)
    >>> report = model.unlearn([3, 40])
    >>> report.clients_retrained, report.exact, model.estimator_.client_size(1)
    ((0, 1), True, 29)
    """

    _fitted_attribute = "estimator_"

    def __init__(self, estimator) -> None:
        self.estimator = estimator

    @property
    def unlearns(self) -> frozenset[str]:
        """Samples, and clients when ``fit`` was given a partition."""
        if getattr(self, "_given_parts", False):
            return frozenset({"samples", "clients"})
        return frozenset({"samples"})

    def fit(self, X, y=None, *, parts=None) -> Retrain:
        """Fit a clone of ``estimator`` on ``X`` (and ``y``, and ``parts`` when given).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            All points.
        y : array-like of shape (n_samples,), optional
            Targets, passed on when given.
        parts : list of array-like of int, optional
            Client ``l`` holds the rows ``X[parts[l]]``; ``None``: one client.

        Returns
        -------
        Retrain
            ``self``, fitted.
        """
        X = check_array(X)
        self.n_features_in_ = X.shape[1]
        self._X, self._y = X, None if y is None else np.asarray(y)
        self._ids = np.arange(X.shape[0])
        self._given_parts = parts is not None
        self._parts = check_partition(parts if parts is not None else [np.arange(X.shape[0])], X.shape[0])
        self._alive_clients = list(range(len(self._parts)))
        self.estimator_, seconds = self._refit()
        self.fit_report_ = self._report_of(self.estimator_, seconds)
        return self

    def _refit(self):
        start = time.perf_counter()
        model = clone(self.estimator)
        kwargs = {}
        if self._given_parts:
            position = np.full(self._X.shape[0], -1)
            position[self._ids] = np.arange(self._ids.size)
            kwargs["parts"] = [position[self._parts[c]] for c in self._alive_clients]
        y = None if self._y is None else self._y[self._ids]
        model.fit(self._X[self._ids], y, **kwargs)
        return model, time.perf_counter() - start

    def _report_of(self, model, seconds: float, **fields) -> UnlearningReport:
        report = getattr(model, "fit_report_", None)
        times = (
            {"client_seconds": report.client_seconds, "aggregation_seconds": report.aggregation_seconds,
             "server_seconds": report.server_seconds, "rounds": report.rounds, "bytes_sent": report.bytes_sent}
            if report is not None
            else {"server_seconds": seconds, "rounds": 1}
        )  # fmt: skip
        return UnlearningReport(server_refit=True, **times, **fields)

    def _model_state(self) -> dict[str, np.ndarray]:
        check_is_fitted(self, "estimator_")
        return _state_of(self.estimator_)

    def _retrained_state(self) -> dict[str, np.ndarray]:
        """A fresh clone of ``estimator`` fitted on the rows still held: what every request does, so it must agree."""
        check_is_fitted(self, "estimator_")
        params = self.estimator.get_params(deep=True) if hasattr(self.estimator, "get_params") else {}
        if any(v is None for n, v in params.items() if n == "random_state" or n.endswith("__random_state")):
            raise NotImplementedError(
                "Retrain of an estimator with random_state=None draws fresh entropy at every refit: there is no "
                "randomness to couple a retraining to; pass an int."
            )
        return _state_of(self._refit()[0])

    def _held_samples(self) -> NDArrayInt:
        return self._ids

    def _held_clients(self) -> NDArrayInt:
        return np.array(self._alive_clients, dtype=np.int64)

    def _unlearn(self, samples: NDArrayInt, clients: NDArrayInt) -> UnlearningReport:
        """Drop the rows and clients, then refit from scratch."""
        gone = set(clients.tolist())
        keep = ~np.isin(self._ids, samples)
        for c in gone:
            keep &= ~np.isin(self._ids, self._parts[c])
        remaining = [c for c in self._alive_clients if c not in gone and np.isin(self._parts[c], self._ids[keep]).any()]
        if not remaining:
            raise UnlearningRequestError("cannot unlearn everything: no data would remain to retrain on.")
        self._ids = self._ids[keep]
        self._parts = [p[np.isin(p, self._ids)] for p in self._parts]
        self._alive_clients = remaining
        self.estimator_, seconds = self._refit()
        return self._report_of(
            self.estimator_,
            seconds,
            forgotten_samples=tuple(samples.tolist()),
            forgotten_clients=tuple(sorted(gone)),
            clients_retrained=tuple(remaining),
        )

    def predict(self, X):
        """The refitted estimator's ``predict``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points.

        Returns
        -------
        ndarray
            ``estimator_.predict(X)``.
        """
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict(X)


def _state_of(model) -> dict[str, np.ndarray]:
    """A fitted estimator's arrays: its ``_model_state`` for a method that forgets, else its fitted array attributes."""
    if isinstance(model, UnlearningMixin):
        return model._model_state()
    return UnlearningMixin._model_state(model)
