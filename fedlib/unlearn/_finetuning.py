"""Fine-tuning: the naive baseline of federated unlearning, and the FedAvg base it shares with rapid retraining.

To forget a client, the server drops it and continues FedAvg from the current global model on the
remaining clients for a few rounds (``unlearning_rounds``). Nothing is computed again from scratch: the
starting point holds the forgotten client's contribution, which the extra rounds only dilute. It is the
baseline that approximate methods must beat (Liu et al., INFOCOM 2022, and FedEraser, IWQoS 2021, both
compare against retraining from scratch; fine-tuning on the remaining data is the usual lower bar of
machine unlearning, e.g. Golatkar et al., CVPR 2020). Its report is ``exact=False``.

:class:`_FederatedForgetting` holds what fine-tuning and :class:`~fedlib.unlearn.RapidRetraining` share:
the first training is FedAvg (McMahan et al., AISTATS 2017) over every client with
:class:`fedlib.learn.FederatedTrainer` and :class:`fedlib.learn.LocalSGD`, summed in the clear
(:class:`fedlib.learn.PlainSum`), as :class:`~fedlib.unlearn.ClusteredUnlearning` trains with
``cluster_size = N`` and ``secure=False``; the seeds come from ``random_state`` through
:func:`fedlib.utils.root_sequence` children, so one seed gives the same bits.
"""

from __future__ import annotations

import numpy as np
import torch
from sklearn.base import BaseEstimator

from fedlib._random import child_sequence as _child
from fedlib._random import root_sequence
from fedlib._typing import NDArrayInt, SeedLike
from fedlib._validation import check_is_fitted, check_option, check_scalar
from fedlib.base import UnlearningMixin, UnlearningReport
from fedlib.exceptions import UnlearningRequestError
from fedlib.learn import (
    FederatedTrainer,
    LocalSGD,
    accuracy,
    check_queries,
    check_training_data,
    make_model,
    predict_logits,
    resolve_device,
)

__all__ = ["FineTuning"]

#: Stream keys under the root seed: the first training, and the run that serves request g is (_FORGETTING, g).
_TRAINING, _FORGETTING = 0, 1


