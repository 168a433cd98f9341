"""fedlib.learn FedAvg: weights, the server step over the summed clients, and FederatedTrainer's rounds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from fedlib.exceptions import SecAggAbort
from fedlib.learn import (
    Aggregated,
    Aggregator,
    FederatedTrainer,
    LocalSGD,
    PlainSum,
    PlainTotal,
    RoundRecord,
    accuracy,
    fedavg,
    fedavg_weights,
    get_flat,
    make_model,
    server_update,
    train_clients,
)
from fedlib.secagg import SecureAggregator

N_FEATURES, N_CLASSES = 10, 4
LOCAL = LocalSGD(lr=0.2, batch_size=8)


def _separable(n: int, seed: int):
    """Four classes, one per quadrant of the first two features (with a margin), plus noise features."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64) + 2 * (X[:, 1] > 0)
    X[:, :2] += np.sign(X[:, :2]) * 0.5
    return X, y


@pytest.fixture(scope="module")
def data():
    X, y = _separable(240, 0)
    sizes = [20, 35, 25, 40, 30, 20, 45, 25]  # ragged: FedAvg's weights matter
    clients = np.split(np.random.default_rng(1).permutation(240), np.cumsum(sizes)[:-1])
    return X, y, clients


def _trainer(data, *, client_ids=None, test_data=None, n_rounds: int = 0, **options) -> FederatedTrainer:
    """A softmax trainer fitted on ``data`` for ``n_rounds`` rounds (default: set up, at round 0)."""
    X, y, clients = data
    options = {"local": LOCAL, "random_state": 0, **options}
    return FederatedTrainer("softmax", **options).fit(
        X, y, parts=clients, client_ids=client_ids, test_data=test_data, n_rounds=n_rounds
    )


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


# --- weights and the server step ---


def test_fedavg_weights():
    assert fedavg_weights([10, 30]).tolist() == [0.5, 1.5]
    assert fedavg_weights([40, 40, 40]).tolist() == [1.0, 1.0, 1.0]
    assert fedavg_weights([10, 30], "uniform").tolist() == [1.0, 1.0]
    assert fedavg_weights([]).shape == (0,)
    with pytest.raises(ValueError, match="positive"):
        fedavg_weights([10, 0])
    with pytest.raises(ValueError):
        fedavg_weights([10, 20], "median")


@given(st.lists(st.integers(1, 10_000), min_size=1, max_size=30))
def test_fedavg_weights_have_mean_one_and_the_ratios_of_the_sizes(sizes):
    w = fedavg_weights(sizes)
    assert np.isclose(w.mean(), 1.0)
    np.testing.assert_allclose(w / w[0], np.asarray(sizes) / sizes[0], rtol=1e-12)


@st.composite
def rounds(draw):
    n = draw(st.integers(1, 8))
    d = draw(st.integers(1, 6))
    floats = st.floats(-10, 10, width=32)
    theta = draw(hnp.arrays(np.float32, d, elements=floats))
    deltas = draw(hnp.arrays(np.float32, (n, d), elements=floats))
    weights = draw(hnp.arrays(np.float64, n, elements=st.floats(0.1, 5)))
    summed = draw(st.lists(st.booleans(), min_size=n, max_size=n).filter(any))
    lr = draw(st.sampled_from([1.0, 0.5, 2.0]))
    return theta, deltas, weights, np.array(summed), lr


