"""Checks for the coding exercises of the synthesis chapter (membership inference: LiRA offline, AUC, TPR)."""

from __future__ import annotations

import warnings

import numpy as np

from fedbook.course._feedback import Wrong, call, exercise, expect, expect_array, expect_raises


def _quiet(fn, *args, what: str):
    """``call``, with the numerical warnings of a wrong answer (0/0, sqrt of a negative) kept off the page."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return call(fn, *args, what=what)


def _close(got, want) -> bool:
    try:
        got = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return got.shape == np.shape(want) and bool(np.allclose(got, want, rtol=1e-9, atol=1e-12, equal_nan=False))


# --------------------------------------------------------------------------------------------------------------
# Offline LiRA


def _offline_cases():
    """Shadow statistics with their masks and targets: balanced, unequal 'out' counts, several targets."""
    from fedlib.audit import balanced_masks

    rng = np.random.default_rng(20261201)
    inside = balanced_masks(40, 16, random_state=1)
    S = rng.normal(0.0, 1.0, 40) + rng.normal(0.0, 1.0, (16, 40)) + 2.0 * inside
    yield "16 balanced shadows and 40 candidates, one target model", S, inside, rng.normal(1.0, 1.5, 40)

    inside = rng.random((6, 10)) < 0.5
    inside[:, 0] = True
    inside[2, 0] = False  # candidate 0: a single "out" shadow
    inside[:, 1] = [True, False, True, True, False, True]  # candidate 1: two
    inside[0, 2:], inside[1, 2:] = True, False  # every other candidate: at least one "in" and one "out"
    spread = rng.uniform(0.2, 3.0, 10)  # a different spread per candidate, so pooling matters
    S = rng.normal(0.0, 2.0, 10) + spread * rng.normal(0.0, 1.0, (6, 10)) + 1.5 * inside
    yield (
        "6 shadows with unequal 'out' counts (candidate 0 has a single 'out' shadow, candidate 1 two), "
        "3 target models (t of shape (3, 10))",
        S,
        inside,
        rng.normal(0.5, 2.0, (3, 10)),
    )

    S = np.array([[0.0, 4.0, 1.0], [1.0, 0.5, 3.0], [5.0, 1.0, 2.5], [2.0, 3.5, -1.0]])
    inside = np.array([[False, True, False], [False, False, True], [True, False, True], [True, True, False]])
    yield "4 shadows and 3 candidates (by hand)", S, inside, np.array([1.0, 2.0, 0.0])


def _offline_diagnosis(got, S, inside, t, name: str) -> None:
    """Name the mistake when the answer is a recognisable variant of the offline score."""
    from fedlib.audit import ShadowScores, lira_scores

    out = ~inside
    counts = out.sum(axis=0)
    mu = np.where(out, S, 0.0).sum(axis=0) / counts
    dev2 = np.where(out, S - mu, 0.0) ** 2
    pooled = np.sqrt(dev2.sum() / (counts.sum() - counts.size))
    with np.errstate(all="ignore"):
        own = np.sqrt(dev2.sum(axis=0) / (counts - 1))
    mu_all = S.mean(axis=0)
    values = S[out]
    variants = [
        (
            lira_scores(t, ShadowScores(S, inside), online=True),
            "these are online LiRA scores (the log-likelihood ratio of the 'in' and the 'out' Gaussians); the "
            "offline score uses the 'out' shadows only",
        ),
        (
            -(t - mu) / pooled,
            "the sign is reversed: a target statistic above the 'out' mean (a member-like one) must score high",
        ),
        (
            (t - mu_all) / pooled,
            "each candidate's mean includes its 'in' shadows: the 'out' Gaussian is fitted on the 'out' shadows only",
        ),
        (
            (t - mu) / np.sqrt(dev2.sum() / counts.sum()),
            "the pooled variance divides by the number of 'out' statistics; each candidate's own mean uses up one "
            "degree of freedom, so divide by that number minus the number of candidates",
        ),
        (
            (t - mu) / values.std(ddof=1),
            "the variance is taken around one mean of all 'out' statistics; pool the deviations of each "
            "candidate's statistics from that candidate's own 'out' mean",
        ),
        (
            (t - mu) / values.std(ddof=0),
            "the variance is taken around one mean of all 'out' statistics; pool the deviations of each "
            "candidate's statistics from that candidate's own 'out' mean",
        ),
        (
            (t - mu) / np.sqrt(np.nanmean(own**2)),
            "the variance is the plain average of the candidates' own variances; pool the squared deviations "
            "instead (a candidate with more 'out' shadows weighs more, one with a single shadow adds nothing)",
        ),
    ]
    for want, message in variants:
        if _close(got, want):
            raise Wrong(f"on {name}: {message}.")
    arr = np.asarray(got, dtype=np.float64)
    finite = np.isfinite(own)
    lonely = np.flatnonzero(counts == 1).tolist()
    single = f" (and candidate(s) {lonely}, with a single 'out' shadow, have none)" if lonely else ""
    if arr.shape == np.shape(t) and np.allclose(arr[..., finite], ((t - mu) / own)[..., finite], rtol=1e-9):
        raise Wrong(
            f"on {name}: each candidate has its own variance{single}; fedlib, like Carlini et al. with fewer than "
            "64 shadows, pools one variance over all candidates."
        )
    if arr.shape == np.shape(t) and not np.isfinite(arr).all():
        raise Wrong(f"on {name}: some scores are NaN or infinite; every candidate here has an 'out' shadow.")


@exercise("ex-compared-offline")
def _offline(answer) -> str:
    from fedlib.audit import ShadowScores, lira_scores

    for name, S, inside, t in _offline_cases():
        got = _quiet(answer, S.copy(), inside.copy(), t.copy(), what=f"offline_lira on {name}")
        want = lira_scores(t, ShadowScores(S, inside), online=False)
        try:
            shape = np.shape(got)
        except Exception:  # a student's object may not even have a shape
            shape = None
        expect(shape == want.shape, f"on {name} offline_lira returned shape {shape}; expected {want.shape}, t's shape")
        if _close(got, want):
            continue
        _offline_diagnosis(got, S, inside, t, name)
        expect_array(got, want, f"offline_lira on {name}", rtol=1e-9, atol=1e-12)

    # A candidate no shadow left out has no "out" Gaussian: the score is undefined, and must not be a NaN.
    name = "4 shadows where candidate 2 is 'in' for all of them"
    S = np.array([[0.0, 1.0, 2.0], [0.5, 2.0, 2.5], [1.0, 0.0, 3.0], [2.0, 1.5, 2.2]])
    inside = np.array([[True, False, True], [False, True, True], [False, False, True], [True, True, True]])
    expect_raises(
        answer, S.copy(), inside.copy(), np.array([1.0, 1.0, 2.0]), what=f"offline_lira on {name}",
        why="a candidate without 'out' shadows has no 'out' Gaussian",
    )
    return (
        "offline scores agree with fedlib.audit.lira_scores(online=False) on 3 shadow sets (a candidate with a "
        "single 'out' shadow, unequal counts, 3 targets at once), and a candidate without 'out' shadows is refused"
    )


# --------------------------------------------------------------------------------------------------------------
# AUC


def _auc_cases():
    """Scores and membership, members in any order, with and without ties."""
    rng = np.random.default_rng(20261202)
    member = rng.permutation(np.arange(80) < 30)
    yield "80 continuous scores (30 members, shuffled), no ties", rng.normal(0.0, 1.0, 80) + 0.8 * member, member
    member = rng.permutation(np.arange(100) < 40)
    yield "100 integer scores in 0..4 (many ties), 40 members", rng.integers(0, 5, 100) + member, member
    member = rng.permutation(np.arange(3000) < 1000)
    rounded = np.round(rng.normal(0.0, 1.0, 3000) + 0.3 * member, 1)
    yield "3000 scores rounded to one decimal, 1000 members", rounded, member
    yield "6 equal scores, 2 members", np.full(6, 0.7), np.array([False, True, False, False, True, False])
    below = np.array([False, True, False, True, False])
    yield "members all below the non-members", np.array([5.0, 0.0, 6.0, 1.0, 7.0]), below
    yield "one member tied with the only non-member", np.array([2.0, 2.0]), np.array([True, False])


@exercise("ex-compared-auc")
def _auc(answer) -> str:
    from sklearn.metrics import roc_auc_score

    from fedlib.audit import membership_metrics

    for name, scores, member in _auc_cases():
        got = _quiet(answer, scores.copy(), member.copy(), what=f"auc on {name}")
        try:
            value = float(got)
        except (TypeError, ValueError):
            raise Wrong(f"auc on {name} returned {type(got).__name__}; expected one number") from None
        want = float(roc_auc_score(member, scores))
        if abs(value - want) <= 1e-9:
            continue
        m_scores, o_scores = scores[member], scores[~member]
        strict = float((m_scores[:, None] > o_scores[None, :]).mean())
        weak = float((m_scores[:, None] >= o_scores[None, :]).mean())
        m = int(member.sum())
        first = membership_metrics(scores, np.arange(scores.size) < m, n_bootstrap=0).auc
        known = [
            (strict, "tied member/non-member pairs count 0 here; they must count one half"),
            (weak, "tied member/non-member pairs count 1 here; they must count one half"),
            (1.0 - want, "this is the probability that a non-member scores above a member (1 − AUC)"),
            (want - 1.0 / (scores.size - m), "it is 1/n_nonmembers too low: ranks start at 1, not 0"),
            (
                first,
                "it treats the first scores as the members; use is_member (members are not first here)",
            ),
        ]
        for variant, message in known:
            if abs(value - variant) <= 1e-9:
                raise Wrong(f"on {name} auc returned {value:.6g}, expected {want:.6g}: {message}.")
        if strict != weak and strict - 1e-12 <= value <= weak + 1e-12:
            raise Wrong(
                f"on {name} auc returned {value:.6g}, expected {want:.6g}: the ties are split unevenly (ranks "
                "that break ties by position?); a tied pair must count exactly one half."
            )
        raise Wrong(f"on {name} auc returned {value:.6g}; expected {want:.6g}")
    return (
        "AUC agrees with sklearn.metrics.roc_auc_score and fedlib.audit.membership_metrics on 6 cases (shuffled "
        "members, many ties, all scores equal, a perfect inversion, 3000 scores)"
    )


# --------------------------------------------------------------------------------------------------------------
# TPR at a low FPR


def _tpr_cases():
    rng = np.random.default_rng(20261203)
    member = rng.permutation(np.arange(160) < 60)
    scores = rng.normal(0.0, 1.0, 160) + 1.0 * member
    for fpr in (0.05, 0.001, 0.01):
        yield f"160 continuous scores (60 members, 100 non-members), FPR {fpr}", scores, member, fpr
    yield "the same scores, FPR 0.29 (0.29 × 100 is 28.999999999999996 in floating point)", scores, member, 0.29
    ties = rng.integers(0, 8, 160) + (member & (rng.random(160) < 0.7))  # some members at 0, as non-members
    yield "160 integer scores in 0..8 (ties at the threshold), FPR 0.1", ties.astype(float), member, 0.1
    yield "the integer scores, FPR 0.035", ties.astype(float), member, 0.035
    yield "the integer scores, FPR 1 (every non-member may be flagged)", ties.astype(float), member, 1.0


def _share(members: np.ndarray, others: np.ndarray, k: int, strict: bool = True) -> float:
    """Share of members above the (k+1)-th largest non-member score (strictly or not); 1 if k >= n."""
    if k >= others.size:
        return 1.0
    tau = np.sort(others)[::-1][k]
    return float((members > tau).mean() if strict else (members >= tau).mean())


@exercise("ex-compared-tpr")
def _tpr(answer) -> str:
    from fedlib.audit import membership_metrics

    for name, scores, member, fpr in _tpr_cases():
        got = _quiet(answer, scores.copy(), member.copy(), fpr, what=f"tpr_at_fpr on {name}")
        try:
            value = float(got)
        except (TypeError, ValueError):
            raise Wrong(f"tpr_at_fpr on {name} returned {type(got).__name__}; expected one number") from None
        want = membership_metrics(scores, member, fprs=(fpr,), n_bootstrap=0).tpr[fpr]
        if abs(value - want) <= 1e-12:
            continue
        members, others = scores[member], scores[~member]
        allowed = int(np.floor(fpr * others.size + 1e-9))
        naive = int(np.floor(fpr * others.size))
        if naive != allowed and abs(value - _share(members, others, naive)) <= 1e-12:
            hint = (
                f" it allows {naive} false positives; α·n is {allowed} here, although the floating-point product "
                f"{fpr!r} * {others.size} falls just below it"
            )
        elif abs(value - _share(members, others, allowed, strict=False)) <= 1e-12:
            hint = (
                " members tied with the threshold count as flagged here; a rule that flags them flags the "
                f"non-members tied with them too, more than ⌊α·n⌋ = {allowed}"
            )
        elif value < want:
            hint = f" a lower threshold flags more members and still at most ⌊α·n⌋ = {allowed} non-members"
        else:
            hint = f" no threshold flags this share of members while flagging at most ⌊α·n⌋ = {allowed} non-members"
        raise Wrong(f"on {name} tpr_at_fpr returned {value:.6g}; expected {want:.6g}:{hint}.")
    return (
        "TPR at FPR agrees with fedlib.audit.membership_metrics on 7 cases (an FPR below 1/n, ties at the "
        "threshold, α·n rounding just below an integer, FPR 1)"
    )
