"""Models for federated learning on 28×28 grey images, all fully determined by a seed.

- ``"cnn_paper"``: the "simple two-layer CNN" of Liu et al. (TDSC 2025) for MNIST, taken as the
  CNN of FedAvg (McMahan et al., AISTATS 2017): conv(1→32, 5×5) – max-pool – conv(32→64, 5×5) –
  max-pool – fc(3136→512) – fc(512→classes), 1,663,370 parameters for 10 classes. For ``scale="paper"``.
- ``"cnn_small"``: the same two-convolution shape, CPU-sized (LeNet-like, no padding): conv(1→6, 5×5) –
  max-pool – conv(6→16, 5×5) – max-pool – fc(256→classes), 5,142 parameters for 10 classes and about a
  tenth of the paper CNN's first-layer arithmetic per image. The book's default.
- ``"mlp"``: one hidden layer of 64 units; ``"softmax"``: multinomial logistic regression.
"""

from __future__ import annotations

import torch
from torch import nn

from fedlib._validation import check_option, check_scalar

MODELS = ("cnn_paper", "cnn_small", "mlp", "softmax")
"""Names accepted by :func:`make_model`."""


def _cnn(width1: int, width2: int, hidden: int | None, n_classes: int, padding: int) -> nn.Sequential:
    layers: list[nn.Module] = [
        nn.Conv2d(1, width1, 5, padding=padding),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(width1, width2, 5, padding=padding),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
    ]
    side = 7 if padding else 4  # 28 -> 14 -> 7 with padding 2; 28 -> 24 -> 12 -> 8 -> 4 without
    features = width2 * side * side
    if hidden:
        layers += [nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, n_classes)]
    else:
        layers.append(nn.Linear(features, n_classes))
    return nn.Sequential(*layers)


def make_model(name: str, n_classes: int = 10, *, seed: int = 0) -> nn.Module:
    """A freshly initialised model whose every weight is fixed by ``seed``.

    Parameters
    ----------
    name : {"cnn_paper", "cnn_small", "mlp", "softmax"}
        The architecture (see the module docstring).
    n_classes : int, default=10
        Output classes (62 for FEMNIST).
    seed : int, default=0
        Seeds a private torch generator for the initialisation (the global
        torch generator is left untouched).

    Returns
    -------
    torch.nn.Module
        Input ``(batch, 1, 28, 28)`` float32, output ``(batch, n_classes)`` logits.

    Examples
    --------
    >>> from fedlib.learn import n_parameters
    >>> n_parameters(make_model("cnn_paper")), n_parameters(make_model("cnn_small"))
    (1663370, 5142)
    """
    check_option(name, "name", MODELS)
    n_classes = check_scalar(n_classes, "n_classes", "int", min_val=2)
    seed = check_scalar(seed, "seed", "int", min_val=0)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if name == "cnn_paper":
            return _cnn(32, 64, 512, n_classes, padding=2)
        if name == "cnn_small":
            return _cnn(6, 16, None, n_classes, padding=0)
        if name == "mlp":
            return nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, n_classes))
        return nn.Sequential(nn.Flatten(), nn.Linear(784, n_classes))
