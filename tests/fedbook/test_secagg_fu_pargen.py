"""Drivers of the ParGen chapter (book/fedbook/secagg_fu/_pargen.py): grids, tables, verdicts, errata."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
import pytest
from fedbook import secagg_fu as experiments
from fedbook.papers import secagg_fu as paper

from fedlib.unlearn import balanced_cluster_sizes, pargen, requirement_failure_probabilities


@pytest.fixture(scope="module")
def printed_grids():
    fig4 = {panel: experiments.figure4_grid(panel) for panel in "abc"}
    fig5 = experiments.figure5_grid()
    fine = experiments.k_against_n({**experiments.FIG4_FIXED["a"], "sigma": 40, "eta": 40}, range(50, 400))
    return fig4, fig5, fine


def test_figure4_grid_has_every_setting_and_n(printed_grids):
    fig4, _, _ = printed_grids
    for panel, frame in fig4.items():
        assert len(frame) == len(experiments.FIG4_SWEEPS[panel]) * len(experiments.N_GRID)
        assert frame["k"].dtype == "Int64" and frame["k"].notna().all()  # printed: k even when k > N
    b = fig4["b"].set_index(["setting", "N"])
    assert b.loc[("γ=0.2, δ=0.1", 50), "status"] == "k = 56 > N = 50 (Remark 6)"
    assert not b.loc[("γ=0.2, δ=0.1", 50), "feasible"] and b.loc[("γ=0.1, δ=0.1", 200), "k"] == 41


def test_corrected_grids_say_why_they_are_infeasible():
    at_paper_xi = experiments.figure4_grid("a", variant="corrected", n_values=(100, 1000))
    assert not at_paper_xi["feasible"].any()
    assert at_paper_xi["status"].str.contains(r"ξ \+ ζ \+ δ = 1 >= 1").all()  # δ = 0.2, ζ = 0.1, ξ = 0.7
    balanced = experiments.figure4_grid("b", variant="corrected", xi="balanced", n_values=(100, 1000))
    row = balanced[(balanced["setting"] == "γ=0.1, δ=0.1") & (balanced["N"] == 1000)].iloc[0]
    assert row["xi"] == 0.45 and row["k"] == 122 and row["tau_seq"] == row["exact capacity"]
    small = balanced[balanced["N"] == 100]
    assert small["status"].str.contains("Remark 6").all()


def test_figure5_grid_sets_printed_capacities_beside_the_exact_one(printed_grids):
    _, fig5, _ = printed_grids
    row = fig5[(fig5["setting"] == "γ=0.1, δ=0.1") & (fig5["N"] == 1000)].iloc[0]
    assert (row["k"], row["s"], row["tau_seq"], row["tau_bat"], row["exact capacity"]) == (43, 23, 417, 20, 4)
    assert pd.isna(fig5[(fig5["N"] == 200)]["tau_bat"]).all()  # line 6 undefined for s = 3 or 4


def test_worked_example_table_sets_the_papers_60_beside_41():
    table = experiments.worked_example_table()
    assert table.loc["k", "paper"] == paper.WORKED_EXAMPLE_K
    assert table.loc["k", "printed formulas"] == 41 and table.loc["s", "printed formulas"] == 4
    assert (
        table.loc["status", "corrected, ξ = 0.7"].startswith("infeasible")
        and "1293" in table.loc["status", "corrected, ξ = 0.7"]
    )
    assert table.loc["k", "corrected, ξ* = 0.45"] == 116
    assert table.loc["Pr[R2 fails], exact", "printed formulas"].endswith("2^-6.7")


def test_capacity_table_matches_exact_capacity():
    table = experiments.capacity_table()
    assert table["τ_seq (Eq. 7)"].tolist() == [40, 152, 417, 1141, 4219]
    assert table["exact capacity"].tolist() == [5, 4, 4, 4, 4]
    assert (table["Pr[R4 fails] at τ_seq"] > 0.99).all()


def test_claims_table_verdicts_on_the_printed_formulas(printed_grids):
    claims = experiments.claims_table(*printed_grids).set_index("claim")["verdict"]
    assert claims[paper.CLAIMS["fig4a_sigma_over_eta"]] == "supported"
    assert claims[paper.CLAIMS["fig4b_gamma_and_delta"]] == "partly supported"  # δ has no effect
    assert claims[paper.CLAIMS["fig4c_zeta"]] == "supported"
    assert claims[paper.CLAIMS["fig4_shift"]] == "not reproduced by k"
    assert claims[paper.CLAIMS["fig5_capacity"]] == "partly supported"  # τ_bat is not monotone
    assert claims[paper.CLAIMS["remark6"]] == "supported (threshold N ≤ 55, not 50)"
    assert claims[paper.CLAIMS["worked_example"]] == "not reproduced"
    assert claims[paper.CLAIMS["pargen_optimal"]] == "not supported: the design is not (σ, η)-good"  # τ_seq = 417 > 4


def test_optimality_check_separates_safe_from_smallest():
    """The corrected design is safe, but a design with twice as many clusters meets R1 and R2 exactly too."""
    params = dict(gamma=0.1, delta=0.1, zeta=0.1, xi=0.45, sigma=40, eta=40)
    check = experiments.optimality_check(1000, params)
    assert (check["k"], check["s"], check["exact capacity"], check["tau_seq"]) == (122, 8, 12, 12)
    assert check["safe"] and check["log2 R1"] < -40 and check["log2 R2"] < -40
    assert (check["smallest safe k"], check["smallest safe s"], check["smallest safe capacity"]) == (59, 16, 6)
    assert check["fails"]["k"] == 58 and check["fails"]["requirement"] == "R1" and check["fails"]["log2"] > -40
    assert not check["smallest"]
    assert experiments.optimality_verdict(check) == (
        "not supported: safe, but not the smallest (k = 59, 16 clusters, is safe too)"
    )
    # The next smaller design really fails: R1 at 17 clusters exceeds 2^-40, at 16 it does not.
    for s, ok in ((16, True), (17, False)):
        sizes = balanced_cluster_sizes(1000, 1000 // s)
        assert len(sizes) == s
        risk = requirement_failure_probabilities(sizes, gamma=0.1, delta=0.1, zeta=0.1, xi=0.45)["R1"]
        assert (risk.exact <= Fraction(1, 2**40)) == ok
    printed = experiments.optimality_check(1000, {**params, "xi": 0.7}, variant="printed")
    assert not printed["safe"] and printed["smallest safe k"] is None and printed["tau_seq"] > printed["exact capacity"]
    # A design whose next smaller one fails is the smallest, and only then "supported".
    assert experiments.optimality_verdict({**check, "smallest": True}) == "supported"


def test_claims_table_judges_smallest_k_on_the_corrected_design():
    fig4 = {panel: experiments.figure4_grid(panel, variant="corrected", xi="balanced", n_values=(1000,))
            for panel in "abc"}  # fmt: skip
    fig5 = experiments.figure5_grid(variant="corrected", xi="balanced", n_values=(1000,))
    fine = experiments.k_against_n({**experiments.FIG4_FIXED["a"], "sigma": 40, "eta": 40, "xi": 0.45},
                                   range(900, 1001), variant="corrected")  # fmt: skip
    claims = experiments.claims_table(fig4, fig5, fine, variant="corrected").set_index("claim")
    row = claims.loc[paper.CLAIMS["pargen_optimal"]]
    assert row["verdict"].startswith("not supported: safe, but not the smallest")
    assert "down to k = 59 (16 clusters)" in row["evidence"] and "k = 58 (17 clusters) fails R1" in row["evidence"]


def test_claims_table_verdicts_can_turn(printed_grids):
    """Grids in which δ does raise k and ζ does matter must flip the corresponding verdicts."""
    fig4, fig5, fine = printed_grids
    b = fig4["b"].copy()
    b.loc[b["setting"] == "γ=0.1, δ=0.3", "k"] += 5
    c = fig4["c"].copy()
    c.loc[c["setting"] == "ζ=0.2", "k"] += 7
    claims = experiments.claims_table({**fig4, "b": b, "c": c}, fig5, fine).set_index("claim")["verdict"]
    assert claims[paper.CLAIMS["fig4b_gamma_and_delta"]] == "supported"
    assert claims[paper.CLAIMS["fig4c_zeta"]] == "not supported"


def test_first_feasible_n_equals_a_scan():
    params = {**experiments.FIG4_FIXED["b"], **paper.REMARK6}
    scan = next(n for n in range(1, 200) if pargen(n, **params).feasible)
    assert experiments.first_feasible_n(params) == scan == 56
    corrected = experiments.first_feasible_n({**params, "xi": 0.45}, variant="corrected")
    assert pargen(corrected, **{**params, "xi": 0.45}, variant="corrected").feasible
    with pytest.raises(ValueError):
        pargen(corrected - 1, **{**params, "xi": 0.45}, variant="corrected")


def test_requirements_table_judges_both_designs():
    params = dict(gamma=0.1, delta=0.1, zeta=0.1, xi=0.7, sigma=8, eta=8)
    printed = experiments.requirements_table(500, params, variant="printed", n_trials=2000, random_state=0)
    assert printed.set_index("requirement").loc["R3", "verdict"] == "claim violated"  # m = ln k is a ring
    assert printed.set_index("requirement").loc["R2", "verdict"] == "claim violated"  # Eq. (4)'s sign error
    corrected = experiments.requirements_table(
        500, {**params, "xi": 0.45}, variant="corrected", n_trials=2000, random_state=0
    )
    assert set(corrected["verdict"]) <= {"within the claim", "inconclusive"}
    exact = corrected.set_index("requirement")["exact"].dropna()
    assert (exact <= 2.0**-8).all()
    both = pd.concat([printed, corrected]).dropna(subset=["exact"])
    inside = (both["CI low"] <= both["exact"]) & (both["exact"] <= both["CI high"])
    assert inside.mean() >= 0.8  # 95% intervals around the exact values (a few may miss by chance)


def test_harary_table_shows_ln_k_is_too_small():
    table = experiments.harary_disconnection_table(((60, 4), (60, 30)), n_trials=3000, random_state=0)
    assert table.loc[0, "MC Pr[disconnected]"] > 0.85 and table.loc[1, "MC Pr[disconnected]"] == 0
    assert table["union bound k·p^(m/2)"].tolist() == pytest.approx([60 * 0.3**2, 60 * 0.3**15])


def test_retraining_table_simulation_and_formulas():
    table = experiments.retraining_table(((1000, 50, 20), (200, 50, 10)), n_trials=1500, random_state=0)
    assert (table["printed E_seq: SEs off"] > 100).all()
    assert (table["E_seq distinct clients: SEs off"] < 4).all() and (table["E_bat distinct clients: SEs off"] < 4).all()
    assert table.loc[0, "E_bat (Remark 1)"] == pytest.approx(621.514, abs=1e-3)


def test_errata_table_shows_the_numbers():
    table = experiments.errata_table(n_trials=2000, random_state=0)
    evidence = " ".join(table["evidence"])
    for needle in ("k = 41", "1293", "2^-6.7", "every k ≤ 3206", "τ_seq = 417", "0.021", "-28.49", "-25.47",
                   "-34.45", "19,599.5", "48.999", "18,450", "N = 56"):  # fmt: skip
        assert needle in evidence, needle
    assert len(table) == len(set(table["where"]))
