"""Membership inference (fedlib.audit): the metrics against scikit-learn, LiRA against its definition, and the
two calibration tests an auditor needs — an attack on a model that memorised its canaries scores far above
chance, and on a model that never saw them at chance within its interval — for a classifier and for K-means."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm
from sklearn.metrics import roc_auc_score, roc_curve

from fedlib.audit import (
    Canaries,
    ShadowScores,
    auc_gap,
    balanced_masks,
    cross_entropy,
    lira_attack,
    lira_scores,
    logit_confidence,
    loss_attack,
    membership_metrics,
    mislabeled_canaries,
    nearest_center_distances,
    nearest_center_scores,
    outlier_canaries,
    run_shadows,
)
from fedlib.cluster import KMeans
from fedlib.data import make_blobs

# -- metrics ------------------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(-3, 3), min_size=2, max_size=40),
    st.lists(st.integers(-3, 3), min_size=2, max_size=40),
)
def test_auc_is_scikit_learns_with_ties(members, others):
    scores = np.array(members + others, dtype=float)
    truth = np.r_[np.ones(len(members), bool), np.zeros(len(others), bool)]
    result = membership_metrics(scores, truth, n_bootstrap=0)
    assert result.auc == pytest.approx(roc_auc_score(truth, scores))
    assert result.auc_interval == (result.auc, result.auc)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([0.001, 0.01, 0.05, 0.2]))
def test_tpr_at_fpr_is_the_roc_curves_point_below_the_rate(seed, alpha):
    """The share of members above all but ⌊α n_out⌋ non-members is the ROC curve's TPR at the largest FPR ≤ α."""
    rng = np.random.default_rng(seed)
    members, others = rng.normal(1, 1, rng.integers(5, 60)), rng.normal(0, 1, rng.integers(5, 60))
    scores = np.r_[members, others]
    truth = np.r_[np.ones(members.size, bool), np.zeros(others.size, bool)]
    fpr, tpr, _ = roc_curve(truth, scores)
    expected = tpr[fpr <= alpha + 1e-12].max()
    assert membership_metrics(scores, truth, fprs=(alpha,), n_bootstrap=0).tpr[alpha] == pytest.approx(expected)


def test_intervals_hold_the_estimate_and_the_same_seed_gives_the_same_bits():
    rng = np.random.default_rng(0)
    truth = np.arange(300) < 100
    scores = truth * 0.8 + rng.normal(0, 1, 300)
    a = membership_metrics(scores, truth, random_state=3)
    b = membership_metrics(scores, truth, random_state=3)
    assert a.auc_interval == b.auc_interval and a.tpr_intervals == b.tpr_intervals
    assert a.auc_interval[0] < a.auc < a.auc_interval[1]
    for alpha, (low, high) in a.tpr_intervals.items():
        assert low <= a.tpr[alpha] <= high
    assert not a.resolved(0.001) and a.resolved(0.01)  # 200 non-members resolve 1% but not 0.1%
    row = a.as_row()
    assert row["AUC"] == a.auc and row["members"] == 100 and "TPR at 0.1% FPR" in row


@pytest.mark.parametrize(
    ("scores", "truth", "error"),
    [
        ([0.1, 0.2], [True, True], ValueError),
        ([0.1, np.nan], [True, False], ValueError),
        ([0.1, 0.2, 0.3], [True, False], ValueError),
        ([0.1, 0.2], [1, 0], TypeError),
    ],
)
def test_metrics_refuse_what_they_cannot_measure(scores, truth, error):
    with pytest.raises(error):
        membership_metrics(scores, np.array(truth), n_bootstrap=0)


# -- shadows and LiRA ---------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30), st.integers(2, 20), st.floats(0.05, 0.95), st.integers(0, 1000))
def test_balanced_masks_put_every_candidate_in_the_same_number_of_models(n, m, fraction, seed):
    n_in = int(np.floor(fraction * m + 1e-9))
    if not 1 <= n_in <= m - 1:
        with pytest.raises(ValueError, match="at least one"):
            balanced_masks(n, m, fraction=fraction, random_state=seed)
        return
    masks = balanced_masks(n, m, fraction=fraction, random_state=seed)
    assert masks.shape == (m, n) and (masks.sum(axis=0) == n_in).all()


def _noisy_memory(mask, seed):
    """A 'model' whose statistic is 2 on the candidates it trained on, 0 elsewhere, plus noise."""
    return 2.0 * mask + np.random.default_rng(seed).normal(0, 0.7, mask.size)


