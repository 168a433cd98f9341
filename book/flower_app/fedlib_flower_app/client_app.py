"""The ClientApp: fedlib's local SGD on the node's own images, and its SecAgg+ party."""

from __future__ import annotations

from flwr.app import Context

from fedlib.flower import client_app
from fedlib_flower_app.task import MODEL, N_CLASSES, client_data


def load_data(context: Context):
    """This node's images and labels: the partition Flower gave it."""
    node = context.node_config
    return client_data(int(node["partition-id"]), int(node["num-partitions"]))


app = client_app(load_data, MODEL, n_classes=N_CLASSES)
