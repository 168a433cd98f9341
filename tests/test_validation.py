import numpy as np
import pytest

from fedlib._validation import check_array, check_n_clusters, check_random_state, check_sample_weight, spawn_generators


def test_check_random_state_same_int_same_stream():
    assert check_random_state(7).random() == check_random_state(7).random()


def test_check_random_state_passes_generator_through():
    g = np.random.default_rng(0)
    assert check_random_state(g) is g


def test_check_random_state_rejects_other_types():
    with pytest.raises(TypeError, match="random_state"):
        check_random_state("seed")


def test_spawn_generators_reproducible_and_independent():
    a = [g.random() for g in spawn_generators(3, 4)]
    b = [g.random() for g in spawn_generators(3, 4)]
    assert a == b
    assert len(set(a)) == 4


@pytest.mark.parametrize("bad", [np.zeros(3), np.zeros((0, 2)), np.array([[np.nan, 1.0]]), np.zeros((3, 0))])
def test_check_array_rejects(bad):
    with pytest.raises(ValueError):
        check_array(bad)


def test_check_sample_weight_rules():
    assert np.array_equal(check_sample_weight(None, 3), np.ones(3))
    with pytest.raises(ValueError, match=">= 0"):
        check_sample_weight([1, -1, 1], 3)
    with pytest.raises(ValueError, match="shape"):
        check_sample_weight([1, 1], 3)
    with pytest.raises(ValueError, match="positive"):
        check_sample_weight([0, 0, 0], 3)


def test_check_n_clusters_names_the_bound():
    with pytest.raises(ValueError, match="n_samples=2 should be >= n_clusters=3"):
        check_n_clusters(3, 2)
    with pytest.raises(TypeError):
        check_n_clusters(2.0, 5)
