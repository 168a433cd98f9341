"""What fedlib's server and clients say to each other over Flower: message types and their records.

Every message is a Flower ``Message`` whose content is a ``RecordDict`` of plain records: numbers,
strings and bytes in a ``ConfigRecord``, float32 vectors in an ``ArrayRecord``. Nothing is pickled:
a node parses only numbers, strings, byte strings in fedlib's SecAgg wire format
(:meth:`fedlib.secagg.SecAggConfig.from_bytes` and the messages' ``from_bytes``) and arrays whose
shape it checks.
"""

from __future__ import annotations

import json
from dataclasses import asdict, fields

import numpy as np
from flwr.app import ArrayRecord, ConfigRecord, RecordDict

from fedlib.learn import LocalSGD, RoundRequest

#: The message types of a fedlib federation (Flower routes ``"<category>.<action>"`` to a ClientApp handler).
HELLO = "query.fedlib_hello"
TRAIN = "train.fedlib_train"
SECAGG = "train.fedlib_secagg"

#: SecAgg stages as the server names them in a ``SECAGG`` message.
SETUP, SHARE_KEYS, MASKED_INPUT, UNMASK = "setup", "share_keys", "masked_input", "unmask"


def seed_config(seed: np.random.SeedSequence) -> dict:
    """A SeedSequence as ConfigRecord values (its entropy may exceed 64 bits: JSON text)."""
    return {
        "seed_entropy": json.dumps(seed.entropy),
        "seed_spawn_key": [int(k) for k in seed.spawn_key],
        "seed_pool_size": int(seed.pool_size),
    }


def read_seed(config) -> np.random.SeedSequence:
    """The SeedSequence of :func:`seed_config`; a malformed seed raises ``ValueError``."""
    entropy = json.loads(str(config["seed_entropy"]))
    if not (isinstance(entropy, int) or (isinstance(entropy, list) and all(isinstance(e, int) for e in entropy))):
        raise ValueError(f"a seed's entropy must be an integer or a list of integers, got {entropy!r}.")
    spawn_key = tuple(int(k) for k in config["seed_spawn_key"])
    return np.random.SeedSequence(entropy, spawn_key=spawn_key, pool_size=int(config["seed_pool_size"]))


def train_content(request: RoundRequest, position: int, *, keep: bool) -> RecordDict:
    """The ``TRAIN`` message to the participant at ``position`` of the request."""
    config = {
        "client_id": int(request.participants[position]),
        "round_index": int(request.round_index),
        "base_version": int(request.base_version),
        "weight": float(request.weights[position]),
        "weighted": bool(request.weighted),
        "method": str(request.method),
        "keep": bool(keep),
        **{f"local_{k}": v for k, v in asdict(request.local).items()},
        **seed_config(request.random_state),
    }
    start = np.ascontiguousarray(request.start, dtype=np.float32)
    return RecordDict({"start": ArrayRecord([start]), "config": ConfigRecord(config)})


def read_local(config) -> LocalSGD:
    """The LocalSGD of a ``TRAIN`` message (its own checks reject bad values)."""
    names = [f.name for f in fields(LocalSGD)]
    return LocalSGD(**{name: config[f"local_{name}"] for name in names if f"local_{name}" in config})


def one_array(record: ArrayRecord, what: str, *, length: int | None = None) -> np.ndarray:
    """The single float32 vector of an ArrayRecord, checked."""
    arrays = record.to_numpy_ndarrays()
    if len(arrays) != 1:
        raise ValueError(f"{what}: expected one array, got {len(arrays)}.")
    vector = np.asarray(arrays[0])
    if vector.dtype != np.float32 or vector.ndim != 1 or (length is not None and vector.size != length):
        raise ValueError(
            f"{what}: expected a float32 vector of length {length}, got {vector.dtype} of shape {vector.shape}."
        )
    return vector
