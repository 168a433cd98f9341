"""The MUFC experiment drivers: dataset preparation, trial tables, verdicts, SCMA cost, removal studies."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fedbook import mufc as experiments
from fedbook import verdict as fedlib_verdict
from fedbook.papers import mufc as paper

from ..conftest import load_real


@pytest.fixture(scope="module")
def tcga():
    return experiments.prepare("TCGA", max_samples=600, n_init=2, random_state=0)


def test_prepare_standin_follows_the_paper_protocol():
    problem = experiments.prepare("TCGA", n_init=2, random_state=0)
    assert problem.kind == "stand-in"
    assert problem.X.shape == (1904, 57) and len(problem.parts) == paper.N_CLIENTS["TCGA"]
    assert problem.k_prime == 2 and np.max(np.abs(problem.X)) <= 1.0
    assert sum(len(p) for p in problem.parts) == len(problem.X)


def test_largest_groups_keeps_the_largest_writers_in_row_order():
    groups = np.array([5, 1, 1, 2, 2, 2, 3, 3])  # sizes: 5 -> 1, 1 -> 2, 2 -> 3, 3 -> 2
    assert experiments.largest_groups(groups, 2).tolist() == [1, 2, 3, 4, 5]  # 2, then 1 before 3 (a tie)
    assert experiments.largest_groups(groups, 10).tolist() == list(range(8))


def test_femnist_keeps_the_papers_number_of_writers():
    load_real("femnist_sample")
    problem = experiments.prepare("FEMNIST", max_samples=1500, n_init=1, random_state=0)
    sizes = experiments.femnist_sizes(problem)
    assert sizes["sample writers"] > experiments.FEMNIST_WRITERS >= sizes["writers"] == len(problem.parts)
    assert sizes["images"] == len(problem.X) == 1500 and sizes["paper writers"] == 100
    writers = problem.dataset.extras["user_index"]
    kept = set(np.unique(writers[experiments.largest_groups(writers, experiments.FEMNIST_WRITERS)]).tolist())
    counts = np.bincount(writers)
    assert min(counts[list(kept)]) >= max(np.delete(counts, list(kept)), default=0)


def test_loss_ratio_trials_has_every_method_and_trial(tcga):
    frame = experiments.loss_ratio_trials(tcga, n_trials=2, server_n_init=2, random_state=0)
    assert sorted(frame["method"].unique()) == ["DC-KM", "K-FED", "MUFC"]
    assert len(frame) == 6 and (frame["loss ratio"] > 0.9).all()
    with pytest.raises(ValueError, match="unknown methods"):
        experiments.loss_ratio_trials(tcga, n_trials=1, methods=("MFC",))


def test_table_trials_caps_trials_at_the_papers_and_covers_every_method(tcga):
    trials = experiments.table_trials({"TCGA": tcga}, n_trials=9, n_init=2, random_state=0)
    assert set(trials["method"]) == set(experiments.METHODS)
    assert (trials.groupby("method").size() == paper.N_TRIALS["TCGA"]).all()


@pytest.mark.parametrize(
    ("ours", "theirs", "n_ours", "expected"),
    [
        ((1.14, 0.01), (1.14, 0.03), 5, "matches"),
        ((1.0, 0.0), (1.46, 0.01), 5, "lower"),
        ((2.0, 0.0), (1.2, 0.0), 5, "higher"),
        ((1.47, 0.06), (1.60, 0.01), 5, "lower"),  # a wide spread over 5 runs no longer hides the gap
        ((1.19, 0.01), (1.14, 0.03), 3, "higher"),
        ((1.19, 0.0), (1.14, 0.03), 1, "one run"),
    ],
)
def test_verdict_with_mufc_slack(ours, theirs, n_ours, expected):
    judged = fedlib_verdict(ours, theirs, slack=experiments.VERDICT_SLACK, n_ours=n_ours, n_published=5)
    assert judged == expected


def _trials(values: dict[tuple[str, str], list[float]]) -> pd.DataFrame:
    rows = [
        {"dataset": name, "method": method, "trial": t, "loss ratio": v}
        for (method, name), vs in values.items()
        for t, v in enumerate(vs)
    ]
    return pd.DataFrame(rows)


def test_beside_paper_shows_runs_signed_difference_and_marks_one_run(tcga):
    celltype = experiments.FederatedProblem("Celltype", _real_dataset(), tcga.X, tcga.parts, 4, 2, 1.0, tcga.labels)
    trials = _trials({("MUFC", "Celltype"): [1.18, 1.19, 1.20], ("DC-KM", "Celltype"): [1.46]})
    table = experiments.beside_paper(trials, {"Celltype": celltype})
    mufc = table.loc[("MUFC", "Celltype")]
    assert mufc["runs"] == 3 and mufc["ours"] == "1.19 ± 0.01 (3 runs)" and mufc["difference"] == "+0.05"
    assert mufc["verdict"] == "higher" and mufc["gap"] == pytest.approx(0.05)
    dckm = table.loc[("DC-KM", "Celltype")]
    assert dckm["ours"] == "1.46 (1 run)" and dckm["verdict"] == "one run" and dckm["difference"] == "+0.00"
    assert ("K-FED", "Celltype") not in table.index  # no trials, no row
    assert experiments.gap_cells(table) == ["Celltype MUFC (1.19 vs 1.14)"]
    standin = experiments.beside_paper(_trials({("MUFC", "TCGA"): [1.1, 1.2]}), {"TCGA": tcga})
    assert standin.loc[("MUFC", "TCGA"), "verdict"] == "not comparable (stand-in)"


def _real_dataset():
    from fedlib.data import Dataset

    return Dataset("real", np.zeros((2, 2)), np.zeros(2, dtype=np.int64), 2, "test")


def test_gap_followup_reruns_only_gap_cells(tcga):
    real = experiments.FederatedProblem("Celltype", _real_dataset(), tcga.X, tcga.parts, 4, 2, tcga.phi_star,
                                        tcga.labels)  # fmt: skip
    trials = _trials(
        {
            ("DC-KM", "Celltype"): [3.0, 3.1, 3.2],
            ("MUFC", "Celltype"): [1.14, 1.15, 1.13],
            ("K-FED", "Celltype"): [1.2, 1.7, 2.2],
        }
    )
    table = experiments.beside_paper(trials, {"Celltype": real})
    assert table.loc[("K-FED", "Celltype"), "verdict"] == "inconclusive"
    followup = experiments.gap_followup({"Celltype": real}, table, n_trials=2, n_init=2, random_state=0)
    assert list(followup.index) == [("K-FED", "Celltype"), ("DC-KM", "Celltype")]
    row = followup.loc[("DC-KM", "Celltype")]
    assert row["verdict (table)"] == "higher" and row["ours (fresh runs)"].endswith("(2 runs)")
    assert row["same verdict"] == (row["verdict (fresh runs)"] == "higher")
    assert experiments.gap_cells(table, experiments.UNSETTLED_VERDICTS)[0].startswith("Celltype K-FED")


def test_table_kfed_is_the_authors_code_and_ours_is_fedlibs():
    assert experiments.KFED_OPTIONS["K-FED"] == {"device_step": "authors", "induced": "last_assignment"}
    assert experiments.KFED_OPTIONS[experiments.KFED_FULL_SPACE] == {"device_step": "full_space", "induced": "nearest"}


def test_kfed_step_difference_subtracts_ours_from_the_authors():
    index = pd.MultiIndex.from_tuples([("K-FED", "A"), (experiments.KFED_FULL_SPACE, "A")], names=["method", "dataset"])
    table = pd.DataFrame({"data": ["real"] * 2, "paper": ["1.25 ± 0.01"] * 2, "mean": [1.24, 1.21]}, index=index)
    diff = experiments.kfed_step_difference(table)
    assert diff.loc["A", "difference (authors' - ours)"] == pytest.approx(0.03)


def test_scma_round_cost_is_exact_and_reports_bits():
    cost = experiments.scma_round_cost(n_clients=4, n_clusters=3, n_bins=10**30, n_samples=400, random_state=0)
    assert cost.scma_bits == 2 * 3 * 4 * cost.prime_bits
    assert cost.dense_bits > cost.scma_bits


def test_paper_tables_cover_every_dataset():
    for table in [*paper.TABLE1.values(), paper.TABLE2_MUFC, paper.SPEEDUP_NO_RETRAIN]:
        assert set(table) == set(paper.DATASETS)
    assert set(experiments.PUBLISHED) == set(experiments.METHODS)


def test_removal_run_records_every_round_and_retraining(tcga):
    run = experiments.removal_run(tcga, n_removals=6, server_n_init=2, n_retrain_timings=2, random_state=0)
    assert len(run.rounds) == 6 and run.retrain_seconds > 0 and run.retrain_lloyd_seconds > 0
    assert run.accumulated_speedup > 0 and run.batch_size == 1
    assert run.rounds["loss ratio (updated phi*)"].isna().all()
    adversarial = experiments.removal_run(tcga, n_removals=3, kind="adversarial", server_n_init=2, random_state=0)
    assert len(adversarial.rounds) == 3


def test_batch_requests_remove_whole_batches_and_update_phi_star(tcga):
    run = experiments.removal_run(tcga, n_removals=4, batch_size=10, server_n_init=2, n_retrain_timings=1,
                                  n_phi_updates=2, random_state=0)  # fmt: skip
    assert run.batch_size == 10 and all(len(ids) == 10 for ids in run.rounds["ids"])
    removed = np.concatenate([np.array(ids) for ids in run.rounds["ids"]])
    assert np.unique(removed).size == 40
    updated = run.rounds["loss ratio (updated phi*)"]
    assert updated.notna().sum() == 2 and not np.isnan(updated.iloc[-1]) and (updated.dropna() > 0.9).all()
    adversarial = experiments.removal_run(tcga, n_removals=2, kind="adversarial", batch_size=5, server_n_init=2,
                                          n_retrain_timings=1, random_state=0)  # fmt: skip
    assert all(len(ids) == 5 for ids in adversarial.rounds["ids"])
    assert adversarial.rounds["client"].nunique() >= 1


def test_retrain_probability_is_mean_k_over_client_size_and_grows_with_the_batch():
    parts = [np.arange(10), np.arange(10, 30), np.arange(30, 33)]  # the last client is too small to pick
    assert experiments.retrain_probability(parts, 4) == pytest.approx((4 / 10 + 4 / 20) / 2)
    assert np.isnan(experiments.retrain_probability([np.arange(3)], 4))
    from math import comb

    big = [np.arange(120)]
    assert experiments.retrain_probability(big, 4, 10) == pytest.approx(1 - comb(116, 10) / comb(120, 10))
    assert experiments.retrain_probability(parts, 4, 10) == pytest.approx(1 - comb(16, 10) / comb(20, 10))


def test_dckm_times_the_same_requests_and_small_clients_are_detected(tcga):
    run = experiments.removal_run(tcga, n_removals=4, server_n_init=2, n_retrain_timings=1, random_state=1)
    seconds = experiments.dckm_removal_seconds(tcga, run.rounds, root_n_init=2, random_state=0)
    assert seconds.shape == (4,) and (seconds > 0).all()
    old_style = experiments.dckm_removal_seconds(tcga, run.rounds.drop(columns="ids"), root_n_init=2, random_state=0)
    assert old_style.shape == (4,)
    assert experiments.has_removable_clients(tcga) and not experiments.has_removable_clients(tcga, 10**6)


def _run(seconds, reseeded, retrain=1.0, retrain_lloyd=1.0):
    return experiments.RemovalRun(
        rounds=pd.DataFrame({"seconds": seconds, "reseeded": reseeded}),
        retrain_seconds=retrain,
        retrain_lloyd_seconds=retrain_lloyd,
        train_seconds=1.0,
    )


def test_mean_round_speedup_is_at_least_the_accumulated_one_for_equal_baselines():
    run = _run([0.001, 0.001, 1.0], [False, False, True])
    assert run.mean_round_speedup == pytest.approx((1000 + 1000 + 1) / 3)
    assert run.accumulated_speedup == pytest.approx(3 / 1.002)
    assert run.no_retrain_speedups.tolist() == [1000.0, 1000.0]


def test_speedups_name_their_baseline():
    run = _run([0.001, 0.001, 1.5], [False, False, True], retrain=1.5, retrain_lloyd=0.5)
    assert run.retrain(experiments.BASELINE_LLOYD) == 0.5 and run.retrain(experiments.BASELINE_SEEDING) == 1.5
    assert run.accumulated_speedup_vs(experiments.BASELINE_LLOYD) == pytest.approx(1.5 / 1.502)
    assert run.accumulated_speedup == run.accumulated_speedup_vs(experiments.BASELINE_SEEDING)
    assert run.reseed_seconds == 1.5
    assert run.expected_speedup_vs(experiments.BASELINE_LLOYD, 0.1) == pytest.approx(0.5 / (0.001 + 0.15))
    with pytest.raises(ValueError, match="baseline"):
        run.retrain("retraining")


def test_speed_tables_keep_kinds_apart_and_cost_reseeding_in_retrainings(tcga):
    runs = {
        "TCGA": _run([0.01, 0.01, 3.0], [False, False, True], retrain=3.0, retrain_lloyd=1.0),
        "TMI": _run([0.01, 0.01, 0.01], [False, False, False], retrain=3.0, retrain_lloyd=1.0),
    }
    problems = {"TCGA": tcga, "TMI": tcga}
    speed = experiments.speed_table(runs, problems)
    assert speed.loc["TCGA", ("accumulated over the sequence", experiments.BASELINE_LLOYD)] == pytest.approx(3 / 3.02)
    assert speed.loc["TCGA", ("paper: one round, no re-seeding", experiments.BASELINE_LLOYD)] == 483
    mean_of_rounds = speed.loc["TCGA", (experiments.MEAN_OF_ROUNDS, experiments.BASELINE_LLOYD)]
    assert mean_of_rounds == pytest.approx((100 + 100 + 1 / 3) / 3)
    kinds = experiments.speedup_by_kind(runs, problems)
    assert list(kinds.index) == ["stand-in"] and kinds.loc["stand-in", "datasets"] == "TCGA, TMI"
    mean = kinds.loc["stand-in", f"arithmetic mean, {experiments.BASELINE_LLOYD}"]
    assert mean == pytest.approx((3 / 3.02 + 3 / 0.03) / 2)
    assert kinds.loc["stand-in", "ours / paper's, Lloyd clients"] == pytest.approx(mean / paper.HEADLINE_SPEEDUP)
    more = {"TCGA": _run([5.0, 0.01], [True, False], retrain=1.0, retrain_lloyd=1.0)}
    cost = experiments.reseeding_cost({"random": runs, "adversarial": more}, problems)
    assert cost.loc["TCGA", "re-seeding rounds"] == 2  # pooled: 3 s against 1 s, and 5 s against 1 s
    assert cost.loc["TCGA", f"in retrainings, {experiments.BASELINE_LLOYD}"] == pytest.approx(4.0)
    assert cost.loc["TCGA", f"in retrainings, {experiments.BASELINE_SEEDING}"] == pytest.approx(3.0)
    assert np.isnan(cost.loc["TMI", f"in retrainings, {experiments.BASELINE_LLOYD}"])


def test_server_convergence_counts_iterations_for_both_client_kinds(tcga):
    table = experiments.server_convergence({"TCGA": tcga}, ["TCGA", "Gaussian"], n_init=2, random_state=0)
    assert list(table.index) == ["TCGA"]
    assert table.loc["TCGA", "server Lloyd iterations, seeding-only clients"] >= 2
    assert table.loc["TCGA", "server Lloyd iterations, Lloyd clients"] >= 2 and table.loc["TCGA", "seconds ratio"] > 0


def test_batch_study_and_summary(tcga):
    batches = experiments.batch_study({"TCGA": tcga}, ["TCGA"], batch_sizes=(5, 10), n_requests=3, n_trials=2,
                                      n_init=2, random_state=0)  # fmt: skip
    assert len(batches) == 2 * 2 * 3 and set(batches["batch size"]) == {5, 10}
    summary = experiments.batch_summary(batches, {"TCGA": tcga})
    assert list(summary.index) == [("TCGA", 5), ("TCGA", 10)]
    assert (summary["trials"] == 2).all() and (summary["requests"] == 3).all()
    assert summary.loc[("TCGA", 10), "theory"] > summary.loc[("TCGA", 5), "theory"]


def test_adversarial_study_times_dckm_on_the_same_requests(tcga):
    runs, dckm = experiments.adversarial_study({"TCGA": tcga}, ["TCGA", "TMI"], n_removals=3, n_init=2,
                                               n_phi_updates=1, random_state=0)  # fmt: skip
    assert list(runs) == ["TCGA"] and dckm["TCGA"].shape == (3,)
    assert runs["TCGA"].rounds["loss ratio (updated phi*)"].notna().sum() == 1


def test_heterogeneity_effect_uses_the_books_rule():
    frame = pd.DataFrame({"mean": [1.20, 1.25, 1.30], "std": [0.01, 0.01, 0.01], "n": [5, 5, 5],
                          "p_reseed": [0.03] * 3}, index=pd.Index([2, 5, 10], name="K'"))  # fmt: skip
    effect = experiments.heterogeneity_effect(frame)
    assert effect["outcome"] == "lower" and effect["K' low"] == 2 and effect["K' iid"] == 10
    assert effect["difference"] == pytest.approx(-0.10)
    assert effect["standard error"] == pytest.approx(np.hypot(0.01, 0.01) / np.sqrt(5))
    assert effect["monotone"] and effect["rising steps"] == effect["rising beyond noise"] == 2
    assert "the runs show the fall with heterogeneity" in experiments.heterogeneity_verdict(effect)
    frame["mean"] = [1.25, 1.25, 1.251]
    assert experiments.heterogeneity_effect(frame)["outcome"] == experiments.WITHIN_MARGIN  # interval inside ± 0.02
    frame["std"] = 0.05
    assert experiments.heterogeneity_effect(frame)["outcome"] == "inconclusive"
    frame["n"] = 1
    assert experiments.heterogeneity_effect(frame)["outcome"] == "one run"


def test_heterogeneity_effect_within_the_margin_is_not_lower():
    """-0.019 ± 0.007 is beyond the noise but inside the declared margin of 0.02, on a curve that is not monotone."""
    std = 0.007 * np.sqrt(5) / np.sqrt(2)  # the standard error of every difference is 0.007
    frame = pd.DataFrame({"mean": [1.256, 1.250, 1.271, 1.275], "std": [std] * 4, "n": [5] * 4,
                          "p_reseed": [0.03] * 4}, index=pd.Index([2, 3, 5, 10], name="K'"))  # fmt: skip
    effect = experiments.heterogeneity_effect(frame, margin=0.02)
    assert effect["difference"] == pytest.approx(-0.019) and effect["standard error"] == pytest.approx(0.007)
    assert effect["side"] == "lower"  # beyond two standard errors ...
    assert effect["outcome"] == experiments.WITHIN_MARGIN  # ... but not beyond the margin: not "lower"
    assert not effect["monotone"] and (effect["steps"], effect["rising steps"]) == (3, 2)
    assert (effect["rising beyond noise"], effect["falling beyond noise"]) == (1, 0)
    sentence = experiments.heterogeneity_verdict(effect)
    assert "within the margin of 0.02" in sentence and "rises with K' at 2 of 3 steps" in sentence
    assert "do not show" in sentence and "the runs show" not in sentence
    # The old rule called this "lower ... beyond noise: the runs show what the paper's Figure 3(a) reports".
    assert fedlib_verdict((1.256, 0.007), (1.275, 0.0), slack=0.0, margin=0.02) == "lower"
    # A difference beyond the noise and the margin together is lower; the curve still decides the conclusion.
    frame["mean"] = [1.236, 1.230, 1.271, 1.275]
    effect = experiments.heterogeneity_effect(frame, margin=0.02)
    assert effect["outcome"] == "lower" and not effect["monotone"]
    assert "but not the steady fall" in experiments.heterogeneity_verdict(effect)
    # Beyond the noise and past the margin, but not beyond both together: inconclusive, not lower.
    frame["mean"] = [1.250, 1.250, 1.271, 1.275]
    assert experiments.heterogeneity_effect(frame, margin=0.02)["outcome"] == "inconclusive"


def test_heterogeneity_sweep_reports_the_number_of_splits(tcga):
    sweep = experiments.heterogeneity_sweep(tcga, [1, 2], n_reps=2, n_init=2, random_state=0)
    assert sweep["n"].tolist() == [2, 2]


def test_mufc_variants_on_celltype_use_the_authors_split():
    load_real("celltype")
    problem = experiments.prepare("Celltype", max_samples=3000, n_init=2, random_state=0)
    split = experiments.authors_split(problem)
    assert sum(len(p) for p in split) == len(problem.X)  # every kept row is one of the authors' client rows
    assert np.array_equal(np.sort(np.concatenate(split)), np.arange(len(problem.X)))
    variants = experiments.mufc_variants(problem, n_trials=2, n_init=2, random_state=0)
    assert len(variants) == 3 and (variants["runs"] == 2).all()
    effects = experiments.variant_effects(variants)
    assert list(effects.index) == list(variants.index[1:])
    assert effects.iloc[0]["difference"] == pytest.approx(variants["mean"].iloc[1] - variants["mean"].iloc[0])
    assert experiments.authors_split(experiments.prepare("TCGA", max_samples=300, n_init=1, random_state=0)) is None


def test_covtype_paper_partition_has_the_papers_sizes():
    load_real("covtype")
    problem = experiments.prepare("Covtype", n_init=1, random_state=0)
    partition = experiments.covtype_paper_partition(problem)
    assert partition["same sizes"] and partition["sizes"] == paper.DATASET_SPECS["Covtype"].cluster_sizes
    assert partition["over our phi*"] == pytest.approx(partition["loss"] / problem.phi_star)


def test_runs_do_not_depend_on_the_number_of_processes(tcga):
    one = experiments.table_trials({"TCGA": tcga}, n_trials=2, n_init=2, methods=("MUFC", "DC-KM"), random_state=3)
    two = experiments.table_trials(
        {"TCGA": tcga}, n_trials=2, n_init=2, methods=("MUFC", "DC-KM"), n_jobs=2, random_state=3
    )
    pd.testing.assert_frame_equal(one, two)
    sweep = [
        experiments.heterogeneity_sweep(tcga, [1, 2], n_reps=2, n_init=2, n_jobs=n, random_state=4) for n in (1, 2)
    ]
    pd.testing.assert_frame_equal(*sweep)
    gammas = [
        experiments.gamma_sweep({"TCGA": tcga}, [0.5, 2.0], n_reps=2, n_init=2, n_jobs=n, random_state=5)
        for n in (1, 2)
    ]
    pd.testing.assert_frame_equal(*gammas)


def test_gap_explanations_try_each_mechanism_in_turn():
    index = pd.MultiIndex.from_tuples(
        [("K-FED", "Covtype"), ("MUFC", "Celltype"), ("MUFC", "Covtype"), ("DC-KM", "Gaussian")],
        names=["method", "dataset"],
    )
    table = pd.DataFrame(
        {"verdict": ["lower", "higher", "higher", "higher"], "gap": [-0.14, 0.05, 0.03, 0.05],
         "paper mean": [1.60, 1.14, 1.03, 1.02]},
        index=index,
    )  # fmt: skip
    fresh = pd.DataFrame({"verdict (fresh runs)": ["lower", "matches", "higher", "higher"]}, index=index)
    steps = pd.DataFrame({"difference (authors' - ours)": [0.002]}, index=pd.Index(["Covtype"]))
    why = experiments.gap_explanations(table, fresh, steps, denominator_excess={"Covtype": 0.035})
    assert why.loc[("K-FED", "Covtype"), "explanation"] == "unexplained"
    assert why.loc[("MUFC", "Celltype"), "explanation"].startswith("a draw")
    assert why.loc[("MUFC", "Covtype"), "explanation"].startswith("within the uncertainty")
    assert why.loc[("DC-KM", "Gaussian"), "explanation"] == "unexplained"
    spread = pd.DataFrame({"paper within the spread": [True]}, index=index[:1])
    split = experiments.gap_explanations(table, fresh, steps, spread=spread)
    assert split.loc[("K-FED", "Covtype"), "explanation"].startswith("the split")
    steps.loc["Covtype"] = 0.1
    again = experiments.gap_explanations(table, fresh, steps, spread=spread)
    assert again.loc[("K-FED", "Covtype"), "explanation"].startswith("the authors' K-FED")


def test_split_spread_reruns_cells_on_fresh_splits(tcga):
    spread = experiments.split_spread({"TCGA": tcga}, [("MUFC", "TCGA"), ("DC-KM", "TCGA")], n_splits=3, n_init=2,
                                      random_state=0)  # fmt: skip
    assert list(spread.index) == [("MUFC", "TCGA"), ("DC-KM", "TCGA")]
    row = spread.loc[("MUFC", "TCGA")]
    assert row["ours over splits"].endswith("(3 runs)") and row["std between splits"] >= 0
    assert row["paper within the spread"] == (abs(row["paper mean"] - row["mean"]) <= 2 * row["std between splits"])


def _gauss_tables(cost_lloyd: float, seconds_ratio: float, iterations_ratio: float, rounds: int = 3):
    """The two tables gaussian_reseeding_findings reads, with one Gaussian row."""
    lloyd, seeding = experiments.BASELINE_LLOYD, experiments.BASELINE_SEEDING
    cost = pd.DataFrame(
        {"re-seeding rounds": [rounds], f"in retrainings, {lloyd}": [cost_lloyd], f"in retrainings, {seeding}": [0.9]},
        index=["Gaussian"],
    )
    conv = pd.DataFrame(
        {
            "server Lloyd iterations, seeding-only clients": [int(40 * iterations_ratio)],
            "server Lloyd iterations, Lloyd clients": [40],
            "iterations ratio": [iterations_ratio],
            "seconds ratio": [seconds_ratio],
        },
        index=["Gaussian"],
    )
    return cost, conv


@pytest.mark.parametrize(
    ("cost", "seconds", "iterations", "phrase", "found_tail"),
    [
        (1.1, 1.0, 1.0, "about one retraining here, as expected", "Lloyd clients"),
        (2.9, 2.5, 3.2, "accounts for the extra cost. A seeding-only client", "3.2 times as many Lloyd iterations"),
        (2.9, 2.5, 1.2, "accounts for the extra cost", "with the paper's Lloyd clients"),
        (2.9, 1.0, 1.2, "accounts for only part of the extra cost", "with the paper's Lloyd clients"),
    ],
    ids=["cheap", "slow server explains", "server explains", "partly"],
)
def test_gaussian_reseeding_findings_say_what_the_numbers_say(cost, seconds, iterations, phrase, found_tail):
    values = experiments.gaussian_reseeding_findings(*_gauss_tables(cost, seconds, iterations))
    assert phrase in values["gauss_cost_phrase"]
    assert values["gauss_found"].startswith(f"a re-seeding round costs {cost:.1f} complete retrainings")
    assert found_tail in values["gauss_found"]
    assert values["gauss_cost_lloyd"] == cost and values["gauss_sec_ratio"] == seconds
    assert ("A seeding-only client" in values["gauss_cost_phrase"]) == (iterations > 1.5 and seconds >= 0.8 * cost)


def test_gaussian_reseeding_findings_without_a_gaussian_reseeding():
    cost, conv = _gauss_tables(2.0, 2.0, 2.0, rounds=0)
    values = experiments.gaussian_reseeding_findings(cost, conv)
    assert values["gauss_reseed_rounds"] == 0 and np.isnan(values["gauss_cost_lloyd"])
    assert values["gauss_found"] == "no Gaussian round re-seeded in our sequences"
    assert values["gauss_cost_phrase"].endswith("nothing to explain")
    empty = experiments.gaussian_reseeding_findings(cost.drop("Gaussian"), conv)
    assert empty["gauss_reseed_rounds"] == 0 and empty["gauss_iter_lloyd"] == 0
