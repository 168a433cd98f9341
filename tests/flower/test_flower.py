"""fedlib on Flower's simulation engine (Ray) gives the models of fedlib's in-process simulator, bit for bit.

One Flower simulation of ten nodes runs every scenario (Ray starts once): FedAvg with dropouts, Liu et al.'s
clustered unlearning with secure aggregation in each of two clusters (with dropouts) and the forgetting of one
client, the same with vmap (equal to a tolerance), and the failures a run must not hide.
"""

from __future__ import annotations

import importlib.util
import os
import traceback

import numpy as np
import pytest

if importlib.util.find_spec("flwr") is None:  # make test installs it (requirements-flower.txt)
    if os.environ.get("CI"):
        raise ImportError("Flower is missing: make test installs requirements-flower.txt")
    pytest.skip("Flower is not installed (pip install -r requirements-flower.txt)", allow_module_level=True)

from fedlib.flower import FlowerFederation, Partitions, client_app
from fedlib.learn import FederatedTrainer, LocalSGD
from fedlib.unlearn import ClusteredUnlearning

N_CLIENTS, N_CLASSES, FORGET = 10, 3, 3
LOCAL = LocalSGD(lr=0.1, batch_size=8, epochs=2, momentum=0.5)
#: vmap trains the simulator's clients in one batched kernel and a node's alone: float32 sums in another order.
VMAP_TOLERANCE = 1e-5


def fedavg(**options) -> FederatedTrainer:
    return FederatedTrainer(
        "softmax", rounds=3, n_classes=N_CLASSES, local=LOCAL, dropout=0.2, participation=0.8, random_state=4,
        **{"method": "loop", **options},
    )  # fmt: skip


def clustered(**options) -> ClusteredUnlearning:
    return ClusteredUnlearning(
        "softmax", cluster_size=5, rounds=3, threshold_rate=0.6, dropout=0.15, local=LOCAL, random_state=7,
        **{"method": "loop", **options},
    )  # fmt: skip


def models(system: ClusteredUnlearning) -> list[np.ndarray]:
    return [t.params_.copy() for t in system.trainers_]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64) + (X[:, 1] > 0.5)
    sizes = rng.integers(20, 45, size=N_CLIENTS)
    parts = np.split(rng.permutation(400)[: sizes.sum()], np.cumsum(sizes)[:-1])
    return X, y, parts


@pytest.fixture(scope="module")
def flower(data, restored_environment):
    """Every scenario in one simulation; each one's result (or its error) by name."""
    from flwr.serverapp import ServerApp
    from flwr.simulation import run_simulation

    out: dict[str, object] = {}
    server = ServerApp()

    @server.main()
    def main(grid, context):
        federation = FlowerFederation(grid, n_nodes=N_CLIENTS, n_classes=N_CLASSES)
        out["ids"] = federation.client_ids.tolist()

        def scenario(name, run):
            try:
                out[name] = run()
            except Exception:  # reported by the test that reads it
                out[name] = RuntimeError(traceback.format_exc())

        scenario("fedavg", lambda: fedavg().fit(federation))
        scenario("fedavg vmap", lambda: fedavg(method="vmap").fit(federation).params_)

        def forget():
            system = clustered().fit(federation)
            before = models(system)
            report = system.unlearn(clients=[FORGET])
            return before, models(system), report, system.aborted_rounds()

        scenario("clustered", forget)
        scenario("wrong model", lambda: FederatedTrainer("mlp", rounds=1, n_classes=N_CLASSES).fit(federation))

    with restored_environment():
        run_simulation(
            server, client_app(Partitions(*data), "softmax", n_classes=N_CLASSES), num_supernodes=N_CLIENTS,
            backend_config={"client_resources": {"num_cpus": 1}, "init_args": {"num_cpus": 2}},
        )  # fmt: skip
    return out


def result(flower, name):
    value = flower[name]
    if isinstance(value, Exception):
        pytest.fail(f"the Flower run of {name!r} failed:\n{value}")
    return value


def test_every_node_says_which_client_it_is(flower):
    assert flower["ids"] == list(range(N_CLIENTS))


def test_fedavg_on_flower_is_the_simulators_bit_for_bit(flower, data):
    X, y, parts = data
    ours, theirs = fedavg().fit(X, y, parts=parts), result(flower, "fedavg")
    assert np.array_equal(ours.params_, theirs.params_)
    assert [r.dropped.tolist() for r in ours.history_] == [r.dropped.tolist() for r in theirs.history_]
    assert [r.summed.tolist() for r in ours.history_] == [r.summed.tolist() for r in theirs.history_]
    assert any(r.dropped.size for r in theirs.history_)  # the dropouts were exercised


def test_fedavg_with_vmap_agrees_to_float32_rounding(flower, data):
    X, y, parts = data
    ours = fedavg(method="vmap").fit(X, y, parts=parts).params_
    np.testing.assert_allclose(result(flower, "fedavg vmap"), ours, rtol=0, atol=VMAP_TOLERANCE)


def test_clustered_unlearning_with_secagg_on_flower_trains_and_forgets_as_the_simulator(flower, data):
    X, y, parts = data
    before, after, report, aborted = result(flower, "clustered")
    system = clustered().fit(X, y, parts=parts)
    assert len(system.trainers_) == 2
    for ours, theirs in zip(models(system), before, strict=True):
        assert np.array_equal(ours, theirs)
    ours_report = system.unlearn(clients=[FORGET])
    assert report.details["clusters"] == ours_report.details["clusters"] and len(report.details["clusters"]) == 1
    assert report.clients_retrained == ours_report.clients_retrained and FORGET not in report.clients_retrained
    for i, (ours, theirs) in enumerate(zip(models(system), after, strict=True)):
        assert np.array_equal(ours, theirs), i
    kept = [i for i in range(2) if i not in report.details["clusters"]]
    assert all(np.array_equal(before[i], after[i]) for i in kept)  # the other cluster did not change a bit
    assert aborted == system.aborted_rounds()


def test_a_node_that_fails_stops_the_run_with_its_error(flower):
    error = flower["wrong model"]
    assert isinstance(error, Exception) and "failed on a train.fedlib_train message" in str(error)
    assert "expected a float32 vector of length" in str(error)
