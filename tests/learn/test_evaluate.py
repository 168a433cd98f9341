"""fedlib.learn evaluation: logits, probabilities and accuracy of one model or a stack of models."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fedlib.learn import accuracy, get_flat, make_model, predict_logits, predict_proba, set_flat


@pytest.fixture(scope="module")
def setup():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2, 3, 3)).astype(np.float32)
    y = rng.integers(0, 4, size=50)
    model = make_model("mlp", 4, seed=0, input_shape=(2, 3, 3), hidden=5)
    stack = np.stack([get_flat(make_model("mlp", 4, seed=s, input_shape=(2, 3, 3), hidden=5)) for s in range(3)])
    return model, X, y, stack


def test_logits_of_one_model_are_its_forward_pass(setup):
    model, X, _, _ = setup
    before = get_flat(model)
    logits = predict_logits(model, X)
    assert logits.shape == (50, 4) and logits.dtype == np.float32
    with torch.no_grad():
        expected = model(torch.from_numpy(X)).numpy()
    np.testing.assert_allclose(logits, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(predict_logits(model, X, parameters=before), logits, rtol=0, atol=1e-6)
    np.testing.assert_allclose(predict_logits(model, torch.from_numpy(X).double()), logits, rtol=0, atol=1e-6)
    np.testing.assert_allclose(predict_logits(model, X, batch_size=7), logits, rtol=0, atol=1e-6)
    assert np.array_equal(get_flat(model), before)


def test_a_stack_of_models_gives_one_result_per_model(setup):
    model, X, _, stack = setup
    before = get_flat(model)
    logits = predict_logits(model, X, parameters=stack)
    assert logits.shape == (3, 50, 4)
    for k in range(3):
        with torch.no_grad():
            expected = set_flat(make_model("mlp", 4, input_shape=(2, 3, 3), hidden=5), stack[k])(torch.from_numpy(X))
        np.testing.assert_allclose(logits[k], expected.numpy(), rtol=1e-6, atol=1e-6)
    assert not np.allclose(logits[0], logits[1])
    np.testing.assert_allclose(predict_logits(model, X, parameters=stack, batch_size=16), logits, rtol=0, atol=1e-6)
    assert np.array_equal(get_flat(model), before)  # the architecture's own parameters are untouched


def test_probabilities_are_the_softmax_of_the_logits(setup):
    model, X, _, stack = setup
    for parameters, shape in ((None, (50, 4)), (stack, (3, 50, 4))):
        proba = predict_proba(model, X, parameters=parameters)
        assert proba.shape == shape
        np.testing.assert_allclose(proba.sum(axis=-1), 1.0, rtol=1e-6)
        logits = predict_logits(model, X, parameters=parameters)
        expected = np.exp(logits - logits.max(axis=-1, keepdims=True))
        np.testing.assert_allclose(proba, expected / expected.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_accuracy_of_one_model_and_of_a_stack(setup):
    model, X, y, stack = setup
    single = accuracy(model, X, y)
    assert isinstance(single, float)
    assert single == np.mean(predict_logits(model, X).argmax(axis=1) == y)
    several = accuracy(model, X, y, parameters=stack)
    assert several.shape == (3,) and several.dtype == np.float64
    for k in range(3):
        assert several[k] == accuracy(model, X, y, parameters=stack[k])
    # a model that always answers its label's class: the labels as one-hot logits
    model0 = make_model("softmax", 3, input_shape=(3,))
    eye = np.eye(3, dtype=np.float32)
    set_flat(model0, np.concatenate([eye.ravel() * 5, np.zeros(3)]))
    labels = np.array([0, 1, 2, 2, 1])
    assert accuracy(model0, eye[labels], labels) == 1.0
    assert accuracy(model0, eye[labels], (labels + 1) % 3) == 0.0
    assert accuracy(model0, eye[labels], np.array([0, 1, 2, 0, 0])) == 0.6


def test_bad_shapes_raise(setup):
    model, X, y, stack = setup
    with pytest.raises(ValueError, match="rows but y has"):
        accuracy(model, X, y[:-1])
    for bad in (stack[:, :-1], stack[0, :-1], stack[None]):
        with pytest.raises(ValueError, match="parameters must have shape"):
            predict_logits(model, X, parameters=bad)
    with pytest.raises(ValueError):
        predict_logits(model, X, batch_size=0)
