"""Unauthenticated unmasking shares: a wrong one is caught whenever more than t arrive (the semi-honest model's
cheap defence), and a second message from one sender is refused instead of replacing the first."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedlib.exceptions import TamperedMessageError
from fedlib.secagg import MaskingGraph, SecAggClient, SecAggConfig, SecAggServer, harary_graph
from fedlib.secagg._secagg import MERSENNE_521

X = np.random.default_rng(0).integers(0, 2**32, size=(10, 6), dtype=np.uint32)


def to_unmasking(config: SecAggConfig, dropped_before_masking=()):
    """A server holding every client's unmasking response (each client answers honestly)."""
    n = config.n_clients
    clients = {i: SecAggClient(i, X[i], config, random_state=i) for i in range(n)}
    server = SecAggServer(config)
    bundles = server.collect_keys([u.advertise_keys() for u in clients.values()])
    u2, deliveries = server.route_shares({i: clients[i].share_keys(bundles[i]) for i in range(n)})
    alive = [i for i in range(n) if i not in dropped_before_masking]
    u3 = server.collect_masked_inputs([clients[i].masked_input(u2, deliveries[i]) for i in alive])
    return server, [clients[i].unmask(u3) for i in alive]


def plus_one(response, which: str, owner: int):
    shares = dict(getattr(response, which))
    shares[owner] = (shares[owner] + 1) % MERSENNE_521
    return dataclasses.replace(response, **{which: shares})


@pytest.mark.parametrize("share_holders", ["all", "neighbors"])
@pytest.mark.parametrize(("which", "owner"), [("self_mask_shares", 2), ("mask_key_shares", 9)])
def test_a_plus_one_on_one_share_raises_instead_of_a_wrong_sum(share_holders, which, owner):
    config = SecAggConfig(harary_graph(10, 4, random_state=1), threshold=3, vector_length=6,
                          share_holders=share_holders)  # fmt: skip
    server, responses = to_unmasking(config, dropped_before_masking=[9])
    holder = next(i for i, r in enumerate(responses) if owner in getattr(r, which))
    responses[holder] = plus_one(responses[holder], which, owner)
    with pytest.raises(TamperedMessageError, match="do not lie on one polynomial"):
        server.unmask(responses)


def test_honest_shares_beyond_t_pass_the_check_and_give_the_exact_sum():
    config = SecAggConfig(harary_graph(10, 4, random_state=1), threshold=3, vector_length=6, share_holders="all")
    server, responses = to_unmasking(config, dropped_before_masking=[9])
    np.testing.assert_array_equal(server.unmask(responses), X[:9].sum(axis=0, dtype=np.uint32))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 8), st.integers(1, 2**64), st.sampled_from(["self_mask_shares", "mask_key_shares"]))
def test_any_change_to_any_share_is_caught_with_more_than_t_holders(holder, delta, which):
    config = SecAggConfig(harary_graph(10, 4, random_state=2), threshold=4, vector_length=6, share_holders="all")
    server, responses = to_unmasking(config, dropped_before_masking=[9])
    owner = 9 if which == "mask_key_shares" else holder
    shares = dict(getattr(responses[holder], which))
    shares[owner] = (shares[owner] + delta) % MERSENNE_521
    responses[holder] = dataclasses.replace(responses[holder], **{which: shares})
    with pytest.raises(TamperedMessageError):
        server.unmask(responses)


