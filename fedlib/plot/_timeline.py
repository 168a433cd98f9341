"""Figures of asynchronous training on a simulated clock: a client timeline and score-against-time curves."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from fedlib.plot._style import PALETTE, method_palette


def async_timeline(ax: Axes, trainings, aggregations, *, erase_time: float | None = None, erased=()) -> Axes:
    """Clients' local trainings as bars on the simulated clock, aggregations as ticks, the erasure as a line.

    Each client has a row; a bar runs from the moment it received a model to the moment its result
    was popped, coloured by its cluster and hatched when the result was discarded (it was computed
    from a model that a rollback or an unlearning method replaced). Each cluster's aggregations are
    diamonds on a row of their own below the clients. The erasure's label sits in a free band above
    the first client's row, on a white box drawn over everything, so that no bar hides it.

    Parameters
    ----------
    ax : matplotlib Axes
        Where to draw.
    trainings : pandas.DataFrame
        Columns client, cluster, start, finish, fate (``"aggregated"`` or ``"discarded"``).
    aggregations : pandas.DataFrame
        Columns time, cluster, replaced.
    erase_time : float, optional
        Draw the erasure request there.
    erased : sequence of int, default=()
        Erased clients, whose rows are labelled.

    Returns
    -------
    Axes
        ``ax``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> import pandas as pd
    >>> from fedlib.plot import async_timeline
    >>> rng = np.random.default_rng(0)
    >>> start = np.array([0.0, 0.0, 1.0, 2.0])
    >>> trainings = pd.DataFrame(
    ...     {
    ...         "client": [0, 1, 2, 0],
    ...         "cluster": [0, 1, 0, 0],
    ...         "start": start,
    ...         "finish": start + rng.uniform(1.0, 2.0, size=4),
    ...         "fate": ["aggregated", "aggregated", "discarded", "aggregated"],
    ...     }
    ... )
    >>> aggregations = pd.DataFrame({"time": [1.5, 1.8, 3.2], "cluster": [0, 1, 0], "replaced": [False, True, False]})
    >>> fig, ax = plt.subplots()
    >>> ax = async_timeline(ax, trainings, aggregations, erase_time=2.5, erased=[1])
    >>> len(ax.patches)  # one bar per training
    4
    >>> [label.get_text() for label in ax.get_yticklabels()]
    ['client 0', 'client 1 (erased)', 'client 2', 'cluster 0 aggregates', 'cluster 1 aggregates']
    >>> ax.get_lines()[0].get_xdata()[0], ax.get_xlabel()  # the erasure's line
    (2.5, 'simulated time (s)')
    >>> plt.close(fig)
    """
    clients = sorted(set(trainings["client"]))
    rows = {k: i for i, k in enumerate(clients)}
    for item in trainings.itertuples():
        colour = PALETTE[int(item.cluster) % len(PALETTE)]
        discarded = item.fate == "discarded"
        ax.barh(
            rows[item.client],
            item.finish - item.start,
            left=item.start,
            height=0.7,
            color="white" if discarded else colour,
            edgecolor=colour,
            hatch="///" if discarded else None,
            linewidth=0.8,
        )
    clusters = sorted(set(aggregations["cluster"])) if len(aggregations) else []
    base = len(clients) + 0.5
    for j, n in enumerate(clusters):
        mine = aggregations[aggregations["cluster"] == n]
        y = base + j
        ax.scatter(mine["time"], np.full(len(mine), y), marker="D", s=22, color=PALETTE[int(n) % len(PALETTE)])
        replaced = mine[mine["replaced"]]
        if len(replaced):
            ax.scatter(replaced["time"], np.full(len(replaced), y), marker="x", s=60, color="black", zorder=3)
    labels = [f"client {k}" + (" (erased)" if k in set(erased) else "") for k in clients]
    labels += [f"cluster {n} aggregates" for n in clusters]
    ax.set_yticks(list(range(len(clients))) + [base + j for j in range(len(clusters))], labels)
    last = base + len(clusters) - 1 if clusters else len(clients) - 1
    # Rows run downwards; the band above row 0 (y < -0.35, the top of its bar) holds the erasure's label.
    ax.set_ylim(last + 0.6, -1.5 if erase_time is not None else -0.6)
    if erase_time is not None:
        ax.axvline(erase_time, color="black", linestyle="--", linewidth=1, zorder=4)
        ax.annotate(
            "erasure",
            (erase_time, -0.95),
            xytext=(4, 0),
            textcoords="offset points",
            ha="left",
            va="center",
            fontsize="small",
            zorder=5,
            bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.9},
        )
    ax.set_xlabel("simulated time (s)")
    return ax


def score_curves(ax: Axes, runs, *, target: float | None = None, band: bool = True, colors=None) -> Axes:
    """Each run's best-cluster score against simulated time, with the erasure and the target marked.

    Parameters
    ----------
    ax : matplotlib Axes
        Where to draw.
    runs : sequence of objects with ``method``, ``erase_time`` and ``curve`` (``times``, ``best``, ``scores``)
        E.g. a run of the book's KNOT chapters; one line per run.
    target : float, optional
        A horizontal line at the target (black, dotted).
    band : bool, default=True
        Shade the range of the cluster models' scores of runs with several clusters (Fig. 4 of Su & Li).
    colors : mapping of str to colour, optional
        Line colour per method; by default :func:`method_palette` of the runs' methods, so that a
        method of :data:`METHOD_COLORS` has the colour it has in every figure.

    Returns
    -------
    Axes
        ``ax``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> from fedlib.plot import method_color, score_curves
    >>> rng = np.random.default_rng(0)
    >>> def run(method, n_clusters):
    ...     scores = np.maximum.accumulate(rng.uniform(0.3, 0.9, size=(10, n_clusters)), axis=0)
    ...     curve = SimpleNamespace(times=np.arange(10.0), best=scores.max(axis=1), scores=scores)
    ...     return SimpleNamespace(method=method, erase_time=4.0, curve=curve)
    >>> fig, ax = plt.subplots()
    >>> ax = score_curves(ax, [run("KNOT", 3), run("FedAvg", 1)], target=0.8)
    >>> len(ax.get_lines())  # two curves, the erasure and the target
    4
    >>> [(line.get_label(), line.get_color() == method_color(line.get_label())) for line in ax.get_lines()[:2]]
    [('KNOT', True), ('FedAvg', True)]
    >>> len(ax.collections)  # the band of KNOT's three cluster models; FedAvg has one
    1
    >>> plt.close(fig)
    """
    runs = list(runs)
    colours = method_palette(run.method for run in runs) if colors is None else dict(colors)
    erase_times = set()
    for run in runs:
        colour = colours[run.method]
        curve = run.curve
        ax.plot(curve.times, curve.best, color=colour, label=run.method, drawstyle="steps-post")
        if band and curve.scores.ndim == 2 and curve.scores.shape[1] > 1:
            ax.fill_between(
                curve.times,
                np.nanmin(curve.scores, axis=1),
                np.nanmax(curve.scores, axis=1),
                color=colour,
                alpha=0.15,
                step="post",
                linewidth=0,
            )
        if np.isfinite(run.erase_time):
            erase_times.add(float(run.erase_time))
    for t in sorted(erase_times):
        ax.axvline(t, color="black", linestyle="--", linewidth=1)
    if target is not None:
        ax.axhline(target, color="black", linestyle=":", linewidth=1)  # black: grey is FedAvg's colour
    ax.set_xlabel("simulated time (s)")
    return ax
