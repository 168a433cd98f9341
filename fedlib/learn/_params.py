"""Models as flat float32 vectors: what clients upload, aggregators sum and the server averages.

The order of the entries is :meth:`torch.nn.Module.named_parameters` order,
each parameter flattened in C order (that of :func:`torch.nn.utils.parameters_to_vector`).
:class:`ParameterLayout` goes the other way without copying: it cuts a vector,
or a stack of vectors, into views shaped like the parameters, which
``torch.func.functional_call`` runs the model with.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn


class ParameterLayout:
    """Where each parameter of a model sits in its flat vector.

    Parameters
    ----------
    model : torch.nn.Module
        A model without buffers (batch norm statistics would not be part of the vector).

    Attributes
    ----------
    names : tuple of str
        Parameter names, in vector order.
    shapes : tuple of tuple of int
        Their shapes.
    sizes : tuple of int
        Their numbers of entries.
    n_parameters : int
        ``d``, the length of the vector.

    Raises
    ------
    ValueError
        If the model has buffers or no parameters.

    Examples
    --------
    >>> import torch
    >>> from fedlib.learn import ParameterLayout, make_model
    >>> layout = ParameterLayout(make_model("softmax"))
    >>> layout.names, layout.n_parameters
    (('fc.weight', 'fc.bias'), 7850)
    >>> views = layout.unflatten(torch.zeros(3, 7850))  # three models at once, no copy
    >>> tuple(views["fc.weight"].shape)
    (3, 10, 784)
    """

    def __init__(self, model: nn.Module) -> None:
        buffers = [name for name, _ in model.named_buffers()]
        if buffers:
            raise ValueError(
                f"models with buffers are not supported (found {buffers[:3]}): a flat parameter vector would leave "
                "them out of federated averaging (batch norm statistics); use a model without them."
            )
        named = list(model.named_parameters())
        if not named:
            raise ValueError("the model has no parameters.")
        self.names = tuple(name for name, _ in named)
        self.shapes = tuple(tuple(p.shape) for _, p in named)
        self.sizes = tuple(math.prod(shape) for shape in self.shapes)
        self.n_parameters = int(sum(self.sizes))

    def unflatten(self, vector: torch.Tensor) -> dict[str, torch.Tensor]:
        """Views of ``vector`` shaped like the parameters (no copy).

        Parameters
        ----------
        vector : torch.Tensor of shape (..., d)
            One flat vector, or a stack of them (leading dimensions are kept).

        Returns
        -------
        dict of str to torch.Tensor
            ``name -> vector[..., offset:offset + size].view(..., *shape)``.

        Raises
        ------
        ValueError
            If the last dimension is not ``d``.
        """
        if vector.shape[-1] != self.n_parameters:
            raise ValueError(
                f"a flat vector of this model has length {self.n_parameters}, got shape {tuple(vector.shape)}."
            )
        pieces = torch.split(vector, self.sizes, dim=-1)
        return {
            name: piece.unflatten(-1, shape) if shape else piece.squeeze(-1)
            for name, piece, shape in zip(self.names, pieces, self.shapes, strict=True)
        }

    def flatten(self, tensors: dict[str, torch.Tensor]) -> torch.Tensor:
        """Concatenate per-parameter tensors (e.g. gradients) into flat vectors.

        Parameters
        ----------
        tensors : dict of str to torch.Tensor
            One tensor per parameter name, each of shape ``(..., *shape)`` with the same leading dimensions.

        Returns
        -------
        torch.Tensor of shape (..., d)
            A new tensor.
        """
        first = tensors[self.names[0]]
        lead = tuple(first.shape[: first.dim() - len(self.shapes[0])])
        return torch.cat(
            [tensors[name].reshape(*lead, size) for name, size in zip(self.names, self.sizes, strict=True)], dim=-1
        )


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

    Examples
    --------
    >>> from fedlib.learn import make_model, n_parameters
    >>> n_parameters(make_model("cnn_paper"))
    1663370
    """
    return int(sum(p.numel() for p in model.parameters()))


def get_flat(model: nn.Module) -> np.ndarray:
    """The model's parameters as one new float32 vector.

    Parameters
    ----------
    model : torch.nn.Module
        The model.

    Returns
    -------
    ndarray of float32, shape (d,)
        A copy (the parameters live in separate tensors, so one copy is needed).

    Examples
    --------
    >>> from fedlib.learn import get_flat, make_model
    >>> get_flat(make_model("softmax", random_state=0)).dtype
    dtype('float32')
    """
    params = [p.detach().reshape(-1) for p in model.parameters()]
    if not params:
        raise ValueError("the model has no parameters.")
    return torch.cat(params).to(torch.float32).numpy()


def set_flat(model: nn.Module, vector) -> nn.Module:
    """Copy a flat vector into the model's parameters, in place.

    Parameters
    ----------
    model : torch.nn.Module
        The model.
    vector : array-like of float, shape (d,)
        As returned by :func:`get_flat`; copied, so the model never aliases it.

    Returns
    -------
    torch.nn.Module
        ``model``.

    Raises
    ------
    ValueError
        If ``vector`` is not 1-D of length ``d``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import get_flat, make_model, set_flat
    >>> model = set_flat(make_model("softmax"), np.zeros(7850))
    >>> float(get_flat(model).max())
    0.0
    """
    v = torch.as_tensor(np.asarray(vector), dtype=torch.float32)
    d = n_parameters(model)
    if v.dim() != 1 or v.numel() != d:
        raise ValueError(f"a flat parameter vector of this model has length {d}, got shape {tuple(v.shape)}.")
    with torch.no_grad():
        offset = 0
        for p in model.parameters():
            p.copy_(v[offset : offset + p.numel()].view_as(p))
            offset += p.numel()
    return model
