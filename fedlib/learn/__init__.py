"""Federated learning with torch on the CPU: models, local SGD, FedAvg over a pluggable aggregator.

- :func:`make_model`: the paper-sized CNN of FedAvg and CPU-sized models, initialised from a seed.
- :func:`get_flat`, :func:`set_flat`, :func:`n_parameters`: models as flat float32 vectors.
- :func:`train_clients`: every client's local SGD from the global parameters, vectorised over
  clients with ``torch.func`` when they hold equally many examples.
- :func:`fedavg`, :func:`server_update`, :class:`PlainSum`: FedAvg (McMahan et al. 2017) whose
  per-round sum is any :class:`Aggregator`, e.g. :class:`fedlib.secagg.SecureAggregator`.
- :func:`predict_logits`, :func:`accuracy`: evaluation of one model or a stack of models.
"""

from fedlib.learn._evaluate import accuracy, predict_logits
from fedlib.learn._fedavg import Aggregated, Aggregator, FedAvgResult, PlainSum, PlainTotal, fedavg, server_update
from fedlib.learn._local import train_clients
from fedlib.learn._models import MODELS, make_model
from fedlib.learn._params import get_flat, n_parameters, set_flat

__all__ = [
    "MODELS",
    "Aggregated",
    "Aggregator",
    "FedAvgResult",
    "PlainSum",
    "PlainTotal",
    "accuracy",
    "fedavg",
    "get_flat",
    "make_model",
    "n_parameters",
    "predict_logits",
    "server_update",
    "set_flat",
    "train_clients",
]
