"""The synthesis: what forgetting costs against what an attack still detects, and which method to use when.

Both come from the frames of :mod:`fedbook.compared.clustering` and :mod:`fedbook.compared.learning` (one
schema: ``systems`` and ``attacks``), never from typed-in numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

#: The attack the summary reads: LiRA online is the strongest of the three on canaries (Carlini et al. 2022).
SUMMARY_ATTACK = "LiRA online"

#: Level of the gap intervals (after − retrained). The chapter reads about ninety of them; at 95% four or five
#: would exclude zero by chance alone, at 99% about one.
GAP_CONFIDENCE = 0.99

#: Verdict words, from the after-forgetting AUC against the retrained model's interval and the paired gap.
WITHIN = "as retrained"
RESOLVED = "more than retrained"
BELOW = "less than retrained"
UNRESOLVED = "gap not resolved"


def _verdict(row: pd.Series) -> str:
    """The paired gap first (the sharper test), then the AUC after forgetting against the retrained interval."""
    if row["gap low"] > 0:
        return RESOLVED
    if row["gap high"] < 0:
        return BELOW
    if row["retrained AUC low"] <= row["AUC"] <= row["retrained AUC high"]:
        return WITHIN
    return UNRESOLVED


def attack_verdicts(attacks: pd.DataFrame) -> pd.DataFrame:
    """Per system, dataset and attack on canaries: AUC before, after and retrained, the gap, and a verdict.

    The verdict is :data:`RESOLVED` when the paired gap's interval lies above zero (the attack still finds more
    than in a model that never saw the data), :data:`BELOW` when it lies below; otherwise :data:`WITHIN` when the
    AUC after forgetting lies inside the retrained model's interval (the criterion for an exact method), and
    :data:`UNRESOLVED` when it does not (the two intervals disagree and the sample cannot tell).

    Parameters
    ----------
    attacks : pandas.DataFrame
        The ``attacks`` frames of both halves, concatenated.

    Returns
    -------
    pandas.DataFrame
        ``domain``, ``dataset``, ``system``, ``attack``, ``before``, ``after``, ``retrained``, ``gap``,
        ``gap low``, ``gap high``, ``verdict``.
    """
    canaries = attacks[attacks["canaries"].astype(bool)]
    keys = ["domain", "dataset", "system", "attack"]
    after = canaries[canaries["stage"] == "after"].set_index(keys)
    before = canaries[canaries["stage"] == "before"].set_index(keys)["AUC"]
    retrained = canaries[canaries["stage"] == "retrained"].set_index(keys)
    table = after[["AUC", "gap", "gap low", "gap high"]].copy()
    table["retrained AUC low"] = retrained["AUC low"]
    table["retrained AUC high"] = retrained["AUC high"]
    table["verdict"] = table.apply(_verdict, axis=1)
    table["before"] = before
    table["retrained"] = retrained["AUC"]
    table = table.rename(columns={"AUC": "after"}).reset_index()
    return table[[*keys, "before", "after", "retrained", "gap", "gap low", "gap high", "verdict"]]


def summary_points(systems: pd.DataFrame, attacks: pd.DataFrame, *, attack: str = SUMMARY_ATTACK) -> pd.DataFrame:
    """One point per system and dataset: the relative cost of forgetting one client against the remaining gap.

    The cost is the seconds to forget over the seconds of retraining from scratch on the same data in the same
    run (1 is the price of retraining; below 1 is cheaper), so that clustering and learning, and datasets of
    different sizes, share one axis. The gap is the attack's AUC after forgetting minus the retrained model's,
    on the same canaries, with its paired interval.

    Parameters
    ----------
    systems, attacks : pandas.DataFrame
        Both halves' frames, concatenated.
    attack : str, default=SUMMARY_ATTACK
        Which attack's gap.

    Returns
    -------
    pandas.DataFrame
        ``domain``, ``dataset``, ``system``, ``claim``, ``exactness``, ``relative cost``, ``gap``, ``gap low``,
        ``gap high``, ``verdict``.
    """
    verdicts = attack_verdicts(attacks)
    verdicts = verdicts[verdicts["attack"] == attack].drop(columns=["attack"])
    cost = systems[["domain", "dataset", "system", "claim", "exactness"]].copy()
    cost["relative cost"] = systems["forget seconds"] / systems["retrain seconds"]
    points = cost.merge(verdicts, on=["domain", "dataset", "system"], how="inner", validate="one_to_one")
    return points[
        ["domain", "dataset", "system", "claim", "exactness", "relative cost", "gap", "gap low", "gap high", "verdict"]
    ]


def draw_summary(axes, points: pd.DataFrame, palette: dict[str, str]):
    """The summary figure: one panel per domain, relative cost (log scale) against the gap, with intervals.

    Parameters
    ----------
    axes : sequence of matplotlib Axes
        One per domain, in the order clustering, learning.
    points : pandas.DataFrame
        Output of :func:`summary_points`.
    palette : dict of str to str
        System → colour (:func:`fedlib.plot.method_palette`).

    Returns
    -------
    sequence of matplotlib Axes
        ``axes``.
    """
    markers = ("o", "s", "^", "D", "v")
    for ax, (domain, part) in zip(axes, points.groupby("domain", sort=True), strict=False):
        datasets = list(dict.fromkeys(part["dataset"]))
        for _, row in part.iterrows():
            marker = markers[datasets.index(row["dataset"]) % len(markers)]
            ax.errorbar(
                row["relative cost"],
                row["gap"],
                yerr=[[row["gap"] - row["gap low"]], [row["gap high"] - row["gap"]]],
                fmt=marker,
                color=palette[row["system"]],
                capsize=3,
                markersize=7,
            )
        ax.axhline(0.0, color="0.4", lw=1, ls="--")
        ax.axvline(1.0, color="0.4", lw=1, ls=":")
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))  # 0.1, 0.2, 0.5, 1, 2, 5, ...
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("seconds to forget one client / seconds to retrain")
        ax.set_title(domain)
        handles = [
            ax.plot([], [], "o", color=palette[s], label=s)[0] for s in dict.fromkeys(part["system"])
        ] + [ax.plot([], [], markers[i % len(markers)], color="0.3", label=d)[0] for i, d in enumerate(datasets)]
        ax.legend(handles=handles, fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    axes[0].set_ylabel(f"{SUMMARY_ATTACK} AUC gap\n(after forgetting − retrained)")
    return axes


def _exact(word: str) -> bool:
    return word.startswith("bit-identical") or word.startswith("same distribution")


def which_method_when(systems: pd.DataFrame, attacks: pd.DataFrame, hides: dict[str, bool]) -> pd.DataFrame:
    """A "which method when" table, each cell chosen by a rule from the measured frames.

    For each domain and each need, the cheapest system (median relative cost over the datasets) among those
    that meet the need on *every* dataset run:

    - exact, checked: its exactness check passed (bit-identical, or the same distribution) and every canary
      attack after forgetting is within the retrained model's interval;
    - nothing detectable: every canary attack after forgetting is within the retrained model's interval, or
      its gap is not resolved (exactness not required);
    - hidden updates: the server never sees a single client's update (``hides``), and nothing detectable;
    - closest quality: the smallest largest-over-datasets distance between the quality after forgetting and
      the retrained model's (whatever it costs);
    - cheapest at any price: the lowest cost, with what it leaves detectable.

    Parameters
    ----------
    systems, attacks : pandas.DataFrame
        Both halves' frames, concatenated.
    hides : dict of str to bool
        System → whether its server sees only sums or coded data (:data:`fedbook.compared.server_view.SERVER_VIEW`).

    Returns
    -------
    pandas.DataFrame
        ``need``, then per domain the chosen system and its evidence (relative cost and verdicts), "none of the
        systems run" where no system qualifies.
    """
    verdicts = attack_verdicts(attacks)
    ok = verdicts.groupby(["domain", "system"])["verdict"].agg(lambda v: set(v))
    cost = systems.assign(cost=systems["forget seconds"] / systems["retrain seconds"])
    per_system = cost.groupby(["domain", "system"]).agg(
        cost=("cost", "median"),
        exact=("exactness", lambda v: all(_exact(w) for w in v)),
    )
    distance = (cost["quality after"] - cost["quality retrained"]).abs()
    per_system["quality gap"] = cost.assign(q=distance).groupby(["domain", "system"])["q"].max()
    per_system["verdicts"] = ok
    per_system["within"] = per_system["verdicts"].map(lambda v: isinstance(v, set) and v == {WITHIN})
    per_system["undetected"] = per_system["verdicts"].map(lambda v: isinstance(v, set) and v <= {WITHIN, UNRESOLVED})
    per_system["hides"] = [bool(hides.get(system, False)) for _, system in per_system.index]

    needs = {
        "forget exactly (checked), cheapest": lambda t: t[t["exact"] & t["within"]].sort_values("cost"),
        "nothing detectable after forgetting, cheapest": lambda t: t[t["undetected"]].sort_values("cost"),
        "server never sees one client's update, nothing detectable": lambda t: t[t["hides"] & t["undetected"]]
        .sort_values("cost"),
        "quality closest to retraining": lambda t: t.sort_values(["quality gap", "cost"]),
        "cheapest at any price": lambda t: t.sort_values("cost"),
    }
    rows = []
    for need, choose in needs.items():
        row = {"need": need}
        for domain, table in per_system.groupby(level="domain"):
            chosen = choose(table.droplevel("domain"))
            if chosen.empty:
                row[domain] = "none of the systems run"
                continue
            system = chosen.index[0]
            pick = chosen.iloc[0]
            found = ", ".join(sorted(pick["verdicts"])) if isinstance(pick["verdicts"], set) else "not attacked"
            row[domain] = f"{system} ({_cost_words(pick['cost'])}; attacks after: {found})"
        rows.append(row)
    return pd.DataFrame(rows)


def _cost_words(relative: float) -> str:
    if not np.isfinite(relative):
        return "cost not measured"
    if relative < 1:
        return f"{1 / relative:.3g}× faster than retraining"
    return f"{relative:.3g}× the time of retraining"


#: How each stage of an attack is drawn: marker and fill.
STAGE_STYLE = {"before": ("o", "full"), "after": ("D", "full"), "retrained": ("s", "none")}


def draw_stages(ax, attacks: pd.DataFrame, palette: dict[str, str], *, attack: str = SUMMARY_ATTACK):
    """AUC before forgetting, after, and of the retrained model, per system, with intervals: one row per system.

    Parameters
    ----------
    ax : matplotlib Axes
        Where to draw (one dataset).
    attacks : pandas.DataFrame
        The ``attacks`` rows of one dataset.
    palette : dict of str to str
        System → colour.
    attack : str, default=SUMMARY_ATTACK
        Which attack.

    Returns
    -------
    matplotlib Axes
        ``ax``.
    """
    rows = attacks[(attacks["attack"] == attack) & attacks["canaries"].astype(bool)]
    systems = list(dict.fromkeys(rows["system"]))
    offsets = {"before": -0.22, "after": 0.0, "retrained": 0.22}
    for i, system in enumerate(systems):
        for stage, (marker, fill) in STAGE_STYLE.items():
            row = rows[(rows["system"] == system) & (rows["stage"] == stage)]
            if row.empty:
                continue
            row = row.iloc[0]
            ax.errorbar(
                row["AUC"], i + offsets[stage],
                xerr=[[row["AUC"] - row["AUC low"]], [row["AUC high"] - row["AUC"]]],
                fmt=marker, fillstyle=fill, color=palette[system], capsize=2, markersize=6,
            )  # fmt: skip
    ax.axvline(0.5, color="0.4", lw=1, ls="--")
    ax.set_yticks(range(len(systems)), systems)
    ax.set_ylim(len(systems) - 0.5, -0.5)  # first system on top (not invert_yaxis: shared axes would undo it)
    ax.set_xlim(-0.02, 1.04)
    ax.set_xlabel(f"{attack} AUC on the canaries")
    handles = [ax.plot([], [], m, fillstyle=f, color="0.3", label=s)[0] for s, (m, f) in STAGE_STYLE.items()]
    ax.legend(handles=handles, fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3)
    return ax