def test_shadows_do_not_depend_on_the_number_of_jobs():
    one = run_shadows(_noisy_memory, 30, 8, random_state=4, n_jobs=1)
    two = run_shadows(_noisy_memory, 30, 8, random_state=4, n_jobs=2)
    np.testing.assert_array_equal(one.scores, two.scores)
    np.testing.assert_array_equal(one.inside, two.inside)
    seq = np.random.SeedSequence(4)
    again = run_shadows(_noisy_memory, 30, 8, random_state=seq)
    np.testing.assert_array_equal(again.scores, run_shadows(_noisy_memory, 30, 8, random_state=seq).scores)


def test_a_shadow_returning_the_wrong_statistics_is_refused():
    with pytest.raises(ValueError, match="finite statistics"):
        run_shadows(lambda mask, seed: np.zeros(mask.size + 1), 5, 4, random_state=0)


def test_lira_is_the_gaussian_likelihood_ratio_of_its_definition():
    rng = np.random.default_rng(1)
    inside = balanced_masks(6, 12, random_state=2)
    scores = rng.normal(0, 1, (12, 6)) + 3 * inside
    shadows = ShadowScores(scores, inside)
    target = rng.normal(1.5, 1, 6)
    per_candidate = lira_scores(target, shadows, fix_variance=False)
    for i in range(6):
        s_in, s_out = scores[inside[:, i], i], scores[~inside[:, i], i]
        expected = norm.logpdf(target[i], s_in.mean(), s_in.std(ddof=1)) - norm.logpdf(
            target[i], s_out.mean(), s_out.std(ddof=1)
        )
        assert per_candidate[i] == pytest.approx(expected)
    offline = lira_scores(target, shadows, online=False, fix_variance=False)
    s_out = np.where(~inside, scores, np.nan)
    np.testing.assert_allclose(offline, (target - np.nanmean(s_out, 0)) / np.nanstd(s_out, 0, ddof=1))
    pooled = lira_scores(target, shadows)  # one variance per side, pooled within candidates
    centred_in = np.where(inside, scores - np.nanmean(np.where(inside, scores, np.nan), 0), 0.0)
    sd_in = np.sqrt((centred_in**2).sum() / (inside.sum() - 6))
    mu_in, mu_out = np.nanmean(np.where(inside, scores, np.nan), 0), np.nanmean(s_out, 0)
    centred_out = np.where(~inside, scores - mu_out, 0.0)
    sd_out = np.sqrt((centred_out**2).sum() / ((~inside).sum() - 6))
    np.testing.assert_allclose(pooled, norm.logpdf(target, mu_in, sd_in) - norm.logpdf(target, mu_out, sd_out))
    stacked = lira_scores(np.stack([target, target + 1]), shadows)
    np.testing.assert_allclose(stacked[0], pooled)


def test_lira_needs_shadows_on_both_sides():
    inside = np.array([[True, False, True], [False, True, False], [False, True, False]])
    shadows = ShadowScores(np.array([[0.0, 1.0, 2.0], [1.0, 0.5, 0.0], [3.0, 0.0, 1.0]]), inside)
    scores = lira_scores(np.zeros(3), shadows)  # one shadow per side is enough where another candidate has two
    assert np.isfinite(scores).all() and np.abs(scores).max() < 1e3
    with pytest.raises(ValueError, match="at least 2 'out' shadow"):
        lira_scores(np.zeros(3), shadows, fix_variance=False)
    with pytest.raises(ValueError, match="3 statistics per model"):
        lira_scores(np.zeros(4), shadows)


def test_lira_refuses_a_pooled_variance_without_a_degree_of_freedom():
    """Every candidate with exactly one shadow per side: no spread can be measured, so no silent 1e12 scores."""
    shadows = ShadowScores(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[True, False], [False, True]]))
    with pytest.raises(ValueError, match="no degree of freedom"):
        lira_scores(np.array([1.0, 0.0]), shadows, online=False)


