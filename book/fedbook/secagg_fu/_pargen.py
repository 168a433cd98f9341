"""Tables and grids of the ParGen chapter (Liu et al., TDSC 2025: Alg. 2, Lemmas 1-4, Remarks 1 and 6, Figs. 4-5).

Every published value comes from :mod:`fedbook.papers.secagg_fu`; every formula from :mod:`fedlib.unlearn`. The
drivers only arrange them into DataFrames, run the Monte Carlo and simulations, and compute the verdicts.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
from scipy.stats import beta

from fedbook.papers import secagg_fu as paper
from fedlib.exceptions import InfeasibleParameters
from fedlib.unlearn import (
    balanced_cluster_sizes,
    balanced_threshold_rate,
    expected_retrained_batch,
    expected_retrained_sequential,
    f3_connectivity,
    f_batch_capacity,
    harary_connected,
    harary_degree,
    pargen,
    r4_failure_probability,
    requirement_failure_probabilities,
    simulate_requirements,
    simulate_retraining,
    tau_batch_printed,
    tau_sequential_printed,
    unlearning_capacity_exact,
)
from fedlib.utils import SeedLike, check_random_state

#: The numbers of clients on the horizontal axis of our Figs. 4-5 (the paper's are not in its text).
N_GRID = (50, 100, 200, 300, 500, 1000, 2000, 5000, 10000)

#: Our sweeps for Fig. 4 (the paper's swept values are not in its text); the fixed values are the paper's captions.
FIG4_SWEEPS: dict[str, list[dict[str, float]]] = {
    "a": [
        {"sigma": sigma, "eta": eta}
        for sigma, eta in ((20, 20), (40, 40), (60, 60), (80, 80), (40, 20), (40, 80), (20, 40), (80, 40))
    ],
    "b": [
        {"gamma": gamma, "delta": delta}
        for gamma, delta in ((0.1, 0.1), (0.1, 0.2), (0.1, 0.3), (0.2, 0.1), (0.2, 0.2), (0.3, 0.1))
    ],
    "c": [{"zeta": zeta} for zeta in (0.05, 0.1, 0.15, 0.2)],
}

#: The fixed parameters of each Fig. 4 panel, from the captions (Fig. 4c as corrected in fedbook.papers.secagg_fu).
FIG4_FIXED: dict[str, dict[str, float]] = {"a": paper.FIG4A_FIXED, "b": paper.FIG4B_FIXED, "c": paper.FIG4C_FIXED}

#: Our sweep for Fig. 5; its fixed parameters are not stated, we take Fig. 4b's (σ = η = 40, ζ = 0.1, ξ = 0.7).
FIG5_SWEEP: list[dict[str, float]] = [
    {"gamma": gamma, "delta": delta} for gamma, delta in ((0.1, 0.1), (0.1, 0.2), (0.2, 0.1), (0.2, 0.2))
]

#: (N, k, τ) of the retraining-cost table: the sizes of Remark 1's example regime.
RETRAINING_CASES = ((1000, 50, 1), (1000, 50, 2), (1000, 50, 5), (1000, 50, 20), (200, 50, 10))

SYMBOLS = {"sigma": "σ", "eta": "η", "gamma": "γ", "delta": "δ", "zeta": "ζ", "xi": "ξ"}


def setting_label(setting: dict[str, float]) -> str:
    """``{"sigma": 40, "eta": 20}`` -> ``"σ=40, η=20"``."""
    return ", ".join(f"{SYMBOLS.get(name, name)}={value:g}" for name, value in setting.items())


def _caps(sizes, zeta: float) -> list[int]:
    return [math.floor(Fraction(repr(float(zeta))) * size) for size in sizes]


def design_row(n_clients: int, params: dict[str, float], *, variant: str = "printed", capacity: bool = True) -> dict:
    """ParGen at one setting, as a table row; an infeasible setting gives a row that says why.

    Besides ParGen's outputs the row holds the realised cluster size ``N/s`` and the exact
    unlearning capacity at ``σ`` for the round-robin cluster sizes.
    """
    row: dict = {"N": n_clients, **params, "variant": variant}
    try:
        r = pargen(n_clients, **params, variant=variant)
    except InfeasibleParameters as exc:
        return {**row, "feasible": False, "status": str(exc)}
    row.update(
        k1=r.k1, k2=r.k2, k3=r.k3, k=r.k, s=r.n_clusters, tau_seq=r.tau_seq, tau_bat=r.tau_bat, m=r.degree,
        binding=r.binding, feasible=r.feasible,
    )  # fmt: skip
    if not r.feasible:
        row["status"] = f"k = {r.k} > N = {n_clients} (Remark 6)"
        return row
    row["status"] = "feasible"
    row["realised size"] = n_clients / r.n_clusters
    if capacity:
        row["exact capacity"] = unlearning_capacity_exact(r.cluster_sizes, _caps(r.cluster_sizes, r.zeta), r.sigma)
    return row


def _with_xi(params: dict[str, float], xi) -> dict[str, float]:
    """``params`` with ξ replaced: "paper" keeps the caption's, "balanced" takes ξ*, a number is used as is."""
    if isinstance(xi, str):
        if xi not in ("paper", "balanced"):
            raise ValueError(f"xi={xi!r} should be 'paper', 'balanced' or a number.")
        if xi == "paper":
            return params
        return {**params, "xi": balanced_threshold_rate(params["gamma"], params["delta"], params["zeta"])}
    return {**params, "xi": float(xi)}