def test_with_exactly_t_shares_a_wrong_one_goes_unseen_as_the_threat_model_says():
    """No redundancy, no check: the documented limit of unauthenticated shares (book: threat model)."""
    config = SecAggConfig(harary_graph(6, 2, shuffle=False), threshold=3, vector_length=6)  # 3 holders each
    n = 6
    clients = {i: SecAggClient(i, X[i], config, random_state=i) for i in range(n)}
    server = SecAggServer(config)
    bundles = server.collect_keys([u.advertise_keys() for u in clients.values()])
    u2, deliveries = server.route_shares({i: clients[i].share_keys(bundles[i]) for i in range(n)})
    u3 = server.collect_masked_inputs([clients[i].masked_input(u2, deliveries[i]) for i in range(n)])
    responses = [clients[i].unmask(u3) for i in range(n)]
    responses[0] = plus_one(responses[0], "self_mask_shares", 1)
    total = server.unmask(responses)
    assert not np.array_equal(total, X[:6].sum(axis=0, dtype=np.uint32))


def test_a_second_masked_input_or_response_from_one_sender_is_refused():
    config = SecAggConfig(harary_graph(10, 4, random_state=1), threshold=3, vector_length=6)
    clients = {i: SecAggClient(i, X[i], config, random_state=i) for i in range(10)}
    server = SecAggServer(config)
    bundles = server.collect_keys([u.advertise_keys() for u in clients.values()])
    u2, deliveries = server.route_shares({i: clients[i].share_keys(bundles[i]) for i in range(10)})
    inputs = [clients[i].masked_input(u2, deliveries[i]) for i in range(10)]
    forged = dataclasses.replace(inputs[3], vector=np.zeros(6, dtype=np.uint32))
    with pytest.raises(ValueError, match="client 3 sent its masked input twice"):
        server.collect_masked_inputs([*inputs, forged])


def lying_server_recovers(threshold: int, server_model: str) -> bool:
    """A server that tells half the holders "client 0 survived" and the other half "client 0 dropped" (complete graph
    of 9, shares among all): can it pool t shares of both of client 0's secrets and so read x_0?"""
    from fedlib.secagg import prg_words, strip_pairwise_masks
    from fedlib.secagg._secagg import KEY_BYTES, _shamir

    config = SecAggConfig(MaskingGraph.complete(9), threshold=threshold, vector_length=6, share_holders="all",
                          server_model=server_model)  # fmt: skip
    clients = {i: SecAggClient(i, X[i], config, random_state=i) for i in range(9)}
    server = SecAggServer(config)
    bundles = server.collect_keys([u.advertise_keys() for u in clients.values()])
    u2, deliveries = server.route_shares({i: clients[i].share_keys(bundles[i]) for i in range(9)})
    u3 = server.collect_masked_inputs([clients[i].masked_input(u2, deliveries[i]) for i in range(9)])
    told_alive = [clients[i].unmask(u3) for i in range(0, 5)]  # client 0 itself and four others: shares of b_0
    told_dropped = [clients[i].unmask(u3 - {0}) for i in range(5, 9)]  # four others: shares of s_0^SK
    seed_shares = {r.sender: r.self_mask_shares[0] for r in told_alive}
    key_shares = {r.sender: r.mask_key_shares[0] for r in told_dropped}
    if min(len(seed_shares), len(key_shares)) < threshold:
        return False
    shamir = _shamir(9, threshold)

    def rebuild(shares):
        senders = sorted(shares)[:threshold]
        return shamir.reconstruct_bytes(np.array([[shares[s]] for s in senders], dtype=object), senders, KEY_BYTES)[0]

    x0 = strip_pairwise_masks(0, server, mask_key=rebuild(key_shares)) - prg_words(rebuild(seed_shares), 6)
    return bool(np.array_equal(x0, X[0]))


def test_a_server_lying_about_survivors_reads_an_input_unless_t_exceeds_half_the_holders():
    """The semi-honest default (t = 4 of 9 holders) falls to a server that lies; server_model="malicious"
    enforces t > 9/2, and with t = 5 no split of the holders gives it t shares of both secrets."""
    assert lying_server_recovers(4, "semi-honest")
    with pytest.raises(ValueError, match="malicious server"):
        SecAggConfig(MaskingGraph.complete(9), threshold=4, vector_length=6, server_model="malicious")
    assert not lying_server_recovers(5, "malicious")
