"""Published values of Liu, Jiang, Jiang, Guo, Zhao, Lam: "Guaranteeing Data Privacy in Federated Unlearning with
Dynamic User Participation" (IEEE TDSC 22(3):2072-2085, 2025; arXiv:2406.00966).

The paper has no table of results. Its numbers are the worked example after Theorem 1, Remark 6, the parameter
settings in the captions of Figs. 4-5 and the experimental set-up of Sec. VI; the plotted values are not in the
text, so what Figs. 4-5 show is kept as the paper's own sentences (:data:`CLAIMS`), for verdict tables. The paper's
formulas (ParGen, Lemmas 1-4, Remark 1) are code: :mod:`fedlib.unlearn`.
"""

from __future__ import annotations

#: Parameter names, in the order of the inputs of Alg. 1 and 2 (N first).
PARAMETERS = ("n_clients", "gamma", "delta", "zeta", "xi", "sigma", "eta")

#: Sec. IV, after Alg. 2: "consider a situation where N=200, γ = δ = 0.1, ξ = 0.7, ζ = 0.1, σ = 40, and η = 40".
WORKED_EXAMPLE: dict[str, float] = {
    "n_clients": 200,
    "gamma": 0.1,
    "delta": 0.1,
    "zeta": 0.1,
    "xi": 0.7,
    "sigma": 40,
    "eta": 40,
}

#: Sec. IV, same sentence: "the smallest value of the cluster size k required ... is k=60".
WORKED_EXAMPLE_K = 60

#: Remark 6: k exceeds N "in settings where N ≤ 50 with δ = 0.1, γ = 0.2 as illustrated in Figure 4b".
REMARK6: dict[str, float] = {"gamma": 0.2, "delta": 0.1}

#: Remark 6: the largest N said to be infeasible (k > N) in that setting.
REMARK6_MAX_INFEASIBLE_N = 50

#: Fig. 4(a) caption: "{γ, δ, ζ, ξ} are set to be {0.2, 0.2, 0.1, 0.7}"; σ and η vary (values not in the text).
FIG4A_FIXED: dict[str, float] = {"gamma": 0.2, "delta": 0.2, "zeta": 0.1, "xi": 0.7}

#: Fig. 4(b) caption: "{σ, η, ζ, ξ} are set to be {40, 40, 0.1, 0.7}"; γ and δ vary (values not in the text).
FIG4B_FIXED: dict[str, float] = {"sigma": 40, "eta": 40, "zeta": 0.1, "xi": 0.7}

#: Fig. 4(c) caption, literally: "{σ, η, γ, δ, ζ, ξ} are set to be {40, 40, 0.1, 0.1, 0.1, 0.1, 0.7}":
#: six names, seven values.
FIG4C_CAPTION_NAMES = ("sigma", "eta", "gamma", "delta", "zeta", "xi")
FIG4C_CAPTION_VALUES = (40, 40, 0.1, 0.1, 0.1, 0.1, 0.7)

#: Fig. 4(c) as we read it: ζ is the swept variable, so it does not belong in the list; dropping it and one of the
#: repeated 0.1 leaves {σ, η, γ, δ, ξ} = {40, 40, 0.1, 0.1, 0.7}.
FIG4C_FIXED: dict[str, float] = {"sigma": 40, "eta": 40, "gamma": 0.1, "delta": 0.1, "xi": 0.7}

#: The variable(s) each panel sweeps, besides N on the horizontal axis ("in response to the increase in the number of
#: users N", Sec. VI; Remark 6 reads k against N in Fig. 4b).
FIG4_SWEPT: dict[str, tuple[str, ...]] = {"a": ("sigma", "eta"), "b": ("gamma", "delta"), "c": ("zeta",)}

#: Fig. 5 caption: "the unlearning capacities τ_seq ... and τ_bat ... under various parameter settings"; the text:
#: "the impact of δ and γ". The fixed parameters are not stated.
FIG5_SWEPT = ("gamma", "delta")

