"""Published values of Liu et al. (TDSC 2025; book/fedbook/papers/secagg_fu.py) are self-consistent for the chapters."""

from __future__ import annotations

from collections import Counter

import pytest
from fedbook.papers import secagg_fu as paper

SWEEPABLE = set(paper.PARAMETERS) - {"n_clients"}


def test_worked_example_names_every_input_and_meets_the_lemmas_side_conditions():
    ex = paper.WORKED_EXAMPLE
    assert tuple(ex) == paper.PARAMETERS
    assert ex["xi"] > max(ex["gamma"], ex["delta"], ex["zeta"])  # Lemmas 1 and 2 as stated
    assert ex["gamma"] + ex["delta"] < 1  # Theorem 1
    assert 1 <= paper.WORKED_EXAMPLE_K <= ex["n_clients"]


@pytest.mark.parametrize(
    ("fixed", "panel"), [(paper.FIG4A_FIXED, "a"), (paper.FIG4B_FIXED, "b"), (paper.FIG4C_FIXED, "c")]
)
def test_each_fig4_panel_fixes_all_but_its_swept_parameters(fixed, panel):
    swept = set(paper.FIG4_SWEPT[panel])
    assert not swept & set(fixed) and swept | set(fixed) == SWEEPABLE


def test_fig4c_reading_drops_zeta_and_one_repeated_value_from_the_caption():
    assert len(paper.FIG4C_CAPTION_VALUES) == len(paper.FIG4C_CAPTION_NAMES) + 1  # the misprint
    dropped = Counter(paper.FIG4C_CAPTION_VALUES) - Counter(paper.FIG4C_FIXED.values())
    assert dropped == Counter({0.1: 2})
    assert {k: paper.FIG4C_FIXED[k] for k in ("sigma", "eta", "xi")} == {"sigma": 40, "eta": 40, "xi": 0.7}


def test_remark_6_reads_fig_4b_at_its_fixed_parameters():
    assert set(paper.REMARK6) == set(paper.FIG4_SWEPT["b"]) == set(paper.FIG5_SWEPT)
    assert paper.REMARK6_MAX_INFEASIBLE_N < paper.WORKED_EXAMPLE["n_clients"]


def test_claims_and_setup_are_stated():
    assert {"fig4a_sigma_over_eta", "fig4c_zeta", "fig4_shift", "fig5_capacity", "remark6"} <= set(paper.CLAIMS)
    assert all(isinstance(text, str) and len(text) > 20 for text in paper.CLAIMS.values())
    assert paper.DATASETS["MNIST"]["n_train"] + paper.DATASETS["MNIST"]["n_test"] == 70_000
    assert paper.DATASETS["CIFAR-10"]["n_train"] + paper.DATASETS["CIFAR-10"]["n_test"] == 60_000
    assert paper.LATENCY_MS == 0.08 and paper.BANDWIDTH_GBPS == 34.0
