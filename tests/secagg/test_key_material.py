"""Secret randomness comes from the operating system by default, everywhere (issue: seeded keys by default).

Keys, self-mask seeds, masks and the random coefficients of secret shares must not follow the seed that makes a
simulation reproducible: whoever knows that seed would recompute every mask and so every input. The seeded mode
stays, asked for explicitly (``random_state=<seed>`` in the protocol functions, ``insecure_seeded_secrets=True`` in
the estimators), and gives the same outputs: the secure sums are exact whatever the masks are.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import fedlib.secagg._aggregator as aggregator_module
import fedlib.unlearn._mufc as mufc_module
from fedlib.data import iid_partition, make_gaussian_mixture
from fedlib.field import LagrangeCode, PrimeField, Shamir, random_field_elements, secret_residues
from fedlib.learn import LocalSGD
from fedlib.secagg import (
    SecAggConfig,
    SecFC,
    SecureAggregator,
    Stage,
    harary_graph,
    secure_aggregate,
    secure_hashed_sparse_sum,
    secure_sparse_sum,
    zero_sum_mask_arrays,
    zero_sum_masks,
)
from fedlib.unlearn import MUFC, ClusteredUnlearning
from fedlib.utils import check_key_source, spawn_key_sources

SECRET_DRAWS = [Shamir.share, Shamir.share_bytes, LagrangeCode.encode, zero_sum_masks, zero_sum_mask_arrays,
                secure_sparse_sum, secure_hashed_sparse_sum, secure_aggregate]  # fmt: skip
ESTIMATORS = [SecureAggregator, ClusteredUnlearning, SecFC, MUFC]


@pytest.mark.parametrize("function", SECRET_DRAWS, ids=lambda f: f.__qualname__)
def test_secret_draws_default_to_the_operating_system(function):
    assert inspect.signature(function).parameters["random_state"].default == "secrets"


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: e.__name__)
def test_estimators_running_a_protocol_seed_secrets_only_when_asked_and_say_it_is_insecure(estimator):
    parameter = inspect.signature(estimator.__init__).parameters["insecure_seeded_secrets"]
    assert parameter.default is False
    assert "insecure" in inspect.getdoc(estimator).split("insecure_seeded_secrets : bool")[1].split("\n\n")[0]


def masked_inputs(values, config, **kwargs) -> np.ndarray:
    result = secure_aggregate(values, config, **kwargs)
    return np.stack([m.vector for m in sorted(result.server.view[Stage.MASKED_INPUT], key=lambda m: m.sender)])


def test_reproducer_a_seed_unmasks_every_input_and_the_default_does_not():
    """The issue's reproducer: the seeded round on x and on zeros differ by exactly x; the default round does not."""
    rng = np.random.default_rng(1)
    config = SecAggConfig(harary_graph(8, 4, random_state=0), threshold=3, vector_length=16)
    x = rng.integers(0, 2**32, (8, 16), dtype=np.uint32)
    zeros = np.zeros_like(x)
    seeded = masked_inputs(x, config, random_state=5) - masked_inputs(zeros, config, random_state=5)
    np.testing.assert_array_equal(seeded, x)  # the insecure simulation, as documented
    default = masked_inputs(x, config) - masked_inputs(zeros, config)
    assert not (default == x).all(axis=1).any()  # no row of x readable


@pytest.fixture
def calls(monkeypatch):
    """Record the ``random_state`` each SecAgg round of the aggregator was given."""
    seen = []
    real = aggregator_module.secure_aggregate

    def spy(*args, **kwargs):
        seen.append(kwargs["random_state"])
        return real(*args, **kwargs)

    monkeypatch.setattr(aggregator_module, "secure_aggregate", spy)
    return seen


def test_secure_aggregator_keys_come_from_the_os_and_the_sum_is_the_seeded_one(calls):
    updates = np.random.default_rng(0).uniform(-1, 1, (7, 5))
    default = SecureAggregator(degree=4, threshold_rate=0.6).aggregate(updates, dropped=[2], random_state=3)
    seeded = SecureAggregator(degree=4, threshold_rate=0.6, insecure_seeded_secrets=True).aggregate(
        updates, dropped=[2], random_state=3
    )
    assert calls[0] == "secrets" and isinstance(calls[1], np.random.Generator)
    np.testing.assert_array_equal(default.total, seeded.total)
    np.testing.assert_array_equal(default.summed, seeded.summed)
    assert (default.bytes_sent, default.bytes_received) == (seeded.bytes_sent, seeded.bytes_received)
    with pytest.raises(TypeError, match="insecure_seeded_secrets must be a bool"):
        SecureAggregator(degree=4, threshold_rate=0.6, insecure_seeded_secrets="yes")


