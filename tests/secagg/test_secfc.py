"""SecFC (fedlib/secagg/_secfc.py) equals Lloyd on the quantized data at every iteration (SecFC Theorem 1)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError

from fedlib.cluster import PlainIntegerDistances, centralized_lloyd, kmeans_objective
from fedlib.data import iid_partition, make_blobs
from fedlib.exceptions import DecodingError, FieldOverflowError
from fedlib.field import LagrangeCode, to_field, to_fixed_point
from fedlib.secagg import SECFC_PRIME, CodedDistances, SecFC, default_colluders, max_safe_scale, share_all


def _blobs(m, d, k, std, seed):
    """``m`` points in ``k`` near-equal Gaussian clusters in ``[-10, 10]^d``."""
    sizes = np.full(k, m // k) + (np.arange(k) < m % k)
    return make_blobs(sizes, d, cluster_std=std, center_box=(-10.0, 10.0), random_state=seed)


@given(
    n=st.integers(3, 12),
    ell=st.integers(1, 3),
    d=st.integers(1, 7),
    k=st.integers(1, 5),
    std=st.sampled_from([0.5, 5.0, 30.0]),
    init=st.sampled_from(["kmeans++", "random_assignment"]),
    seed=st.integers(0, 2**16),
    data=st.data(),
)
def test_secfc_equals_quantized_lloyd_at_every_iteration(n, ell, d, k, std, init, seed, data):
    assume(2 * ell + 1 <= n and ell <= d)
    t = data.draw(st.integers(1, (n + 1 - 2 * ell) // 2))
    R = 2 * ell + 2 * t - 1
    n_responders = data.draw(st.integers(R, n))
    X, _ = _blobs(60, d, max(k, 1), std, seed)
    parts = iid_partition(60, n, random_state=seed)
    model = SecFC(
        k, n_segments=ell, n_colluders=t, n_responders=n_responders, init=init, max_iter=30, random_state=seed
    ).fit(X, parts=parts)
    reference = centralized_lloyd(X, k, scale=model.scale_, init=init, max_iter=30, random_state=seed)
    assert len(model.history_) == len(reference.history)
    for ours, theirs in zip(model.history_, reference.history, strict=True):
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(model.run_.distances, reference.distances)
    assert all(len(r) == n_responders for r in model.responders_)


def test_decoded_distances_equal_python_integers():
    X, _ = _blobs(40, 5, 3, 2.0, 0)
    model = SecFC(3, n_colluders=2, scale=7.0, max_iter=1, random_state=0)
    model.fit(X, parts=iid_partition(40, 6, random_state=0))
    labels = model.history_[0]
    Xq = to_fixed_point(X, 7.0).astype(object)
    expected = np.empty((40, 3), dtype=object)
    for h in range(3):
        members = Xq[labels == h]
        total = members.sum(axis=0) if len(members) else np.zeros(5, dtype=object)
        for i in range(40):
            expected[i, h] = int(((total - len(members) * Xq[i]) ** 2).sum())
    assert model.run_.distances.tolist() == expected.tolist()


def test_membership_privacy_gives_the_same_clustering():
    X, _ = _blobs(120, 6, 3, 1.0, 1)
    parts = iid_partition(120, 7, random_state=1)
    plain = SecFC(3, random_state=4).fit(X, parts=parts)
    private = SecFC(3, membership_privacy=True, random_state=4).fit(X, parts=parts)
    for a, b in zip(plain.history_, private.history_, strict=True):
        np.testing.assert_array_equal(a, b)


def test_result_is_invariant_to_partition_and_code_parameters():
    X, _ = _blobs(200, 8, 4, 3.0, 2)
    runs = [
        SecFC(4, n_segments=ell, n_colluders=t, scale=20.0, random_state=9).fit(
            X, parts=iid_partition(200, n, random_state=n)
        )
        for n, ell, t in [(5, 1, 1), (10, 1, 4), (11, 2, 3), (16, 3, 5)]
    ]
    for run in runs[1:]:
        np.testing.assert_array_equal(run.labels_, runs[0].labels_)


def test_revealed_centers_are_the_quantized_means():
    X, _ = _blobs(150, 9, 3, 1.0, 3)
    model = SecFC(3, n_segments=2, n_colluders=2, scale=30.0, random_state=0).fit(X, parts=iid_partition(150, 8))
    Xq = to_fixed_point(X, 30.0)
    expected = np.array([Xq[model.labels_ == h].sum(axis=0) / (30.0 * np.sum(model.labels_ == h)) for h in range(3)])
    np.testing.assert_array_equal(model.reveal_centers(), expected)


@pytest.mark.parametrize(
    ("kwargs", "n", "error", "match"),
    [
        ({"n_colluders": 5}, 10, ValueError, r"n_clients >= 2\*n_segments \+ 2\*t - 1 .*need n_clients >= 11"),
        ({"n_colluders": 10}, 10, ValueError, "t < n"),
        ({"n_segments": 3, "n_colluders": 1}, 5, ValueError, "need n_clients >= 7"),
        ({"scale": 1e7}, 10, FieldOverflowError, "largest safe λ"),
        ({"n_responders": 8}, 10, ValueError, "recovery threshold 2ℓ\\+2t-1 = 9"),
        ({"check_overflow": "sometimes"}, 10, ValueError, "check_overflow"),
        ({"init": "forgy"}, 10, ValueError, "init must be"),
        ({"n_segments": 1.5}, 10, TypeError, "n_segments must be an int"),
        ({"n_colluders": 2.0}, 10, TypeError, "n_colluders must be an int"),
        ({"n_responders": 9.5}, 10, TypeError, "n_responders must be an int"),
        ({"scale": 3 + 0j}, 10, TypeError, "scale must be a real number"),
    ],
)
def test_bad_parameters_raise(kwargs, n, error, match):
    X, _ = _blobs(100, 4, 2, 1.0, 0)
    with pytest.raises(error, match=match):
        SecFC(2, random_state=0, **kwargs).fit(X, parts=iid_partition(100, n, random_state=0))


def test_runtime_check_refuses_an_overflowing_scale_before_the_round():
    X, _ = _blobs(500, 20, 4, 1.0, 0)
    with pytest.raises(FieldOverflowError, match=r"\|S_h\| = 125 points: at scale λ=100000.0.*at most 3 points"):
        SecFC(4, scale=1e5, check_overflow="runtime", random_state=0).fit(X, parts=iid_partition(500, 10))


def test_default_colluders():
    assert default_colluders(10) == 4
    assert default_colluders(16) == 6
    assert default_colluders(4) == 1  # ⌈4/3⌉ = 2 would need n >= 5
    with pytest.raises(ValueError, match="no t >= 1"):
        default_colluders(2)


def test_fitted_model_keeps_no_shares_and_reveals_the_quantized_means():
    """Beyond its run record the fitted model holds less than one client's share of the data (pickled size)."""
    X, _ = _blobs(300, 24, 3, 1.0, 7)
    model = SecFC(3, n_colluders=2, scale=25.0, random_state=1).fit(X, parts=iid_partition(300, 9))
    one_share = 300 * 24 * 8  # bytes of one client's (m, d) int64 share matrix
    assert len(pickle.dumps(model)) - len(pickle.dumps(model.run_)) < one_share
    centres = model.reveal_centers()
    np.testing.assert_array_equal(model.predict(X), np.argmin(((X[:, None] - centres[None]) ** 2).sum(-1), axis=1))
    means = np.stack([X[model.labels_ == h].mean(axis=0) for h in range(3)])
    assert model.federated_loss_ == pytest.approx(kmeans_objective(X, means, labels=model.labels_))


