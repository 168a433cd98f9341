"""Federated learning with torch on the CPU or a GPU: models, local SGD, FedAvg over a pluggable aggregator.

- Models (:func:`make_model`, names in :data:`MODELS`): the CNN of FedAvg for
  the papers' scale, LeNet-5 (KNOT), CPU-sized models for the book's default
  runs (a strided CNN, an MLP, softmax regression), and a character language
  model (the neural probabilistic language model of Bengio et al., JMLR 2003);
  every initial model is fixed by a seed (:func:`init_parameters`).
- Flat parameter vectors, what clients upload and aggregators sum:
  :func:`get_flat`, :func:`set_flat`, :func:`n_parameters`, and
  :class:`ParameterLayout` (copy-free views of a vector or a stack of vectors).
- Local training (:func:`train_clients`, hyper-parameters :class:`LocalSGD`,
  result :class:`ClientUpdates`): mini-batch SGD of many clients at once,
  vectorised over clients with ``torch.func.vmap`` or client by client, the faster
  path picked by :func:`choose_method` (a cost model of both paths from the model's layers,
  the clients' sizes and the batch size, fitted on the CPU); each client's example order has its own stream
  (:func:`client_generator` under a :func:`fedlib.utils.root_sequence`), so a seed fixes every bit.
  Every federated ``fit`` checks its data with :func:`check_training_data`, every prediction its
  queries with :func:`check_queries` (scikit-learn's rules: dense, finite, non-empty, the fitted width).
- FedAvg (McMahan et al. 2017): :class:`FederatedTrainer` and :func:`fedavg`
  run rounds with participation, dropouts (:data:`DropoutRule`), resumption,
  re-initialisation and rollback; the per-round sum is any :class:`Aggregator`
  (the clear :class:`PlainSum` with :class:`PlainTotal`, or secure aggregation,
  which returns an :class:`Aggregated`); :func:`fedavg_weights`, :func:`fedavg_mean` and
  :func:`server_update` average over the clients actually summed; every round
  leaves a :class:`RoundRecord`. Clients that keep their examples (e.g. Flower nodes,
  :mod:`fedlib.flower`) are a :class:`Federation` passed to ``fit`` in place of the arrays: each
  round they train on a :class:`RoundRequest` and sum their updates with the round's aggregator.
- Asynchronous federated learning on a simulated clock (:class:`AsyncFederatedTrainer`,
  records :class:`AsyncRound`, heavy-tailed client times :func:`pareto_training_times`, client updates kept
  for calibrated unlearning :class:`StoredUpdates`):
  ``P`` clients in flight, aggregation of the ``M`` earliest results (FedBuff; ``M = P`` is
  synchronous FedAvg), aggregation within clusters, and erasure by rolling back only the
  erasing clients' clusters (KNOT, Su & Li 2023, in the semantics of its Plato code).
- KNOT's client profile before clustering (:func:`profile_clients`, :class:`ClientProfile`):
  training times and the model disparity against the profiling round's consensus.
- Evaluation of one model or a stack of models: :func:`predict_logits`,
  :func:`predict_proba`, :func:`accuracy`, and a language model's :func:`perplexity`.
- Devices (:func:`resolve_device`): every trainer takes ``device`` (``"cpu"`` by default,
  ``"cuda"``, ``"cuda:N"`` or ``"auto"``, a GPU when torch sees one), moves the examples there
  once per fit and trains there; the trained parameters come back to the host as float32 numpy,
  and everything else (aggregation, secure aggregation, the simulated clock, histories,
  unlearning bookkeeping) stays on the host. On the CPU a seed fixes every bit; on a GPU the
  results agree with the CPU's to a tolerance.

Simulation entry points call ``torch.set_num_threads(1)`` unless told otherwise
(``n_threads``): many small models train faster on one thread each, and results
are reproducible bit for bit. Of the rest of fedlib this package uses only
:mod:`fedlib.data`'s conventions; :mod:`fedlib.secagg` and :mod:`fedlib.unlearn` plug into it.
"""

from fedlib._optional import import_optional

import_optional("torch", "learn", feature="fedlib.learn")

from fedlib.learn._async import AsyncFederatedTrainer, AsyncRound, StoredUpdates, pareto_training_times
from fedlib.learn._device import DeviceData, cuda_determinism, resolve_device
from fedlib.learn._evaluate import accuracy, perplexity, predict_logits, predict_proba
from fedlib.learn._fedavg import (
    Aggregated,
    Aggregator,
    DropoutRule,
    FederatedTrainer,
    PlainSum,
    PlainTotal,
    RoundRecord,
    fedavg,
    fedavg_mean,
    fedavg_weights,
    server_update,
)
from fedlib.learn._federation import Federation, RoundRequest
from fedlib.learn._local import (
    PATH_COSTS,
    ClientUpdates,
    LocalSGD,
    PathCost,
    check_queries,
    check_training_data,
    choose_method,
    client_generator,
    path_seconds,
    train_clients,
)
from fedlib.learn._models import MODELS, init_parameters, make_model
from fedlib.learn._params import ParameterLayout, get_flat, n_parameters, set_flat
from fedlib.learn._profile import ClientProfile, profile_clients

__all__ = [
    "MODELS",
    "PATH_COSTS",
    "Aggregated",
    "Aggregator",
    "AsyncFederatedTrainer",
    "AsyncRound",
    "ClientProfile",
    "ClientUpdates",
    "DeviceData",
    "DropoutRule",
    "FederatedTrainer",
    "Federation",
    "LocalSGD",
    "ParameterLayout",
    "PathCost",
    "PlainSum",
    "PlainTotal",
    "RoundRecord",
    "RoundRequest",
    "StoredUpdates",
    "accuracy",
    "check_queries",
    "check_training_data",
    "choose_method",
    "client_generator",
    "cuda_determinism",
    "fedavg",
    "fedavg_mean",
    "fedavg_weights",
    "get_flat",
    "init_parameters",
    "make_model",
    "n_parameters",
    "pareto_training_times",
    "path_seconds",
    "perplexity",
    "predict_logits",
    "predict_proba",
    "profile_clients",
    "resolve_device",
    "server_update",
    "set_flat",
    "train_clients",
]
