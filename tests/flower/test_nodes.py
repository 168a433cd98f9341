"""FlowerFederation against an in-memory grid (no Ray): which nodes make the federation, and what a failure does."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

if importlib.util.find_spec("flwr") is None:  # make test installs it (requirements-flower.txt)
    if os.environ.get("CI"):
        raise ImportError("Flower is missing: make test installs requirements-flower.txt")
    pytest.skip("Flower is not installed (pip install -r requirements-flower.txt)", allow_module_level=True)

from flwr.app import Context, Error, Message, RecordDict

from fedlib.flower import FlowerFederation, Partitions, client_app
from fedlib.learn import FederatedTrainer


class MemoryGrid:
    """Delivers each message to its node's ClientApp at once; ``gone`` nodes are listed but never answer.

    A ClientApp's exception comes back as an error reply, as Flower's runtime returns it.
    """

    def __init__(self, app, n_nodes: int, *, gone: int = 0) -> None:
        self.app = app
        self.contexts = {
            100 + u: Context(run_id=1, node_id=100 + u, node_config={"partition-id": u}, state=RecordDict(),
                             run_config={})
            for u in range(n_nodes)
        }  # fmt: skip
        self.gone = [900 + k for k in range(gone)]
        self.sent = 0

    def get_node_ids(self):
        return [*self.contexts, *self.gone]

    def send_and_receive(self, messages, *, timeout=None):
        replies = []
        for message in messages:
            self.sent += 1
            node = message.metadata.dst_node_id
            if node in self.contexts:
                try:
                    replies.append(self.app(message, self.contexts[node]))
                except Exception as error:  # as Flower's runtime: the exception comes back as an error reply
                    replies.append(Message(Error(code=0, reason=f"{type(error).__name__}: {error}"), reply_to=message))
            elif timeout is None:
                raise AssertionError("a message to a node that is gone, without a timeout, would wait forever")
        return replies


@pytest.fixture(autouse=True)
def server_identity():
    """A message takes its sender from the process's task identity, which a ServerApp process has set."""
    from flwr.common.constant import SUPERLINK_NODE_ID
    from flwr.supercore.task_identity import TaskIdentity

    saved = {key: getattr(TaskIdentity, f"_{key}") for key in ("task_id", "run_id", "node_id")}
    TaskIdentity.task_id, TaskIdentity.run_id, TaskIdentity.node_id = 1, 1, SUPERLINK_NODE_ID
    yield
    for key, value in saved.items():
        setattr(TaskIdentity, f"_{key}", value)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 4)).astype(np.float32)
    return X, (X[:, 0] > 0).astype(np.int64), np.array_split(np.arange(60), 4)


def test_listed_nodes_that_never_answer_are_left_out_and_training_matches(data):
    grid = MemoryGrid(client_app(Partitions(*data), "softmax", n_classes=2), 4, gone=2)
    federation = FlowerFederation(grid, n_nodes=4, n_classes=2, wait=0.5)
    assert federation.client_ids.tolist() == [0, 1, 2, 3]
    assert sorted(federation.node_ids.values()) == [100, 101, 102, 103]
    assert federation.n_samples.tolist() == [15, 15, 15, 15] and federation.input_shape == (4,)
    trained = FederatedTrainer("softmax", rounds=2, n_classes=2, method="loop", random_state=0).fit(federation)
    X, y, parts = data
    ours = FederatedTrainer("softmax", rounds=2, n_classes=2, method="loop", random_state=0).fit(X, y, parts=parts)
    assert np.array_equal(trained.params_, ours.params_)


def test_too_few_answering_nodes_and_a_failing_node_are_errors(data):
    app = client_app(Partitions(*data), "softmax", n_classes=2)
    with pytest.raises(TimeoutError, match="3 of the 5 listed Flower nodes"):
        FlowerFederation(MemoryGrid(app, 3, gone=2), n_nodes=4, n_classes=2, wait=0.2)
    with pytest.raises(TimeoutError, match="connected within"):
        FlowerFederation(MemoryGrid(app, 2), n_nodes=4, n_classes=2, wait=0.2)
    X, y, parts = data
    wrong = client_app(Partitions(X, y + 1, parts), "softmax", n_classes=2)  # labels 1 and 2 for two outputs
    with pytest.raises(RuntimeError, match=r"failed on a query\.fedlib_hello message"):
        FlowerFederation(MemoryGrid(wrong, 4), n_nodes=4, n_classes=2, wait=0.2)
    with pytest.raises(TimeoutError, match=r"0 of the 4 listed .* labels must lie in \[0, 2\)"):
        FlowerFederation(MemoryGrid(wrong, 4), n_nodes=4, n_classes=2, wait=0.2, on_error="drop")