@pytest.mark.parametrize("init", ["kmeans++", "random_assignment"])
def test_round_records_are_consistent(init):
    """One record per oracle call: k seed rounds (K-means++ only), then one per Lloyd round; no timing asserted."""
    X, _ = _blobs(120, 4, 3, 1.0, 5)
    model = SecFC(3, n_colluders=1, n_responders=5, init=init, random_state=2).fit(X, parts=iid_partition(120, 6))
    n_seed_rounds = 3 if init == "kmeans++" else 0
    assert model.n_seed_rounds_ == n_seed_rounds
    rounds = n_seed_rounds + model.n_iter_
    assert len(model.client_seconds_) == len(model.server_seconds_) == len(model.responders_) == rounds
    assert all(len(r) == 5 and len(set(r)) == 5 and set(r) <= set(range(6)) for r in model.responders_)
    assert all(len(times) == 5 for times in model.client_seconds_)
    # server time of a Lloyd round = decoding + the argmin the driver timed
    assert all(s >= a for s, a in zip(model.server_seconds_[n_seed_rounds:], model.run_.assign_seconds, strict=True))
    assert model.upload_elements_per_round_ == model.run_.distances.size == 120 * 3


def test_coded_distances_decode_the_exact_integer_distances():
    """The oracle run by clients on shares and decoded by the server equals the one computed in the clear."""
    X, _ = _blobs(50, 5, 3, 2.0, 4)
    X_int = to_fixed_point(X, 10.0)
    parts = iid_partition(50, 7, random_state=0)
    code = LagrangeCode(n_clients=7, n_segments=2, n_masks=1, prime=SECFC_PRIME)
    shares = share_all(code, to_field(X_int, SECFC_PRIME), parts, random_state=1)
    oracle = CodedDistances(code, shares, n_responders=6, random_state=0)
    labels = np.random.default_rng(2).integers(-1, 3, size=50)
    np.testing.assert_array_equal(oracle(labels, 3), PlainIntegerDistances(X_int)(labels, 3))
    assert oracle.n_samples == 50 and len(oracle.responders) == 1 and len(oracle.responders[0]) == 6


