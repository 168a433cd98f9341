"""The ServerApp: Liu et al.'s clustered unlearning, run by fedlib's estimator over the Flower nodes.

fedlib keeps the whole server side (clusters, seeds, FedAvg per cluster, the SecAgg+ server that
sees masked inputs only, unlearning); every round's client half goes to the nodes through Flower's
Grid. Forgetting a client retrains only its cluster, as Flower rounds over its other nodes.
"""

from __future__ import annotations

from flwr.app import Context
from flwr.serverapp import Grid, ServerApp

from fedlib.flower import FlowerFederation
from fedlib.learn import LocalSGD
from fedlib.unlearn import ClusteredUnlearning
from fedlib_flower_app.task import MODEL, N_CLASSES, test_set

app = ServerApp()


@app.main()
def main(grid: Grid, context: Context) -> None:
    """Train the clusters on the nodes, then forget one client (``[tool.flwr.app.config]``)."""
    run(grid, context.run_config)


def run(grid: Grid, config) -> ClusteredUnlearning:
    """The run itself, for any mapping of the app's settings."""
    federation = FlowerFederation(
        grid, n_nodes=int(config["num-clients"]), n_classes=N_CLASSES
    )
    # each node trains only itself: the per-client loop, which also makes
    # the run fedlib's simulator's, bit for bit
    system = ClusteredUnlearning(
        MODEL,
        cluster_size=int(config["cluster-size"]),
        rounds=int(config["rounds"]),
        local=LocalSGD(lr=0.05, batch_size=32, epochs=1),
        random_state=int(config["seed"]),
        method="loop",
    )
    system.fit(federation, test_data=test_set())
    sizes = [len(c) for c in system.clusters_]
    accuracy = system.evaluate()["vote accuracy"]
    print(
        f"{system.n_clusters} clusters of {sizes} clients trained on Flower nodes; "
        f"majority-vote test accuracy {accuracy:.3f}"
    )
    report = system.unlearn(clients=[int(config["forget"])])
    print(
        f"forgot client {report.forgotten_clients[0]}: "
        f"retrained cluster {report.details['clusters'][0]} "
        f"({len(report.clients_retrained)} clients, {report.rounds} rounds); "
        f"vote accuracy {report.details['accuracy']:.3f}"
    )
    return system