@given(rounds(), st.integers(0, 2**32 - 1))
def test_server_update_is_theta_plus_the_weighted_mean_of_the_summed_updates(case, seed):
    theta, deltas, weights, summed, lr = case
    inputs = deltas * weights[:, None].astype(np.float32)
    dropped = np.flatnonzero(~summed)
    out = server_update(theta, PlainSum().aggregate(inputs, dropped=dropped), weights=weights, server_lr=lr)
    kept = np.flatnonzero(summed)
    mean = (inputs[kept].astype(np.float64)).sum(axis=0) / weights[kept].sum()
    assert out.dtype == np.float32 and out.shape == theta.shape
    np.testing.assert_allclose(out, theta + lr * mean, rtol=1e-5, atol=1e-4)
    # clients outside the sum have no effect, whatever their updates and weights
    rng = np.random.default_rng(seed)
    other_inputs, other_weights = inputs.copy(), weights.copy()
    other_inputs[dropped] = rng.normal(size=(dropped.size, theta.size)) * 100
    other_weights[dropped] = rng.uniform(0.1, 50, size=dropped.size)
    again = server_update(
        theta, PlainSum().aggregate(other_inputs, dropped=dropped), weights=other_weights, server_lr=lr
    )
    assert _bits(again) == _bits(out)


def test_server_update_edge_cases():
    theta = np.arange(3, dtype=np.float32)
    nobody = PlainTotal(total=np.full(3, 5.0), summed=np.array([], dtype=np.int64))
    out = server_update(theta, nobody)
    assert np.array_equal(out, theta) and out is not theta
    one = PlainTotal(total=np.ones(3), summed=np.array([0, 1]))
    assert server_update(theta, one).tolist() == [0.5, 1.5, 2.5]  # default weights: the plain mean
    with pytest.raises(ValueError, match="shape"):
        server_update(theta, PlainTotal(total=np.ones(4), summed=np.array([0])))
    with pytest.raises(ValueError, match="positive"):
        server_update(theta, one, weights=np.zeros(2))
    with pytest.raises(ValueError):
        server_update(theta, one, server_lr=0.0)


def test_plain_sum():
    U = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = PlainSum().aggregate(U, dropped=[3, 1, 3])
    assert isinstance(out, PlainTotal) and isinstance(out, Aggregated)
    assert out.summed.tolist() == [0, 2] and out.total.tolist() == [6.0, 8.0, 10.0]
    assert out.total.dtype == np.float64 and out.bytes_sent == 2 * 3 * 4
    assert PlainSum().aggregate(U).summed.tolist() == [0, 1, 2, 3]
    lossy = PlainSum(dropout_rate=0.5)
    a = lossy.aggregate(np.ones((200, 1)), random_state=3)
    assert a.summed.tolist() == lossy.aggregate(np.ones((200, 1)), random_state=3).summed.tolist()
    assert 60 < a.summed.size < 140 and a.total[0] == a.summed.size
    with pytest.raises(ValueError, match="dropped"):
        PlainSum().aggregate(U, dropped=[4])
    with pytest.raises(ValueError, match="2-D"):
        PlainSum().aggregate(np.ones(3))
    with pytest.raises(ValueError):
        PlainSum(dropout_rate=1.0)


def test_aggregators_satisfy_the_protocol():
    assert isinstance(PlainSum(), Aggregator)
    assert isinstance(SecureAggregator(degree=None, threshold_rate=0.7), Aggregator)


# --- FederatedTrainer ---