def test_clustered_unlearning_trains_the_same_models_with_os_keys(calls):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4)).astype(np.float32)
    y = rng.integers(0, 2, 120)
    clients = np.array_split(np.arange(120), 12)
    options = dict(cluster_size=6, rounds=2, local=LocalSGD(lr=0.1, batch_size=5), threshold_rate=0.5,
                   dropout=0.2, random_state=3)  # fmt: skip
    default = ClusteredUnlearning("softmax", **options).fit(X, y, parts=clients)
    assert calls and set(calls) == {"secrets"}
    calls.clear()
    seeded = ClusteredUnlearning("softmax", insecure_seeded_secrets=True, **options).fit(X, y, parts=clients)
    assert calls and all(isinstance(c, np.random.Generator) for c in calls)
    for a, b in zip(default.trainers_, seeded.trainers_, strict=True):
        np.testing.assert_array_equal(a.params_, b.params_)
    default.unlearn(clients=[0])
    seeded.unlearn(clients=[0])
    for a, b in zip(default.trainers_, seeded.trainers_, strict=True):
        np.testing.assert_array_equal(a.params_, b.params_)


def test_secfc_masks_its_shares_from_the_os_and_clusters_the_same():
    ds = make_gaussian_mixture(120, 4, 3, random_state=0)
    parts = iid_partition(120, 7, random_state=0)
    a, b = (SecFC(3, random_state=2).fit(ds.X, parts=parts) for _ in range(2))
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.reveal_centers(), b.reveal_centers())
    assert not np.array_equal(a._coded_sums, b._coded_sums)  # fresh masks in each fit
    c, d = (SecFC(3, random_state=2, insecure_seeded_secrets=True).fit(ds.X, parts=parts) for _ in range(2))
    np.testing.assert_array_equal(c._coded_sums, d._coded_sums)  # the reproducible, insecure simulation
    np.testing.assert_array_equal(a.labels_, c.labels_)


@pytest.mark.parametrize("aggregation", ["scma", "scma-hashed"])
def test_mufc_masks_from_the_os_and_the_model_is_the_seeded_one(monkeypatch, aggregation):
    seen = []
    name = "secure_sparse_sum" if aggregation == "scma" else "secure_hashed_sparse_sum"
    real = getattr(mufc_module, name)

    def spy(*args, **kwargs):
        seen.append(kwargs["random_state"])
        return real(*args, **kwargs)

    monkeypatch.setattr(mufc_module, name, spy)
    ds = make_gaussian_mixture(90, 2, 3, random_state=0)
    parts = iid_partition(90, 3, random_state=0)
    default = MUFC(3, aggregation=aggregation, random_state=1).fit(ds.X, parts=parts)
    seeded = MUFC(3, aggregation=aggregation, random_state=1, insecure_seeded_secrets=True).fit(ds.X, parts=parts)
    assert seen[0] == "secrets" and isinstance(seen[1], np.random.Generator)
    np.testing.assert_array_equal(default.server_centers_, seeded.server_centers_)
    assert default.counts_ == seeded.counts_


def test_shamir_shares_are_fresh_by_default_and_reproducible_only_from_a_seed():
    shamir = Shamir(n_shares=5, threshold=3)
    assert not np.array_equal(shamir.share([42]), shamir.share([42]))
    np.testing.assert_array_equal(shamir.share([42], random_state=0), shamir.share([42], random_state=0))
    assert shamir.reconstruct(shamir.share([42])[[0, 2, 4]], [0, 2, 4]) == [42]


def test_os_draws_are_uniform_residues_and_vectorised():
    p = 2**31 - 1
    values = secret_residues(p, 200_000)
    assert values.dtype == np.int64 and values.min() >= 0 and values.max() < p
    # Uniform: the mean of U{0..p-1} is (p-1)/2, its standard error here about p / sqrt(12 * 200000).
    assert abs(values.mean() / (p - 1) - 0.5) < 5 / np.sqrt(12 * 200_000)
    small = secret_residues(3, 30_000)
    assert set(np.unique(small).tolist()) == {0, 1, 2} and np.bincount(small).min() > 9_000
    field = PrimeField(101)
    drawn = field.random((4, 5), "secrets")
    assert drawn.shape == (4, 5) and drawn.dtype == np.int64 and drawn.max() < 101
    big = random_field_elements(2**127 - 1, 1000, random_state="secrets")
    assert len(set(big)) == 1000 and max(big) < 2**127 - 1
    with pytest.raises(ValueError, match="2 <= p < 2\\*\\*63"):
        secret_residues(2**63, 1)


def test_key_sources():
    assert check_key_source("secrets") == "secrets"
    assert isinstance(check_key_source(0), np.random.Generator)
    with pytest.raises(ValueError, match="only string accepted is 'secrets'"):
        check_key_source("os")
    a, b = spawn_key_sources(7, 2)
    assert a.random() != b.random() and spawn_key_sources("secrets", 3) == ["secrets"] * 3
