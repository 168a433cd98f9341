"""SecAgg parties (fedlib/secagg/_secagg.py) and what a curious server learns (fedlib/secagg/_leakage.py)."""

from __future__ import annotations

import numpy as np
import pytest

from fedlib.exceptions import PrivacyViolationError, ProtocolStageError, SecAggAbort, TamperedMessageError
from fedlib.secagg import (
    EncryptedShare,
    MaskedInput,
    MaskingGraph,
    SecAggClient,
    SecAggConfig,
    SecAggServer,
    Stage,
    harary_graph,
    leaked_partial_sums,
    prg_words,
    secure_aggregate,
    strip_pairwise_masks,
    unmask_with_coalition,
)
from fedlib.secagg._secagg import KEY_BYTES, _shamir


def _parties(n=6, m=4, t=3, d=5, seed=0):
    config = SecAggConfig(harary_graph(n, m, random_state=seed), threshold=t, vector_length=d)
    x = np.random.default_rng(seed).integers(0, 2**32, size=(n, d), dtype=np.uint32)
    clients = [SecAggClient(i, x[i], config, random_state=seed + 1 + i) for i in range(n)]
    return config, x, clients, SecAggServer(config)


def _until_shares(config, clients, server):
    bundles = server.collect_keys([u.advertise_keys() for u in clients])
    outboxes = {u.client_id: u.share_keys(bundles[u.client_id]) for u in clients}
    return server.route_shares(outboxes)


def test_a_message_for_the_wrong_stage_raises():
    _config, _x, clients, server = _parties()
    with pytest.raises(ProtocolStageError, match="ADVERTISE_KEYS"):
        clients[0].masked_input([], [])
    with pytest.raises(ProtocolStageError):
        server.route_shares({})
    clients[0].advertise_keys()
    with pytest.raises(ProtocolStageError):
        clients[0].advertise_keys()


def test_a_tampered_or_misaddressed_share_is_rejected():
    config, _x, clients, server = _parties()
    u2, deliveries = _until_shares(config, clients, server)
    victim = deliveries[0][0]
    flipped = bytearray(victim.ciphertext)
    flipped[-1] ^= 0x80
    with pytest.raises(TamperedMessageError, match="authentication"):
        clients[0].masked_input(u2, [EncryptedShare(victim.sender, victim.recipient, bytes(flipped))])
    misrouted = deliveries[1][0]
    with pytest.raises(TamperedMessageError, match="addressed to client 1"):
        clients[2].masked_input(u2, [misrouted])
    # Relabelled as addressed to client 2: the key and the nonce are the pair's, so GCM refuses it.
    with pytest.raises(TamperedMessageError):
        clients[2].masked_input(u2, [EncryptedShare(misrouted.sender, 2, misrouted.ciphertext)])


def test_an_honest_client_reveals_one_secret_per_peer_and_answers_once():
    config, _x, clients, server = _parties()
    u2, deliveries = _until_shares(config, clients, server)
    masked = [u.masked_input(u2, deliveries[u.client_id]) for u in clients]
    u3 = server.collect_masked_inputs(masked[1:])  # client 0 dropped
    response = clients[1].unmask(u3)
    assert not set(response.mask_key_shares) & set(response.self_mask_shares)
    assert set(response.mask_key_shares) <= {0} and set(response.self_mask_shares) <= set(u3)
    assert 1 in response.self_mask_shares  # a survivor reveals its own share of its own b (Bonawitz et al. Fig. 4)
    with pytest.raises(ProtocolStageError, match="DONE"):  # a second request: asking now for s^SK of survivors
        clients[1].unmask({0})
    with pytest.raises(PrivacyViolationError, match="never sent shares"):
        clients[2].unmask(set(u3) | {99})


