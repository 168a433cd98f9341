"""Models as flat float32 vectors: what clients upload and secure aggregation sums."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


def n_parameters(model: nn.Module) -> int:
    """Number of trainable parameters.

    Parameters
    ----------
    model : torch.nn.Module
        The model.

    Returns
    -------
    int
        ``d``, the length of :func:`get_flat`.
    """
    return sum(p.numel() for p in model.parameters())


def get_flat(model: nn.Module) -> np.ndarray:
    """The model's parameters as one float32 vector (in ``model.parameters()`` order).

    Parameters
    ----------
    model : torch.nn.Module
        The model.

    Returns
    -------
    ndarray of float32, shape (d,)
        A copy.
    """
    return torch.nn.utils.parameters_to_vector(model.parameters()).detach().numpy().copy()


def set_flat(model: nn.Module, vector) -> nn.Module:
    """Overwrite the model's parameters with a flat vector, in place.

    Parameters
    ----------
    model : torch.nn.Module
        The model.
    vector : array-like of float, shape (d,)
        As returned by :func:`get_flat`.

    Returns
    -------
    torch.nn.Module
        ``model``.

    Raises
    ------
    ValueError
        If the length is not ``d``.
    """
    v = torch.tensor(np.asarray(vector, dtype=np.float32))  # a copy: parameters must not alias the caller's array
    d = n_parameters(model)
    if v.ndim != 1 or v.numel() != d:
        raise ValueError(f"a flat parameter vector of this model has length {d}, got shape {tuple(v.shape)}.")
    with torch.no_grad():
        torch.nn.utils.vector_to_parameters(v, model.parameters())
    return model
