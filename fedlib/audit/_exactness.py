"""Is forgetting exact? Bit for bit against the coupled retraining, or in distribution against retraining.

Exact unlearning (Ginart et al., NeurIPS 2019; MUFC, Pan et al., ICLR 2023, Sec. 3): the model after forgetting
is the one training from scratch on the remaining data gives. Two checks through the contract of
:mod:`fedlib.base`, without trusting a method's own report:

- :func:`check_bitwise`, where a method promises equality under the randomness its guarantee is coupled to
  (MUFC's race keys, a cluster's generation seed, a refit's ``random_state``): the fitted model against the
  retraining the method computes for it (``_retrained_state``, which never reads the forgotten rows);
- :func:`exactness_test`, where it promises equality in distribution only: independent pairs of "fit, then
  forget" and "fit on what remains", a statistic of each model, and a two-sample test (chi-square of
  homogeneity for discrete statistics, as :func:`fedlib.unlearn.audit_seeding_unlearning`; a permutation test
  on the energy distance for real vectors).

:func:`model_distance` measures how far an approximate method lands (FedEraser, a lazy update) from a reference.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from joblib import Parallel, delayed
from scipy.spatial.distance import cdist
from scipy.stats import chi2_contingency

from fedlib._random import child_sequence, root_sequence
from fedlib._typing import NDArrayInt, SeedLike
from fedlib._validation import check_ids, check_is_fitted, check_scalar
from fedlib.base import UnlearningMixin

#: Permutations of the energy test in :func:`exactness_test`: its smallest p-value is ``1 / (N_PERMUTATIONS + 1)``.
N_PERMUTATIONS = 999

#: Permutations evaluated per matrix product (bounds the memory to ``_BATCH × 2 n_runs`` floats).
_BATCH = 256


@dataclass(frozen=True)
class BitwiseCheck:
    """The fitted model against the retraining its method is coupled to, array by array.

    Parameters
    ----------
    method : str
        The estimator's class name.
    identical : bool
        Every compared array has the retraining's shape and values (NaN matching NaN).
    n_arrays : int
        Arrays compared: those of the retraining.
    max_abs_difference : float
        Largest absolute difference over the compared arrays (``inf`` where a shape or a name differs).
    differing : tuple of str
        Names of the arrays that differ.
    unchecked : tuple of str, default=()
        Arrays of the model the method does not couple to retraining (e.g. MUFC's server centres).

    Examples
    --------
    >>> from fedlib.audit import BitwiseCheck
    >>> check = BitwiseCheck("MUFC", False, 3, 1.0, ("aggregate counts",))
    >>> str(check)
    'MUFC: differs in aggregate counts (3 arrays, max |difference| 1)'
    """

    method: str
    identical: bool
    n_arrays: int
    max_abs_difference: float
    differing: tuple[str, ...]
    unchecked: tuple[str, ...] = ()

    def __str__(self) -> str:
        verdict = "identical" if self.identical else "differs in " + ", ".join(self.differing)
        return f"{self.method}: {verdict} ({self.n_arrays} arrays, max |difference| {self.max_abs_difference:.3g})"

    def summary(self) -> dict[str, Any]:
        """One row of a table: method, verdict, arrays compared, largest difference, what differs.

        Returns
        -------
        dict
            ``method``, ``bit for bit``, ``arrays``, ``max |difference|``, ``differing`` (``"-"`` when none).
        """
        return {
            "method": self.method,
            "bit for bit": self.identical,
            "arrays": self.n_arrays,
            "max |difference|": self.max_abs_difference,
            "differing": ", ".join(self.differing) or "-",
        }


def check_bitwise(estimator, *, clients=None, samples=None) -> BitwiseCheck:
    """Compare a fitted method that forgets with the retraining from scratch its guarantee is coupled to.

    Exact unlearning (Ginart et al. 2019; MUFC Sec. 3) with the randomness shared: every array of the method's
    retrained state (``_retrained_state``: e.g. MUFC's clients re-seeded from their remaining race keys, MUFC
    Alg. 3 and Lemma 5.1; a cluster of Liu et al. trained again by its ``fresh_trainer``) must equal the array
    of the same name in the model (``_model_state``).

    The retraining is computed from what the model says it still holds. An auditor who knows what was asked to be
    forgotten passes it as ``clients`` and ``samples``: a model that still holds any of it differs
    (``"still holds forgotten clients"`` / ``"... samples"`` in :attr:`BitwiseCheck.differing`), whatever its
    arrays, so that a method whose ``unlearn`` only reports cannot pass.

    Parameters
    ----------
    estimator : UnlearningMixin
        A fitted method that forgets, usually after some requests.
    clients, samples : array-like of int, optional
        What the requests asked to forget, as given to ``unlearn``.

    Returns
    -------
    BitwiseCheck
        Whether the two agree, and where they do not.

    Raises
    ------
    TypeError
        For an estimator that is not a method that forgets (:class:`fedlib.base.UnlearningMixin`).
    sklearn.exceptions.NotFittedError
        Before ``fit``.
    NotImplementedError
        For a method that promises no bitwise coupling (DC-KM, FedEraser, ``KMeansPlusPlus(race_keys=False)``,
        ``Retrain`` of an estimator with ``random_state=None``): use :func:`exactness_test` or
        :func:`model_distance`.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import check_bitwise
    >>> from fedlib.unlearn import KMeansPlusPlus
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1], [9.0], [9.1]])
    >>> seeding = KMeansPlusPlus(3, random_state=0).fit(X)
    >>> _ = seeding.unlearn([seeding.seed_indices_[1]])  # a seed: the seeds after it are drawn again
    >>> check = check_bitwise(seeding)
    >>> check.identical, check.n_arrays, check.max_abs_difference
    (True, 2, 0.0)
    >>> seeding.cluster_centers_[2] += 1e-12  # a model that is not the retrained one
    >>> check_bitwise(seeding).differing
    ('cluster_centers',)
    >>> check_bitwise(KMeansPlusPlus(3, random_state=0).fit(X), samples=[1]).differing  # never asked to forget
    ('still holds forgotten samples',)
    """
    if not isinstance(estimator, UnlearningMixin):
        raise TypeError(f"check_bitwise needs a method that forgets (fedlib.base.UnlearningMixin), not {estimator!r}.")
    estimator._check_fitted_for_unlearning()
    retrained = estimator._retrained_state()
    model = estimator._model_state()
    differing, worst = [], 0.0
    asked_for = (("clients", clients, estimator._held_clients), ("samples", samples, estimator._held_samples))
    for kind, asked, held in asked_for:
        if asked is not None and np.isin(np.asarray(asked, dtype=np.int64), held()).any():
            differing.append(f"still holds forgotten {kind}")
            worst = np.inf
    for name, expected in retrained.items():
        difference = _max_abs_difference(model[name], expected) if name in model else np.inf
        worst = max(worst, difference)
        if name not in model or not _same(model[name], expected):
            differing.append(name)
    return BitwiseCheck(
        method=type(estimator).__name__,
        identical=not differing,
        n_arrays=len(retrained),
        max_abs_difference=float(worst),
        differing=tuple(differing),
        unchecked=tuple(name for name in model if name not in retrained),
    )


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    floats = a.dtype.kind in "fc" and b.dtype.kind in "fc"
    return bool(np.array_equal(a, b, equal_nan=floats))


def _max_abs_difference(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return np.inf
    if a.size == 0:
        return 0.0
    a, b = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore"):
        difference = np.abs(a - b)
    both = np.isnan(a) & np.isnan(b)
    difference[both] = 0.0
    difference[np.isnan(difference)] = np.inf  # NaN on one side only, or inf - inf
    return float(difference.max())


def model_distance(a, b) -> float:
    """Relative L2 distance ``‖θ_a − θ_b‖ / ‖θ_b‖`` of two models' floating-point arrays.

    For approximate unlearning (FedEraser, a lazy update), how far the model after forgetting lands from a
    reference such as a retrained model. The arrays are each model's ``_model_state`` (or, for another
    estimator, its fitted array attributes), compared as they are: integer arrays (seed rows, counts) are
    identifiers and are left out, and centres are not matched up to a permutation.

    Parameters
    ----------
    a : estimator or mapping of str to array
        The model measured (or its state).
    b : estimator or mapping of str to array
        The reference (or its state), whose norm scales the distance.

    Returns
    -------
    float
        0 for the same model; ``inf`` when the reference's arrays are all zero and ``a``'s are not.

    Raises
    ------
    ValueError
        If the two models do not have the same floating-point arrays with the same shapes.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import model_distance
    >>> model_distance({"params": np.array([3.0, 4.0])}, {"params": np.array([3.0, 0.0])})
    1.3333333333333333
    """
    sa, sb = _float_arrays(a), _float_arrays(b)
    if sa.keys() != sb.keys():
        raise ValueError(f"the models hold different arrays: {sorted(sa)} and {sorted(sb)}.")
    for name in sa:
        if sa[name].shape != sb[name].shape:
            raise ValueError(f"{name!r} has shape {sa[name].shape} in one model and {sb[name].shape} in the other.")
    difference = np.sqrt(sum(float(np.sum((sa[n] - sb[n]) ** 2)) for n in sa))
    norm = np.sqrt(sum(float(np.sum(sb[n] ** 2)) for n in sb))
    if norm > 0:
        return float(difference / norm)
    return 0.0 if difference == 0 else np.inf


def _float_arrays(model) -> dict[str, np.ndarray]:
    if isinstance(model, Mapping):
        state = dict(model)
    elif isinstance(model, UnlearningMixin):
        check_is_fitted(model, model._fitted_attribute)
        state = model._model_state()
    else:
        state = UnlearningMixin._model_state(model)
    state = {n: np.asarray(v) for n, v in state.items()}
    return {n: v.astype(np.float64) for n, v in state.items() if v.dtype.kind == "f"}


@dataclass(frozen=True, eq=False)
class ExactnessTest:
    """A two-sample test of "fit, then forget" against "fit on what remains", by a statistic of the models.

    Parameters
    ----------
    test : {"chi-square", "energy permutation"}
        Chi-square test of homogeneity (discrete statistics) or permutation test on the energy distance
        (real vectors).
    pvalue : float
        The test's p-value: small when forgetting does not give retraining's distribution.
    statistic : float
        The chi-square statistic, or the energy distance of the two samples.
    n_runs : int
        Models per sample.
    unlearned : tuple or ndarray of shape (n_runs, d)
        The statistic of each model that forgot (a tuple of values; real vectors as rows of an array).
    retrained : tuple or ndarray of shape (n_runs, d)
        The statistic of each model retrained on the remaining data.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.audit import exactness_test
    >>> from fedlib.unlearn import KMeansPlusPlus
    >>> X = np.array([[0.0], [0.05], [1.65], [2.05], [3.05], [4.9]])
    >>> def centres(model):
    ...     return np.sort(model.cluster_centers_.ravel())
    >>> result = exactness_test(lambda seed: KMeansPlusPlus(2, random_state=seed), X, samples=[0],
    ...                         statistic=centres, n_runs=50, random_state=0)
    >>> result.test, result.unlearned.shape, bool(result.pvalue > 0.01)
    ('energy permutation', (50, 2), True)
    >>> print(result)
    energy permutation: statistic 0.07655, p = 0.346 (50 runs per sample)
    """

    test: str
    pvalue: float
    statistic: float
    n_runs: int
    unlearned: tuple | np.ndarray
    retrained: tuple | np.ndarray

    def __str__(self) -> str:
        return f"{self.test}: statistic {self.statistic:.4g}, p = {self.pvalue:.3g} ({self.n_runs} runs per sample)"


def exactness_test(
    build: Callable[[np.random.SeedSequence], UnlearningMixin],
    X,
    y=None,
    *,
    parts=None,
    clients=None,
    samples=None,
    statistic: Callable[[Any], Any],
    n_runs: int,
    random_state: SeedLike = None,
    n_jobs: int | None = None,
) -> ExactnessTest:
    """Test whether forgetting gives the distribution of retraining from scratch (exact in distribution).

    The definition of exact unlearning (Ginart et al. 2019; MUFC Sec. 3, proved for MUFC's Alg. 3 by its
    Lemma 5.1), checked by sampling, generalising :func:`fedlib.unlearn.audit_seeding_unlearning` to any method
    of the contract. Run ``i`` fits ``build(seed_a)`` on all the data and forgets ``samples`` and ``clients``;
    independently, it fits ``build(seed_b)`` on the remaining rows, renumbered in their original order, with the
    remaining clients' parts (as :class:`fedlib.unlearn.Retrain` refits). Both models are mapped by
    ``statistic``, and the two samples of ``n_runs`` values are compared: hashable values by the chi-square test
    of homogeneity, real numbers or arrays by a permutation test on the energy distance (Székely and Rizzo
    2004) with :data:`N_PERMUTATIONS` seeded permutations.

    Parameters
    ----------
    build : callable
        ``seed -> estimator``, unfitted, its randomness from ``seed`` (a :class:`numpy.random.SeedSequence`,
        which fedlib's ``random_state`` accepts). Picklable when ``n_jobs`` is not 1.
    X : array-like of shape (n_samples, ...)
        All the data.
    y : array-like of shape (n_samples,), optional
        Targets, passed to ``fit`` when given.
    parts : list of array-like of int, optional
        Client ``l`` holds the rows ``X[parts[l]]``; ``None``: ``fit`` is called without a partition.
    clients : array-like of int, optional
        Clients to forget (needs ``parts``).
    samples : array-like of int, optional
        Rows of ``X`` to forget.
    statistic : callable
        ``fitted model -> value``: hashable (chi-square) or a real number or array of fixed shape (energy). The
        retrained model numbers its rows from 0 among the remaining ones, so a statistic should read what the
        model learnt (centres, predictions), not row ids.
    n_runs : int
        Pairs of models, at least 2; more runs detect smaller differences.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Root of every run's two seeds (``child_sequence(root, 0, i, 0)`` and ``(0, i, 1)``) and of the
        permutations (``(1,)``): the result does not depend on ``n_jobs``.
    n_jobs : int or None, default=None
        joblib workers for the runs (``None``: joblib's default).

    Returns
    -------
    ExactnessTest
        The p-value, the statistic and the two samples.

    Raises
    ------
    ValueError
        For an empty request, ids out of range, ``clients`` without ``parts``, or statistics of different
        shapes or not finite.
    TypeError
        For statistics that are neither real arrays nor hashable, or a mix of both.

    Examples
    --------
    Forgetting a point from a K-means++ seeding (MUFC Alg. 3) against seeding the rest, by the seeds' positions:

    >>> import numpy as np
    >>> from fedlib.audit import exactness_test
    >>> from fedlib.unlearn import KMeansPlusPlus
    >>> X = np.array([[0.0], [0.05], [1.65], [2.05], [3.05], [4.9]])
    >>> result = exactness_test(lambda seed: KMeansPlusPlus(3, random_state=seed), X, samples=[0],
    ...                         statistic=lambda m: tuple(sorted(m.cluster_centers_.ravel())), n_runs=300,
    ...                         random_state=0)
    >>> result.test, bool(result.pvalue > 0.01)
    ('chi-square', True)
    """
    n_runs = check_scalar(n_runs, "n_runs", "int", min_val=2)
    X = np.asarray(X)
    keep, kept_parts, samples, clients = _remaining(len(X), parts, samples, clients)
    X_rest = X[keep]
    y_rest = None if y is None else np.asarray(y)[keep]
    root = root_sequence(random_state)
    everything, remaining = (X, y, parts), (X_rest, y_rest, kept_parts)
    pairs = Parallel(n_jobs=n_jobs)(
        delayed(_pair)(build, statistic, child_sequence(root, 0, i), everything, remaining, samples, clients)
        for i in range(n_runs)
    )
    unlearned = [u for u, _ in pairs]
    retrained = [r for _, r in pairs]
    values = unlearned + retrained
    real = [_is_real(v) for v in values]
    if all(real):
        a, b = _vectors(unlearned), _vectors(retrained)
        if a.shape[1] != b.shape[1]:
            raise ValueError(f"the statistic has {a.shape[1]} values for one sample and {b.shape[1]} for the other.")
        rng = np.random.default_rng(child_sequence(root, 1))
        energy, pvalue = _energy_permutation_test(a, b, N_PERMUTATIONS, rng)
        return ExactnessTest("energy permutation", pvalue, energy, n_runs, a, b)
    if any(real):
        raise TypeError("the statistic returned real arrays for some models and other values for others.")
    for v in values:
        try:
            hash(v)
        except TypeError as exc:
            raise TypeError(
                f"the statistic must return a real number or array, or a hashable value; got {type(v).__name__}."
            ) from exc
    chi2, pvalue = _chi_square(unlearned, retrained)
    return ExactnessTest("chi-square", pvalue, chi2, n_runs, tuple(unlearned), tuple(retrained))


def _remaining(n: int, parts, samples, clients) -> tuple[np.ndarray, list[NDArrayInt] | None, Any, Any]:
    """Rows kept, and the remaining clients' parts renumbered as :class:`fedlib.unlearn.Retrain` renumbers them.

    A client forgotten whole, or left without rows, leaves the partition; the others keep their rows in their
    order, numbered by position among the kept rows.
    """
    keep = np.ones(n, dtype=bool)
    if samples is None and clients is None:
        raise ValueError("nothing to forget: give samples or clients.")
    if samples is not None:
        samples = check_ids(samples, "samples")
        if samples.size and not ((samples >= 0) & (samples < n)).all():
            raise ValueError(f"samples must be rows of X, in [0, {n}).")
        keep[samples] = False
    if parts is None:
        if clients is not None:
            raise ValueError("clients can be forgotten only from data split by parts.")
        return keep, None, samples, None
    parts = [np.asarray(p, dtype=np.int64) for p in parts]
    gone: set[int] = set()
    if clients is not None:
        clients = check_ids(clients, "clients")
        if clients.size and not ((clients >= 0) & (clients < len(parts))).all():
            raise ValueError(f"clients must be in [0, {len(parts)}).")
        gone = set(clients.tolist())
        for c in gone:
            keep[parts[c]] = False
    position = np.cumsum(keep) - 1
    kept_parts = [position[p[keep[p]]] for c, p in enumerate(parts) if c not in gone and keep[p].any()]
    return keep, kept_parts, samples, clients


def _fit(model, X, y, parts):
    return model.fit(X, y) if parts is None else model.fit(X, y, parts=parts)


def _pair(build, statistic, seed: np.random.SeedSequence, everything, remaining, samples, clients) -> tuple:
    """One run: (statistic of a model that forgot, statistic of a model fitted on what remains)."""
    model = _fit(build(child_sequence(seed, 0)), *everything)
    model.unlearn(samples, clients=clients)
    fresh = _fit(build(child_sequence(seed, 1)), *remaining)
    return statistic(model), statistic(fresh)


def _is_real(value) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fiub"
    return isinstance(value, (float, np.floating))


def _vectors(values: list) -> np.ndarray:
    rows = [np.asarray(v, dtype=np.float64).ravel() for v in values]
    if len({r.size for r in rows}) != 1:
        raise ValueError(f"the statistic must have one shape; got sizes {sorted({r.size for r in rows})}.")
    out = np.vstack(rows)
    if not np.isfinite(out).all():
        raise ValueError("the statistic returned NaN or infinity.")
    return out


def _chi_square(unlearned: list, retrained: list) -> tuple[float, float]:
    """Chi-square test of homogeneity of two samples of hashable values (categories in order of appearance)."""
    a, b = Counter(unlearned), Counter(retrained)
    categories = list(dict.fromkeys(unlearned + retrained))
    if len(categories) < 2:
        return 0.0, 1.0
    table = np.array([[a[c] for c in categories], [b[c] for c in categories]])
    chi2, pvalue, _, _ = chi2_contingency(table)
    return float(chi2), float(pvalue)


def _energy_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The energy distance ``2 E|A − B| − E|A − A'| − E|B − B'|`` of two samples (rows), V-statistic form."""
    labels = np.zeros((1, len(a) + len(b)))
    labels[0, : len(a)] = 1.0
    return float(_energies(cdist(np.vstack([a, b]), np.vstack([a, b])), labels, len(a))[0])


def _energies(D: np.ndarray, labels: np.ndarray, n_a: int) -> np.ndarray:
    """Energy distance for each row of ``labels`` (1 marks sample A), from the pooled distance matrix ``D``."""
    n_b = D.shape[0] - n_a
    total = D.sum()
    weighted = labels @ D
    within_a = np.einsum("pi,pi->p", weighted, labels)
    across = weighted.sum(axis=1) - within_a
    within_b = total - within_a - 2.0 * across
    energy = 2.0 * across / (n_a * n_b) - within_a / n_a**2 - within_b / n_b**2
    return np.maximum(energy, 0.0)  # >= 0 in exact arithmetic; rounding may leave -1e-17


def _energy_permutation_test(
    a: np.ndarray, b: np.ndarray, n_permutations: int, rng: np.random.Generator
) -> tuple[float, float]:
    """Energy distance of ``a`` and ``b`` and its permutation p-value ``(1 + #{E_π ≥ E}) / (1 + n_permutations)``.

    All permutations use one distance matrix of the pooled sample; each batch of relabellings is one matrix
    product. The p-value lies in ``(0, 1]``.
    """
    pooled = np.vstack([a, b])
    D = cdist(pooled, pooled)
    n_a, size = len(a), len(pooled)
    observed = np.zeros((1, size))
    observed[0, :n_a] = 1.0
    energy = float(_energies(D, observed, n_a)[0])
    tie = energy - 1e-9 * float(D.mean())  # a relabelling as far apart, up to the rounding of its sums
    exceed = 0
    for start in range(0, n_permutations, _BATCH):
        count = min(_BATCH, n_permutations - start)
        order = rng.permuted(np.tile(np.arange(size), (count, 1)), axis=1)
        labels = np.zeros((count, size))
        np.put_along_axis(labels, order[:, :n_a], 1.0, axis=1)
        exceed += int(np.count_nonzero(_energies(D, labels, n_a) >= tie))
    return energy, (1 + exceed) / (1 + n_permutations)