def _response_in_python_integers(shares_j, labels, k, q):
    """``d̃_{i,h} = ||Σ_{S_h} x̃ − |S_h| x̃_i||² mod q`` from one client's shares, in Python integers."""
    S = shares_j.astype(object)
    out = np.empty((len(S), k), dtype=object)
    for h in range(k):
        members = S[labels == h]
        total = members.sum(axis=0) if len(members) else np.zeros(S.shape[1], dtype=object)
        out[:, h] = (((total[None, :] - len(members) * S) ** 2).sum(axis=1)) % q
    return out.astype(np.int64)


@pytest.mark.parametrize(("m", "width", "k"), [(60, 4, 3), (9000, 2, 2)])
def test_client_response_equals_python_integers(m, width, k):
    """A client's message on arbitrary residues, with empty clusters and unassigned points; with m = 9000 a cluster
    holds more than 2**13 shares, whose sum can pass 2**63 in int64, and is summed on limbs instead."""
    rng = np.random.default_rng(m)
    code = LagrangeCode(n_clients=5, n_segments=1, n_masks=1, prime=SECFC_PRIME)
    shares = rng.integers(0, SECFC_PRIME, size=(5, m, width), dtype=np.int64)
    if m > 2**13:  # residues near q: their int64 sum over the large cluster would wrap around
        shares = SECFC_PRIME - 1 - rng.integers(0, 2**40, size=(5, m, width), dtype=np.int64)
    shares[:, :3] = SECFC_PRIME - 1
    oracle = CodedDistances(code, shares, n_responders=5, random_state=0)
    labels = rng.integers(-1, k, size=m)
    labels[rng.random(m) < 0.9] = 0  # one large cluster
    if k > 2:
        labels[labels == k - 1] = 1  # an empty cluster
    for j in (0, 3):
        expected = _response_in_python_integers(shares[j], labels, k, SECFC_PRIME)
        np.testing.assert_array_equal(oracle.client_response(j, labels, k), expected)


