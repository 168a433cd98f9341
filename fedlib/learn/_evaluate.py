"""Predictions of one model or of a stack of models on a test set: batched, without gradients.

A majority-vote ensemble (Liu et al., TDSC 2025: every cluster's model votes)
needs every model's predictions on the same test set; passing the models'
flat parameter vectors as one ``(n_models, d)`` array returns them all. Besides
accuracy, a language model is scored by its perplexity (KNOT, Su & Li,
INFOCOM 2023, sets a perplexity target on Tiny-Shakespeare).

The forward passes run on ``device`` (default: where ``X`` is, the CPU for an
array); the scores are computed on the host from the logits brought back.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn
from torch.func import functional_call

from fedlib._validation import check_scalar
from fedlib.learn._device import _as_features, _as_labels, _data_device, cuda_determinism, resolve_device
from fedlib.learn._params import ParameterLayout, get_flat


def _stack(model: nn.Module, layout: ParameterLayout, parameters, device: torch.device) -> tuple[torch.Tensor, bool]:
    """The parameter vectors as an aligned ``(n_models, d)`` tensor on ``device``; whether one vector was given."""
    P = get_flat(model) if parameters is None else np.asarray(parameters, dtype=np.float32)
    single = P.ndim == 1
    P = P[None] if single else P
    if P.ndim != 2 or P.shape[1] != layout.n_parameters:
        raise ValueError(
            f"parameters must have shape ({layout.n_parameters},) or (n_models, {layout.n_parameters}), got {P.shape}."
        )
    out = torch.empty(P.shape, dtype=torch.float32, device=device)  # torch's allocation is 64-byte aligned: faster
    out.copy_(torch.from_numpy(P))
    return out, single


def predict_logits(
    model: nn.Module,
    X,
    *,
    parameters=None,
    batch_size: int = 4096,
    n_threads: int | None = 1,
    device: str | torch.device | None = None,
) -> np.ndarray:
    """Logits of one model, or of each of a stack of models, on ``X``.

    Parameters
    ----------
    model : torch.nn.Module
        The architecture; it is not changed.
    X : ndarray or torch.Tensor of float, shape (n, ...)
        Inputs (e.g. :func:`fedlib.data.image_array`).
    parameters : array-like of float32, shape (d,) or (n_models, d), optional
        Flat parameter vectors; default the model's own parameters.
    batch_size : int, default=4096
        Rows per forward pass.
    n_threads : int or None, default=1
        ``torch.set_num_threads(n_threads)`` first (it stays set); ``None`` leaves it alone.
    device : str or torch.device, optional
        Where the forward passes run (:func:`resolve_device`); default the device of ``X`` when
        it is a tensor, else the CPU. ``X`` is moved there unless it already is.

    Returns
    -------
    ndarray of float32
        ``(n, n_classes)`` for one vector (or ``parameters=None``),
        ``(n_models, n, n_classes)`` for a stack; on the host whatever the device.

    Raises
    ------
    ValueError
        If ``parameters`` has the wrong shape.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import get_flat, make_model, predict_logits
    >>> model = make_model("softmax", random_state=0)
    >>> two = np.stack([get_flat(model), np.zeros(7850, dtype=np.float32)])
    >>> predict_logits(model, np.zeros((5, 1, 28, 28)), parameters=two).shape
    (2, 5, 10)
    """
    batch_size = check_scalar(batch_size, "batch_size", "int", min_val=1)
    if n_threads is not None:
        torch.set_num_threads(check_scalar(n_threads, "n_threads", "int", min_val=1))
    device = _data_device(X) if device is None else resolve_device(device)
    layout = ParameterLayout(model)
    P, single = _stack(model, layout, parameters, device)
    X_t = _as_features(X).to(device)  # on the device already: unchanged
    outputs = []
    with torch.no_grad(), cuda_determinism(device):
        for row in P:
            params = layout.unflatten(row)
            chunks = [
                functional_call(model, params, (X_t[b : b + batch_size],)) for b in range(0, len(X_t), batch_size)
            ]
            outputs.append(torch.cat(chunks) if chunks else torch.empty(0, device=device))
    logits = torch.stack(outputs).cpu().numpy()  # on the CPU, the stacked tensor itself
    return logits[0] if single else logits


def predict_proba(
    model: nn.Module,
    X,
    *,
    parameters=None,
    batch_size: int = 4096,
    n_threads: int | None = 1,
    device: str | torch.device | None = None,
) -> np.ndarray:
    """Class probabilities (softmax of the logits) of one model, or of each of a stack of models.

    Parameters
    ----------
    model : torch.nn.Module
        The architecture; it is not changed.
    X : ndarray or torch.Tensor of float, shape (n, ...)
        Inputs.
    parameters : array-like of float32, shape (d,) or (n_models, d), optional
        Flat parameter vectors; default the model's own parameters.
    batch_size : int, default=4096
        Rows per forward pass.
    n_threads : int or None, default=1
        ``torch.set_num_threads(n_threads)`` first; ``None`` leaves it alone.
    device : str or torch.device, optional
        Where the forward passes run (:func:`resolve_device`); default the device of ``X`` when
        it is a tensor, else the CPU. ``X`` is moved there unless it already is.

    Returns
    -------
    ndarray of float32
        ``(n, n_classes)`` or ``(n_models, n, n_classes)``; rows sum to 1.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import make_model, predict_proba
    >>> p = predict_proba(make_model("softmax", random_state=0), np.zeros((3, 1, 28, 28)))
    >>> p.shape, bool(np.allclose(p.sum(axis=1), 1.0))
    ((3, 10), True)
    """
    logits = predict_logits(model, X, parameters=parameters, batch_size=batch_size, n_threads=n_threads, device=device)
    return torch.softmax(torch.from_numpy(logits), dim=-1).numpy()


def accuracy(
    model: nn.Module,
    X,
    y,
    *,
    parameters=None,
    batch_size: int = 4096,
    n_threads: int | None = 1,
    device: str | torch.device | None = None,
) -> float | np.ndarray:
    """Share of the rows of ``X`` whose largest logit is the label, for one model or each of a stack.

    Parameters
    ----------
    model : torch.nn.Module
        The architecture; it is not changed.
    X : ndarray or torch.Tensor of float, shape (n, ...)
        Inputs.
    y : array-like of int, shape (n,)
        Labels.
    parameters : array-like of float32, shape (d,) or (n_models, d), optional
        Flat parameter vectors; default the model's own parameters.
    batch_size : int, default=4096
        Rows per forward pass.
    n_threads : int or None, default=1
        ``torch.set_num_threads(n_threads)`` first; ``None`` leaves it alone.
    device : str or torch.device, optional
        Where the forward passes run (:func:`resolve_device`); default the device of ``X`` when
        it is a tensor, else the CPU. ``X`` is moved there unless it already is.

    Returns
    -------
    float or ndarray of float64
        The accuracy in ``[0, 1]``, or one per model (shape ``(n_models,)``) for a stack.

    Raises
    ------
    ValueError
        If ``X`` and ``y`` differ in length or hold no row.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import accuracy, make_model, set_flat
    >>> model = set_flat(make_model("softmax"), np.zeros(7850))  # all logits equal: class 0 wins
    >>> accuracy(model, np.zeros((4, 1, 28, 28)), [0, 0, 1, 2])
    0.5
    """
    scores, single = _score_each_model(
        "accuracy",
        _share_correct,
        model,
        X,
        y,
        parameters=parameters,
        batch_size=batch_size,
        n_threads=n_threads,
        device=device,
    )
    return float(scores[0]) if single else scores


def perplexity(
    model: nn.Module,
    X,
    y,
    *,
    parameters=None,
    batch_size: int = 4096,
    n_threads: int | None = 1,
    device: str | torch.device | None = None,
) -> float | np.ndarray:
    """Perplexity ``exp(mean cross-entropy)`` of one model, or of each of a stack, on ``(X, y)``.

    The cross-entropy of a row is ``-log softmax(logits)[label]`` in nats (the
    loss local training minimises), computed in float64 from the float32
    logits; the perplexity of a model is the exponential of its mean over the
    rows (Jelinek et al., J. Acoust. Soc. Am. 1977; Bengio et al., JMLR 2003, report it for
    their language model). A model that spreads its probability evenly over
    ``V`` classes has perplexity ``V``; a perfect one has 1.

    Parameters
    ----------
    model : torch.nn.Module
        The architecture; it is not changed.
    X : ndarray or torch.Tensor of float, shape (n, ...)
        Inputs (for a character model: windows of codes, :func:`fedlib.data.text_windows`).
    y : array-like of int, shape (n,)
        Labels (the next character's code), in ``[0, n_classes)``.
    parameters : array-like of float32, shape (d,) or (n_models, d), optional
        Flat parameter vectors; default the model's own parameters.
    batch_size : int, default=4096
        Rows per forward pass.
    n_threads : int or None, default=1
        ``torch.set_num_threads(n_threads)`` first; ``None`` leaves it alone.
    device : str or torch.device, optional
        Where the forward passes run (:func:`resolve_device`); default the device of ``X`` when
        it is a tensor, else the CPU. ``X`` is moved there unless it already is.

    Returns
    -------
    float or ndarray of float64
        The perplexity, at least 1, or one per model (shape ``(n_models,)``) for a stack.

    Raises
    ------
    ValueError
        If ``X`` and ``y`` differ in length, hold no row, or a label lies outside ``[0, n_classes)``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import make_model, perplexity, set_flat
    >>> model = set_flat(make_model("softmax", 4, input_shape=(3,)), np.zeros(16))  # uniform over 4 classes
    >>> round(perplexity(model, np.zeros((5, 3)), [0, 1, 2, 3, 0]), 6)
    4.0
    """
    scores, single = _score_each_model(
        "perplexity",
        _mean_cross_entropy,
        model,
        X,
        y,
        parameters=parameters,
        batch_size=batch_size,
        n_threads=n_threads,
        device=device,
    )
    result = np.exp(scores)
    return float(result[0]) if single else result


def _score_each_model(
    metric: str,
    score: Callable[[np.ndarray, torch.Tensor], float],
    model: nn.Module,
    X,
    y,
    *,
    parameters,
    batch_size: int,
    n_threads: int | None,
    device: str | torch.device | None,
) -> tuple[np.ndarray, bool]:
    """The evaluation loop of :func:`accuracy` and :func:`perplexity`: ``score(logits, labels)`` of each model.

    Parameters
    ----------
    metric : str
        The metric's name, for the error messages.
    score : callable
        ``score(logits, labels)`` with one model's float32 logits of shape ``(n, n_classes)`` and the
        int64 labels of shape ``(n,)``; returns a float.
    model, X, y, parameters, batch_size, n_threads, device
        The arguments of :func:`accuracy` or :func:`perplexity`, passed on unchanged.

    Returns
    -------
    scores : ndarray of float64, shape (n_models,)
        One score per model (one for a single vector).
    single : bool
        Whether a single vector (or ``parameters=None``) was given.

    Raises
    ------
    ValueError
        If ``X`` and ``y`` differ in length or hold no row, or ``score`` raises it.
    """
    labels = _as_labels(y).cpu()  # scored on the host, with the logits brought back
    if len(labels) != len(X):
        raise ValueError(f"X has {len(X)} rows but y has {len(labels)}.")
    if len(labels) == 0:
        raise ValueError(f"the {metric} of no rows is undefined: X and y need at least one row.")
    logits = predict_logits(model, X, parameters=parameters, batch_size=batch_size, n_threads=n_threads, device=device)
    # one model at a time: a score's float64 intermediates for a whole stack would be 8 bytes per logit of every model
    scores = [score(one, labels) for one in logits.reshape(-1, *logits.shape[-2:])]
    return np.array(scores, dtype=np.float64), logits.ndim == 2


def _share_correct(logits: np.ndarray, labels: torch.Tensor) -> float:
    """Share of the rows whose largest logit (the first, on ties) is the label."""
    return float((logits.argmax(axis=-1) == labels.numpy()).mean())


def _mean_cross_entropy(logits: np.ndarray, labels: torch.Tensor) -> float:
    """Mean of ``-log softmax(logits)[label]`` in nats, in float64; labels must lie in ``[0, n_classes)``."""
    n_classes = logits.shape[-1]
    low, high = int(labels.min()), int(labels.max())
    if low < 0 or high >= n_classes:
        raise ValueError(f"labels must lie in [0, n_classes={n_classes}), got values in [{low}, {high}].")
    log_p = torch.log_softmax(torch.from_numpy(logits).to(torch.float64), dim=-1)
    return -log_p.gather(-1, labels.unsqueeze(-1)).mean().item()