def test_a_late_input_stays_masked_by_its_self_mask():
    """Client 3's y arrives after the server asked for its mask key: pairwise masks come off, PRG(b_3) stays."""
    config = SecAggConfig(harary_graph(8, 4, random_state=1), threshold=3, vector_length=4096)
    x = np.zeros((8, 4096), dtype=np.uint32)
    result = secure_aggregate(x, config, late=[3], random_state=1)
    assert 3 in result.server.rebuilt_mask_keys and 3 not in result.server.rebuilt_seeds
    assert not any(3 in r.self_mask_shares for r in result.server.view[Stage.UNMASKING])
    # Declared dropped, client 3 reveals its own share of s_3^SK, as of any dropped client's, and never of b_3.
    (own,) = [r for r in result.server.view[Stage.UNMASKING] if r.sender == 3]
    assert 3 in own.mask_key_shares and 3 not in own.self_mask_shares
    with pytest.raises(ValueError, match="fewer than t=3"):  # the server alone cannot get b_3
        unmask_with_coalition(3, [], result.server, late_inputs=result.late_inputs)
    # What the server can strip alone leaves x_3 + PRG(b_3): uniform-looking, not x_3 = 0 ...
    left = strip_pairwise_masks(3, result.server, late_inputs=result.late_inputs)
    assert np.count_nonzero(left) > 4000
    # ... and it is exactly that: with b_3 (which no honest client revealed) x_3 = 0 comes out.
    b3 = result.clients[3].corrupt().self_mask_seed
    assert not np.any(left - prg_words(b3, 4096))
    with pytest.raises(ValueError, match="survived"):
        strip_pairwise_masks(0, result.server)


@pytest.mark.parametrize("share_holders", ["neighbors", "all"])
def test_t_share_holders_and_the_server_unmask_a_client_and_t_minus_one_cannot(global_random_seed, share_holders):
    n, m, t, d = 10, 6, 4, 64
    graph = harary_graph(n, m, random_state=global_random_seed)
    config = SecAggConfig(graph, threshold=t, vector_length=d, share_holders=share_holders)
    x = np.random.default_rng(global_random_seed).integers(0, 2**32, size=(n, d), dtype=np.uint32)
    result = secure_aggregate(x, config, random_state=global_random_seed)
    rng = np.random.default_rng(global_random_seed)
    target = int(rng.integers(n))
    holders = config.holders(target)
    assert target in holders and holders.size == (m + 1 if share_holders == "neighbors" else n)
    others = rng.permutation([int(j) for j in holders if j != target])
    views = [result.clients[int(j)].corrupt() for j in others]
    assert np.array_equal(unmask_with_coalition(target, views[:t], result.server), x[target])
    with pytest.raises(ValueError, match=f"fewer than t={t}"):
        unmask_with_coalition(target, views[: t - 1], result.server)
    # Non-holders' shares are no help, however many.
    outsiders = [result.clients[i].corrupt() for i in range(n) if i not in holders]
    assert len(outsiders) == (n - m - 1 if share_holders == "neighbors" else 0)
    with pytest.raises(ValueError):
        unmask_with_coalition(target, views[: t - 1] + outsiders, result.server)


def test_a_client_keeps_its_own_share_locally_and_it_is_a_real_share():
    """Bonawitz et al. 2017, Fig. 4: u shares s_u^SK and b_u among U1, itself included, and keeps s_{u,u}, b_{u,u}."""
    n, m, t, d = 9, 4, 3, 4
    config = SecAggConfig(harary_graph(n, m, random_state=3), threshold=t, vector_length=d)
    x = np.random.default_rng(3).integers(0, 2**32, size=(n, d), dtype=np.uint32)
    result = secure_aggregate(x, config, random_state=3)
    routed = result.server.view[Stage.SHARE_KEYS]
    assert not any(message.sender == message.recipient for message in routed)  # never sealed nor routed
    assert len(routed) == sum(config.holders(i).size - 1 for i in range(n)) == n * m
    # Stage-1 upload: the sealed shares for the m other holders only.
    sealed = {i: sum(msg.nbytes for msg in routed if msg.sender == i) for i in range(n)}
    assert len({sealed[i] for i in range(n)}) == 1 and sealed[0] == m * routed[0].nbytes
    target = 4
    view = result.clients[target].corrupt()
    assert target in view.received_shares  # a corrupted client still holds its own share
    # Its own share and t - 1 others' rebuild its own secrets: it is a share like any other.
    holders = config.holders(target)
    position = {int(j): r for r, j in enumerate(holders)}
    chosen = [target, *(int(j) for j in holders if j != target)][:t]
    pool = [result.clients[j].corrupt().received_shares[target] for j in chosen]
    shamir = _shamir(holders.size, t)
    for which, secret in ((0, view.mask_private_key), (1, view.self_mask_seed)):
        values = np.array([[share[which]] for share in pool], dtype=object)
        assert shamir.reconstruct_bytes(values, [position[j] for j in chosen], KEY_BYTES)[0] == secret


