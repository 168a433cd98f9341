"""What a training or an unlearning request cost: one report type for every unlearning estimator."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RemovalReport:
    """The cost of one request (MUFC Alg. 4 for :class:`fedlib.unlearn.MUFC`; leaf and root for DC-KM).

    ``fit_report_`` of an estimator uses the same fields for training.

    Parameters
    ----------
    clients_reseeded : tuple of int
        Clients whose local model had to be retrained (MUFC: re-seeded, Alg. 3).
    server_refit : bool
        Whether the server clustered again.
    client_seconds : float
        Time of the slowest client (clients run in parallel).
    aggregation_seconds : float
        Secure (or plaintext) aggregation; MUFC's timings exclude it.
    server_seconds : float
        The server's clustering.

    Examples
    --------
    >>> RemovalReport((), False, 0.002, 0.0, 0.0).seconds
    0.002
    """

    clients_reseeded: tuple[int, ...]
    server_refit: bool
    client_seconds: float
    aggregation_seconds: float
    server_seconds: float

    @property
    def seconds(self) -> float:
        """Client plus server time, as MUFC times a federated run (aggregation excluded)."""
        return self.client_seconds + self.server_seconds