def test_an_estimator_constructor_only_stores_its_parameters(data):
    X, y, clients = data

    def rule(round_index, participant_ids, rng):
        return []

    options = dict(
        rounds=2,
        n_classes=4,
        local=LOCAL,
        aggregator=PlainSum(),
        weighting="uniform",
        participation=0.5,
        dropout=rule,
        server_lr=0.5,
        eval_every=2,
        abort_on=(SecAggAbort,),
        keep_checkpoints=True,
        method="loop",
        random_state=5,
        n_threads=None,
        device="auto",  # stored as given, resolved only by fit
    )
    t = FederatedTrainer("softmax", **options)
    params = t.get_params()
    assert params == {"model": "softmax", **options}
    assert all(params[key] is value for key, value in options.items())  # verbatim, not copies
    # nothing is checked or derived before fit
    bad = FederatedTrainer(3, rounds=-1, participation=0.0, dropout=1.0, weighting="size", abort_on=[int])
    assert bad.get_params()["abort_on"] == [int] and bad.participation == 0.0 and bad.model == 3
    assert set(vars(bad)) == set(bad.get_params())  # no validated copies, no fitted state
    for call in (
        lambda: t.run(1),
        t.step,
        t.reset,
        t.evaluate,
        t.history_table,
        lambda: t.local_updates([0]),
        lambda: t.rollback(0),
        lambda: t.n_clients,
    ):
        with pytest.raises(NotFittedError):
            call()
    assert t.fit(X, y, parts=clients) is t
    assert t.round_ == 2 and t.n_features_in_ == N_FEATURES and sorted(t.checkpoints_) == [0, 1, 2]
    assert t.get_params() == params and t.abort_on is options["abort_on"]  # fit leaves the parameters alone
    # clone: the same parameters, unfitted; fitted on the same data it gives the same bits
    twin = clone(t)
    assert twin.get_params() == params and not hasattr(twin, "params_")
    assert _bits(twin.fit(X, y, parts=clients).params_) == _bits(t.params_)
    # defaults stay None after fit; set_params changes what the next fit does
    plain = FederatedTrainer().fit(X, y, parts=clients)
    assert plain.local is None and plain.aggregator is None and plain.rounds == 1 and plain.round_ == 1
    assert plain.set_params(rounds=3).fit(X, y, parts=clients).round_ == 3
    assert plain.fit(X, y, parts=clients, n_rounds=0).round_ == 0 and plain.history_ == []


def test_same_seed_same_bits_and_another_seed_another_model(data):
    a = _trainer(data, random_state=3, participation=0.5, dropout=0.2).run(3)
    b = _trainer(data, random_state=3, participation=0.5, dropout=0.2).run(3)
    c = _trainer(data, random_state=4, participation=0.5, dropout=0.2).run(3)
    assert _bits(a.params_) == _bits(b.params_)
    assert [r.summed.tolist() for r in a.history_] == [r.summed.tolist() for r in b.history_]
    assert not np.array_equal(a.params_, c.params_)
    assert a.round_ == 3 and a.params_.dtype == np.float32 and a.params_.shape == (a.n_parameters,)


def test_initial_model_is_seeded_and_resumption_continues_the_same_run(data):
    t = _trainer(data, random_state=7)
    again = _trainer(data, random_state=7)
    assert t.round_ == 0 and _bits(t.params_) == _bits(again.params_)
    assert not np.array_equal(t.params_, _trainer(data, random_state=8).params_)
    t.run(2).run(0).run(1)
    assert _bits(t.params_) == _bits(again.run(3).params_)
    assert [r.round_index for r in t.history_] == [0, 1, 2]


def test_reset_reproduces_a_run(data):
    t = _trainer(data, random_state=1, dropout=0.3)
    first = t.run(3).params_.copy()
    t.reset(2).run(3)
    assert not np.array_equal(t.params_, first) and t.round_ == 3 and len(t.history_) == 3
    t.reset(1)
    assert t.round_ == 0 and t.history_ == []
    assert _bits(t.run(3).params_) == _bits(first)
    t.reset()  # None keeps the seed
    assert _bits(t.run(3).params_) == _bits(first)
    start = np.zeros(t.n_parameters, dtype=np.float32)
    t.reset(parameters=start)
    assert np.array_equal(t.params_, start) and t.params_ is not start
    with pytest.raises(ValueError, match="shape"):
        t.reset(parameters=np.zeros(3))


def test_a_round_is_the_server_update_of_the_clients_local_training(data):
    X, y, clients = data
    t = _trainer(data, random_state=5)
    theta = t.params_.copy()
    record = t.step()
    updates = train_clients(t.model_, theta, X, y, clients, config=LOCAL, random_state=5, method="loop")
    weights = fedavg_weights([len(c) for c in clients])
    assert not np.allclose(weights, 1.0)
    expected = theta + (updates.deltas * weights[:, None]).sum(axis=0) / weights.sum()
    np.testing.assert_allclose(t.params_, expected, rtol=0, atol=1e-5)
    assert record.summed.tolist() == list(range(8)) and not record.aborted
    uniform = _trainer(data, random_state=5, weighting="uniform")
    uniform.step()
    np.testing.assert_allclose(uniform.params_, theta + updates.deltas.mean(axis=0), rtol=0, atol=1e-5)


