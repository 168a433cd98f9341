"""Drivers of the SecAgg+ chapter (book/fedbook/secagg_fu/protocol.py), checked against direct computations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fedbook.papers import secagg_fu as paper
from fedbook.secagg_fu import protocol
from scipy.stats import binom

from fedlib.secagg import MaskingGraph, SecAggConfig, harary_graph


def test_figure3_leaks_the_papers_partial_sums_and_nothing_in_panel_a():
    run = protocol.figure3_run(random_state=0)
    assert run.leaks["learned exactly"].all()
    per_panel = run.leaks.groupby("panel", sort=False)["component"].apply(list).tolist()
    assert per_panel[0] == [" + ".join(f"x{i}" for i in range(1, 9))]
    expected = [" + ".join(f"x{i + 1}" for i in members) for members in paper.FIGURE3_PARTIAL_SUMS]
    assert per_panel[1] == per_panel[2] == expected


def test_figure3_with_neighbour_shares_aborts_in_the_leaky_panels():
    table = protocol.figure3_neighbour_shares(random_state=0)
    assert table["completes"].tolist() == [True, False, False]
    assert table["components summed"].iloc[0] == 1
    # (b): u1 keeps itself and u5 (u2 dropped, u8 unlearned): 2 < t = 3
    b = table.iloc[1]
    assert b["fewest live holders"] == 2 and b["client with fewest"] == "u1" and "fewer than t=3" in b["abort"]


def test_threshold_table_sums_exactly_then_aborts():
    table = protocol.threshold_table(n_clients=8, threshold=3, random_state=1)
    exact = table["exact sum"].to_numpy()
    # every client holds a share of its own secrets: up to n - t = 5 dropped, t = 3 survivors suffice
    assert all(e is True for e in exact[:6])
    assert all(e is None for e in exact[6:]) and table["outcome"][6:].str.startswith("abort").all()


def test_coalitions_below_t_learn_nothing():
    table = protocol.coalition_table(n_clients=10, degree=6, threshold=4, random_state=2)
    assert table["coalition of holders"].tolist() == [0, 1, 2, 3, 4]
    assert table["outcome"].tolist()[-1] == "x_target recovered"
    assert table["outcome"][:-1].str.contains("fewer than t=4").all()
    # t = 7 = m + 1: only 6 holders besides the target, so no coalition without it reaches t
    whole = protocol.coalition_table(n_clients=10, degree=6, threshold=7, random_state=2)
    assert len(whole) == 7 and whole["outcome"].str.contains("fewer than t=7").all()


def test_late_input_keeps_its_self_mask():
    demo = protocol.late_input_demo(vector_length=2000, random_state=3)
    assert demo["zero_words_left"] < 0.01 and demo["self_mask_shares_revealed"] == 0


def test_figure3_default_aborts_panel_b_and_cannot_see_the_collusion_of_panel_c():
    run = protocol.figure3_run(random_state=0)
    table = run.default.set_index("panel")
    assert (table["printed protocol"] == "completes").all()
    assert table["fedlib default"].tolist() == ["completes", "aborts", "completes"]
    assert table["components summed (printed)"].tolist() == [1, 2, 2]
    b, c = table.iloc[1], table.iloc[2]
    assert "fall into 2 components" in b["abort"] and pd.isna(b["components summed (default)"])
    assert b["honest clients refusing"] == b["honest survivors"] == 4  # u1, u3, u5, u7 all refuse the list
    # (c): u2 survives and connects the rest; only its collusion splits them, which no survivor list shows
    assert c["components summed (default)"] == 2 and c["honest clients refusing"] == 0
    # the printed rounds (and so the leak table) do not depend on the default runs drawn after them
    assert run.results[table.index[1]].server.config.allow_partial_sums


def test_abort_rates_match_a_direct_count():
    rates = protocol.dropout_abort_rates(
        cluster_size=12, degrees=[4], threshold_rate=0.7, dropout_rates=[0.2], n_trials=400, random_state=4
    )
    # ceil(0.7·5) of 4 neighbours and itself, ceil(0.7·12) of the cluster (complete graph, then Harary m = 4)
    assert rates["t"].tolist() == [4, 9, 9]
    # Whole-cluster shares: every client holds a share of its own secrets, so the round completes iff >= 9 of the
    # 12 survive (Requirement 2): an independent binomial count says the same within noise.
    direct = binom.sf(3, 12, 0.2)  # 4 or more of the 12 dropped: fewer than t = 9 alive
    measured = float(rates[rates["shares"].str.startswith("whole")]["abort rate"].iloc[0])
    assert abs(measured - direct) < 0.08


def test_secagg_config_thresholds_and_degrees():
    plus = protocol.secagg_config(50, degree=4, threshold_rate=0.7, vector_length=1, random_state=0)
    assert plus.graph.degree == 4 and plus.threshold == 4  # ceil(0.7 · 5): 4 neighbours and itself
    whole = protocol.secagg_config(50, degree=None, threshold_rate=0.7, vector_length=1, share_holders="all")
    assert whole.graph == MaskingGraph.complete(50) and whole.threshold == 35
    odd = protocol.secagg_config(45, degree=3, threshold_rate=0.7, vector_length=1, random_state=0)
    assert isinstance(odd, SecAggConfig) and odd.graph.degree == 4  # odd degree on odd k rounds up


def test_cost_tables_have_one_row_per_point_and_exact_rounds():
    cost = protocol.aggregation_cost(
        [8, 12], degrees={"plus": lambda k: 4, "complete": None}, threshold_rate=0.7, vector_length=64
    )
    assert len(cost) == 4 and (cost["seconds"] > 0).all()
    by_clients = protocol.aggregation_cost_by_clients(
        [40, 50, 60], cluster_size=20, degree=lambda k: 4, threshold_rate=0.7, vector_length=64, random_state=5
    )
    assert by_clients["clusters"].tolist() == [2, 2, 3]
    assert (by_clients["largest cluster"] >= 20).all()


def test_a_cluster_too_small_for_privacy_is_refused():
    with pytest.raises(ValueError):
        protocol.secagg_config(2, degree=None, threshold_rate=0.7, vector_length=1)


def test_existing_abort_rows_are_the_old_draws_and_the_sparse_row_is_separate():
    """The SecAgg+ and complete-graph rows draw exactly what they drew before the sparse whole-cluster row existed."""
    kwargs = dict(cluster_size=20, degrees=[4, 6], threshold_rate=0.7, dropout_rates=[0.1, 0.25], n_trials=300)
    rates = protocol.dropout_abort_rates(**kwargs, random_state=7)
    rng = np.random.default_rng(7)
    configs = [protocol.secagg_config(20, degree=m, threshold_rate=0.7, vector_length=1, random_state=rng)
               for m in (4, 6)]  # fmt: skip
    configs.append(protocol.secagg_config(20, degree=None, threshold_rate=0.7, vector_length=1, share_holders="all"))
    expected = []
    for delta in (0.1, 0.25):
        patterns = rng.random((300, 20)) < delta
        expected += [1.0 - float(c.completes_without(patterns).mean()) for c in configs]
    old = rates[~rates["shares"].str.contains("Harary")]
    assert old["abort rate"].tolist() == pytest.approx(expected, abs=0)
    # a Generator seeded alike gives the same rows: its extra draw, which seeds the sparse row, comes last
    again = protocol.dropout_abort_rates(**kwargs, random_state=np.random.default_rng(7))
    pd.testing.assert_frame_equal(old, again[~again["shares"].str.contains("Harary")])


def test_sparse_whole_cluster_row_counts_the_leaks_of_the_printed_protocol():
    rates = protocol.dropout_abort_rates(
        cluster_size=30, degrees=[4, 8], threshold_rate=0.7, dropout_rates=[0.05, 0.2], n_trials=600,
        n_seatings=6, random_state=3,
    )  # fmt: skip
    sparse = rates[rates["shares"] == "whole cluster, Harary m = 4 (Liu et al.)"]
    assert len(sparse) == 2 and (sparse["m"] == 4).all() and (sparse["t"] == 21).all()
    others = rates[rates["shares"] != "whole cluster, Harary m = 4 (Liu et al.)"]
    assert (others["leaks partial sums"] == 0).all()  # the complete graph and SecAgg+ never complete a split round
    for _, row in sparse.iterrows():
        leaky = round(row["leaks partial sums"] * row["completed (printed)"])
        # fedlib's default aborts exactly the printed protocol's aborts plus its leaky rounds
        assert row["abort rate"] * 600 == pytest.approx(row["abort rate (printed)"] * 600 + leaky)
        assert 0 <= row["leaks an input"] <= row["leaks partial sums"]
    at = sparse.set_index("δ")
    assert at.loc[0.2, "leaks partial sums"] > at.loc[0.05, "leaks partial sums"] and at.loc[0.2, "leaks an input"] > 0


def test_outcomes_single_input_means_an_isolated_survivor():
    ring = SecAggConfig(harary_graph(12, 2, shuffle=False), threshold=4, vector_length=1, share_holders="all")
    patterns = np.zeros((3, 12), dtype=bool)
    patterns[1, [1, 11]] = True  # client 0 alone: a single input leaks
    patterns[2, [1, 2, 6, 7]] = True  # two parts of 3 and 5 clients: partial sums, no single input
    assert protocol._outcomes(ring, patterns) == (1, 3, 2, 1)
