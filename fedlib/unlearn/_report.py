"""What a training or an unlearning request cost: one report type for every unlearning estimator."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RemovalReport:
    """The cost of one request (MUFC Alg. 4 for :class:`fedlib.unlearn.MUFC`; leaf and root for DC-KM).

    ``fit_report_`` of an estimator uses the same fields for training.
    """

    clients_reseeded: tuple[int, ...]  #: clients whose local model had to be retrained (MUFC: re-seeded, Alg. 3)
    server_refit: bool  #: whether the server clustered again
    client_seconds: float  #: slowest client (clients run in parallel)
    aggregation_seconds: float  #: secure (or plaintext) aggregation; excluded by the papers' timings
    server_seconds: float  #: the server's clustering

    @property
    def seconds(self) -> float:
        """Client plus server time, as MUFC times a federated run (aggregation excluded)."""
        return self.client_seconds + self.server_seconds