def test_a_corrupted_client_response_is_caught_by_the_extra_responders():
    class OneLiar(CodedDistances):
        def client_response(self, j, labels, n_clusters):
            out = super().client_response(j, labels, n_clusters)
            if j == 3:
                out = np.mod(out + 1, self.q)
            return out

    X, _ = _blobs(40, 3, 2, 1.0, 0)
    parts = iid_partition(40, 6, random_state=0)
    code = LagrangeCode(n_clients=6, n_segments=1, n_masks=1, prime=SECFC_PRIME)
    shares = share_all(code, to_field(to_fixed_point(X, 5.0), SECFC_PRIME), parts, random_state=0)
    oracle = OneLiar(code, shares, n_responders=6, random_state=0)
    with pytest.raises(DecodingError, match="disagree") as caught:
        oracle(np.arange(40) % 2, 2)
    # issue 11, item 6: the liar may be among the first R, so no client may be named as the culprit
    assert "clients [" not in str(caught.value)
    # With N = 6 >= R + 2 = 5 responders one corrupted response is located and dropped.
    correcting = OneLiar(code, shares, n_responders=6, random_state=0, correct_errors=True)
    labels = np.arange(40) % 2
    decoded = correcting(labels, 2)
    assert np.array_equal(decoded, PlainIntegerDistances(to_fixed_point(X, 5.0))(labels, 2))
    assert correcting.corrupted == [[3]]


def test_not_fitted():
    with pytest.raises(NotFittedError):
        SecFC(2).reveal_centers()
    with pytest.raises(NotFittedError):
        SecFC(2).predict(np.zeros((3, 2)))


def test_no_colluders_means_no_privacy_and_is_refused():
    # issue 11: n_colluders=0 was accepted, and every share was a plain segment of a client's data
    X = make_blobs([30, 30], 2, random_state=0)[0]
    parts = iid_partition(60, 5, random_state=0)
    with pytest.raises(ValueError, match="t = 0 gives no privacy"):
        SecFC(n_clusters=2, n_colluders=0, random_state=0).fit(X, parts=parts)


# --- issue 11, item 3: a wrapped-around d' must never be used -------------------------------------------------


def _wrap_example():
    """200 points at 0, 260 at 1, one at −182512 (scale 1), and a clustering under which d' wraps around GF(q)."""
    X = np.array([[0.0]] * 200 + [[1.0]] * 260 + [[-182512.0]])
    labels = np.ones(461, dtype=np.int64)
    labels[200:205] = 0
    labels[460] = 0  # the outlier and five ones in cluster 0, the rest in cluster 1
    return X, labels


def test_the_wrap_example_decodes_to_a_plausible_wrong_value():
    """The signed-range test alone cannot see it: d'_{460,1} = 6.1 q decodes to 0.13 q, below q/2."""
    X, labels = _wrap_example()
    exact = PlainIntegerDistances(to_fixed_point(X, 1.0))(labels, 2)
    assert SECFC_PRIME <= exact[460, 1] and np.mod(exact[460, 1], SECFC_PRIME) < SECFC_PRIME // 2
    assert centralized_lloyd(X, 2, scale=1.0, init=labels, max_iter=1).labels[460] == 0  # the exact answer


def test_runtime_check_refuses_a_round_whose_distances_could_wrap_around():
    # issue 11, item 3: check_overflow="runtime" returned label 1 for the outlier, without an error
    X, labels = _wrap_example()
    parts = iid_partition(461, 5, random_state=0)
    with pytest.raises(FieldOverflowError, match=r"cluster 1 has \|S_h\| = 455 points.*λ=1\.0.*q/2 = 562949953421298"):
        SecFC(2, scale=1.0, check_overflow="runtime", init=labels, max_iter=1, random_state=0).fit(X, parts=parts)


def test_bound_check_refuses_the_wrap_example_naming_the_scale_and_q():
    X, labels = _wrap_example()
    parts = iid_partition(461, 5, random_state=0)
    with pytest.raises(FieldOverflowError, match=r"scale λ=1\.0 can overflow GF\(1125899906842597\).*largest safe λ"):
        SecFC(2, scale=1.0, init=labels, max_iter=1, random_state=0).fit(X, parts=parts)