# -- statistics ---------------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 6))
def test_loss_and_scaled_logit_agree_with_the_softmax(seed, n_classes):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 3, (20, n_classes))
    y = rng.integers(0, n_classes, 20)
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p_y = p[np.arange(20), y]
    np.testing.assert_allclose(cross_entropy(logits, y), -np.log(p_y), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(logit_confidence(logits, y), np.log(p_y) - np.log1p(-p_y), rtol=1e-7, atol=1e-9)


def test_distance_statistics_per_point_and_per_canary():
    X, centres = np.array([[0.0, 0.0], [3.0, 4.0], [1.0, 0.0]]), np.array([[0.0, 0.0], [3.0, 3.0]])
    np.testing.assert_allclose(nearest_center_distances(X, centres), [0.0, 1.0, 1.0])
    np.testing.assert_allclose(nearest_center_distances(X, centres, groups=[0, 1, 1]), [0.0, 1.0])
    scores = nearest_center_scores(X[1:], centres, groups=[0, 0])
    np.testing.assert_allclose(scores, [0.0])
    with pytest.raises(ValueError, match="without gaps"):
        nearest_center_distances(X, centres, groups=[0, 2, 2])


def test_canaries_are_wrongly_labelled_or_far_out():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 4)), rng.integers(0, 5, 50)
    labelled = mislabeled_canaries(X, y, 20, repeats=3, random_state=1)
    assert labelled.X.shape == (60, 4) and labelled.n_canaries == 20
    assert (labelled.y != labelled.true_y[labelled.group]).all() and set(labelled.y) <= set(range(5))
    assert labelled.points(np.arange(20) < 2).tolist() == [0, 1, 2, 3, 4, 5]
    far = outlier_canaries(X, 6, group_size=4, distance=4.0, random_state=1)
    assert far.y is None and far.n_canaries == 6
    gap = nearest_center_distances(far.X, X).min()
    assert gap > nearest_center_distances(X[:25], X[25:]).max()  # farther from the data than any data point
    with pytest.raises(ValueError):
        mislabeled_canaries(X, y, 51)
    with pytest.raises(ValueError, match="no spread"):
        outlier_canaries(np.ones((5, 2)), 2)
    assert isinstance(far, Canaries)


# -- calibration: memorised canaries are found, unseen ones are not -----------------------------------------------


def _classifier_task():
    from fedlib.learn import LocalSGD

    rng = np.random.default_rng(0)
    centres = rng.normal(0, 1.0, (4, 32))
    y = rng.integers(0, 4, 440)
    X = (centres[y] + rng.normal(0, 1.0, (440, 32))).astype(np.float32)
    canaries = mislabeled_canaries(X[240:], y[240:], 100, random_state=1)
    return X[:240], y[:240], canaries, LocalSGD(lr=0.1, batch_size=16, epochs=5)


CLASSIFIER = None


def _train_classifier(mask, seed):
    """FedAvg of an MLP over three clients; the third holds the chosen canaries; returns LiRA's statistic."""
    from fedlib.learn import FederatedTrainer, predict_logits

    X, y, canaries, local = CLASSIFIER
    rows = canaries.points(mask)
    X_all, y_all = np.concatenate([X, canaries.X[rows]]), np.concatenate([y, canaries.y[rows]])
    parts = [np.arange(0, 80), np.arange(80, 160), np.r_[np.arange(160, 240), 240 + np.arange(rows.size)]]
    trainer = FederatedTrainer("mlp", rounds=10, n_classes=4, local=local, random_state=np.random.default_rng(seed))
    trainer.fit(X_all, y_all, parts=parts)
    return predict_logits(trainer.model_, canaries.X, parameters=trainer.params_)


def test_attacks_find_memorised_label_canaries_and_not_unseen_ones():
    pytest.importorskip("torch")
    global CLASSIFIER
    CLASSIFIER = _classifier_task()
    canaries = CLASSIFIER[2]
    member = np.arange(100) < 50
    shadows = run_shadows(
        lambda mask, seed: logit_confidence(_train_classifier(mask, seed), canaries.y), 100, 16, random_state=0
    )
    memorised = _train_classifier(member, np.random.SeedSequence(123))
    unseen = _train_classifier(np.zeros(100, bool), np.random.SeedSequence(124))
    for logits, far_above in ((memorised, True), (unseen, False)):
        attacks = [
            loss_attack(cross_entropy(logits, canaries.y), member, random_state=0),
            lira_attack(logit_confidence(logits, canaries.y), shadows, member, random_state=0),
            lira_attack(logit_confidence(logits, canaries.y), shadows, member, online=False, random_state=0),
        ]
        for result in attacks:
            if far_above:
                assert result.auc > 0.85 and result.auc_interval[0] > 0.7, result
            else:
                assert result.at_chance(), result


