"""fedlib.learn evaluation: logits, probabilities, accuracy and perplexity of one model or a stack of models."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fedlib.learn import accuracy, get_flat, make_model, perplexity, predict_logits, predict_proba, set_flat


@pytest.fixture(scope="module")
def setup():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2, 3, 3)).astype(np.float32)
    y = rng.integers(0, 4, size=50)
    model = make_model("mlp", 4, random_state=0, input_shape=(2, 3, 3), hidden=5)
    stack = np.stack(
        [get_flat(make_model("mlp", 4, random_state=s, input_shape=(2, 3, 3), hidden=5)) for s in range(3)]
    )
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


def test_perplexity_is_the_exponential_of_torch_cross_entropy(setup):
    model, X, y, stack = setup
    single = perplexity(model, X, y)
    assert isinstance(single, float)
    with torch.no_grad():
        logits = model(torch.from_numpy(X))
        nats = torch.nn.functional.cross_entropy(logits.double(), torch.from_numpy(y)).item()
    assert single == pytest.approx(np.exp(nats), rel=1e-6)
    several = perplexity(model, X, y, parameters=stack)
    assert several.shape == (3,) and several.dtype == np.float64
    for k in range(3):
        with torch.no_grad():
            logits = set_flat(make_model("mlp", 4, input_shape=(2, 3, 3), hidden=5), stack[k])(torch.from_numpy(X))
        nats = torch.nn.functional.cross_entropy(logits.double(), torch.from_numpy(y)).item()
        assert several[k] == pytest.approx(np.exp(nats), rel=1e-6)
        assert several[k] == perplexity(model, X, y, parameters=stack[k])
    assert len(set(several.tolist())) == 3
    np.testing.assert_allclose(perplexity(model, X, y, parameters=stack, batch_size=7), several, rtol=1e-6)
    assert perplexity(model, torch.from_numpy(X), torch.from_numpy(y)) == pytest.approx(single, rel=1e-6)


def test_perplexity_by_hand():
    model = make_model("softmax", 4, input_shape=(2,))
    assert perplexity(set_flat(model, np.zeros(12)), np.zeros((6, 2)), [0, 1, 2, 3, 3, 3]) == pytest.approx(4.0)
    # logits (log 1, log 2, log 3, log 4) for every row: p = (0.1, 0.2, 0.3, 0.4); labels 3 and 0
    bias = np.log([1.0, 2.0, 3.0, 4.0])
    set_flat(model, np.concatenate([np.zeros(8), bias]))
    expected = np.exp(-(np.log(0.4) + np.log(0.1)) / 2)  # = 1 / sqrt(0.04) = 5
    assert perplexity(model, np.zeros((2, 2)), [3, 0]) == pytest.approx(expected, rel=1e-6) == pytest.approx(5.0)
    # a confident right model tends to 1
    weight = np.zeros((4, 2))
    weight[0, 0] = weight[1, 1] = 30.0  # input e_0 -> class 0, e_1 -> class 1, with logit margin 30
    set_flat(model, np.concatenate([weight.ravel(), np.zeros(4)]))
    assert 1.0 <= perplexity(model, np.eye(2), [0, 1]) < 1.0 + 1e-9


def test_perplexity_of_the_character_model():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 65, size=(300, 8)).astype(np.float32)
    y = rng.integers(0, 65, size=300)
    model = make_model("char_mlp", 65, random_state=0, input_shape=(8,), hidden=32)
    with torch.no_grad():
        nats = torch.nn.functional.cross_entropy(model(torch.from_numpy(X)).double(), torch.from_numpy(y)).item()
    assert perplexity(model, X, y) == pytest.approx(np.exp(nats), rel=1e-6)


def test_perplexity_refuses_bad_labels_and_no_rows(setup):
    model, X, y, _ = setup
    with pytest.raises(ValueError, match="rows but y has"):
        perplexity(model, X, y[:-1])
    with pytest.raises(ValueError, match=r"labels must lie in \[0, n_classes=4\), got values in \[0, 4\]"):
        perplexity(model, X, np.where(np.arange(50) == 3, 4, y))
    with pytest.raises(ValueError, match=r"\[-1, "):
        perplexity(model, X, np.where(np.arange(50) == 3, -1, y))
    with pytest.raises(ValueError, match="at least one row"):
        perplexity(model, X[:0], y[:0])
    with pytest.raises(TypeError, match="integers"):
        perplexity(model, X, y + 0.5)


def test_accuracy_refuses_no_rows_as_perplexity_does(setup):
    model, X, y, stack = setup
    for parameters in (None, stack):
        with pytest.raises(ValueError, match="the accuracy of no rows is undefined"):
            accuracy(model, X[:0], y[:0], parameters=parameters)
        with pytest.raises(ValueError, match="the perplexity of no rows is undefined"):
            perplexity(model, X[:0], y[:0], parameters=parameters)
    # out-of-range labels are only wrong answers for the accuracy, but no perplexity exists for them
    assert accuracy(model, X, np.full(50, 9), parameters=stack).tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="labels must lie in"):
        perplexity(model, X, np.full(50, 9), parameters=stack)