INT_COLUMNS = ("k1", "k2", "k3", "k", "s", "tau_seq", "tau_bat", "m", "exact capacity")


def _tidy(rows: list[dict]) -> pd.DataFrame:
    """Rows of :func:`design_row` as a frame whose counts are nullable integers (no 27.0, no NaN for "none")."""
    frame = pd.DataFrame(rows)
    for column in INT_COLUMNS:
        if column in frame:
            frame[column] = frame[column].astype("Int64")
    return frame


def figure4_grid(panel: str, *, variant: str = "printed", xi: str = "paper", n_values=N_GRID) -> pd.DataFrame:
    """The smallest cluster size ``k`` against ``N`` for every setting of one panel of Fig. 4.

    Parameters
    ----------
    panel : {"a", "b", "c"}
        Fig. 4a sweeps (σ, η), 4b (γ, δ), 4c ζ (:data:`FIG4_SWEEPS`).
    variant : {"printed", "corrected"}, default="printed"
        Which ParGen.
    xi : "paper", "balanced" or float, default="paper"
        ξ = 0.7 as in the captions, the balanced ``ξ* = (1 − δ − ζ + γ)/2`` of each setting, or one value for all.
    n_values : sequence of int
        The numbers of clients.

    Returns
    -------
    pandas.DataFrame
        One row per setting and ``N`` (:func:`design_row`), with columns ``panel`` and ``setting``.
    """
    rows = []
    for sweep in FIG4_SWEEPS[panel]:
        params = _with_xi({**FIG4_FIXED[panel], **sweep}, xi)
        for n in n_values:
            rows.append({"panel": panel, "setting": setting_label(sweep), **design_row(n, params, variant=variant)})
    return _tidy(rows)


def figure5_grid(*, variant: str = "printed", xi: str = "paper", n_values=N_GRID) -> pd.DataFrame:
    """Unlearning capacities against ``N`` for the (γ, δ) settings of Fig. 5, with the exact capacity beside them.

    Parameters
    ----------
    variant : {"printed", "corrected"}, default="printed"
        Printed: ``τ_seq`` (Eq. (7)) and ``τ_bat`` (Alg. 2 line 6); corrected: both are the exact capacity.
    xi : "paper", "balanced" or float, default="paper"
        ξ = 0.7, the balanced ξ* of each setting, or one value for all.
    n_values : sequence of int
        The numbers of clients.

    Returns
    -------
    pandas.DataFrame
        One row per setting and ``N`` (:func:`design_row`).
    """
    rows = []
    for sweep in FIG5_SWEEP:
        params = _with_xi({**paper.FIG4B_FIXED, **sweep}, xi)
        for n in n_values:
            rows.append({"setting": setting_label(sweep), **design_row(n, params, variant=variant)})
    return _tidy(rows)


def k_against_n(params: dict[str, float], n_values, *, variant: str = "printed") -> pd.DataFrame:
    """``k``, ``s`` and the realised cluster size ``N/s`` on a fine grid of ``N`` (the "sudden shift" of Fig. 4)."""
    rows = [design_row(int(n), params, variant=variant, capacity=False) for n in n_values]
    return _tidy(rows).reindex(columns=["N", "k", "s", "feasible", "realised size"])


def _paper_example() -> dict[str, float]:
    return {name: value for name, value in paper.WORKED_EXAMPLE.items() if name != "n_clients"}


def worked_example_table() -> pd.DataFrame:
    """The worked example of Sec. IV: the paper's k = 60 beside the printed and the corrected ParGen.

    Columns: the paper, the printed formulas, the corrected formulas at ξ = 0.7 (infeasible), and the corrected
    formulas at the balanced threshold rate ξ*.
    """
    n = int(paper.WORKED_EXAMPLE["n_clients"])
    params = _paper_example()
    xi_star = balanced_threshold_rate(params["gamma"], params["delta"], params["zeta"])
    columns = {
        "paper": {"k": paper.WORKED_EXAMPLE_K},
        "printed formulas": _example_column(n, params, "printed"),
        "corrected, ξ = 0.7": _example_column(n, params, "corrected"),
        f"corrected, ξ* = {xi_star:g}": _example_column(n, {**params, "xi": xi_star}, "corrected"),
    }
    order = [
        "k1 (Lemma 1)", "k2 (Lemma 2)", "k3 (Lemma 3)", "k", "s", "cluster sizes", "t = ⌈ξk⌉", "q = ⌊ζk⌋",
        "Harary degree m", "τ_seq", "τ_bat", "exact capacity", "Pr[R2 fails], exact", "status",
    ]  # fmt: skip
    return pd.DataFrame({name: [column.get(row, "") for row in order] for name, column in columns.items()}, index=order)