class _FederatedForgetting(UnlearningMixin, BaseEstimator):
    """FedAvg over every client, then a run over the remaining clients per request (subclasses say which).

    Subclasses set the hyper-parameters in ``__init__`` (at least ``model``, ``rounds``, ``local``,
    ``eval_every``, ``method``, ``random_state``, ``device``), check their own in ``_check_method_params`` and
    implement ``_forget(clients, start)``, which runs the request's rounds and returns the report's
    method-specific fields.
    """

    _fitted_attribute = "params_"

    unlearns = frozenset({"clients"})

    # -- training -----------------------------------------------------------------------------------------------------

    def _check_method_params(self) -> None:
        """Check the subclass's own hyper-parameters (called by :meth:`fit` before any training)."""

    def fit(self, X, y, *, parts=None, test_data: tuple | None = None):
        """Train the global model with FedAvg over every client for ``rounds`` rounds.

        Parameters
        ----------
        X : ndarray of float, shape (n_samples, ...)
            All clients' examples.
        y : array-like of int, shape (n_samples,)
            Labels.
        parts : sequence of array-like of int, optional
            Client ``u``'s rows of ``X`` (client ids are positions in this list); default one client
            holding every row.
        test_data : (X_test, y_test), optional
            Evaluated every ``eval_every`` rounds of training and of every request's run.

        Returns
        -------
        self
            Fitted.

        Raises
        ------
        ValueError
            For bad hyper-parameters or data.
        TypeError
            For a ``model`` or ``local`` of the wrong type.
        """
        X, y, parts = check_training_data(X, y, parts)
        self._rounds = check_scalar(self.rounds, "rounds", "int", min_val=1)
        self._eval_every = check_scalar(self.eval_every, "eval_every", "int", min_val=1)
        self._method = check_option(self.method, "method", ("auto", "vmap", "loop"))
        self.device_ = resolve_device(self.device)
        self._local = LocalSGD() if self.local is None else self.local
        if not isinstance(self._local, LocalSGD):
            raise TypeError(f"local must be a LocalSGD, got {type(self.local).__name__}.")
        self._check_method_params()
        model = self.model
        if isinstance(model, str):
            labels = [int(y.max())] if test_data is None else [int(y.max()), int(np.max(test_data[1]))]
            model = make_model(model, max(max(labels) + 1, 2), random_state=0, input_shape=tuple(X.shape[1:]))
        self._root = root_sequence(self.random_state)
        self._X, self._y, self._test = X, y, test_data
        trainer = FederatedTrainer(
            model, local=self._local, eval_every=self._eval_every, method=self._method, device=self.device_,
            random_state=_child(self._root, _TRAINING),
        ).fit(X, y, parts=parts, test_data=test_data, n_rounds=0)  # fmt: skip
        self.model_ = trainer.model_
        self.parts_ = parts
        self.n_features_in_ = trainer.n_features_in_
        self.initial_params_ = trainer.params_.copy()
        trainer.run(self._rounds)
        self.trainer_ = trainer
        self.params_ = trainer.params_.copy()
        self.unlearned_: list[int] = []
        self.generation_ = 0
        self.history_ = [
            {"round": r.round_index + 1, "accuracy": r.accuracy} for r in trainer.history_ if r.accuracy is not None
        ]
        self.fit_report_ = UnlearningReport(
            clients_retrained=tuple(range(len(parts))), server_refit=True, **_costs(trainer)
        )
        return self

    def _trainer(self, cls: type[FederatedTrainer], parameters, X=None) -> FederatedTrainer:
        """A ``cls`` trainer over the held clients at round 0 from ``parameters``, seeded by the current generation."""
        held = self._held_clients()
        trainer = cls(
            self.model_, local=self._local, eval_every=self._eval_every, method=self._method, device=self.device_,
            random_state=_child(self._root, _FORGETTING, self.generation_),
        )  # fmt: skip
        self._configure(trainer)
        trainer.fit(
            self._X if X is None else X,
            self._y,
            parts=[self.parts_[u] for u in held],
            client_ids=held,
            test_data=self._test,
            n_rounds=0,
        )
        return trainer.reset(parameters=parameters)

    def _configure(self, trainer: FederatedTrainer) -> None:
        """Give a request's trainer the subclass's settings before it is fitted (nothing by default)."""

    # -- prediction ---------------------------------------------------------------------------------------------------

    def predict(self, X) -> np.ndarray:
        """Labels of the global model: the class of the largest logit.

        Parameters
        ----------
        X : ndarray of float, shape (n, ...)
            Queries.

        Returns
        -------
        ndarray of int64, shape (n,)
            Predicted labels.
        """
        check_is_fitted(self, "params_")
        X = check_queries(X, self.n_features_in_, type(self).__name__)
        logits = predict_logits(self.model_, X, parameters=self.params_, device=self.device_)
        return logits.argmax(axis=1).astype(np.int64)

    def evaluate(self, X=None, y=None) -> float:
        """Test accuracy of the global model.

        Parameters
        ----------
        X : ndarray of float, optional
            Queries; default the ``test_data`` given to :meth:`fit`.
        y : array-like of int, optional
            Labels, with ``X``.

        Returns
        -------
        float
            Accuracy in ``[0, 1]``.

        Raises
        ------
        ValueError
            Without data to evaluate on, or with only one of ``X`` and ``y``.
        """
        check_is_fitted(self, "params_")
        if X is None and y is None:
            if self._test is None:
                raise ValueError("no test data: pass X and y, or give test_data to fit.")
            X, y = self._test
        elif X is None or y is None:
            raise ValueError("pass both X and y.")
        return float(accuracy(self.model_, X, y, parameters=self.params_, device=self.device_))

    def _model_state(self) -> dict[str, np.ndarray]:
        """The arrays that identify the fitted model: the global model's flat float32 vector (a copy)."""
        check_is_fitted(self, "params_")
        return {"params": self.params_.copy()}

    # -- unlearning ---------------------------------------------------------------------------------------------------

    def _held_clients(self) -> NDArrayInt:
        return np.setdiff1d(np.arange(len(self.parts_), dtype=np.int64), np.asarray(self.unlearned_, dtype=np.int64))

    def _held_samples(self) -> NDArrayInt:
        held = [self.parts_[u] for u in self._held_clients()]
        return np.unique(np.concatenate(held)) if held else np.empty(0, dtype=np.int64)

    def _unlearn(self, samples: NDArrayInt, clients: NDArrayInt) -> UnlearningReport:
        if np.setdiff1d(self._held_clients(), clients).size == 0:
            raise UnlearningRequestError("cannot unlearn every client: no client would remain to train the model.")
        before = self.params_.copy()
        self.unlearned_.extend(clients.tolist())
        self.generation_ += 1
        trainer, details, exact = self._forget(before)
        self.trainer_ = trainer
        self.params_ = trainer.params_.copy()
        details = {
            **details,
            "accuracy": self.evaluate() if self._test is not None else None,
            "curve": [
                {"round": r.round_index + 1, "accuracy": r.accuracy} for r in trainer.history_ if r.accuracy is not None
            ],
            "distance_to_before": float(np.linalg.norm(self.params_.astype(np.float64) - before)),
        }
        return UnlearningReport(
            forgotten_clients=tuple(clients.tolist()),
            clients_retrained=tuple(self._held_clients().tolist()),
            server_refit=bool(trainer.history_),
            exact=exact,
            details=details,
            **_costs(trainer),
        )

    def _forget(self, before: np.ndarray) -> tuple[FederatedTrainer, dict, bool]:
        raise NotImplementedError


