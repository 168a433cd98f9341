"""The task both apps share: the data of each node, the model, and the server's test set.

MNIST's 10,000-image test set (fetched by :func:`fedlib.data.load`), split once with a fixed seed
into 8,000 training images, dealt out IID to the clients, and 2,000 test images the server keeps
for evaluation. A node reads only its own share (``partition-id``); on a real deployment each
client would load its own data instead.
"""

from __future__ import annotations

import numpy as np

from fedlib import data

MODEL, N_CLASSES = "softmax", 10


def _split() -> tuple[data.Dataset, data.Dataset]:
    return data.split_dataset(data.load("mnist_test"), 0.2, random_state=np.random.default_rng(0))


def client_data(partition_id: int, n_clients: int) -> tuple[np.ndarray, np.ndarray]:
    """Client ``partition_id``'s images and labels."""
    train, _ = _split()
    rows = data.iid_partition(train.n_samples, n_clients, random_state=0)[partition_id]
    return data.image_array(train)[rows], train.y[rows]


def test_set() -> tuple[np.ndarray, np.ndarray]:
    """The server's test images and labels."""
    _, test = _split()
    return data.image_array(test), test.y
