"""The models of the federated-learning chapters, with an initialisation fixed by a seed.

Every model maps a float32 batch of shape (n, *input_shape) to logits of shape
(n, n_classes); none has buffers (no batch norm), so a model is its parameter
vector and FedAvg averages all of it. The character model takes its character
codes as floats too (the training code passes float features) and casts them
to integers inside ``forward``.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import torch
from torch import nn

from fedlib._random import check_random_state
from fedlib._typing import SeedLike
from fedlib._validation import check_option, check_scalar

#: The names :func:`make_model` accepts.
MODELS = ("cnn_paper", "lenet5", "cnn_small", "mlp", "softmax", "char_mlp")


class CharMLP(nn.Module):
    """The neural probabilistic language model of Bengio et al. (JMLR 2003) over characters.

    The ``context`` previous characters are looked up in one shared embedding
    table, their vectors concatenated and passed through one hidden layer of
    tanh units to the logits of the next character (the paper's model without
    its optional direct connections from the embeddings to the output).

    Parameters
    ----------
    vocab_size : int
        Characters the embedding table holds (codes ``0 .. vocab_size - 1``).
    context : int
        Characters per input window.
    embed : int
        Dimensions of a character's embedding.
    hidden : int
        Tanh units.
    n_classes : int
        Output logits (the vocabulary size of the next character).
    """

    def __init__(self, vocab_size: int, context: int, embed: int, hidden: int, n_classes: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed)
        self.fc1 = nn.Linear(context * embed, hidden)
        self.fc2 = nn.Linear(hidden, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits of the next character.

        Parameters
        ----------
        x : torch.Tensor of shape (n, context)
            Character codes, as floats or integers (cast to int64 here).

        Returns
        -------
        torch.Tensor of shape (n, n_classes)
            The logits.
        """
        features = self.embedding(x.long()).flatten(start_dim=1)
        return self.fc2(torch.tanh(self.fc1(features)))


def _conv_out(size: int, kernel: int, stride: int, padding: int) -> int:
    return (size + 2 * padding - kernel) // stride + 1


def _check_image_shape(name: str, input_shape: tuple[int, ...]) -> tuple[int, int, int]:
    if len(input_shape) != 3:
        raise ValueError(f"{name} takes images: input_shape must be (channels, height, width), got {input_shape}.")
    channels, height, width = input_shape
    if min(height, width) < 8:
        raise ValueError(f"{name} needs images of at least 8×8 pixels, got {height}×{width}.")
    return channels, height, width


