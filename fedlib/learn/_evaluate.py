"""Predictions of one or many models on a test set, batched and without gradients."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from fedlib.learn._params import set_flat


def predict_logits(model: nn.Module, images, *, parameters=None, batch_size: int = 2048) -> np.ndarray:
    """Logits of ``model`` (with ``parameters`` loaded, if given) on ``images``.

    Parameters
    ----------
    model : torch.nn.Module
        The architecture; its parameters are overwritten when ``parameters`` is given.
    images : torch.Tensor of shape (n, 1, 28, 28)
        float32 inputs.
    parameters : array-like of float32, shape (d,) or (n_models, d), optional
        One flat parameter vector, or several: then one block of logits per model.
    batch_size : int, default=2048
        Images per forward pass.

    Returns
    -------
    ndarray of float32
        ``(n, n_classes)``, or ``(n_models, n, n_classes)`` for a stack of parameter vectors.
    """
    if parameters is not None and np.ndim(parameters) == 2:
        return np.stack([predict_logits(model, images, parameters=p, batch_size=batch_size) for p in parameters])
    if parameters is not None:
        set_flat(model, parameters)
    model.eval()
    with torch.no_grad():
        out = [model(images[b : b + batch_size]) for b in range(0, len(images), batch_size)]
    return torch.cat(out).numpy()


def accuracy(model: nn.Module, images, labels, *, parameters=None) -> float:
    """Share of ``images`` whose largest logit is the label.

    Parameters
    ----------
    model : torch.nn.Module
        The architecture.
    images : torch.Tensor of shape (n, 1, 28, 28)
        float32 inputs.
    labels : array-like of int, shape (n,)
        True classes.
    parameters : array-like of float32, shape (d,), optional
        Flat parameters to evaluate (default: the model's own).

    Returns
    -------
    float
        Accuracy in ``[0, 1]``.
    """
    logits = predict_logits(model, images, parameters=parameters)
    return float(np.mean(logits.argmax(axis=1) == np.asarray(labels)))