def _example_column(n: int, params: dict[str, float], variant: str) -> dict:
    try:
        r = pargen(n, **params, variant=variant)
    except InfeasibleParameters as exc:
        if "k2" in exc.details:  # the searches ran: show k1, k2 and k, and say why no cluster fits
            return {"k1 (Lemma 1)": exc.details["k1"], "k2 (Lemma 2)": exc.details["k2"], "k": exc.details["k"],
                    "status": f"infeasible: k = {exc.details['k']} > N"}  # fmt: skip
        return {"status": f"infeasible: {exc}"}
    risks = requirement_failure_probabilities(
        r.cluster_sizes, gamma=r.gamma, delta=r.delta, zeta=r.zeta, xi=r.xi, tau=0
    )
    return {
        "k1 (Lemma 1)": r.k1,
        "k2 (Lemma 2)": r.k2,
        "k3 (Lemma 3)": "—" if r.k3 is None else r.k3,
        "k": r.k,
        "s": r.n_clusters,
        "cluster sizes": ", ".join(map(str, r.cluster_sizes)),
        "t = ⌈ξk⌉": r.threshold,
        "q = ⌊ζk⌋": r.removal_cap,
        "Harary degree m": r.degree,
        "τ_seq": r.tau_seq,
        "τ_bat": "undefined (denominator < 0)" if r.tau_bat is None else r.tau_bat,
        "exact capacity": unlearning_capacity_exact(r.cluster_sizes, _caps(r.cluster_sizes, r.zeta), r.sigma),
        "Pr[R2 fails], exact": "0"
        if risks["R2"].exact == 0
        else f"{float(risks['R2'].exact):.3g} = 2^{risks['R2'].log2_exact:.1f}",
        "status": "feasible",
    }


def capacity_table(n_values=(200, 500, 1000, 2000, 5000)) -> pd.DataFrame:
    """Printed ``τ_seq`` and ``τ_bat`` beside the exact capacity, for the worked example's parameters and several N."""
    params = _paper_example()
    rows = []
    for n in n_values:
        r = pargen(n, **params)
        caps = _caps(r.cluster_sizes, r.zeta)
        rows.append(
            {
                "N": n,
                "k": r.k,
                "s": r.n_clusters,
                "cluster sizes": "/".join(str(v) for v in sorted(set(r.cluster_sizes))),
                "τ_seq (Eq. 7)": r.tau_seq,
                "τ_bat (line 6)": r.tau_bat,
                "exact capacity": unlearning_capacity_exact(r.cluster_sizes, caps, r.sigma),
                "min cap ⌊ζk_i⌋": min(caps),
                "removals per cluster at τ_seq": r.tau_seq / r.n_clusters,
                "Pr[R4 fails] at τ_seq": float(r4_failure_probability(r.cluster_sizes, caps, min(r.tau_seq, n))),
            }
        )
    frame = pd.DataFrame(rows)
    frame["τ_bat (line 6)"] = frame["τ_bat (line 6)"].astype("Int64")
    return frame