def test_with_t_equal_to_the_holders_no_coalition_without_the_target_unmasks_a_survivor():
    """The server holds t shares of a survivor's b (its own among them); s^SK needs t other holders: the survivor
    never reveals its own share of s^SK. With t equal to the number of holders, no coalition without the target
    can unmask it, since only t - 1 others hold shares."""
    n, t, d = 6, 6, 8
    config = SecAggConfig(MaskingGraph.complete(n), threshold=t, vector_length=d, share_holders="all")
    x = np.random.default_rng(5).integers(0, 2**32, size=(n, d), dtype=np.uint32)
    result = secure_aggregate(x, config, random_state=5)
    assert np.array_equal(result.total, x.sum(axis=0, dtype=np.uint32))
    everyone_else = [result.clients[i].corrupt() for i in range(1, n)]
    with pytest.raises(ValueError, match=f"5 shares of the mask key s\\^SK of client 0, fewer than t={t}"):
        unmask_with_coalition(0, everyone_else, result.server)


def test_liu_et_al_figure_3_partial_sums():
    """H(8, 3) in order; (b) u2, u4, u6 drop and u8 is unlearned; (c) u4, u6 drop, u8 unlearned, u2 colludes.
    Either way the server learns x1 + x5 and x3 + x7 (ids 0, 4 and 2, 6), not only their total."""
    graph = harary_graph(8, 3, shuffle=False)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2**32, size=(8, 16), dtype=np.uint32)
    expected = [([0, 4], x[0] + x[4]), ([2, 6], x[2] + x[6])]

    # Shares go to the whole cluster, as Liu et al. describe: with shares only along the 3 edges, u1 would keep
    # one live holder and the round would abort instead of leaking. The protocol as printed completes (b) ...
    printed = SecAggConfig(graph, threshold=3, vector_length=16, share_holders="all", allow_partial_sums=True)
    drops = {Stage.ADVERTISE_KEYS: [7], Stage.MASKED_INPUT: [1, 3, 5]}
    b = secure_aggregate(x, printed, dropouts=drops, random_state=0)
    leaked = leaked_partial_sums(b.server)
    assert [(m.tolist(), s.tolist()) for m, s in leaked] == [(m, s.tolist()) for m, s in expected]
    # ... fedlib's default aborts it: the four survivors fall into two components.
    config = SecAggConfig(graph, threshold=3, vector_length=16, share_holders="all")
    with pytest.raises(SecAggAbort, match="fall into 2 components"):
        secure_aggregate(x, config, dropouts=drops, random_state=0)

    # (c): the survivors' graph holds together, so the round completes; a colluding u2 still splits it. No check
    # on the survivor list can see a corrupted client: this is the threat model's bound on colluders.
    c = secure_aggregate(x, config, dropouts={Stage.ADVERTISE_KEYS: [7], Stage.MASKED_INPUT: [3, 5]}, random_state=0)
    assert len(leaked_partial_sums(c.server)) == 1  # u2 honest: the graph holds together
    leaked = leaked_partial_sums(c.server, [c.clients[1].corrupt()])
    assert [(m.tolist(), s.tolist()) for m, s in leaked] == [(m, s.tolist()) for m, s in expected]


def test_a_connected_graph_leaks_only_the_total(global_random_seed):
    config = SecAggConfig(harary_graph(12, 6, random_state=global_random_seed), threshold=4, vector_length=8)
    x = np.random.default_rng(global_random_seed).integers(0, 2**32, size=(12, 8), dtype=np.uint32)
    result = secure_aggregate(x, config, dropouts={"masked_input": [0]}, random_state=global_random_seed)
    ((members, total),) = leaked_partial_sums(result.server)
    assert members.tolist() == list(range(1, 12)) and np.array_equal(total, result.total)