@pytest.mark.parametrize(("share", "count"), [(0.5, 4), (0.3, 2), (0.7, 6), (0.01, 1), (1.0, 8)])
def test_participation_draws_the_right_count(data, share, count):
    t = _trainer(data, participation=share).run(4)
    draws = [r.participants.tolist() for r in t.history_]
    for record in t.history_:
        assert record.participants.size == count == np.unique(record.participants).size
        assert set(record.participants) <= set(range(8))
        assert record.summed.tolist() == record.participants.tolist()
        assert record.broadcast_bytes == 4 * t.n_parameters * count
    if 1 < count < 8:
        assert len({str(d) for d in draws}) > 1  # a fresh draw every round


def test_a_dropout_rate_drops_participants_who_then_do_not_count(data):
    t = _trainer(data, dropout=0.4).run(6)
    dropped = [r.dropped.tolist() for r in t.history_]
    assert 0 < sum(map(len, dropped)) < 6 * 8
    for record in t.history_:
        assert set(record.dropped) <= set(record.participants)
        assert set(record.summed) == set(record.participants) - set(record.dropped)


def test_a_dropout_rule_drops_exactly_whom_it_names_and_they_have_no_influence(data):
    X, y, clients = data
    calls = []

    def rule(round_index, participant_ids, rng):
        calls.append((round_index, participant_ids.tolist()))
        assert isinstance(rng, np.random.Generator)
        return [2, 5] if round_index % 2 == 0 else [2, participant_ids[-1]]

    t = _trainer(data, dropout=rule, participation=1.0).run(3)
    assert calls == [(r, list(range(8))) for r in range(3)]
    assert [r.dropped.tolist() for r in t.history_] == [[2, 5], [2, 7], [2, 5]]
    assert [r.summed.tolist() for r in t.history_] == [[0, 1, 3, 4, 6, 7], [0, 1, 3, 4, 5, 6], [0, 1, 3, 4, 6, 7]]
    # whatever client 2, dropped in every round, holds, the model is the same: it neither trains nor is summed
    X_other, y_other = X.copy(), y.copy()
    X_other[clients[2]] = np.random.default_rng(2).normal(size=(len(clients[2]), N_FEATURES)) * 10
    y_other[clients[2]] = 0
    three = FederatedTrainer("softmax", rounds=3, local=LOCAL, random_state=0, dropout=rule)
    other = clone(three).fit(X_other, y_other, parts=clients)
    assert _bits(other.params_) == _bits(t.params_)
    changed = X_other.copy()
    changed[clients[5]] *= 2  # client 5 takes part in round 1 only, and that matters
    assert not np.array_equal(clone(three).fit(changed, y_other, parts=clients).params_, t.params_)
    # and the first round is the server update over the staying clients alone
    theta = _trainer(data).params_
    staying = [0, 1, 3, 4, 6, 7]
    updates = train_clients(
        t.model_, theta, X, y, [clients[i] for i in staying], client_ids=staying, config=LOCAL, random_state=0
    )
    weights = fedavg_weights([len(c) for c in clients])[staying]
    one = _trainer(data, dropout=rule).run(1)
    expected = theta + (updates.deltas * weights[:, None]).sum(axis=0) / weights.sum()
    np.testing.assert_allclose(one.params_, expected, rtol=0, atol=1e-5)


def test_a_dropout_rule_naming_a_non_participant_raises(data):
    t = _trainer(data, participation=0.5, dropout=lambda r, ids, rng: [max(set(range(8)) - set(ids))])
    with pytest.raises(ValueError, match="not participants"):
        t.step()