def test_runtime_check_allows_a_larger_scale_and_stays_exact():
    """Per round the bound uses the public cluster sizes instead of m: a scale "bound" refuses can run, exactly."""
    X, _ = _blobs(800, 5, 4, 1.0, 3)
    parts = iid_partition(800, 7, random_state=0)
    radius = float(np.max(np.linalg.norm(X, axis=1)))
    scale = 1.8 * max_safe_scale(800, 5, radius)  # certified per round while every cluster has < 800/1.8 points
    with pytest.raises(FieldOverflowError, match="largest safe λ"):
        SecFC(4, scale=scale, random_state=1).fit(X, parts=parts)
    model = SecFC(4, scale=scale, check_overflow="runtime", random_state=1).fit(X, parts=parts)
    reference = centralized_lloyd(X, 4, scale=scale, random_state=1)
    for ours, theirs in zip(model.history_, reference.history, strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_a_radius_below_the_data_norm_is_refused():
    X, _ = _blobs(100, 4, 2, 1.0, 0)
    norm = float(np.max(np.linalg.norm(X, axis=1)))
    with pytest.raises(ValueError, match=r"radius=1\.0 is below the largest norm of the data"):
        SecFC(2, radius=1.0, random_state=0).fit(X, parts=iid_partition(100, 5, random_state=0))
    assert SecFC(2, radius=norm, random_state=0).fit(X, parts=iid_partition(100, 5, random_state=0)).radius_ == norm


# --- issue 11, item 4: the server's argmin is exact -----------------------------------------------------------


def _float_tie_data():
    """The near-tie points of tests/cluster/test_distance_lloyd.py (one construction, loaded from that file)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "cluster" / "test_distance_lloyd.py"
    spec = importlib.util.spec_from_file_location("_distance_lloyd_tests", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.float_tie_data()


def test_coded_lloyd_step_is_exact_where_the_float_ratios_tie():
    """Decoded d' whose ratios d'/|S|² differ by 1/1764 but tie in float64: the server picks the nearer cluster."""
    from fedlib.cluster import distance_lloyd

    X_int, labels, n_a, n_b = _float_tie_data()
    parts = iid_partition(len(X_int), 5, random_state=0)
    code = LagrangeCode(n_clients=5, n_segments=1, n_masks=1, prime=SECFC_PRIME)
    shares = share_all(code, to_field(X_int, SECFC_PRIME), parts, random_state=0)
    oracle = CodedDistances(code, shares, n_responders=5, random_state=0)
    run = distance_lloyd(oracle, 2, init=labels, max_iter=1)
    assert run.distances[0].tolist() == [n_b, n_a]
    assert run.history[1][0] == 1  # n_a/36 < n_b/49 exactly; the float argmin chose 0


# --- issue 11, item 7: clear refusals -------------------------------------------------------------------------


def test_complex_data_is_refused():
    X, _ = _blobs(60, 3, 2, 1.0, 0)
    with pytest.raises(ValueError, match="Complex data not supported"):
        SecFC(2, random_state=0).fit(X + 1j, parts=iid_partition(60, 5, random_state=0))


def test_all_zero_data_is_clustered_with_any_scale():
    """R = 0: every λ is safe and every x̄ is 0; SecFC uses λ = 1 instead of refusing an infinite λ."""
    X = np.zeros((30, 2))
    parts = iid_partition(30, 5, random_state=0)
    with pytest.warns(RuntimeWarning, match="fewer distinct"):
        model = SecFC(2, random_state=0).fit(X, parts=parts)
    assert model.scale_ == 1.0 and model.radius_ == 0.0
    np.testing.assert_array_equal(model.run_.distances, 0)
    with pytest.warns(RuntimeWarning, match="fewer distinct"):
        np.testing.assert_array_equal(model.labels_, centralized_lloyd(X, 2, scale=1.0, random_state=0).labels)


def test_huge_coordinates_get_a_finite_radius_and_a_tiny_scale():
    # issue 11, item 7: |x| ≈ 1e300 made ||x||² overflow to inf and max_safe_scale fail with "math domain error"
    X, _ = _blobs(60, 3, 2, 1.0, 0)
    parts = iid_partition(60, 5, random_state=0)
    model = SecFC(2, random_state=0).fit(X * 1e300, parts=parts)
    assert np.isfinite(model.radius_) and 0 < model.scale_ < 1e-290
    reference = SecFC(2, random_state=0).fit(X, parts=parts)
    np.testing.assert_array_equal(model.labels_, reference.labels_)  # the same grid, up to a factor of 1e300
    with pytest.raises(ValueError, match=r"radius=inf must be finite"):
        SecFC(2, radius=np.inf, random_state=0).fit(X, parts=parts)
    with pytest.raises(ValueError, match=r"largest norm of the data overflows float64"):
        SecFC(2, random_state=0).fit(np.full((60, 4), 1.5e308), parts=parts)


# --- issue 11, item 8: quantization that collapses features ----------------------------------------------------


def _offset_problem():
    """Four Gaussians in [20, 40]^10 (σ = 1), feature 0 shifted by 10**9: one feature a billion times the rest."""
    from fedlib.data import make_gaussian_mixture

    ds = make_gaussian_mixture(600, 10, 4, cluster_std=1.0, center_box=(20.0, 40.0), random_state=0)
    X = ds.X.copy()
    X[:, 0] += 1e9
    return X, ds.y, iid_partition(600, 7, random_state=0)


@pytest.mark.filterwarnings("ignore:X has fewer distinct")  # every point quantizes to the same one
def test_a_collapsing_scale_warns_and_names_the_option():
    from fedlib.cluster import clustering_accuracy

    X, y, parts = _offset_problem()
    with pytest.warns(RuntimeWarning, match=r"collapses 10 of 10 features.*feature_scaling='center'.*'standardize'"):
        model = SecFC(4, random_state=0).fit(X, parts=parts)
    assert clustering_accuracy(y, model.labels_) < 0.5  # every informative feature became one level


def test_ordinary_data_does_not_warn():
    import warnings

    X, _ = _blobs(300, 6, 3, 2.0, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SecFC(3, random_state=0).fit(X, parts=iid_partition(300, 6, random_state=0))


@pytest.mark.parametrize("feature_scaling", ["center", "standardize"])
def test_feature_scaling_recovers_the_accuracy(feature_scaling):
    import warnings

    from fedlib.cluster import clustering_accuracy

    X, y, parts = _offset_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = SecFC(4, feature_scaling=feature_scaling, random_state=0).fit(X, parts=parts)
    mean = X.mean(axis=0)
    divisor = X.std(axis=0) if feature_scaling == "standardize" else np.ones(10)
    np.testing.assert_array_equal(model.feature_offset_, mean)
    np.testing.assert_array_equal(model.feature_divisor_, divisor)
    Z = (X - mean) / divisor
    # Theorem 1 on the rescaled data, and the float baseline on the same rescaled data from the same seed
    quantized = centralized_lloyd(Z, 4, scale=model.scale_, random_state=0)
    np.testing.assert_array_equal(model.labels_, quantized.labels)
    float_lloyd = centralized_lloyd(Z, 4, random_state=0)
    assert clustering_accuracy(y, model.labels_) >= clustering_accuracy(y, float_lloyd.labels) - 0.01
    assert clustering_accuracy(y, model.labels_) > 0.95
    # centres come back in the original units, and predict uses the metric the clustering used
    means = np.stack([X[model.labels_ == h].mean(axis=0) for h in range(4)])
    np.testing.assert_allclose(model.reveal_centers(), means, rtol=0, atol=(divisor / model.scale_).max() * 1.01)
    np.testing.assert_array_equal(model.predict(X), model.labels_)
