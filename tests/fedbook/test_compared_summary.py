"""The synthesis of "Forgetting, compared": verdicts and the "which method when" table follow from the frames."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from fedbook.compared.server_view import SERVER_VIEW, hiding_ratios
from fedbook.compared.summary import (
    BELOW,
    RESOLVED,
    UNRESOLVED,
    WITHIN,
    attack_verdicts,
    draw_stages,
    draw_summary,
    summary_points,
    which_method_when,
)

#: system -> (forget seconds, exactness, after AUC, gap interval, quality after)
SYSTEMS = {
    "exact and slow": (5.0, "bit-identical", 0.50, (-0.02, 0.02), 0.90),
    "exact and fast": (1.0, "bit-identical", 0.51, (-0.03, 0.04), 0.90),
    "leaky and fastest": (0.1, "approximate: 0.3 from retrained", 0.80, (0.2, 0.4), 0.93),
    "approximate, unresolved": (0.5, "approximate: 0.1 from retrained", 0.62, (-0.01, 0.2), 0.88),
}


def frames():
    systems, attacks = [], []
    for dataset in ("A", "B"):
        for system, (seconds, exactness, after, (low, high), quality) in SYSTEMS.items():
            systems.append(
                {"domain": "learning", "dataset": dataset, "system": system, "claim": "exact",
                 "forget seconds": seconds, "retrain seconds": 10.0, "exactness": exactness,
                 "quality after": quality, "quality retrained": 0.90}
            )  # fmt: skip
            for attack in ("loss threshold", "LiRA online"):
                base = {"domain": "learning", "dataset": dataset, "system": system, "attack": attack, "canaries": True}
                attacks.append({**base, "stage": "before", "AUC": 0.9, "AUC low": 0.85, "AUC high": 0.95})
                attacks.append({**base, "stage": "retrained", "AUC": 0.5, "AUC low": 0.44, "AUC high": 0.56})
                attacks.append(
                    {**base, "stage": "after", "AUC": after, "AUC low": after - 0.06, "AUC high": after + 0.06,
                     "gap": after - 0.5, "gap low": low, "gap high": high}
                )  # fmt: skip
                control = {"canaries": False, "stage": "before", "AUC": 0.5, "AUC low": 0.4, "AUC high": 0.6}
                attacks.append({**base, **control})
    return pd.DataFrame(systems), pd.DataFrame(attacks)


def test_verdicts_follow_the_retrained_interval_and_the_paired_gap():
    _, attacks = frames()
    verdicts = attack_verdicts(attacks).set_index(["dataset", "system", "attack"])["verdict"]
    assert verdicts[("A", "exact and fast", "LiRA online")] == WITHIN
    assert verdicts[("A", "leaky and fastest", "LiRA online")] == RESOLVED
    assert verdicts[("B", "approximate, unresolved", "loss threshold")] == UNRESOLVED
    flipped = attacks.copy()
    after = (flipped["stage"] == "after") & (flipped["system"] == "leaky and fastest")
    flipped.loc[after, ["AUC", "gap low", "gap high"]] = [0.3, -0.3, -0.1]
    assert set(attack_verdicts(flipped).query("system == 'leaky and fastest'")["verdict"]) == {BELOW}
    assert len(verdicts) == 2 * 4 * 2  # the control rows (canaries=False) are not verdicts


def test_which_method_when_chooses_by_the_rules():
    systems, attacks = frames()
    table = which_method_when(systems, attacks, hides={"exact and slow": True}).set_index("need")["learning"]
    assert table["forget exactly (checked), cheapest"].startswith("exact and fast (10× faster")
    assert table["nothing detectable after forgetting, cheapest"].startswith("approximate, unresolved")
    assert table["server never sees one client's update, nothing detectable"].startswith("exact and slow")
    assert table["cheapest at any price"].startswith("leaky and fastest") and RESOLVED in table["cheapest at any price"]
    assert table["quality closest to retraining"].startswith("exact and fast")
    nobody = which_method_when(systems, attacks, hides={}).set_index("need")["learning"]
    assert nobody["server never sees one client's update, nothing detectable"] == "none of the systems run"


def test_summary_points_and_figure():
    systems, attacks = frames()
    points = summary_points(systems, attacks)
    assert len(points) == 8 and points["relative cost"].max() == pytest.approx(0.5)
    fig, axes = plt.subplots(1, 1, squeeze=False)
    palette = dict(zip(SYSTEMS, ["C0", "C1", "C2", "C3"], strict=True))
    draw_summary(axes[0], points, palette)
    assert axes[0][0].get_xscale() == "log" and len(axes[0][0].lines) >= 8
    plt.close(fig)


def test_server_view_names_every_system_once_and_ratios_divide_secure_by_plain():
    assert SERVER_VIEW["system"].is_unique and set(SERVER_VIEW["domain"]) == {"clustering", "learning"}
    cost = pd.DataFrame(
        [
            {"system": "S", "kind": "secure", "train seconds": 4.0, "train MB": 2.0, "forget seconds": 1.0,
             "forget MB": 0.0},
            {"system": "S", "kind": "plain", "train seconds": 1.0, "train MB": 1.0, "forget seconds": 0.5,
             "forget MB": 0.0},
        ]
    )  # fmt: skip
    ratios = hiding_ratios(cost).iloc[0]
    assert ratios["train time ×"] == 4.0 and ratios["forget time ×"] == 2.0 and np.isnan(ratios["forget bytes ×"])


def test_stages_figure_puts_the_first_system_on_top_even_on_shared_axes():
    _, attacks = frames()
    fig, axes = plt.subplots(1, 2, sharey=True)
    for ax, name in zip(axes, ("A", "B"), strict=True):
        summary_draw = attacks[attacks["dataset"] == name]
        draw_stages(ax, summary_draw, dict(zip(SYSTEMS, ["C0", "C1", "C2", "C3"], strict=True)))
    bottom, top = axes[0].get_ylim()
    assert top < bottom  # y grows downwards: system 0 at the top
    fig.canvas.draw()
    assert [t.get_text() for t in axes[0].get_yticklabels()] == list(SYSTEMS)
    plt.close(fig)


def test_a_resolved_paired_gap_outranks_an_overlapping_interval():
    """The paired gap is the sharper test: an AUC after forgetting inside the retrained interval with a gap whose
    interval excludes zero reads "more than retrained", not "as retrained"."""
    _, attacks = frames()
    after = (attacks["stage"] == "after") & (attacks["system"] == "exact and fast")
    attacks.loc[after, ["AUC", "gap", "gap low", "gap high"]] = [0.54, 0.04, 0.01, 0.07]  # 0.54 is in [0.44, 0.56]
    verdicts = set(attack_verdicts(attacks).query("system == 'exact and fast'")["verdict"])
    assert verdicts == {RESOLVED}