def _build(name: str, n_classes: int, input_shape: tuple[int, ...], hidden: int, embed: int) -> nn.Module:
    if name == "char_mlp":
        if len(input_shape) != 1:
            raise ValueError(
                f"{name} takes windows of character codes: input_shape must be (context,), got {input_shape}."
            )
        return CharMLP(n_classes, input_shape[0], embed, hidden, n_classes)
    if name in ("mlp", "softmax"):
        n_in = math.prod(input_shape)
        if name == "softmax":
            layers = [("flatten", nn.Flatten()), ("fc", nn.Linear(n_in, n_classes))]
        else:
            layers = [
                ("flatten", nn.Flatten()),
                ("fc1", nn.Linear(n_in, hidden)),
                ("relu1", nn.ReLU()),
                ("fc2", nn.Linear(hidden, n_classes)),
            ]
        return nn.Sequential(OrderedDict(layers))
    channels, height, width = _check_image_shape(name, input_shape)
    if name == "cnn_small":
        h, w = height, width
        for _ in range(2):
            h, w = _conv_out(h, 5, 2, 2), _conv_out(w, 5, 2, 2)
        layers = [
            ("conv1", nn.Conv2d(channels, 8, 5, stride=2, padding=2)),
            ("relu1", nn.ReLU()),
            ("conv2", nn.Conv2d(8, 16, 5, stride=2, padding=2)),
            ("relu2", nn.ReLU()),
            ("flatten", nn.Flatten()),
            ("fc", nn.Linear(16 * h * w, n_classes)),
        ]
    elif name == "cnn_paper":
        # max pooling before the ReLU computes the same function as after it (both are monotone), on 4x fewer values
        h, w = height // 4, width // 4
        layers = [
            ("conv1", nn.Conv2d(channels, 32, 5, padding=2)),
            ("pool1", nn.MaxPool2d(2)),
            ("relu1", nn.ReLU()),
            ("conv2", nn.Conv2d(32, 64, 5, padding=2)),
            ("pool2", nn.MaxPool2d(2)),
            ("relu2", nn.ReLU()),
            ("flatten", nn.Flatten()),
            ("fc1", nn.Linear(64 * h * w, 512)),
            ("relu3", nn.ReLU()),
            ("fc2", nn.Linear(512, n_classes)),
        ]
    else:  # lenet5
        h, w = (height // 2 - 4) // 2, (width // 2 - 4) // 2
        if min(h, w) < 1:  # the unpadded second convolution needs 5x5 pooled maps
            raise ValueError(f"{name} needs images of at least 12×12 pixels, got {height}×{width}.")
        layers = [
            ("conv1", nn.Conv2d(channels, 6, 5, padding=2)),
            ("pool1", nn.MaxPool2d(2)),
            ("relu1", nn.ReLU()),
            ("conv2", nn.Conv2d(6, 16, 5)),
            ("pool2", nn.MaxPool2d(2)),
            ("relu2", nn.ReLU()),
            ("flatten", nn.Flatten()),
            ("fc1", nn.Linear(16 * h * w, 120)),
            ("relu3", nn.ReLU()),
            ("fc2", nn.Linear(120, 84)),
            ("relu4", nn.ReLU()),
            ("fc3", nn.Linear(84, n_classes)),
        ]
    return nn.Sequential(OrderedDict(layers))


def make_model(
    name: str,
    n_classes: int = 10,
    *,
    random_state: SeedLike = None,
    input_shape: tuple[int, ...] = (1, 28, 28),
    hidden: int = 64,
    embed: int = 16,
) -> nn.Module:
    """Build one of the book's models, initialised from ``random_state`` alone.

    - ``"cnn_paper"``: the CNN of FedAvg (McMahan et al., AISTATS 2017): two
      5×5 convolutions with 32 and 64 channels (padding 2), each followed by
      2×2 max pooling and a ReLU, a fully connected layer of 512 units with a
      ReLU, and the output layer; 1,663,370 parameters on 28×28 images with 10
      classes. Liu et al. (TDSC 2025) train "a simple two-layer CNN" on MNIST
      without giving its architecture; this is the usual reading (the book's
      ``scale="paper"`` model).
    - ``"lenet5"``: LeNet-5 (LeCun et al. 1998) as KNOT (Su & Li, INFOCOM 2023)
      trains it on MNIST and FEMNIST: 6 and 16 channels of 5×5 convolutions
      with 2×2 max pooling, then 120, 84 and ``n_classes`` units; 61,706
      parameters for 10 classes.
    - ``"cnn_small"``: the CPU-sized CNN of the book's default runs: two 5×5
      convolutions with stride 2 (8 and 16 channels, padding 2, ReLU) and a
      linear output layer; 11,274 parameters for 10 classes on 28×28 images,
      52,094 for FEMNIST's 62. Strides instead of pooling make it about six
      times cheaper to train than the same convolutions followed by pooling.
    - ``"mlp"``: one hidden layer of ``hidden`` ReLU units (50,890 parameters
      for 784 inputs, 64 units and 10 classes).
    - ``"softmax"``: multinomial logistic regression (7,850 parameters for 784
      inputs and 10 classes).
    - ``"char_mlp"``: the neural probabilistic language model of Bengio et al.
      (JMLR 2003) over characters: the ``context`` previous
      character codes (``input_shape=(context,)``, floats holding integers in
      ``[0, n_classes)``) share an embedding of ``embed`` dimensions, are
      concatenated and go through ``hidden`` tanh units to ``n_classes`` logits,
      ``n_classes`` being the vocabulary size. 25,937 parameters for a context
      of 8, 65 characters (tiny-shakespeare), ``embed=16`` and ``hidden=128``.

    Every weight and bias is drawn from ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``,
    and every embedding from ``N(0, 1)``, PyTorch's default distributions for
    these layers, but from a numpy Generator (:func:`init_parameters`): the
    initial model depends on ``random_state`` only, not on torch's global random state
    or version.

    Parameters
    ----------
    name : str
        One of :data:`MODELS`.
    n_classes : int, default=10
        Output units.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Seed of the initialisation; ``None`` draws fresh entropy.
    input_shape : tuple of int, default=(1, 28, 28)
        Shape of one input. The CNNs take (channels, height, width); ``"mlp"``
        and ``"softmax"`` flatten any shape (e.g. ``(600,)`` for Purchase-like
        features); ``"char_mlp"`` takes ``(context,)``.
    hidden : int, default=64
        Hidden units of ``"mlp"`` and ``"char_mlp"`` (ignored by the other models).
    embed : int, default=16
        Dimensions of a character's embedding in ``"char_mlp"`` (ignored by the other models).

    Returns
    -------
    torch.nn.Module
        The model in training mode, float32, on the CPU.

    Raises
    ------
    ValueError
        For an unknown name, fewer than 2 classes or an input shape the model cannot take.

    Examples
    --------
    >>> from fedlib.learn import get_flat, make_model
    >>> model = make_model("cnn_small", random_state=0)
    >>> get_flat(model).shape
    (11274,)
    >>> bool((get_flat(make_model("cnn_small", random_state=0)) == get_flat(model)).all())
    True
    """
    check_option(name, "name", MODELS)
    n_classes = check_scalar(n_classes, "n_classes", "int", min_val=2)
    hidden = check_scalar(hidden, "hidden", "int", min_val=1)
    embed = check_scalar(embed, "embed", "int", min_val=1)
    input_shape = tuple(int(check_scalar(s, "input_shape entries", "int", min_val=1)) for s in input_shape)
    if not input_shape:
        raise ValueError("input_shape must have at least one dimension.")
    model = _build(name, n_classes, input_shape, hidden, embed)
    init_parameters(model, random_state=random_state)
    return model


def init_parameters(model: nn.Module, *, random_state: SeedLike) -> nn.Module:
    """Draw every parameter of ``model`` from PyTorch's default distribution with a numpy Generator.

    Weights and biases come from ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``. A
    weight's ``fan_in`` is its number of entries per output unit
    (``in_features``, or ``in_channels · kernel area``); a bias uses the
    ``fan_in`` of the weight of the same layer (``<layer>.weight``). The weight
    of a :class:`torch.nn.Embedding` comes from ``N(0, 1)`` instead (its
    ``padding_idx`` row, if any, is zero), as
    :meth:`torch.nn.Embedding.reset_parameters` draws it. Parameters are drawn
    in :meth:`torch.nn.Module.named_parameters` order from one stream, each as
    float64 numbers rounded to float32. Training from scratch again "with a
    fresh seed" (Liu et al., TDSC 2025, retrain a cluster after an unlearning
    request) is this function with another seed.

    Parameters
    ----------
    model : torch.nn.Module
        A model whose parameters are weights of dimension >= 2 (embedding
        tables included) and biases named like their layer's weight.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None
        Seed of the draw.

    Returns
    -------
    torch.nn.Module
        ``model``, re-initialised in place.

    Raises
    ------
    ValueError
        If a 1-D parameter has no weight of the same layer to take its fan-in from.

    Examples
    --------
    >>> from fedlib.learn import get_flat, init_parameters, make_model
    >>> a = make_model("softmax", random_state=1)
    >>> b = init_parameters(make_model("softmax", random_state=2), random_state=1)
    >>> bool((get_flat(a) == get_flat(b)).all())
    True
    """
    rng = check_random_state(random_state)
    params = dict(model.named_parameters())
    embeddings = {
        f"{prefix}.weight" if prefix else "weight": module
        for prefix, module in model.named_modules()
        if isinstance(module, nn.Embedding)
    }
    with torch.no_grad():
        for name, param in params.items():
            if name in embeddings:
                values = rng.standard_normal(size=tuple(param.shape)).astype(np.float32)
                padding = embeddings[name].padding_idx
                if padding is not None:
                    values[padding] = 0.0
                param.copy_(torch.from_numpy(values))
                continue
            if param.dim() >= 2:
                fan_in = param[0].numel()
            else:
                prefix = name.rsplit(".", 1)[0] if "." in name else ""
                weight = params.get(f"{prefix}.weight" if prefix else "weight")
                if weight is None or weight.dim() < 2:
                    raise ValueError(f"parameter {name!r} is 1-D and has no layer weight to take its fan-in from.")
                fan_in = weight[0].numel()
            bound = 1.0 / math.sqrt(fan_in)
            values = rng.uniform(-bound, bound, size=tuple(param.shape)).astype(np.float32)
            param.copy_(torch.from_numpy(values))
    return model