def _costs(trainer: FederatedTrainer) -> dict:
    """The cost of a trainer's rounds, as report fields: local training, aggregation and uploads, summed."""
    records = trainer.history_
    return {
        "rounds": len(records),
        "client_seconds": float(sum(r.train_seconds for r in records)),
        "aggregation_seconds": float(sum(r.aggregate_seconds for r in records)),
        "bytes_sent": int(sum(r.bytes_sent for r in records)),
    }


class FineTuning(_FederatedForgetting):
    """Forget clients by dropping them and continuing FedAvg on the others: the naive, inexact baseline.

    Training is FedAvg over every client (McMahan et al., AISTATS 2017) with
    :class:`fedlib.learn.FederatedTrainer` and :class:`fedlib.learn.LocalSGD`, as
    :class:`~fedlib.unlearn.ClusteredUnlearning` with ``cluster_size = N`` trains.
    ``unlearn(clients=[...])`` removes the clients and runs ``unlearning_rounds`` more
    FedAvg rounds from the current global model on the remaining clients. The
    forgotten clients' rows are never read again, but the starting point was
    trained on them: what they contributed is diluted, not removed, so the report
    says ``exact=False``. Updates are summed in the clear (plain sums,
    :class:`fedlib.learn.PlainSum`): no secure aggregation.

    Parameters
    ----------
    model : str or torch.nn.Module, default="softmax"
        A :data:`fedlib.learn.MODELS` name or an architecture without buffers.
    rounds : int
        FedAvg rounds ``R`` of the first training.
    unlearning_rounds : int, default=2
        FedAvg rounds run on the remaining clients after each request (0: only drop the clients).
    local : fedlib.learn.LocalSGD, optional
        Local training of the first training and of the fine-tuning; default ``LocalSGD()``.
    eval_every : int, default=1
        Rounds between evaluations on the ``test_data`` given to :meth:`fit`.
    method : {"auto", "vmap", "loop"}, default="auto"
        Local-training path (:func:`fedlib.learn.train_clients`).
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Root seed: the initial model and every example order, of the training (child 0) and of the
        run serving the ``g``-th request (child ``(1, g)``).
    device : str or torch.device, default="cpu"
        Where the training and the fine-tuning run (``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"auto"``;
        :func:`fedlib.learn.resolve_device`); the global model stays on the host. On the CPU the bits
        are those of a run without the option.

    Attributes
    ----------
    params_ : ndarray of float32, shape (d,)
        The global model.
    device_ : torch.device
        The device training runs on (``device`` resolved).
    initial_params_ : ndarray of float32, shape (d,)
        The model before the first round (drawn from the seed).
    model_ : torch.nn.Module
        The architecture (its own parameters are not used).
    parts_ : list of ndarray of int64
        Client ``u``'s rows of the ``X`` given to :meth:`fit`.
    trainer_ : fedlib.learn.FederatedTrainer
        The trainer of the last run: the first training, or the last request's fine-tuning.
    unlearned_ : list of int
        Forgotten clients, in request order.
    generation_ : int
        Requests served.
    history_ : list of dict
        Per evaluated round of the first training: ``round`` and ``accuracy``.
    n_features_in_ : int
        Features per example (the product of ``X.shape[1:]``).
    fit_report_ : UnlearningReport
        The first training: every client as retrained, ``rounds``, ``client_seconds`` (local
        training), ``aggregation_seconds`` and ``bytes_sent`` (the clients' uploads).

    See Also
    --------
    RapidRetraining : Retraining from scratch with a faster optimiser (exact).
    ClusteredUnlearning : With ``cluster_size = N``, FedAvg retrained from scratch (exact).

    Notes
    -----
    A request's report: ``exact=False``; ``rounds`` the fine-tuning rounds; ``clients_retrained``
    the remaining clients (each trains in each round); ``client_seconds`` their local training
    (all clients of a round together, summed over rounds), ``aggregation_seconds`` the sums and
    ``bytes_sent`` their uploads (4 bytes per parameter per client and round). ``details`` holds
    ``start`` (``"current model"``), ``accuracy`` (test accuracy after the request, ``None``
    without test data), ``curve`` (per fine-tuning round, every ``eval_every``: ``round`` and
    ``accuracy``) and ``distance_to_before`` (the Euclidean distance between the models before and
    after the request).

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.unlearn import FineTuning
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(120, 4)).astype(np.float32), rng.integers(0, 2, 120)
    >>> model = FineTuning(rounds=3, unlearning_rounds=1, random_state=0)
    >>> model = model.fit(X, y, parts=np.array_split(np.arange(120), 6))
    >>> report = model.unlearn(clients=[2])
    >>> report.exact, report.rounds, report.clients_retrained
    (False, 1, (0, 1, 3, 4, 5))
    """

    def __init__(
        self,
        model="softmax",
        *,
        rounds: int,
        unlearning_rounds: int = 2,
        local: LocalSGD | None = None,
        eval_every: int = 1,
        method: str = "auto",
        random_state: SeedLike = None,
        device: str | torch.device = "cpu",
    ) -> None:
        self.model = model
        self.rounds = rounds
        self.unlearning_rounds = unlearning_rounds
        self.local = local
        self.eval_every = eval_every
        self.method = method
        self.random_state = random_state
        self.device = device

    def _check_method_params(self) -> None:
        self._unlearning_rounds = check_scalar(self.unlearning_rounds, "unlearning_rounds", "int", min_val=0)

    def fresh_trainer(self, parameters=None, X=None) -> FederatedTrainer:
        """The FedAvg trainer of the current fine-tuning, at round 0, started from ``parameters``.

        After ``before = params_.copy()`` and :meth:`unlearn`,
        ``fresh_trainer(before).run(unlearning_rounds)`` reproduces :attr:`params_` bit for bit.
        Passing an ``X`` whose forgotten clients' rows are replaced (e.g. by NaN) checks that
        fine-tuning never reads them.

        Parameters
        ----------
        parameters : array-like of float32, shape (d,), optional
            Where it starts; default :attr:`params_`.
        X : ndarray of float, optional
            Examples to train on instead of the ones given to :meth:`fit` (same shape).

        Returns
        -------
        fedlib.learn.FederatedTrainer
            Over the remaining clients, with the seed of the last request.
        """
        check_is_fitted(self, "params_")
        return self._trainer(FederatedTrainer, self.params_ if parameters is None else parameters, X)

    def _forget(self, before: np.ndarray) -> tuple[FederatedTrainer, dict, bool]:
        trainer = self.fresh_trainer(before).run(self._unlearning_rounds)
        return trainer, {"start": "current model"}, False
