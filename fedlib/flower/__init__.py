"""fedlib's federated learning and clustered unlearning on Flower's simulation engine and deployment runtime.

Flower runs federated learning on real clients; it has no unlearning and no clustered
aggregation. This package runs fedlib's server logic inside a Flower ``ServerApp`` and fedlib's
client half in a Flower ``ClientApp``, so that any fedlib trainer fitted on a
:class:`FlowerFederation` trains on Flower nodes:

- :func:`client_app`: local SGD on the node's own examples with fedlib's seeded example orders
  (:func:`fedlib.learn.train_clients`), and the node's party of a SecAgg(+) round
  (:class:`fedlib.secagg.SecAggClient`, its state kept in the node's ``context.state``); in a
  simulation :class:`Partitions` hands node ``u`` the rows of fedlib's client ``u``;
- :class:`FlowerFederation`: the nodes of a run as a :class:`fedlib.learn.Federation`, which
  :class:`fedlib.learn.FederatedTrainer` (FedAvg) and :class:`fedlib.unlearn.ClusteredUnlearning`
  (Liu et al., TDSC 2025) take in place of the arrays; unlearning goes through the library's
  contract: ``unlearn(clients=[...])`` retrains only the affected clusters, as Flower rounds over
  those clusters' nodes.

With the same seeds a Flower run gives the model of fedlib's in-process simulator bit for bit
with ``method="loop"`` (each node trains its one client, as the simulator's per-client loop does);
with ``"vmap"`` the simulator batches a cluster's clients in one kernel, which may round float32
sums differently.

KNOT's asynchronous aggregation (Su & Li 2023) has no counterpart here: Flower's runtime drives
synchronous rounds (asynchronous federated learning is an open request to Flower), so KNOT stays in
fedlib's own simulator (:class:`fedlib.learn.AsyncFederatedTrainer`).

A sketch of a ``ServerApp`` that trains clusters securely and forgets a client::

    from flwr.serverapp import ServerApp
    from fedlib.flower import FlowerFederation
    from fedlib.unlearn import ClusteredUnlearning

    app = ServerApp()

    @app.main()
    def main(grid, context):
        federation = FlowerFederation(grid, n_nodes=10, n_classes=10)
        system = ClusteredUnlearning("softmax", cluster_size=5, rounds=3, random_state=0)
        system.fit(federation)
        system.unlearn(clients=[3])  # retrains client 3's cluster on its other nodes

Needs the ``flower`` extra (``pip install 'fedlib-unlearning[flower]'``).
"""

from fedlib._optional import import_optional

import_optional("flwr", "flower", feature="fedlib.flower")
import_optional("torch", "flower", feature="fedlib.flower")

from fedlib.flower._client import Partitions, client_app
from fedlib.flower._server import FlowerFederation

__all__ = ["FlowerFederation", "Partitions", "client_app"]
