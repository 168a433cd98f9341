"""Secure aggregation of float model updates, one SecAgg(+) round per call: what federated averaging plugs in.

Liu et al. (TDSC 2025) aggregate every FedAvg round of every cluster with
SecAgg+. :class:`SecureAggregator` does that for one group of participants:
it clips and encodes their float updates into ``Z_{2^32}``
(:class:`FixedPoint`), runs a fresh round with new keys (Bonawitz et al.
2017 run the key set-up every round; keys whose mask key was rebuilt must not
be reused), lets clients drop out, and returns the decoded sum of the updates
that made it, with the round's bytes and time. A trainer needs only
``aggregate(updates, random_state=...)`` and the ``total`` and ``summed``
attributes of the result, so a plain sum can stand in for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fedlib._random import check_random_state
from fedlib._typing import SeedLike
from fedlib._validation import check_bool, check_option, check_scalar
from fedlib.exceptions import SecAggAbort
from fedlib.secagg._fixed_point import FixedPoint
from fedlib.secagg._secagg import SecAggConfig, Stage
from fedlib.secagg._secagg_round import secure_aggregate


@dataclass(frozen=True)
class SecureSum:
    """The outcome of one secure aggregation of float updates.

    Parameters
    ----------
    total : ndarray of float64, shape (d,)
        Sum of the clipped, rounded updates of the clients in :attr:`summed`.
    summed : ndarray of int64
        Rows of the input whose updates are in :attr:`total` (the survivors ``U3``).
    bytes_sent, bytes_received : int
        All clients' uploads and downloads in this round.
    seconds : dict of str to float
        Compute time per protocol phase, all parties together.
    resolution : float
        ``2^-f``: each update was rounded to a multiple of it.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.secagg import SecureAggregator, SecureSum
    >>> updates = np.array([[0.5, -1.0], [0.25, 0.5], [1.0, 1.0], [-0.5, 0.0]])
    >>> out = SecureAggregator(degree=None, threshold_rate=0.5).aggregate(updates, dropped=[3], random_state=0)
    >>> isinstance(out, SecureSum), out.total.tolist(), out.summed.tolist()  # clipped to [-1, 1]
    (True, [1.75, 0.5], [0, 1, 2])
    >>> out.resolution == 2.0**-28, out.bytes_sent > 0
    (True, True)
    """

    total: np.ndarray
    summed: np.ndarray
    bytes_sent: int
    bytes_received: int
    seconds: dict[str, float] = field(default_factory=dict)
    resolution: float = 0.0


class SecureAggregator:
    """Sum float updates with SecAgg+ (or SecAgg), a fresh round per call.

    Parameters
    ----------
    degree : int or None
        Harary degree ``m`` of the masking graph; ``None`` for the complete graph (SecAgg).
    threshold_rate : float
        ``ξ``: ``t = ⌈ξ·h⌉`` of the ``h`` holders of a client's shares, itself
        included: ``h = m + 1`` with shares among neighbours, ``h = n`` with
        ``share_holders="all"``.
    clip : float, default=1.0
        ``B``: each coordinate of an update is clipped to ``[-B, B]`` before encoding.
    share_holders : {"neighbors", "all"}, default="neighbors"
        Who holds a client's Shamir shares besides the client itself.
    dropout_rate : float, default=0.0
        Each client drops before sending its masked input with this probability.
    threshold : int, optional
        A fixed ``t`` whatever the number of participants (Liu et al. keep the
        ``t = ⌈ξk⌉`` of the cluster as formed after clients are unlearned); at
        most ``h``, so with ``share_holders="all"`` a round completes with
        ``t`` survivors; default ``⌈ξ·h⌉`` of the participants
        (:meth:`SecAggConfig.for_cluster`).
    insecure_seeded_secrets : bool, default=False
        ``False``: every party's X25519 keys, self-mask seed and Shamir
        coefficients come from the operating system's CSPRNG, whatever the
        ``random_state`` of :meth:`aggregate` (which then seats the graph and
        draws dropouts only). ``True``: they come from that ``random_state``
        too, a reproducible simulation that is **insecure**: whoever knows the
        seed recomputes every mask and so every update. The sum is the same
        either way (it is exact whatever the masks are).

    Raises
    ------
    ValueError
        For a rate outside ``[0, 1)`` or an unknown ``share_holders``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.secagg import SecureAggregator
    >>> agg = SecureAggregator(degree=4, threshold_rate=0.7, clip=2.0)
    >>> updates = np.array([[0.5, -1.0], [0.25, 0.5], [1.0, 1.0], [-0.5, 0.0], [0.0, 0.25], [0.75, 0.5]])
    >>> out = agg.aggregate(updates, random_state=0)  # keys from the OS: only seating and dropouts are seeded
    >>> out.total.tolist(), out.summed.tolist()
    ([2.0, 1.25], [0, 1, 2, 3, 4, 5])
    """

    def __init__(
        self,
        *,
        degree: int | None,
        threshold_rate: float,
        clip: float = 1.0,
        share_holders: str = "neighbors",
        dropout_rate: float = 0.0,
        threshold: int | None = None,
        insecure_seeded_secrets: bool = False,
    ) -> None:
        self.degree = None if degree is None else check_scalar(degree, "degree (m)", "int", min_val=2)
        self.threshold_rate = check_scalar(
            threshold_rate, "threshold_rate (ξ)", "real", min_val=0.0, max_val=1.0, include_min=False
        )
        self.clip = check_scalar(clip, "clip (B)", "real", min_val=0.0, include_min=False)
        self.share_holders = check_option(share_holders, "share_holders", ("neighbors", "all"))
        self.dropout_rate = check_scalar(
            dropout_rate, "dropout_rate", "real", min_val=0.0, max_val=1.0, include_max=False
        )
        self.threshold = None if threshold is None else check_scalar(threshold, "threshold (t)", "int", min_val=2)
        self.insecure_seeded_secrets = check_bool(insecure_seeded_secrets, "insecure_seeded_secrets")

    def plan(
        self, n_clients: int, vector_length: int, *, random_state: SeedLike = None
    ) -> tuple[SecAggConfig, FixedPoint]:
        """The public parameters of one round among ``n_clients``: its masking graph and threshold, and the encoding.

        :meth:`aggregate` runs the round in this process; a deployment whose clients
        run their own parties (:mod:`fedlib.flower`) plans the round here with the same
        ``random_state`` and so seats the same graph.

        Parameters
        ----------
        n_clients : int
            Participants ``n`` (the round's rows).
        vector_length : int
            ``d``.
        random_state : int, numpy.random.Generator or None, default=None
            Seats the graph (a Generator is advanced as :meth:`aggregate` advances it).

        Returns
        -------
        config : SecAggConfig
            Graph, threshold ``t`` and ``d`` (:meth:`SecAggConfig.for_cluster`).
        fixed : FixedPoint
            The encoding of clipped floats into ``Z_{2^32}`` for ``n`` summands (:meth:`FixedPoint.for_summands`).

        Raises
        ------
        fedlib.exceptions.SecAggAbort
            For fewer than three participants (with two, each learns the other's update from the sum).
        """
        n = check_scalar(n_clients, "n_clients", "int", min_val=0)
        if n < 3:
            raise SecAggAbort(
                f"secure aggregation needs updates from at least 3 participants (with 2, each learns the other's "
                f"update from the sum), got {n}: the round outputs nothing."
            )
        rng = check_random_state(random_state)
        config = SecAggConfig.for_cluster(
            n,
            degree=self.degree,
            threshold_rate=self.threshold_rate,
            vector_length=check_scalar(vector_length, "vector_length (d)", "int", min_val=1),
            share_holders=self.share_holders,
            threshold=self.threshold,
            random_state=rng,
        )
        return config, FixedPoint.for_summands(n, self.clip)

    def aggregate(self, updates, *, dropped=None, random_state: SeedLike = None) -> SecureSum:
        """One secure aggregation round over the rows of ``updates``.

        Parameters
        ----------
        updates : array-like of float, shape (n, d)
            One model update per participant.
        dropped : array-like of int, optional
            Rows that drop before their masked input; by default each row
            drops with probability ``dropout_rate``.
        random_state : int, numpy.random.Generator or None, default=None
            Graph seating and dropouts (and every party's keys, only with
            ``insecure_seeded_secrets=True``): a seed fixes every bit of the result.

        Returns
        -------
        SecureSum
            The decoded sum of the surviving rows.

        Raises
        ------
        fedlib.exceptions.SecAggAbort
            If ``updates`` has fewer than three rows, or the dropouts leave
            some needed secret below its threshold: the round outputs nothing
            (a trainer then skips the update).
        ValueError
            If ``updates`` is not a 2-D array.
        """
        U = np.asarray(updates)
        if U.ndim != 2:
            raise ValueError(f"updates must be a 2-D array, one row per participant, got shape {U.shape}.")
        rng = check_random_state(random_state)
        n, d = U.shape
        config, fixed = self.plan(n, d, random_state=rng)
        if dropped is None:
            dropped = np.flatnonzero(rng.random(n) < self.dropout_rate)
        result = secure_aggregate(
            fixed.encode(U), config, dropouts={Stage.MASKED_INPUT: np.asarray(dropped, dtype=np.int64)},
            random_state=rng if self.insecure_seeded_secrets else "secrets",
        )  # fmt: skip
        return SecureSum(
            total=fixed.decode_sum(result.total),
            summed=result.summed_clients,
            bytes_sent=int(result.bytes_sent.sum()),
            bytes_received=int(result.bytes_received.sum()),
            seconds=dict(result.seconds),
            resolution=1.0 / fixed.scale,
        )
