"""Input checks of fedlib/_validation.py: scalars, seeds, arrays, weights, K, partitions, options, fitted state.

``check_scalar``, ``check_random_state`` and ``spawn_generators`` are public (:mod:`fedlib.utils`) and are
tested through it; the other checks have no public route and are imported from their module.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.sparse import csr_matrix
from sklearn.exceptions import NotFittedError

from fedlib._validation import (
    check_array,
    check_is_fitted,
    check_n_clusters,
    check_option,
    check_partition,
    check_sample_weight,
)
from fedlib.utils import check_random_state, check_scalar, spawn_generators

# --- check_scalar ---------------------------------------------------------------------------------------------


@given(st.integers(-(10**30), 10**30))
def test_check_scalar_returns_integers_as_python_ints(x):
    out = check_scalar(x, "n", "int")
    assert out == x and type(out) is int
    real = check_scalar(x, "r", "real")
    assert real == float(x) and type(real) is float


@pytest.mark.parametrize("x", [np.int8(-3), np.int64(2**40), np.uint16(7)])
def test_check_scalar_accepts_numpy_integers_as_python_ints(x):
    out = check_scalar(x, "n", "int")
    assert out == int(x) and type(out) is int


@given(st.floats(allow_nan=False))
def test_check_scalar_refuses_every_float_where_an_int_is_meant(x):
    """2.7 clients and 2.0 clients alike: a float is never truncated into an int."""
    with pytest.raises(TypeError, match=r"n_clients must be an int, got float"):
        check_scalar(x, "n_clients", "int")
    with pytest.raises(TypeError, match=r"n_clients must be an int, got float64"):
        check_scalar(np.float64(x), "n_clients", "int")


@pytest.mark.parametrize("kind", ["int", "real"])
@pytest.mark.parametrize("x", [True, False, np.bool_(True)])
def test_check_scalar_refuses_booleans(kind, x):
    with pytest.raises(TypeError, match="flag must be"):
        check_scalar(x, "flag", kind)


@pytest.mark.parametrize("kind", ["int", "real"])
@pytest.mark.parametrize("x", [1j, 3 + 0j, np.complex128(2.0), "3", None, [1], Decimal("1.5")])
def test_check_scalar_refuses_complex_and_non_numbers(kind, x):
    with pytest.raises(TypeError, match=r"x must be (an int|a real number), got"):
        check_scalar(x, "x", kind)


def test_check_scalar_real_accepts_any_real_number_as_a_float():
    assert check_scalar(Fraction(1, 4), "tol", "real") == 0.25
    assert check_scalar(np.float32(0.5), "tol", "real") == 0.5
    assert type(check_scalar(np.float32(0.5), "tol", "real")) is float


def test_check_scalar_refuses_nan_for_reals():
    with pytest.raises(ValueError, match="tol must be a number, got NaN"):
        check_scalar(math.nan, "tol", "real")
    with pytest.raises(ValueError, match="NaN"):
        check_scalar(np.float64("nan"), "tol", "real", min_val=0.0)


@given(
    x=st.integers(-50, 50),
    lo=st.none() | st.integers(-50, 50),
    hi=st.none() | st.integers(-50, 50),
    include_min=st.booleans(),
    include_max=st.booleans(),
)
def test_check_scalar_bounds_against_python_comparisons(x, lo, hi, include_min, include_max):
    above = lo is None or (x >= lo if include_min else x > lo)
    below = hi is None or (x <= hi if include_max else x < hi)
    kwargs = dict(min_val=lo, max_val=hi, include_min=include_min, include_max=include_max)
    for kind, value in (("int", x), ("real", x + 0.0)):
        if above and below:
            assert check_scalar(value, "v", kind, **kwargs) == x
        else:
            with pytest.raises(ValueError, match=r"v=.* should be (>=|>|<=|<) "):
                check_scalar(value, "v", kind, **kwargs)


def test_check_scalar_messages_name_the_bound():
    with pytest.raises(ValueError, match=r"^n_init=0 should be >= 1\.$"):
        check_scalar(0, "n_init", "int", min_val=1)
    with pytest.raises(ValueError, match=r"^scale=0\.0 should be > 0\.0\.$"):
        check_scalar(0.0, "scale", "real", min_val=0.0, include_min=False)
    with pytest.raises(ValueError, match=r"^p=1\.5 should be < 1\.0\.$"):
        check_scalar(1.5, "p", "real", max_val=1.0, include_max=False)
    with pytest.raises(ValueError, match=r"^k=9 should be <= 8\.$"):
        check_scalar(9, "k", "int", max_val=8)
    with pytest.raises(ValueError, match="x=inf should be <= 1"):
        check_scalar(math.inf, "x", "real", max_val=1.0)
    with pytest.raises(ValueError, match="x=-inf should be >= 0"):
        check_scalar(-math.inf, "x", "real", min_val=0.0)
    with pytest.raises(TypeError, match=r"^n_clients must be an int, got float 2\.7\.$"):
        check_scalar(2.7, "n_clients", "int")


def test_check_scalar_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match="kind must be 'int' or 'real'"):
        check_scalar(1, "x", "integer")


# --- check_random_state and spawn_generators ------------------------------------------------------------------


def test_check_random_state_same_int_same_stream():
    assert check_random_state(7).random() == check_random_state(7).random()
    np.testing.assert_array_equal(check_random_state(7).random(5), np.random.default_rng(7).random(5))
    np.testing.assert_array_equal(check_random_state(np.int64(7)).random(5), np.random.default_rng(7).random(5))


def test_check_random_state_passes_generator_through():
    g = np.random.default_rng(0)
    assert check_random_state(g) is g


def test_check_random_state_accepts_seed_sequences_and_none():
    a = check_random_state(np.random.SeedSequence(11)).random(3)
    np.testing.assert_array_equal(a, np.random.default_rng(np.random.SeedSequence(11)).random(3))
    assert isinstance(check_random_state(None), np.random.Generator)


@pytest.mark.parametrize("bad", ["seed", 1.5, np.random.RandomState(0), [1, 2]])
def test_check_random_state_rejects_other_types(bad):
    with pytest.raises(TypeError, match="random_state must be an int"):
        check_random_state(bad)


@pytest.mark.parametrize("seed", [0, 3, 2**40])
def test_spawn_generators_are_the_children_of_the_seed_sequence(seed):
    children = np.random.SeedSequence(seed).spawn(4)
    got = [g.random(3) for g in spawn_generators(seed, 4)]
    expected = [np.random.default_rng(c).random(3) for c in children]
    np.testing.assert_array_equal(got, expected)
    assert len({tuple(v) for v in got}) == 4  # independent streams


def test_spawn_generators_from_a_seed_sequence_uses_it_as_is():
    got = [g.random() for g in spawn_generators(np.random.SeedSequence(5), 2)]
    expected = [np.random.default_rng(c).random() for c in np.random.SeedSequence(5).spawn(2)]
    assert got == expected


def test_spawn_generators_advance_a_generator_by_one_draw():
    parent = np.random.default_rng(9)
    got = [g.random() for g in spawn_generators(parent, 3)]
    twin = np.random.default_rng(9)
    children = np.random.SeedSequence(twin.integers(0, 2**63)).spawn(3)
    assert got == [np.random.default_rng(c).random() for c in children]
    assert parent.random() == twin.random()  # both advanced by exactly that one draw


def test_spawn_generators_rejects_other_types():
    with pytest.raises(TypeError, match="random_state"):
        spawn_generators("seed", 2)


# --- check_array, check_sample_weight, check_n_clusters -------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "error", "match"),
    [
        (np.zeros(3), ValueError, "Expected 2D array"),
        (np.zeros((0, 2)), ValueError, r"0 sample\(s\)"),
        (np.zeros((3, 0)), ValueError, r"0 feature\(s\)"),
        (np.array([[np.nan, 1.0]]), ValueError, "X contains NaN"),
        (np.array([[np.inf, 1.0]]), ValueError, "X contains infinity"),
        ([["a", "b"]], ValueError, "could not convert string to float"),
        (csr_matrix(np.eye(2)), TypeError, "dense data is required"),
    ],
)
def test_check_array_rejects(bad, error, match):
    with pytest.raises(error, match=match):
        check_array(bad)


def test_check_array_returns_c_contiguous_float64():
    F = np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    out = check_array(F)
    assert out.dtype == np.float64 and out.flags.c_contiguous
    np.testing.assert_array_equal(out, [[0, 1, 2], [3, 4, 5]])
    np.testing.assert_array_equal(check_array([[1, 2]]), [[1.0, 2.0]])
    with pytest.raises(ValueError, match="a minimum of 3 is required"):
        check_array(np.zeros((2, 2)), min_samples=3)
    with pytest.raises(ValueError, match="Expected 2D array"):
        check_array(np.zeros(2), name="centers")


def test_check_sample_weight_rules():
    np.testing.assert_array_equal(check_sample_weight(None, 3), np.ones(3))
    np.testing.assert_array_equal(check_sample_weight([1, 0, 2], 3), [1.0, 0.0, 2.0])
    with pytest.raises(ValueError, match=">= 0"):
        check_sample_weight([1, -1, 1], 3)
    with pytest.raises(ValueError, match="finite"):
        check_sample_weight([1, np.nan, 1], 3)
    with pytest.raises(ValueError, match="shape"):
        check_sample_weight([1, 1], 3)
    with pytest.raises(ValueError, match="positive"):
        check_sample_weight([0, 0, 0], 3)


def test_check_n_clusters_names_the_bound():
    assert check_n_clusters(np.int64(3), 3) == 3
    with pytest.raises(ValueError, match="n_samples=2 should be >= n_clusters=3"):
        check_n_clusters(3, 2)
    with pytest.raises(ValueError, match="n_clusters=0 should be >= 1"):
        check_n_clusters(0, 5)
    with pytest.raises(TypeError, match="n_clusters must be an int"):
        check_n_clusters(2.0, 5)


# --- check_partition, check_option, check_is_fitted -----------------------------------------------------------


@given(st.integers(1, 12), st.data())
def test_check_partition_against_its_definition(n, data):
    parts = data.draw(st.lists(st.lists(st.integers(-1, n), max_size=n), min_size=1, max_size=4))
    flat = sorted(i for p in parts for i in p)
    valid = all(len(p) > 0 for p in parts) and flat == list(range(n))
    if valid:
        out = check_partition(parts, n)
        assert [a.tolist() for a in out] == parts and all(a.dtype == np.int64 for a in out)
    else:
        with pytest.raises(ValueError, match=r"holds no points|partition range|parts overlap"):
            check_partition(parts, n)


def test_check_partition_messages():
    with pytest.raises(ValueError, match="at least one client"):
        check_partition([], 3)
    with pytest.raises(ValueError, match="client 1 holds no points"):
        check_partition([[0, 1, 2], []], 3)
    with pytest.raises(ValueError, match=r"parts overlap: 1 row\(s\) \(e.g. row 1\) .*\(clients \[0, 1\]\)"):
        check_partition([[0, 1], [1, 2]], 3)
    with pytest.raises(ValueError, match=r"partition range\(n_samples=3\): every index exactly once"):
        check_partition([[0, 1], [2, 2]], 3)  # one client listing a row twice
    with pytest.raises(ValueError, match=r"partition range\(n_samples=3\): every index exactly once"):
        check_partition([[0], [2]], 3)  # row 1 held by no client
    with pytest.raises(ValueError, match=r"partition range\(n_samples=3\): an index lies outside it"):
        check_partition([[0, 1], [2, 3]], 3)


def test_check_option():
    assert check_option("lazy", "server_update", ("lazy", "strict")) == "lazy"
    with pytest.raises(ValueError, match=r"server_update='eager' should be one of \('lazy', 'strict'\)"):
        check_option("eager", "server_update", ("lazy", "strict"))
    with pytest.raises(ValueError, match="should be one of"):
        check_option(1, "server_update", ("lazy", "strict"))


def test_check_is_fitted():
    class Model:
        pass

    model = Model()
    with pytest.raises(NotFittedError, match="This Model instance is not fitted yet"):
        check_is_fitted(model, "labels_")
    model.labels_ = np.zeros(2)
    assert check_is_fitted(model, "labels_") is None


def test_utils_reexports_the_validators():
    """fedlib.utils is the public route to the checks above; it offers nothing but these names."""
    import fedlib.utils

    assert set(fedlib.utils.__all__) == {
        "SeedLike",
        "check_key_source",
        "check_random_state",
        "child_sequence",
        "root_sequence",
        "check_scalar",
        "progress",
        "spawn_generators",
        "spawn_key_sources",
    }


def test_check_ids_refuses_fractions_and_non_numbers():
    # issue 11: removal ids 3.7 and 2.5 were silently truncated to 3 and 2
    from fedlib._validation import check_ids

    assert check_ids(np.array([3.0, 4.0])).tolist() == [3, 4] and check_ids(5).tolist() == [5]
    for bad in ([3.7], [2.5], [np.nan], [np.inf]):
        with pytest.raises(ValueError, match="whole numbers"):
            check_ids(bad)
    for bad in ([True], [1 + 2j], ["3"]):
        with pytest.raises(TypeError, match="integers"):
            check_ids(bad)


def test_removal_entry_points_refuse_fractional_ids():
    from fedlib.learn import AsyncFederatedTrainer
    from fedlib.unlearn import MUFC

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    model = MUFC(2, random_state=0).fit(X, parts=[np.arange(20), np.arange(20, 40)])
    with pytest.raises(ValueError, match="whole numbers"):
        model.unlearn([3.7])
    with pytest.raises(ValueError, match="whole numbers"):
        model.unlearn(clients=[0.5])
    trainer = AsyncFederatedTrainer("softmax", concurrency=2, buffer=1).fit(
        X.astype(np.float32),
        rng.integers(0, 2, 40),
        parts=[np.arange(20), np.arange(20, 40)],
        training_times=[1.0, 2.0],
    )
    with pytest.raises(ValueError, match="whole numbers"):
        trainer.unlearn(clients=[0.5])


# --- issue 11, item 7: complex input is refused, not truncated ------------------------------------------------


@pytest.mark.parametrize(
    "X",
    [
        np.array([[1.0 + 2.0j, 0.0]]),
        [[1.0, 2.0j]],
        np.array([[1.0, 2.0]], dtype=np.complex64),
    ],
)
def test_check_array_refuses_complex_input(X):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning on the way: refused before any cast
        with pytest.raises(ValueError, match="Complex data not supported"):
            check_array(X)


def test_check_array_still_accepts_real_input_and_reports_bad_input_as_before():
    assert check_array([[1, 2]]).dtype == np.float64
    assert check_array(np.array([[1.0, 2.0]], dtype=np.float32)).dtype == np.float64
    with pytest.raises(ValueError, match="inhomogeneous"):
        check_array([[1.0], [1.0, 2.0]])
    with pytest.raises(ValueError, match="Complex data not supported"):
        check_array(np.array([[1 + 1j]], dtype=object))
