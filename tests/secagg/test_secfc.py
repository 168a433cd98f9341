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
from fedlib.field import DecodingError, FieldOverflowError, LagrangeCode, quantize, to_field
from fedlib.secagg import SECFC_PRIME, CodedDistances, SecFC, default_colluders, share_all


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
    ).fit(X, parts)
    reference = centralized_lloyd(X, k, scale=model.scale_, init=init, max_iter=30, random_state=seed)
    assert len(model.history_) == len(reference.history)
    for ours, theirs in zip(model.history_, reference.history, strict=True):
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(model.run_.distances, reference.distances)
    assert all(len(r) == n_responders for r in model.responders_)


def test_decoded_distances_equal_python_integers():
    X, _ = _blobs(40, 5, 3, 2.0, 0)
    model = SecFC(3, n_colluders=2, scale=7.0, max_iter=1, random_state=0).fit(X, iid_partition(40, 6, random_state=0))
    labels = model.history_[0]
    Xq = quantize(X, 7.0).astype(object)
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
    plain = SecFC(3, random_state=4).fit(X, parts)
    private = SecFC(3, membership_privacy=True, random_state=4).fit(X, parts)
    for a, b in zip(plain.history_, private.history_, strict=True):
        np.testing.assert_array_equal(a, b)


def test_result_is_invariant_to_partition_and_code_parameters():
    X, _ = _blobs(200, 8, 4, 3.0, 2)
    runs = [
        SecFC(4, n_segments=ell, n_colluders=t, scale=20.0, random_state=9).fit(
            X, iid_partition(200, n, random_state=n)
        )
        for n, ell, t in [(5, 1, 1), (10, 1, 4), (11, 2, 3), (16, 3, 5)]
    ]
    for run in runs[1:]:
        np.testing.assert_array_equal(run.labels_, runs[0].labels_)


def test_revealed_centers_are_the_quantized_means():
    X, _ = _blobs(150, 9, 3, 1.0, 3)
    model = SecFC(3, n_segments=2, n_colluders=2, scale=30.0, random_state=0).fit(X, iid_partition(150, 8))
    Xq = quantize(X, 30.0)
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
        SecFC(2, random_state=0, **kwargs).fit(X, iid_partition(100, n, random_state=0))


def test_runtime_detector_catches_an_overflowing_scale():
    X, _ = _blobs(500, 20, 4, 1.0, 0)
    with pytest.raises(FieldOverflowError, match="above q/2"):
        SecFC(4, scale=1e5, check_overflow="runtime", random_state=0).fit(X, iid_partition(500, 10))


def test_default_colluders():
    assert default_colluders(10) == 4
    assert default_colluders(16) == 6
    assert default_colluders(4) == 1  # ⌈4/3⌉ = 2 would need n >= 5
    with pytest.raises(ValueError, match="no t >= 1"):
        default_colluders(2)


def test_fitted_model_keeps_no_shares_and_reveals_the_quantized_means():
    """Beyond its run record the fitted model holds less than one client's share of the data (pickled size)."""
    X, _ = _blobs(300, 24, 3, 1.0, 7)
    model = SecFC(3, n_colluders=2, scale=25.0, random_state=1).fit(X, iid_partition(300, 9))
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
    model = SecFC(3, n_colluders=1, n_responders=5, init=init, random_state=2).fit(X, iid_partition(120, 6))
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
    X_int = quantize(X, 10.0)
    parts = iid_partition(50, 7, random_state=0)
    code = LagrangeCode(n_clients=7, n_segments=2, n_masks=1, prime=SECFC_PRIME)
    shares = share_all(code, to_field(X_int, SECFC_PRIME), parts, random_state=1)
    oracle = CodedDistances(code, shares, n_responders=6, rng=np.random.default_rng(0))
    labels = np.random.default_rng(2).integers(-1, 3, size=50)
    np.testing.assert_array_equal(oracle(labels, 3), PlainIntegerDistances(X_int)(labels, 3))
    assert oracle.n_samples == 50 and len(oracle.responders) == 1 and len(oracle.responders[0]) == 6


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
    shares = share_all(code, to_field(quantize(X, 5.0), SECFC_PRIME), parts, random_state=0)
    oracle = OneLiar(code, shares, n_responders=6, rng=np.random.default_rng(0))
    with pytest.raises(DecodingError, match="disagree"):
        oracle(np.arange(40) % 2, 2)


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
        SecFC(n_clusters=2, n_colluders=0, random_state=0).fit(X, parts)