#: What the text says Figs. 4-5 show (Sec. VI, "Clustering results"), one sentence per claim, verbatim where quoted.
CLAIMS: dict[str, str] = {
    "fig4_grow": "larger values of σ, η, γ, δ generally lead to a larger required cluster size k, "
    "albeit with points of convergence",
    "fig4a_sigma_over_eta": "the security parameter σ has a more pronounced impact than the correctness parameter η "
    "(Fig. 4a)",
    "fig4b_gamma_and_delta": "the required cluster size k scales with both γ and δ (Fig. 4b)",
    "fig4b_gamma_over_delta": "γ exerts a more significant influence than δ: the scheme is more sensitive to "
    "adversarial users than to dropout users (Fig. 4b)",
    "fig4c_zeta": "ζ has a negligible impact on determining k (Fig. 4c)",
    "fig4_shift": "a sudden and substantial shift in the cluster size k, which then stabilizes for a period, in "
    "response to the increase in the number of users N (Figs. 4a-c)",
    "fig5_capacity": "a consistent increase in the unlearning capacity with the rise in the number of users (Fig. 5)",
    "remark6": "k > N, so clustering is infeasible, for N ≤ 50 with δ = 0.1, γ = 0.2 (Remark 6)",
    "worked_example": "N = 200, γ = δ = 0.1, ξ = 0.7, ζ = 0.1, σ = η = 40 need k = 60 (Sec. IV)",
    "fig67_trend": "larger clusters typically result in faster convergence but at the expense of achieved accuracy "
    "(Figs. 6-7)",
    "fig67_complex": "This trend is particularly pronounced in more complex ML models compared to simpler models "
    "(Figs. 6-7)",
    "fig89_gamma_delta": "a larger value of δ and γ typically leads to a lower accuracy of the unlearned model "
    "(Figs. 8-9)",
    "remark5_vote": "a portion of this lost accuracy can be recovered through the voting operation (Remark 5)",
    "remark2_secagg": "larger clusters can slow down the SecAgg+ protocol due to underlying user-pair-wise key "
    "exchanges (Remark 2)",
    "comparable": "our proposed scheme achieves comparable unlearning effectiveness (Abstract)",
    "pargen_optimal": "ParGen is designed to generate the smallest k and the largest τ_seq and τ_bat for a "
    "(σ, η)-good clustering-based scheme (Sec. IV)",
}

#: Lemma 3's proof: "m = ln k as same to the setting in SecAgg+" (the Harary degree inside a cluster).
HARARY_DEGREE_RULE = "m = ln k"

#: Sec. VI, "Experiment settings": dataset sizes and models; "Both datasets are uniformly distributed among users".
DATASETS: dict[str, dict[str, int | str]] = {
    "MNIST": {"n_train": 60_000, "n_test": 10_000, "model": "M1, a simple two-layer CNN"},
    "CIFAR-10": {"n_train": 50_000, "n_test": 10_000, "model": "M2, ResNet-18"},
}

#: Sec. VI: "with 0.08 ms latency and 34.0 Gbps bandwidth on average".
LATENCY_MS = 0.08
BANDWIDTH_GBPS = 34.0

#: Sec. VI: the machine of all experiments.
HARDWARE = "two AMD EPYC 7763 64-Core processors @ 3.5GHz, 2 TB of RAM, a single NVIDIA A100-SXM4-40GB GPU"

#: Sec. VI: "The SecAgg+ protocols are implemented utilizing the open-source code available in [34]"
#: (Liu, Guo, Lam, Zhao, IEEE TIFS 18:1839-1854, 2022); no address is given.
SECAGG_CODE = "[34] Liu, Guo, Lam, Zhao, IEEE TIFS 2022 (no URL given)"

#: Fig. 3: eight clients u1..u8 (ids 0..7) and who is dropped, unlearned or adversarial in panels (a)-(c); the server
#: then "obtains the partial sums" {u1, u5} and {u3, u7} in (b) and (c).
FIGURE3_ROLES: dict[str, dict[int, str]] = {
    "(a) all present": {},
    "(b) u2, u4, u6 drop; u8 unlearned": {1: "dropped", 3: "dropped", 5: "dropped", 7: "unlearned"},
    "(c) u4, u6 drop; u8 unlearned; u2 adversarial": {1: "adversarial", 3: "dropped", 5: "dropped", 7: "unlearned"},
}

#: Fig. 3(b)-(c): the partial sums the server learns, as 0-based client ids.
FIGURE3_PARTIAL_SUMS: tuple[tuple[int, ...], ...] = ((0, 4), (2, 6))