def _interval(failures: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    alpha = 1 - confidence
    low = 0.0 if failures == 0 else float(beta.ppf(alpha / 2, failures, trials - failures + 1))
    high = 1.0 if failures == trials else float(beta.ppf(1 - alpha / 2, failures + 1, trials - failures))
    return low, high


def _judge(low: float, high: float, claimed: float) -> str:
    if high <= claimed:
        return "within the claim"
    if low > claimed:
        return "claim violated"
    return "inconclusive"


def requirements_table(
    n_clients: int,
    params: dict[str, float],
    *,
    variant: str,
    n_trials: int,
    tau: int | None = None,
    leftovers: str = "round_robin",
    random_state: SeedLike = None,
) -> pd.DataFrame:
    """Monte Carlo failure rates of R1-R4 for one ParGen design, beside exact values, union bounds and 2^-σ / 2^-η.

    The design is ``pargen(n_clients, **params, variant=variant)``; the Harary degree is the design's, and ``τ``
    the exact capacity of its cluster sizes unless given (the printed ``τ_seq`` often exceeds ``N``; see
    :func:`capacity_table` for R4 at ``τ_seq``). With the default round-robin
    leftovers the cluster sizes are those for which the exact probabilities are computed.

    Returns
    -------
    pandas.DataFrame
        One row per requirement: Monte Carlo rate and its 95% Clopper-Pearson interval (``CI low``, ``CI high``),
        exact probability (R1, R2, R4), union bound, the paper's claim and the verdict of the interval against
        the claim ("within the claim" when the whole interval lies below it, "claim violated" when above).
    """
    r = pargen(n_clients, **params, variant=variant)
    n_adv = math.floor(Fraction(repr(float(r.gamma))) * n_clients)
    n_drop = math.floor(Fraction(repr(float(r.delta))) * n_clients)
    if tau is None:
        tau = unlearning_capacity_exact(r.cluster_sizes, _caps(r.cluster_sizes, r.zeta), r.sigma)
    tau = min(tau, n_clients - n_adv - n_drop)
    mc = simulate_requirements(
        n_clients, r.k, gamma=r.gamma, delta=r.delta, zeta=r.zeta, xi=r.xi, tau=tau, degree=r.degree,
        n_trials=n_trials, leftovers=leftovers, random_state=random_state,
    )  # fmt: skip
    exact = requirement_failure_probabilities(
        r.cluster_sizes, gamma=r.gamma, delta=r.delta, zeta=r.zeta, xi=r.xi, tau=tau
    )
    p_removed = min(1.0, r.gamma + r.delta + r.zeta)
    k_big = max(r.cluster_sizes)
    r3_union = 0.0 if r.degree >= k_big - 1 else min(1.0, r.n_clusters * k_big * p_removed ** (r.degree / 2))
    claims = {"R1": r.sigma, "R2": r.eta, "R2 (realised Q)": r.eta, "R3": r.sigma, "R4": r.sigma}
    claims["R1 ∨ R3 ∨ R4"] = r.sigma
    rows = []
    for name, row in mc.iterrows():
        claimed = 2.0 ** -claims[name]
        risk = exact.get(name)
        rows.append(
            {
                "design": f"{variant}: k={r.k}, s={r.n_clusters}, m={r.degree}, τ={tau}",
                "requirement": name,
                "MC failures": int(row["failures"]),
                "trials": int(row["trials"]),
                "MC rate": row["rate"],
                "CI low": row["ci_low"],
                "CI high": row["ci_high"],
                "exact": float(risk.exact) if risk is not None else np.nan,
                "union bound": min(1.0, risk.union_bound)
                if risk is not None
                else (r3_union if name == "R3" else np.nan),
                "claimed": claimed,
                "verdict": _judge(row["ci_low"], row["ci_high"], claimed),
            }
        )
    return pd.DataFrame(rows)


def harary_disconnection_table(
    settings=((60, 4), (60, 8), (60, 16), (60, 30), (50, 4)),
    *,
    p: float = 0.3,
    n_trials: int,
    random_state: SeedLike = None,
) -> pd.DataFrame:
    """How often ``H(k, m)`` falls apart when each vertex is removed with probability ``p``, against ``k·p^{m/2}``.

    Lemma 3's proof sets ``m = ln k`` (about 4 for k = 60); the table shows that degree is far too small.
    """
    rng = check_random_state(random_state)
    rows = []
    for k, m in settings:
        removed = rng.random((n_trials, k)) < p
        failures = int((~harary_connected(removed, m)).sum())
        low, high = _interval(failures, n_trials)
        rows.append(
            {
                "k": k, "m": m, "p": p, "MC Pr[disconnected]": failures / n_trials,
                "95% CI": f"[{low:.3g}, {high:.3g}]", "union bound k·p^(m/2)": k * p ** (m / 2),
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


def retraining_table(cases=RETRAINING_CASES, *, n_trials: int, random_state: SeedLike = None) -> pd.DataFrame:
    """Remark 1's expected numbers of retrained clients beside simulation (random clusterings, distinct random clients).

    Returns
    -------
    pandas.DataFrame
        Per (N, k, τ): simulated means; the printed ``E_seq``; the corrected ``E_seq`` (post- and pre-removal
        sizes) in the paper's model and exactly for distinct clients; Remark 1's ``E_bat`` and its distinct-client
        value; how many standard errors each lies from its simulated mean.
    """
    rng = check_random_state(random_state)
    rows = []
    for n, k, tau in cases:
        sim = simulate_retraining(n, k, tau, n_trials=n_trials, random_state=rng)
        mean, sem = sim.mean(), sim.sem().replace(0.0, np.nan)
        seq_mean, seq_sem = mean["sequential, post-removal"], sem["sequential, post-removal"]
        printed = expected_retrained_sequential(n, k, tau)
        post = expected_retrained_sequential(n, k, tau, formula="post_removal")
        post_clients = expected_retrained_sequential(n, k, tau, formula="post_removal", requests="clients")
        batch = expected_retrained_batch(n, k, tau)
        batch_clients = expected_retrained_batch(n, k, tau, requests="clients")
        rows.append(
            {
                "N": n, "k": k, "τ": tau,
                "sim E_seq (post-removal)": seq_mean,
                "sim E_seq (pre-removal)": mean["sequential, pre-removal"],
                "printed E_seq (Remark 1)": printed,
                "E_seq post-removal, paper's model": post,
                "E_seq pre-removal, paper's model": expected_retrained_sequential(n, k, tau, formula="pre_removal"),
                "E_seq post-removal, distinct clients": post_clients,
                "sim E_bat": mean["batch"],
                "E_bat (Remark 1)": batch,
                "E_bat, distinct clients": batch_clients,
                "printed E_seq: SEs off": abs(printed - seq_mean) / seq_sem,
                "E_seq distinct clients: SEs off": abs(post_clients - seq_mean) / seq_sem,
                "E_bat (Remark 1): SEs off": abs(batch - mean["batch"]) / sem["batch"],
                "E_bat distinct clients: SEs off": abs(batch_clients - mean["batch"]) / sem["batch"],
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


def errata_table(*, n_trials: int = 20000, random_state: SeedLike = None) -> pd.DataFrame:
    """Each error of the paper's formulas, its correction, and the numbers that show it, computed here.

    Returns
    -------
    pandas.DataFrame
        Columns ``where``, ``printed``, ``corrected``, ``evidence``.
    """
    rng = check_random_state(random_state)
    ex = _paper_example()
    sigma = ex["sigma"]
    n_ex = int(paper.WORKED_EXAMPLE["n_clients"])
    printed = pargen(n_ex, **ex)
    corrected_k2 = _corrected_k2(n_ex, ex)
    r2 = requirement_failure_probabilities(
        printed.cluster_sizes, **{k: ex[k] for k in ("gamma", "delta", "zeta", "xi")}
    )
    p = ex["gamma"] + ex["delta"] + ex["zeta"]
    ks = np.arange(1, 10_000)
    f3_ok = np.flatnonzero(
        f3_connectivity(ks, gamma=ex["gamma"], delta=ex["delta"], zeta=ex["zeta"], sigma=ex["sigma"]) >= 0
    )
    removed = rng.random((n_trials, 60)) < p
    split_rate = float((~harary_connected(removed, harary_degree(60, p, ex["sigma"]))).mean())
    r1000 = pargen(1000, **ex)
    caps1000 = _caps(r1000.cluster_sizes, ex["zeta"])
    exact1000 = unlearning_capacity_exact(r1000.cluster_sizes, caps1000, ex["sigma"])
    taus = np.arange(1, 100)
    allowed = taus[
        f_batch_capacity(taus, n_clients=1000, k=43, zeta=ex["zeta"], sigma=ex["sigma"], variant="substituted") >= 0
    ]
    sizes43 = balanced_cluster_sizes(1000, 43)
    risk_allowed = float(r4_failure_probability(sizes43, _caps(sizes43, ex["zeta"]), int(allowed.max())))
    f9 = f_batch_capacity(np.array([1.0, 1000.0]), n_clients=1000, k=43, zeta=ex["zeta"], sigma=ex["sigma"])
    tau_bat60 = tau_batch_printed(1000, 60, ex["zeta"], ex["sigma"])
    f9_at = f_batch_capacity(tau_bat60, n_clients=1000, k=60, zeta=ex["zeta"], sigma=ex["sigma"])
    denominator = n_ex**2 / printed.k**2 - 2 * ex["sigma"] * math.log(2) + 2 * math.log(n_ex / printed.k)
    e_neg = expected_retrained_sequential(200, 60, 22)
    e_1000 = expected_retrained_sequential(1000, 50, 20)
    e_1000_post = expected_retrained_sequential(1000, 50, 20, formula="post_removal")
    e_bat = expected_retrained_batch(1000, 50, 20)
    h_seq = (1000 * (1000 - e_1000) / 50, (1 - 20 / 1000) * 50 - (2 * 1000 + 1 - 20**2) / (2 * 1000**2))
    h_bat = (1000 * (1000 - e_bat) / 50, 50 + 1000 * (1000 + 20) / 50 - 2 * 1000)
    remark6 = first_feasible_n({**ex, **paper.REMARK6})
    xi_star = balanced_threshold_rate(ex["gamma"], ex["delta"], ex["zeta"])
    corrected_1000 = pargen(1000, **{**ex, "xi": xi_star}, variant="corrected")
    k_big = max(corrected_1000.cluster_sizes)
    m_one = harary_degree(k_big, p, ex["sigma"], "corrected")
    rows = [
        ("Sec. IV worked example", f"k = {paper.WORKED_EXAMPLE_K}", "k from Alg. 2 as printed",
         f"the printed formulas give k1 = {printed.k1}, k2 = {printed.k2}, k3 = {printed.k3}: k = {printed.k}, "
         f"s = {printed.n_clusters}"),
        ("Lemma 2, Eq. (4)", "2((1−δ)² + ξ² − 2(ξ+ζ)δ + 2ξ + 2ζ)k + ln(k/N) − η ln2 > 0; ξ > δ, ξ > ζ",
         "2(1 − δ − ξ − ζ)²k + ln(k/N) − η ln2 ≥ 0 (Eq. 4'); ξ + ζ + δ < 1",
         f"worked example: k2 = {printed.k2} printed, {corrected_k2} corrected (> N); exact Pr[R2 fails] at the "
         f"printed design = 2^{r2['R2'].log2_exact:.1f}, not ≤ 2^-{ex['eta']:g}"),
        ("Lemma 3, Eq. (5)", "−ln k · ln(k(γ+δ+ζ)) + 2σ ln2 ≥ 0 with m = ln k",
         "m = 2⌈(σ ln2 + ln(sk))/(−ln p)⌉ from s·k·p^(m/2) ≤ 2^-σ",
         f"Eq. (5) holds for every k ≤ {int(f3_ok.max()) + 1} (p = {p:g}), so k3 = 1; H(60, "
         f"{harary_degree(60, p, ex['sigma'])}) with {p:.0%} of its clients removed is disconnected in "
         f"{split_rate:.1%} of {n_trials} trials; m = {harary_degree(60, p, ex['sigma'], 'corrected')} is needed"),
        ("Eqs. (6), (8) text", "q = ξk", "q = ζk",
         f"worked example: ξk = {ex['xi'] * printed.k:g} against ζk = {ex['zeta'] * printed.k:g}"),
        ("Lemma 4.1, Eq. (7)", "τ_seq ≤ sqrt(N³σ ln2/(2k³))", "exact capacity (no valid closed form)",
         f"N = 1000: τ_seq = {r1000.tau_seq} (≈ {r1000.tau_seq / r1000.n_clusters:.0f} removals per cluster, cap "
         f"{min(caps1000)}) against an exact capacity of {exact1000}; τ_seq grows with σ: "
         f"{tau_sequential_printed(1000, r1000.k, 80)} at σ = 80"),
        ("Lemma 4.2, Eq. (9)", "2(Nζ − τk)²/(kτ(N−k)) + ln(k/N) − σ ln2 ≥ 0",
         "exact capacity; substituting s = N/k gives 2k(Nζ − τ)²/(τ(N−k)) + … (9'), still not a tail bound",
         f"N = 1000, k = 43: Eq. (9) = {f9[0]:.2f} at τ = 1 but {f9[1]:.2f} at τ = 1000; (9') allows "
         f"τ ≤ {int(allowed.max())}, whose exact Pr[R4 fails] is {risk_allowed:.3f}"),
        ("Alg. 2 line 6", "τ_bat = ⌊N²ζ²/(N²/k² − 2σ ln2 + 2 ln(N/k))⌋", "exact capacity",
         f"worked example: denominator {denominator:.2f} < 0; N = 1000, k = 60: τ_bat = {tau_bat60} but Eq. (9) at "
         f"τ = {tau_bat60} is {f9_at:.2f} < 0"),
        ("Lemma 3, union bound", "k·p^(m/2) for one cluster", "s·k·p^(m/2): Requirement 3 covers all s clusters",
         f"corrected design at N = 1000 (s = {corrected_1000.n_clusters}, clusters of {k_big}): m = {m_one} for one "
         f"cluster, {corrected_1000.degree} for all"),
        ("Definition 1, Theorem 1", "R1, R3, R4 each at 2^-σ", "their union: up to 3·2^-σ (or σ + log2 3 each)",
         f"3·2^-{sigma:g} = {3 * 2.0**-sigma:.2g} > 2^-{sigma:g} = {2.0**-sigma:.2g}"),
        ("Remark 1, E_seq", "(2N + 1 − τ²)k/(2N) − τ",
         "τ(k−1) − τ(τ−1)k/(2N) (post-removal) or τk − τ(τ−1)k/(2N) (pre-removal)",
         f"N = 200, k = 60, τ = 22: {e_neg:.2f} (negative); N = 1000, k = 50, τ = 20: {e_1000:.2f} against "
         f"{e_1000_post:.1f} corrected"),
        ("Eqs. (11), (12), second equalities", "H_seq = (1 − τ/N)k − …, H_bat = k + N(N+τ)/k − 2N",
         "the first forms, or measure participation",
         f"N = 1000, k = 50, τ = 20: (11) gives {h_seq[0]:,.1f} and {h_seq[1]:.3f}; (12) {h_bat[0]:,.1f} and "
         f"{h_bat[1]:,.0f}"),
        ("Remark 6", f"N ≤ {paper.REMARK6_MAX_INFEASIBLE_N} infeasible", f"N ≤ {remark6 - 1} infeasible",
         f"with γ = {paper.REMARK6['gamma']:g}, δ = {paper.REMARK6['delta']:g} the printed ParGen first finds "
         f"k ≤ N at N = {remark6} (k = {pargen(remark6, **{**ex, **paper.REMARK6}).k})"),
        ("Fig. 4c caption", f"{len(paper.FIG4C_CAPTION_VALUES)} values for {len(paper.FIG4C_CAPTION_NAMES)} names",
         "(" + ", ".join(SYMBOLS[name] for name in paper.FIG4C_FIXED) + ") = ("
         + ", ".join(f"{value:g}" for value in paper.FIG4C_FIXED.values()) + "), ζ swept", "—"),
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=["where", "printed", "corrected", "evidence"])


def _corrected_k2(n: int, params: dict[str, float]) -> int:
    """k2 of the corrected Eq. (4') even when it exceeds N (ParGen then raises)."""
    try:
        return pargen(n, **params, variant="corrected").k2
    except InfeasibleParameters as exc:
        return exc.details["k2"]


def first_feasible_n(params: dict[str, float], *, variant: str = "printed", n_max: int = 10**6) -> int | None:
    """The smallest ``N`` for which ParGen finds a cluster size ``k <= N`` (Remark 6's threshold), or None.

    ``k`` grows like ``ln N`` while ``N`` grows linearly, so feasibility is monotone in ``N`` and bisection finds it.
    """

    def feasible(n: int) -> bool:
        try:
            return pargen(n, **params, variant=variant, exact_capacity=False).feasible
        except InfeasibleParameters as exc:
            if "> N" not in str(exc):
                raise
            return False

    if not feasible(n_max):
        return None
    lo, hi = 1, n_max
    while lo < hi:
        mid = (lo + hi) // 2
        if feasible(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _effect(frame: pd.DataFrame, low: str, high: str) -> tuple[int, int]:
    """Smallest and largest change of k from setting ``low`` to ``high`` over the grid of N (k > N included)."""
    wide = frame.dropna(subset=["k"]).pivot(index="N", columns="setting", values="k")
    diff = (wide[high] - wide[low]).dropna()
    return int(diff.min()), int(diff.max())


def _increasing(values) -> bool:
    values = [v for v in values if not pd.isna(v)]
    return all(b > a for a, b in itertools.pairwise(values))


def _log2(x: Fraction) -> float:
    """``log2 x`` of an exact probability (``-inf`` for 0)."""
    return -math.inf if x == 0 else math.log2(x.numerator) - math.log2(x.denominator)


def _within_two_to_minus(x: Fraction, bits: float) -> bool:
    """``x <= 2^-bits``, exactly for integral ``bits``."""
    if float(bits).is_integer():
        return x <= Fraction(1, 2 ** int(bits))
    return _log2(x) <= -bits


def _shamir_risks(sizes, params: dict[str, float]) -> tuple[Fraction, Fraction]:
    """Exact ``Pr[R1 fails]`` and ``Pr[R2 fails]`` of a clustering with these cluster sizes."""
    risks = requirement_failure_probabilities(
        sizes, **{name: params[name] for name in ("gamma", "delta", "zeta", "xi")}
    )
    return risks["R1"].exact, risks["R2"].exact


def optimality_check(n_clients: int, params: dict[str, float], *, variant: str = "corrected") -> dict:
    """Is ParGen's design (σ, η)-good ("safe"), and is its ``k`` the smallest that is ("smallest")?

    Safe: the exact ``Pr[R1 fails] <= 2^-σ`` and ``Pr[R2 fails] <= 2^-η`` for the
    design's cluster sizes, and neither ``τ_seq`` nor ``τ_bat`` exceeds the exact
    capacity, the largest ``τ`` with ``Pr[R4 fails] <= 2^-σ`` (so a ``τ`` equal to
    it is also the largest safe one). Requirement 3 does not enter: the corrected
    design meets it with its Harary degree whatever ``k`` (the complete graph at
    worst), and the printed one is judged by :func:`requirements_table`.

    Smallest: ``k`` is lowered one at a time (``s = ⌊N/k⌋`` clusters of the
    round-robin sizes) for as long as the design stays safe by R1 and R2; the last
    ``k`` reached is ``smallest safe k``. It equals ``k`` when the next design with
    more clusters already fails, i.e. when ParGen's ``k`` is the smallest.

    Parameters
    ----------
    n_clients : int
        ``N``.
    params : dict
        ``gamma``, ``delta``, ``zeta``, ``xi``, ``sigma``, ``eta``.
    variant : {"printed", "corrected"}, default="corrected"
        The ParGen whose design is checked.

    Returns
    -------
    dict
        ``k``, ``s``, ``log2 R1``, ``log2 R2`` (exact), ``tau_seq``, ``tau_bat``,
        ``exact capacity``, ``safe``, ``smallest safe k``, its ``s`` and its exact
        capacity (None when the design is not safe), ``fails`` (what the next smaller design violates,
        and its exact log2 probability) and ``smallest``.

    Examples
    --------
    >>> check = optimality_check(1000, dict(gamma=0.1, delta=0.1, zeta=0.1, xi=0.45, sigma=40, eta=40))
    >>> check["k"], check["safe"], check["smallest safe k"], check["smallest"]
    (122, True, 59, False)
    """
    r = pargen(n_clients, **params, variant=variant)
    sigma, eta = r.sigma, r.eta

    def failing(sizes) -> list[tuple[str, float]]:
        r1, r2 = _shamir_risks(sizes, params)
        out = [] if _within_two_to_minus(r1, sigma) else [("R1", _log2(r1))]
        return out + ([] if _within_two_to_minus(r2, eta) else [("R2", _log2(r2))])

    r1, r2 = _shamir_risks(r.cluster_sizes, params)
    capacity = unlearning_capacity_exact(r.cluster_sizes, _caps(r.cluster_sizes, r.zeta), sigma)
    taus = [t for t in (r.tau_seq, r.tau_bat) if t is not None]
    safe = not failing(r.cluster_sizes) and max(taus, default=0) <= capacity
    smallest_k, fails, smallest_capacity = None, None, None
    if safe:
        smallest_k, previous = r.k, r.cluster_sizes
        for k in range(r.k - 1, 0, -1):
            sizes = balanced_cluster_sizes(n_clients, k)
            if sizes != previous:
                previous, violated = sizes, failing(sizes)
                if violated:
                    fails = {"k": k, "s": len(sizes), "requirement": violated[0][0], "log2": violated[0][1]}
                    break
            smallest_k = k
        sizes = balanced_cluster_sizes(n_clients, smallest_k)
        smallest_capacity = unlearning_capacity_exact(sizes, _caps(sizes, r.zeta), sigma)
    return {
        "N": n_clients,
        "k": r.k,
        "s": r.n_clusters,
        "log2 R1": _log2(r1),
        "log2 R2": _log2(r2),
        "tau_seq": r.tau_seq,
        "tau_bat": r.tau_bat,
        "exact capacity": capacity,
        "safe": safe,
        "smallest safe k": smallest_k,
        "smallest safe s": None if smallest_k is None else n_clients // smallest_k,
        "smallest safe capacity": smallest_capacity,
        "fails": fails,
        "smallest": safe and smallest_k == r.k,
    }


def optimality_verdict(check: dict) -> str:
    """The verdict on "ParGen generates the smallest k and the largest τ" from :func:`optimality_check`."""
    if not check["safe"]:
        return "not supported: the design is not (σ, η)-good"
    if not check["smallest"]:
        return (
            f"not supported: safe, but not the smallest (k = {check['smallest safe k']}, "
            f"{check['smallest safe s']} clusters, is safe too)"
        )
    return "supported"


def _optimality_evidence(check: dict) -> str:
    """:func:`optimality_check` in one line of the claims table."""
    text = (
        f"N = {check['N']}: k = {check['k']} ({check['s']} clusters), exact Pr[R1 fails] = 2^{check['log2 R1']:.1f}, "
        f"Pr[R2 fails] = 2^{check['log2 R2']:.1f}; τ_seq = {check['tau_seq']}, τ_bat = {check['tau_bat']}, exact "
        f"capacity {check['exact capacity']}"
    )
    if check["safe"]:
        fails = check["fails"]
        text += (
            f"; every design down to k = {check['smallest safe k']} ({check['smallest safe s']} clusters) meets R1 "
            f"and R2, that one with an exact capacity of {check['smallest safe capacity']}"
        )
        if fails is not None:
            text += f"; k = {fails['k']} ({fails['s']} clusters) fails {fails['requirement']} (2^{fails['log2']:.1f})"
    return text


def claims_table(
    fig4: dict[str, pd.DataFrame], fig5: pd.DataFrame, fine: pd.DataFrame, *, variant: str = "printed"
) -> pd.DataFrame:
    """The paper's claims about Figs. 4-5, Remark 6 and the worked example, judged on ParGen's output.

    Parameters
    ----------
    fig4 : dict of str to pandas.DataFrame
        :func:`figure4_grid` per panel.
    fig5 : pandas.DataFrame
        :func:`figure5_grid`; for the corrected variant its ``tau_seq`` is the exact capacity.
    fine : pandas.DataFrame
        :func:`k_against_n` on a fine grid of N.
    variant : {"printed", "corrected"}, default="printed"
        The ParGen behind the frames; Remark 6, the worked example and the optimality claim are
        evaluated with it at the paper's own parameters.

    Returns
    -------
    pandas.DataFrame
        Columns ``claim`` (the paper's sentence), ``evidence`` (our numbers) and ``verdict``.
    """
    a, b, c = fig4["a"], fig4["b"], fig4["c"]
    sigma = _effect(a, "σ=20, η=40", "σ=80, η=40")
    eta = _effect(a, "σ=40, η=20", "σ=40, η=80")
    gamma = _effect(b, "γ=0.1, δ=0.1", "γ=0.3, δ=0.1")
    delta = _effect(b, "γ=0.1, δ=0.1", "γ=0.1, δ=0.3")
    zeta_span = int(c.groupby("N")["k"].agg(lambda k: k.max() - k.min()).max())
    feasible = fine[fine["feasible"].astype(bool)]
    steps = feasible["k"].diff().dropna()
    sizes = feasible["realised size"]
    drops = -sizes.diff().dropna()
    seq_up = all(_increasing(group.sort_values("N")["tau_seq"].tolist()) for _, group in fig5.groupby("setting"))
    bat_up = all(_increasing(group.sort_values("N")["tau_bat"].tolist()) for _, group in fig5.groupby("setting"))
    exact = fig5.dropna(subset=["exact capacity"])["exact capacity"]
    remark6 = first_feasible_n({**_paper_example(), **paper.REMARK6}, variant=variant)
    try:
        example = pargen(int(paper.WORKED_EXAMPLE["n_clients"]), **_paper_example(), variant=variant)
        example_text = f"{variant} ParGen gives k = {example.k} (s = {example.n_clusters})"
        example_k = example.k
    except InfeasibleParameters as exc:
        example_text, example_k = f"{variant} ParGen: infeasible ({exc})", None
    at1000 = fig5[(fig5["N"] == 1000) & (fig5["setting"] == "γ=0.1, δ=0.1")].iloc[0]
    optimal = optimality_check(1000, {name: float(at1000[name]) for name in SYMBOLS}, variant=variant)

    def verdict(ok: bool, partly: bool = False) -> str:
        return "supported" if ok else ("partly supported" if partly else "not supported")

    grows = {"σ": sigma[0] > 0, "η": eta[0] > 0, "γ": gamma[0] > 0, "δ": delta[0] > 0}
    rows = [
        ("fig4_grow", f"k rises with σ by {sigma[0]}–{sigma[1]} (σ 20→80), with η by {eta[0]}–{eta[1]} (η 20→80), "
         f"with γ by {gamma[0]}–{gamma[1]} (γ 0.1→0.3), with δ by {delta[0]}–{delta[1]} (δ 0.1→0.3)",
         verdict(all(grows.values()), any(grows.values()))),
        ("fig4a_sigma_over_eta", f"Δk over σ: {sigma[0]}–{sigma[1]}; over η: {eta[0]}–{eta[1]}",
         verdict(sigma[0] > eta[1])),
        ("fig4b_gamma_and_delta", f"Δk over γ: {gamma[0]}–{gamma[1]}; over δ: {delta[0]}–{delta[1]}",
         verdict(gamma[0] > 0 and delta[0] > 0, gamma[0] > 0 or delta[0] > 0)),
        ("fig4b_gamma_over_delta", f"Δk over γ: {gamma[0]}–{gamma[1]}; over δ: {delta[0]}–{delta[1]}",
         verdict(gamma[0] > delta[1])),
        ("fig4c_zeta", f"k varies by at most {zeta_span} across ζ ∈ {{0.05, …, 0.2}} at any N",
         verdict(zeta_span <= 1)),
        ("fig4_shift", f"from N = {int(feasible['N'].min())} to {int(feasible['N'].max())} k rises by at most "
         f"{int(steps.max())} from one N to the next ({int(feasible['k'].min())} → {int(feasible['k'].max())}); "
         f"the realised size N/s drops by up to {drops.max():.1f} when a cluster is added",
         "not reproduced by k" if steps.max() <= 1 else "supported"),
        ("fig5_capacity", f"τ_seq increasing in N in every setting: {seq_up}; τ_bat: {bat_up}; the exact capacity "
         f"stays between {int(exact.min())} and {int(exact.max())}",
         verdict(seq_up and bat_up, seq_up or bat_up)),
        ("remark6", f"{variant} ParGen finds k > N for every N < {remark6}",
         verdict(remark6 > paper.REMARK6_MAX_INFEASIBLE_N)
         + (f" (threshold N ≤ {remark6 - 1}, not {paper.REMARK6_MAX_INFEASIBLE_N})"
            if remark6 - 1 != paper.REMARK6_MAX_INFEASIBLE_N else "")),
        ("worked_example", example_text, "reproduced" if example_k == paper.WORKED_EXAMPLE_K else "not reproduced"),
        ("pargen_optimal", _optimality_evidence(optimal), optimality_verdict(optimal)),
    ]  # fmt: skip
    return pd.DataFrame(
        [{"claim": paper.CLAIMS[key], "evidence": evidence, "verdict": judged} for key, evidence, judged in rows]
    )