def test_configuration_refuses_settings_without_privacy_or_recovery():
    ring = harary_graph(8, 2, random_state=0)
    # Holders: the 2 neighbours and the client itself, so t may be 3, not 4.
    assert SecAggConfig(ring, threshold=3, vector_length=1).holders(0).size == 3
    with pytest.raises(ValueError, match="exceeds the 3 share holders"):
        SecAggConfig(ring, threshold=4, vector_length=1)
    # A malicious server: 2t must exceed the holders, the client itself counted (9 on the complete graph of 9).
    with pytest.raises(ValueError, match="at most half of the 9 share holders"):
        SecAggConfig(MaskingGraph.complete(9), threshold=4, vector_length=1, server_model="malicious")
    assert SecAggConfig(MaskingGraph.complete(9), threshold=5, vector_length=1, server_model="malicious").threshold == 5
    assert SecAggConfig(MaskingGraph.complete(9), threshold=4, vector_length=1).threshold == 4
    with pytest.raises(ValueError, match="no privacy"):
        SecAggConfig(MaskingGraph.complete(9), threshold=1, vector_length=1)
    with pytest.raises(ValueError, match="no privacy"):
        SecAggConfig(MaskingGraph.complete(9), threshold=1, vector_length=1, share_holders="all")
    with pytest.raises(ValueError, match="server_model"):
        SecAggConfig(ring, threshold=2, vector_length=1, server_model="honest")
    with pytest.raises(ValueError, match="share_holders"):
        SecAggConfig(ring, threshold=2, vector_length=1, share_holders="some")
    everyone = SecAggConfig(ring, threshold=8, vector_length=1, share_holders="all")
    assert everyone.holders(0).tolist() == list(range(8))
    with pytest.raises(ValueError, match="exceeds the 8 share holders"):
        SecAggConfig(ring, threshold=9, vector_length=1, share_holders="all")
    H = everyone.holder_matrix().toarray()
    assert H.shape == (8, 8) and H.all()
    H = SecAggConfig(ring, threshold=2, vector_length=1).holder_matrix().toarray()
    assert np.all(np.diag(H) == 1) and np.array_equal(H - np.eye(8, dtype=int), ring.adjacency.toarray())


def test_for_cluster_applies_the_rate_to_the_holders_itself_included():
    """t = ceil(xi h): h = m + 1 with shares among neighbours, h = k with shares among the whole cluster."""
    plus = SecAggConfig.for_cluster(20, degree=4, threshold_rate=0.7, vector_length=1, random_state=0)
    assert plus.holders(0).size == 5 and plus.threshold == 4  # ceil(0.7 * 5)
    whole = SecAggConfig.for_cluster(20, degree=4, threshold_rate=0.7, vector_length=1, share_holders="all")
    assert whole.holders(0).size == 20 and whole.threshold == 14  # ceil(0.7 * 20)
    full = SecAggConfig.for_cluster(10, degree=None, threshold_rate=1.0, vector_length=1, share_holders="all")
    assert full.threshold == 10
    assert SecAggConfig.for_cluster(10, degree=4, threshold_rate=0.01, vector_length=1).threshold == 2
    assert SecAggConfig.for_cluster(6, degree=None, threshold_rate=0.5, vector_length=1, share_holders="all",
                                    threshold=6).threshold == 6  # fmt: skip
    with pytest.raises(ValueError, match=r"t=7 exceeds the 6 share holders.*Requirement 2"):
        SecAggConfig.for_cluster(6, degree=None, threshold_rate=0.5, vector_length=1, share_holders="all", threshold=7)
    with pytest.raises(ValueError, match=r"t=6 exceeds the 5 share holders.*Requirement 2"):
        SecAggConfig.for_cluster(10, degree=4, threshold_rate=0.5, vector_length=1, threshold=6, random_state=0)
    with pytest.raises(ValueError, match="no private setting"):
        SecAggConfig.for_cluster(2, degree=None, threshold_rate=0.7, vector_length=1)


def test_the_graph_must_be_a_masking_graph():
    with pytest.raises(TypeError, match="graph"):
        SecAggConfig([np.array([1, 2]), np.array([0, 2]), np.array([0, 1])], threshold=2, vector_length=1)


def test_a_second_message_from_one_sender_is_refused():
    config, _x, clients, server = _parties()
    adverts = [u.advertise_keys() for u in clients]
    with pytest.raises(ValueError, match=r"client 2 .*twice"):
        server.collect_keys([*adverts, adverts[2]])
    config, _x, clients, server = _parties()
    u2, deliveries = _until_shares(config, clients, server)
    masked = [u.masked_input(u2, deliveries[u.client_id]) for u in clients]
    forged = MaskedInput(1, np.zeros(config.vector_length, dtype=np.uint32))
    with pytest.raises(ValueError, match=r"client 1 .*twice"):
        server.collect_masked_inputs([*masked, forged])


def test_a_masked_input_of_the_wrong_length_is_refused():
    config, _x, clients, server = _parties()
    u2, deliveries = _until_shares(config, clients, server)
    masked = [u.masked_input(u2, deliveries[u.client_id]) for u in clients]
    masked[3] = MaskedInput(3, masked[3].vector[:-1])
    with pytest.raises(ValueError, match=r"vector_length.*d=5"):
        server.collect_masked_inputs(masked)


def test_a_client_refuses_an_unknown_random_state_string():
    config, x, _clients, _server = _parties()
    with pytest.raises(ValueError, match="'secrets'"):
        SecAggClient(0, x[0], config, random_state="secret")