def test_everyone_dropping_leaves_the_model(data):
    t = _trainer(data, dropout=lambda r, ids, rng: ids)
    before = t.params_.copy()
    record = t.step()
    assert _bits(t.params_) == _bits(before)
    assert record.summed.size == 0 and not record.aborted and record.train_seconds == 0.0


class _LoseFirstSummed:
    """Plain sum that also loses the first row it would have summed."""

    def aggregate(self, updates, *, dropped=None, random_state=None):
        out = PlainSum().aggregate(updates, dropped=dropped)
        lost = [] if dropped is None else list(dropped)
        return PlainSum().aggregate(updates, dropped=[*out.summed[:1], *lost])


class _SumsDropped:
    def aggregate(self, updates, *, dropped=None, random_state=None):
        return PlainSum().aggregate(updates)


def test_the_server_averages_over_whom_the_aggregator_summed(data):
    X, y, clients = data
    t = _trainer(data, aggregator=_LoseFirstSummed())
    theta = t.params_.copy()
    record = t.step()
    assert record.summed.tolist() == list(range(1, 8)) and record.dropped.size == 0
    updates = train_clients(t.model_, theta, X, y, clients, config=LOCAL, random_state=0)
    weights = fedavg_weights([len(c) for c in clients])
    expected = theta + (updates.deltas[1:] * weights[1:, None]).sum(axis=0) / weights[1:].sum()
    np.testing.assert_allclose(t.params_, expected, rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match="dropped out"):
        _trainer(data, aggregator=_SumsDropped(), dropout=lambda r, ids, rng: [0]).step()


def test_retraining_from_scratch_without_some_clients(data):
    """Liu et al.'s retraining: a new trainer fitted on the remaining clients, under their global ids."""
    X, y, clients = data
    keep = [0, 2, 3, 4, 5, 7]
    retrain = FederatedTrainer("softmax", rounds=2, local=LOCAL, method="loop", random_state=3)
    a = clone(retrain).fit(X, y, parts=[clients[i] for i in keep], client_ids=keep)
    assert a.n_clients == 6 and a.client_ids_.tolist() == keep
    assert all(r.participants.tolist() == keep for r in a.history_)
    # reproducible bit for bit, and the removed clients' rows are never read
    X_gone = X.copy()
    X_gone[np.concatenate([clients[1], clients[6]])] = np.nan
    b = clone(retrain).fit(X_gone, y, parts=[clients[i] for i in keep], client_ids=keep)
    assert _bits(b.params_) == _bits(a.params_) and np.isfinite(a.params_).all()
    # the remaining clients keep their streams: the initial model and their local updates are those of the full trainer
    full = _trainer(data, method="loop", random_state=3)
    assert _bits(a.reset().params_) == _bits(full.params_) and a.round_ == 0
    assert _bits(a.local_updates([1, 5]).params) == _bits(full.local_updates([2, 7]).params)


def test_rollback_needs_checkpoints_and_replays_the_same_rounds(data):
    t = _trainer(data).run(2)
    with pytest.raises(ValueError, match="keep_checkpoints"):
        t.rollback(1)
    t = _trainer(data, keep_checkpoints=True, dropout=0.2)
    straight = t.run(4).params_.copy()
    two = _trainer(data, dropout=0.2).run(2).params_
    assert sorted(t.checkpoints_) == [0, 1, 2, 3, 4]
    assert t.rollback(2) is t
    assert t.round_ == 2 and len(t.history_) == 2 and sorted(t.checkpoints_) == [0, 1, 2]
    assert _bits(t.params_) == _bits(two)
    assert _bits(t.run(2).params_) == _bits(straight)
    t.rollback(0)
    assert _bits(t.params_) == _bits(_trainer(data).params_) and t.history_ == []
    with pytest.raises(ValueError):
        t.rollback(1)  # beyond the current round


