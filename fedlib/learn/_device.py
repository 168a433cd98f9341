"""Where torch trains: one resolver of the ``device`` option, and the data a fitted trainer keeps on it.

Every trainer takes ``device`` (``"cpu"`` by default) and resolves it once in ``fit``
(:func:`resolve_device`) into its ``device_``. The model's parameters and the training
and test examples go to that device once per fit; every step of local training and every
evaluation runs there, and the trained parameters come back to the host as float32 numpy
arrays. The rest of a simulation (the global parameters, aggregation and secure
aggregation, the simulated clock, histories and unlearning bookkeeping) stays on the host in
numpy, whatever the device.

On a CUDA device, local training and evaluation run with cuDNN restricted to
deterministic convolution algorithms, chosen without benchmarking
(:func:`cuda_determinism`), so that a rerun on the same GPU and software repeats
the same convolutions; fedlib sets nothing else (TF32 is left at torch's
defaults, :func:`torch.use_deterministic_algorithms` to the caller).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

import numpy as np
import torch
from sklearn.utils.multiclass import type_of_target

from fedlib.exceptions import DeviceUnavailableError

#: What ``device`` may name, for the messages.
_ACCEPTED = "'cpu', 'cuda', 'cuda:N', 'auto' or a torch.device of type cpu or cuda"


def _parse_device(device, *, only: str) -> torch.device:
    """``device`` as a torch.device of type cpu or cuda (``"auto"`` resolved), without asking for the GPU itself.

    ``only`` says, in the message for another type of device, what the caller supports.
    """
    if isinstance(device, str):
        if device == "auto":
            return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
        try:
            parsed = torch.device(device)
        except (RuntimeError, ValueError):
            raise ValueError(f"device={device!r} is not a device torch knows; use {_ACCEPTED}.") from None
    elif isinstance(device, torch.device):
        parsed = device
    else:
        raise TypeError(
            f"device must be a str or a torch.device ({_ACCEPTED}), got {type(device).__name__} {device!r}."
        )
    if parsed.type not in ("cpu", "cuda"):
        raise ValueError(f"device={device!r}: {only}; use {_ACCEPTED}.")
    return parsed


def resolve_device(device) -> torch.device:
    """The torch device a ``device`` option names, checked against this machine.

    Parameters
    ----------
    device : str or torch.device
        ``"cpu"``; ``"cuda"`` (torch's current GPU) or ``"cuda:N"``; ``"auto"``: ``"cuda"``
        when :func:`torch.cuda.is_available`, else ``"cpu"``; or a :class:`torch.device`
        of type ``cpu`` or ``cuda``. Other accelerators (MPS, XLA) are not supported.

    Returns
    -------
    torch.device
        ``cpu`` (without index), ``cuda`` or ``cuda:N``.

    Raises
    ------
    TypeError
        If ``device`` is neither a string nor a :class:`torch.device` (an int is refused:
        torch would read ``3`` as ``"cuda:3"``).
    ValueError
        For a string torch does not know, or a device type other than cpu and cuda.
    fedlib.exceptions.DeviceUnavailableError
        For CUDA when torch sees no GPU (a CPU-only build, or no driver), or a GPU index
        beyond :func:`torch.cuda.device_count`.

    Examples
    --------
    >>> from fedlib.learn import resolve_device
    >>> resolve_device("cpu")
    device(type='cpu')
    >>> resolve_device("auto").type in ("cpu", "cuda")
    True
    >>> resolve_device("tpu")
    Traceback (most recent call last):
    ...
    ValueError: device='tpu' is not a device torch knows; use 'cpu', 'cuda', 'cuda:N', 'auto' or a torch.device ...
    """
    resolved = _parse_device(device, only="fedlib trains on the CPU or on CUDA GPUs only")
    if resolved.type == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise DeviceUnavailableError(
            f"device={device!r} asks for a CUDA GPU, but torch sees none (torch {torch.__version__}, "
            f"CUDA build: {torch.version.cuda or 'no'}); use device='cpu', or 'auto' to take a GPU only when present."
        )
    count = torch.cuda.device_count()
    if resolved.index is not None and resolved.index >= count:
        raise DeviceUnavailableError(f"device={device!r} names GPU {resolved.index}, but torch sees {count} GPU(s).")
    return resolved


def _as_features(X) -> torch.Tensor:
    """float32 tensor sharing memory with ``X`` when it is already a writable C-contiguous float32 array or tensor.

    A read-only array (a memory map that joblib hands to a worker, a frozen view) is copied once: torch
    cannot share memory it may not write to. A contiguous float32 tensor without gradient is returned as
    it is, not as a new view of it: an estimator whose trainers all hold the same tensor (e.g.
    :class:`fedlib.unlearn.ClusteredUnlearning`) then pickles one copy of the data, not one per trainer.
    """
    if isinstance(X, torch.Tensor):
        if X.dtype == torch.float32 and X.is_contiguous() and not X.requires_grad:
            return X
        return X.detach().to(torch.float32).contiguous()
    X = np.ascontiguousarray(X, dtype=np.float32)
    return torch.from_numpy(X if X.flags.writeable else X.copy())


def _as_labels(y) -> torch.Tensor:
    if isinstance(y, torch.Tensor):
        if y.dtype == torch.int64 and y.is_contiguous() and not y.requires_grad:
            return y  # as it is, like _as_features
        return y.detach().to(torch.int64).contiguous()
    y = np.asarray(y)
    if y.dtype.kind == "f" and np.isfinite(y).all() and (y == np.round(y)).all():
        y = y.astype(np.int64)  # whole-number floats, as scikit-learn's classifiers take them
    if y.dtype.kind not in "iu":
        type_of_target(y, input_name="y", raise_unknown=True)  # scikit-learn's message for unknown label types
        raise TypeError(f"labels must be integers, got dtype {y.dtype}.")
    return torch.from_numpy(np.ascontiguousarray(y, dtype=np.int64))


def _data_device(X) -> torch.device:
    """The device of ``X`` when it is a tensor, else the CPU: what ``device=None`` means for a function."""
    return X.device if isinstance(X, torch.Tensor) else torch.device("cpu")


class DeviceData:
    """Examples on a training device, copied there once and shared; pickled as the host tensor and the device's name.

    The trainers of :mod:`fedlib.learn` hold their examples this way: :meth:`get` gives the tensor on the device,
    made on first use. On the CPU the copy is the host tensor itself (``Tensor.to`` returns it unchanged), so
    training on ``"cpu"`` reads the very tensors it read before devices existed. A GPU copy never enters a
    pickle: unpickling keeps the host tensor, and the copy is made again (the device checked again) on first
    use. Estimators that train several models on the same examples (one trainer per cluster, as
    :class:`fedlib.unlearn.ClusteredUnlearning` does) hand the same object to each (:meth:`reuse`), so the
    examples sit on the GPU once.

    Parameters
    ----------
    host : torch.Tensor
        The examples (or labels) on the host.
    device : torch.device
        Where training runs (:func:`resolve_device`).

    Attributes
    ----------
    host : torch.Tensor
        The host tensor.
    device : torch.device
        The device.

    Examples
    --------
    >>> import numpy as np
    >>> import torch
    >>> from fedlib.learn import DeviceData
    >>> data = DeviceData.reuse(np.zeros((4, 3), dtype=np.float32), torch.device("cpu"))
    >>> data.get() is data.host, DeviceData.reuse(data.host, torch.device("cpu"), [data]) is data
    (True, True)
    """

    __slots__ = ("_copy", "device", "host")

    def __init__(self, host: torch.Tensor, device: torch.device) -> None:
        self.host = host
        self.device = device
        self._copy: torch.Tensor | None = None

    @classmethod
    def reuse(cls, host, device: torch.device, shared: Iterable[DeviceData] = ()) -> DeviceData:
        """The copy in ``shared`` of this very host tensor on this device, else a new one (made now).

        Parameters
        ----------
        host : torch.Tensor or ndarray
            The examples; an array becomes a float32 tensor (floating point) or an int64 one (integers), sharing
            its memory when it already has that type, as the trainers convert it.
        device : torch.device
            The device.
        shared : iterable of DeviceData, optional
            Copies made already; one of the same host tensor on the same device is returned as it is.

        Returns
        -------
        DeviceData
            The copy, on the device.
        """
        if not isinstance(host, torch.Tensor):
            host = _as_features(host) if np.asarray(host).dtype.kind == "f" else _as_labels(host)
        for copy in shared:
            if copy is not None and copy.host is host and copy.device == device:
                return copy
        made = cls(host, device)
        made.get()
        return made

    def get(self) -> torch.Tensor:
        """The tensor on the device (made on first use).

        Returns
        -------
        torch.Tensor
            The copy on ``device`` (on the CPU, ``host`` itself).
        """
        if self._copy is None:
            if self.device.type != "cpu":
                resolve_device(self.device)  # e.g. unpickled where there is no GPU: say so, naming the device
            self._copy = self.host.to(self.device)
        return self._copy

    def __getstate__(self) -> tuple[torch.Tensor, str]:
        return self.host, str(self.device)

    def __setstate__(self, state: tuple[torch.Tensor, str]) -> None:
        self.host, device = state
        self.device = torch.device(device)
        self._copy = None


@contextlib.contextmanager
def cuda_determinism(device: torch.device) -> Iterator[None]:
    """On CUDA: ``torch.backends.cudnn.deterministic = True`` and ``benchmark = False`` for the block, then restored.

    PyTorch's reproducibility notes name the two sources of run-to-run differences in convolutions on a GPU:
    cuDNN's benchmarking, which may pick another algorithm on another run, and algorithms that are not
    deterministic themselves. The flags are process-wide while the block runs (another thread's cuDNN work
    in that time sees them too). On the CPU nothing changes. fedlib's training and evaluation run inside it.

    Parameters
    ----------
    device : torch.device
        Where the block's computations run.

    Yields
    ------
    None
        Inside the block, cuDNN deterministic and not benchmarking when ``device`` is a CUDA device.

    Examples
    --------
    >>> import torch
    >>> from fedlib.learn import cuda_determinism
    >>> with cuda_determinism(torch.device("cpu")):
    ...     pass
    """
    if device.type != "cuda":
        yield
        return
    cudnn = torch.backends.cudnn
    saved = cudnn.deterministic, cudnn.benchmark
    cudnn.deterministic, cudnn.benchmark = True, False
    try:
        yield
    finally:
        cudnn.deterministic, cudnn.benchmark = saved