def test_attacks_find_memorised_outlier_canaries_in_k_means_and_not_unseen_ones():
    X, _ = make_blobs((60,) * 5, 10, cluster_std=0.3, random_state=0)
    canaries = outlier_canaries(X, 16, group_size=5, distance=3.0, random_state=1)

    def centres(mask, seed):
        X_all = np.concatenate([X, canaries.X[canaries.points(mask)]])
        return KMeans(9, random_state=np.random.default_rng(seed)).fit(X_all).cluster_centers_

    def statistic(mask, seed):
        return nearest_center_scores(canaries.X, centres(mask, seed), groups=canaries.group)

    shadows = run_shadows(statistic, 16, 64, random_state=0)
    rng = np.random.default_rng(5)
    members = np.array([rng.permutation(16) < 8 for _ in range(20)])
    for trained, far_above in ((members, True), (np.zeros_like(members), False)):
        fitted = [centres(m, np.random.SeedSequence(1000 + t)) for t, m in enumerate(trained)]  # 20, pooled
        target = np.array([nearest_center_scores(canaries.X, c, groups=canaries.group) for c in fitted])
        distances = np.array([nearest_center_distances(canaries.X, c, groups=canaries.group) for c in fitted])
        for result in (
            loss_attack(distances, members, random_state=0),
            lira_attack(target, shadows, members, random_state=0),
            lira_attack(target, shadows, members, online=False, random_state=0),
        ):
            if far_above:
                assert result.auc > 0.85 and result.auc_interval[0] > 0.75, result
            else:
                assert result.at_chance(), result


def test_auc_gap_is_paired_and_sees_a_real_difference():
    rng = np.random.default_rng(2)
    truth = np.arange(300) < 150
    base = rng.normal(size=300)
    retrained = membership_metrics(base, truth, n_bootstrap=0)
    same = membership_metrics(base + 0.01 * rng.normal(size=300), truth, n_bootstrap=0)
    leaky = membership_metrics(base + 1.0 * truth, truth, n_bootstrap=0)
    assert not auc_gap(same, retrained, random_state=0).excludes_zero()
    gap = auc_gap(leaky, retrained, random_state=0)
    assert gap.excludes_zero() and gap.interval[0] < gap.gap < gap.interval[1]
    assert gap.gap == pytest.approx(leaky.auc - retrained.auc)
    with pytest.raises(ValueError, match="different samples"):
        auc_gap(leaky, membership_metrics(base[:200], truth[100:], n_bootstrap=0))


def test_groups_resample_whole_runs_and_widen_the_interval_by_the_run_to_run_spread():
    """Twenty runs pooled, each with its own model: a shift shared by all candidates of a run is invisible to a
    bootstrap over candidates and visible to one over runs."""
    rng = np.random.default_rng(3)
    runs, m = 20, 6
    truth = np.tile(np.arange(2 * m) < m, runs)
    groups = np.repeat(np.arange(runs), 2 * m)
    shift = rng.normal(0, 1.5, runs)[groups] * truth  # how much each run's model shows its members
    scores = 0.5 * truth + shift + rng.normal(0, 0.3, truth.size)
    plain = membership_metrics(scores, truth, random_state=0)
    by_run = membership_metrics(scores, truth, groups=groups, random_state=0)
    assert by_run.auc == plain.auc
    width = lambda r: r.auc_interval[1] - r.auc_interval[0]  # noqa: E731
    assert width(by_run) > 1.3 * width(plain)
    retrained = membership_metrics(rng.normal(0, 1, truth.size), truth, groups=groups, random_state=0)
    gap = auc_gap(by_run, retrained, random_state=0)
    assert gap.interval[0] < gap.gap < gap.interval[1]
    with pytest.raises(ValueError, match="different groups"):
        auc_gap(by_run, membership_metrics(rng.normal(0, 1, truth.size), truth, random_state=0))
    with pytest.raises(ValueError, match="as many members"):
        membership_metrics(scores[:-1], truth[:-1], groups=groups[:-1])


def test_lira_and_loss_attacks_pass_groups_through():
    shadows = run_shadows(_noisy_memory, 8, 8, random_state=0)
    member = np.array([np.random.default_rng(t).permutation(8) < 4 for t in range(10)])
    target = 2.0 * member + np.random.default_rng(1).normal(0, 0.7, member.shape)
    groups = np.repeat(np.arange(10), 8).reshape(10, 8)
    result = lira_attack(target, shadows, member, groups=groups, random_state=0)
    assert result.groups is not None and sorted(set(result.groups.tolist())) == list(range(10))
    assert loss_attack(-target, member, groups=groups, random_state=0).groups is not None