def test_secure_aggregation_matches_the_plain_sum(data):
    rounds = 3
    plain = _trainer(data, participation=0.75).run(rounds)
    for degree in (None, 4):
        aggregator = SecureAggregator(degree=degree, threshold_rate=0.7, clip=4.0)
        secure = _trainer(data, participation=0.75, aggregator=aggregator).run(rounds)
        for p, s in zip(plain.history_, secure.history_, strict=True):
            assert s.summed.tolist() == p.summed.tolist() and not s.aborted
            assert s.bytes_sent > p.bytes_sent and s.bytes_received > 0 and s.phase_seconds
        # each round rounds every summed update to a multiple of the resolution: at most 2^-f / 2 per client,
        # so at most 2^-f on the mean (weights <= 2); plus float32 rounding of the parameters
        resolution = aggregator.aggregate(np.zeros((6, 1)), random_state=0).resolution
        assert 0 < resolution < 1e-7
        diff = np.abs(secure.params_ - plain.params_).max()
        assert diff <= rounds * resolution + 4 * np.finfo(np.float32).eps * np.abs(plain.params_).max()
        assert np.abs(plain.params_ - _trainer(data).params_).max() > 1e-2  # the comparison is not vacuous


def test_an_aborted_secure_round_leaves_the_model_and_is_recorded(data):
    # four neighbours in a row drop: with t = ceil(0.7 * 4) = 3 of 4 share holders some secret is lost
    aggregator = SecureAggregator(degree=4, threshold_rate=0.7, clip=4.0)

    def rule(round_index, ids, rng):
        return ids[:5] if round_index == 1 else []

    t = _trainer(data, aggregator=aggregator, dropout=rule, abort_on=(SecAggAbort,), keep_checkpoints=True).run(3)
    aborted = t.history_[1]
    assert aborted.aborted and aborted.summed.size == 0 and aborted.dropped.tolist() == [0, 1, 2, 3, 4]
    assert aborted.bytes_sent == 0 and aborted.bytes_received == 0
    assert _bits(t.checkpoints_[2]) == _bits(t.checkpoints_[1])
    assert not t.history_[0].aborted and not t.history_[2].aborted
    assert not np.array_equal(t.checkpoints_[3], t.checkpoints_[2])
    assert t.history_table()["aborted"] == [False, True, False]
    with pytest.raises(SecAggAbort):  # without abort_on the exception propagates
        _trainer(data, aggregator=aggregator, dropout=rule).run(2)


def test_fedavg_learns_separable_data(data):
    X, y, clients = data
    X_test, y_test = _separable(400, 9)
    t = fedavg(
        "mlp", X, y, clients, rounds=8, local=LOCAL, test_data=(X_test, y_test), participation=0.75, random_state=0
    )
    accuracies = [r.accuracy for r in t.history_]
    assert all(a is not None for a in accuracies)
    assert accuracies[-1] > 0.85  # chance is 0.25
    assert accuracies[-1] == t.evaluate() == accuracy(t.model_, X_test, y_test, parameters=t.params_)
    assert t.evaluate(X_test[:10], y_test[:10]) == accuracy(t.model_, X_test[:10], y_test[:10], parameters=t.params_)


def test_history_table_and_evaluation_schedule(data):
    X, y, _ = data
    t = _trainer(data, test_data=(X, y), eval_every=2, dropout=0.3).run(4)
    table = t.history_table()
    assert list(table) == [
        "round",
        "participants",
        "dropped",
        "summed",
        "aborted",
        "train seconds",
        "aggregate seconds",
        "bytes sent",
        "bytes received",
        "broadcast bytes",
        "accuracy",
    ]
    assert table["round"] == [1, 2, 3, 4]
    assert np.isnan(table["accuracy"][0]) and np.isnan(table["accuracy"][2])
    assert 0 <= table["accuracy"][1] <= 1 and table["accuracy"][3] == t.evaluate()
    for record, summed, dropped in zip(t.history_, table["summed"], table["dropped"], strict=True):
        assert isinstance(record, RoundRecord)
        assert summed == record.summed.size and dropped == record.dropped.size
        assert record.bytes_sent == 4 * t.n_parameters * summed
    with pytest.raises(ValueError, match="no test data"):
        _trainer(data).evaluate()
    with pytest.raises(ValueError, match="both"):
        t.evaluate(X)


def test_fedavg_is_the_trainer_run():
    X, y = _separable(60, 3)
    clients = np.array_split(np.arange(60), 4)
    a = fedavg("softmax", X, y, clients, rounds=2, random_state=1, client_ids=[4, 3, 2, 1])
    b = FederatedTrainer("softmax", random_state=1).fit(X, y, parts=clients, client_ids=[4, 3, 2, 1], n_rounds=0)
    assert a.round_ == 2 and a.rounds == 2 and _bits(a.params_) == _bits(b.run(2).params_)


def test_a_module_model_and_bad_options(data):
    X, y, clients = data
    model = make_model("mlp", N_CLASSES, input_shape=(N_FEATURES,), hidden=6)
    t = FederatedTrainer(model, random_state=0).fit(X, y, parts=clients)
    assert t.n_parameters == get_flat(model).size and t.model_ is model and t.model is model
    bad = [
        dict(n_classes=3),  # labels reach 3
        dict(abort_on=(int,)),
        dict(aggregator=object()),
        dict(participation=0.0),
        dict(dropout=1.0),
        dict(weighting="size"),
        dict(local={"lr": 0.1}),
        dict(rounds=-1),
        dict(eval_every=0),
        dict(method="fast"),
    ]
    for options in bad:
        with pytest.raises((ValueError, TypeError)):
            FederatedTrainer("softmax", **options).fit(X, y, parts=clients)
    with pytest.raises(ValueError, match="client_ids"):
        FederatedTrainer().fit(X, y, parts=clients, client_ids=[0] * 8)
    with pytest.raises(ValueError, match="n_rounds"):
        FederatedTrainer().fit(X, y, parts=clients, n_rounds=-1)
    with pytest.raises(TypeError, match="model"):
        FederatedTrainer(3).fit(X, y, parts=clients)
    with pytest.raises(ValueError, match="labels"):
        FederatedTrainer("softmax").fit(X, -y, parts=clients)
    with pytest.raises(ValueError, match="holds no examples"):
        FederatedTrainer("softmax").fit(X, y, parts=[clients[0], np.array([], dtype=np.int64)])
    # a failed refit leaves the fitted trainer as it was
    t = _trainer(data, n_rounds=1)
    before = t.params_.copy()
    with pytest.raises(ValueError, match="participation"):
        t.set_params(participation=2.0).fit(X, y, parts=clients)
    assert t.round_ == 1 and _bits(t.params_) == _bits(before)


def test_local_updates_for_a_custom_server_loop(data):
    X, y, clients = data
    t = _trainer(data)
    out = t.local_updates([3, 1])
    assert out.client_ids.tolist() == [3, 1] and out.round_index == 0 and out.base_version.tolist() == [0, 0]
    alone = train_clients(t.model_, t.params_, X, y, [clients[1]], client_ids=[1], config=LOCAL, random_state=0)
    np.testing.assert_allclose(out.params[1], alone.params[0], rtol=0, atol=1e-6)
    # one start per client, in the order the positions are given
    starts = np.stack([np.zeros(t.n_parameters, np.float32), t.params_])
    later = t.local_updates([3, 1], start=starts, round_index=5, base_version=[2, 4])
    assert later.round_index == 5 and later.base_version.tolist() == [2, 4]
    assert np.array_equal(later.start, starts)
    mine = train_clients(
        t.model_, starts[1], X, y, [clients[1]], client_ids=[1], config=LOCAL, round_index=5, random_state=0
    )
    np.testing.assert_allclose(later.params[1], mine.params[0], rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match="positions"):
        t.local_updates([8])
