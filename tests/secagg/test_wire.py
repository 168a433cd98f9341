"""The wire format of SecAgg(+) (fedlib/secagg/_wire.py, the to_bytes/from_bytes of fedlib/secagg/_secagg.py).

Every message and the configuration round-trip through bytes, exactly and canonically; a round in which every
message crosses as bytes and every client is rebuilt from its stored bytes before each stage gives the very sum,
messages and secrets of secure_aggregate; and bytes that are not exactly what the writer produces are refused with
WireFormatError, never with another exception or a silently wrong object.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fedlib._random import spawn_key_sources
from fedlib.exceptions import PrivacyViolationError, ProtocolStageError, SecAggAbort, WireFormatError
from fedlib.field import MERSENNE_521
from fedlib.secagg import (
    EncryptedShare,
    KeyAdvertisement,
    MaskedInput,
    MaskingGraph,
    SecAggClient,
    SecAggConfig,
    SecAggServer,
    Stage,
    UnmaskingResponse,
    harary_graph,
    secure_aggregate,
)
from fedlib.secagg._secagg import _SEALED_SHARE_BYTES, SHARE_BYTES
from fedlib.secagg._wire import MAGIC, VERSION

HEADER = len(MAGIC) + 2  # magic, version, tag
P = MERSENNE_521


# --------------------------------------------------------------------------------------------------- strategies
@st.composite
def configs(draw) -> SecAggConfig:
    """Any valid configuration: complete or Harary graph, either share-holder rule, any admissible threshold."""
    n = draw(st.integers(3, 14))
    degree = draw(st.integers(2, n - 1))
    if degree < n - 1 and degree % 2 and n % 2:
        degree -= 1
    graph = harary_graph(n, degree, random_state=draw(st.integers(0, 2**32 - 1)))
    share_holders = draw(st.sampled_from(["neighbors", "all"]))
    holders = n if share_holders == "all" else graph.degree + 1
    server_model = draw(st.sampled_from(["semi-honest", "malicious"]))
    lowest = 2 if server_model == "semi-honest" else max(2, holders // 2 + 1)  # t > h/2 against a malicious one
    return SecAggConfig(
        graph,
        threshold=draw(st.integers(lowest, holders)),
        vector_length=draw(st.integers(1, 40)),
        share_holders=share_holders,
        round_id=draw(st.integers(0, 2**32 - 1)),
        server_model=server_model,
        allow_partial_sums=draw(st.booleans()),
    )


shares = st.one_of(st.sampled_from([0, 1, 2**520, P - 1]), st.integers(0, P - 1))


@st.composite
def messages(draw):
    """A configuration and one message of each type that fits it (any keys, ciphertexts, vectors and shares)."""
    config = draw(configs())
    n = config.n_clients
    sender = draw(st.integers(0, n - 1))
    advert = KeyAdvertisement(
        sender, draw(st.binary(min_size=32, max_size=32)), draw(st.binary(min_size=32, max_size=32))
    )
    others = [j for j in config.holders(sender).tolist() if j != sender]
    share = EncryptedShare(
        sender,
        draw(st.sampled_from(others)),
        draw(st.binary(min_size=_SEALED_SHARE_BYTES, max_size=_SEALED_SHARE_BYTES)),
    )
    masked = MaskedInput(sender, draw(arrays(np.uint32, config.vector_length)))
    held = [j for j in range(n) if sender in config.holders(j)]  # the owners whose shares `sender` holds
    kinds = draw(st.lists(st.sampled_from(["key", "seed", None]), min_size=len(held), max_size=len(held)))
    response = UnmaskingResponse(
        sender,
        {j: draw(shares) for j, kind in zip(held, kinds, strict=True) if kind == "key"},
        {j: draw(shares) for j, kind in zip(held, kinds, strict=True) if kind == "seed"},
    )
    return config, [advert, share, masked, response]


def _same(a, b) -> bool:
    """Field-by-field equality (a MaskedInput holds an array, so dataclass == does not apply)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, MaskedInput):
        return a.sender == b.sender and a.vector.dtype == b.vector.dtype and np.array_equal(a.vector, b.vector)
    return a == b


OVERHEAD = {KeyAdvertisement: 10, EncryptedShare: 14, MaskedInput: 14, UnmaskingResponse: 18}


# ---------------------------------------------------------------------------------------------------- round trips
@given(configs())
def test_every_config_round_trips_exactly_and_canonically(config):
    data = config.to_bytes()
    back = SecAggConfig.from_bytes(data)
    assert back == config
    assert back.graph.allow_disconnected == config.graph.allow_disconnected
    assert all(np.array_equal(back.holders(i), config.holders(i)) for i in range(config.n_clients))
    assert back.to_bytes() == data
    assert SecAggConfig.from_bytes(bytearray(data)) == SecAggConfig.from_bytes(memoryview(data)) == config


def test_a_complete_graph_travels_as_its_size_and_a_sparse_one_as_its_lists():
    complete = SecAggConfig(MaskingGraph.complete(50), threshold=3, vector_length=4)
    sparse = SecAggConfig(harary_graph(50, 4, random_state=0), threshold=3, vector_length=4)
    assert len(complete.to_bytes()) == HEADER + 1 + 1 + 4 + 4 + 4 + 1 + 4 + 1 + 1
    assert len(sparse.to_bytes()) == len(complete.to_bytes()) + 50 * (4 + 4 * 4)
    odd = SecAggConfig(MaskingGraph(harary_graph(8, 3, shuffle=False).neighbors, allow_disconnected=True), 2, 1)
    assert SecAggConfig.from_bytes(odd.to_bytes()).graph.allow_disconnected


@given(messages())
def test_every_message_round_trips_exactly_and_canonically(case):
    config, originals = case
    for message in originals:
        data = message.to_bytes(config)
        back = type(message).from_bytes(data, config)
        assert _same(back, message), type(message).__name__
        assert back.to_bytes(config) == data
        assert len(data) == message.nbytes + OVERHEAD[type(message)]
    response = type(originals[3]).from_bytes(originals[3].to_bytes(config), config)
    for j, value in {**response.mask_key_shares, **response.self_mask_shares}.items():
        assert type(value) is int and type(j) is int  # GF(2^521 - 1) shares come back as the Python ints they were


def test_masked_input_vector_comes_back_as_a_writeable_native_uint32_array():
    config = SecAggConfig(MaskingGraph.complete(3), threshold=2, vector_length=3)
    vector = np.array([0, 1, 2**32 - 1], dtype=np.uint32)
    data = MaskedInput(1, vector).to_bytes(config)
    assert data[-12:] == vector.astype("<u4").tobytes()  # little-endian words, whatever the machine
    back = MaskedInput.from_bytes(data, config).vector
    assert back.dtype == np.uint32 and back.flags.writeable and back.tolist() == [0, 1, 2**32 - 1]


# --------------------------------------------------------------------------------- a whole round over the wire
def _round_over_the_wire(inputs, config, *, dropouts=None, late=(), random_state=0):
    """secure_aggregate's round with every message and every client state as bytes between two stages.

    The server keeps its Python object (a ServerApp runs a loop); each client is rebuilt from the bytes it stored
    at the end of its previous stage, and stores itself again, as a Flower ClientApp would with context.state. The
    clients know the configuration only from its bytes.
    """
    n = config.n_clients
    dropouts = {Stage[k.upper()]: set(v) for k, v in (dropouts or {}).items()}
    streams = spawn_key_sources(random_state, n)
    client_config = SecAggConfig.from_bytes(config.to_bytes())
    stored = {i: SecAggClient(i, inputs[i], client_config, random_state=streams[i]).to_bytes() for i in range(n)}
    server = SecAggServer(config)
    gone: set[int] = set()

    def speaking(stage):
        gone.update(dropouts.get(stage, ()))
        return [i for i in range(n) if i not in gone]

    def at_client(i, stage_action):
        client = SecAggClient.from_bytes(stored[i])
        out = stage_action(client)
        stored[i] = client.to_bytes()
        return out

    def cross(message_bytes, kind):
        return kind.from_bytes(message_bytes, config)

    wire = [at_client(i, lambda c: c.advertise_keys().to_bytes(client_config)) for i in speaking(Stage.ADVERTISE_KEYS)]
    bundles = server.collect_keys([cross(b, KeyAdvertisement) for b in wire])
    outboxes = {}
    for i in speaking(Stage.SHARE_KEYS):
        down = [a.to_bytes(config) for a in bundles[i].values()]

        def share(c, down=down):
            keys = {a.sender: a for a in (KeyAdvertisement.from_bytes(b, client_config) for b in down)}
            return [m.to_bytes(client_config) for m in c.share_keys(keys)]

        outboxes[i] = [cross(b, EncryptedShare) for b in at_client(i, share)]
    u2, deliveries = server.route_shares(outboxes)
    masked, late_inputs = [], []
    for i in speaking(Stage.MASKED_INPUT):
        down = [m.to_bytes(config) for m in deliveries[i]]

        def mask(c, down=down):
            received = [EncryptedShare.from_bytes(b, client_config) for b in down]
            return c.masked_input(sorted(u2), received).to_bytes(client_config)

        (late_inputs if i in late else masked).append(cross(at_client(i, mask), MaskedInput))
    u3 = server.collect_masked_inputs(masked)
    wire = [at_client(i, lambda c: c.unmask(sorted(u3)).to_bytes(client_config)) for i in speaking(Stage.UNMASKING)]
    total = server.unmask([cross(b, UnmaskingResponse) for b in wire])
    return total, server, {i: SecAggClient.from_bytes(b) for i, b in stored.items()}


ROUNDS = {
    "harary, 2 drop before masking": (SecAggConfig(harary_graph(9, 4, random_state=3), 3, 6), {"masked_input": [1, 5]}),
    "harary, shares among all": (
        SecAggConfig(harary_graph(8, 3, random_state=1), 4, 5, share_holders="all"),
        {"share_keys": [2], "masked_input": [6]},
    ),
    "complete, 2 drop before masking": (SecAggConfig(MaskingGraph.complete(7), 3, 4), {"masked_input": [0, 4]}),
    "complete, dropouts at every stage": (
        SecAggConfig(MaskingGraph.complete(8), 3, 4),
        {"advertise_keys": [7], "share_keys": [3], "masked_input": [0], "unmasking": [5]},
    ),
}


@pytest.mark.parametrize("name", list(ROUNDS))
def test_a_round_over_the_wire_equals_secure_aggregate(name):
    config, dropouts = ROUNDS[name]
    late = {4} if "harary" in name else set()  # its masked input arrives after the server asked for unmasking
    x = np.random.default_rng(7).integers(0, 2**32, size=(config.n_clients, config.vector_length), dtype=np.uint32)
    expected = secure_aggregate(x, config, dropouts=dropouts, late=late, random_state=11)
    total, server, clients = _round_over_the_wire(x, config, dropouts=dropouts, late=late, random_state=11)
    assert total.tolist() == expected.total.tolist()
    u3 = sorted(server.survivors[Stage.MASKED_INPUT])
    assert u3 == expected.summed_clients.tolist()
    assert not late & set(u3) and len(u3) < config.n_clients - 1
    assert total.tolist() == x[u3].sum(axis=0, dtype=np.uint32).tolist()
    assert server.survivors == expected.server.survivors
    # Same seed, same streams: the rebuilt clients drew the very keys, seeds and shares of the in-process round.
    for stage in (Stage.ADVERTISE_KEYS, Stage.SHARE_KEYS, Stage.UNMASKING):
        assert server.view[stage] == expected.server.view[stage]
    for ours, theirs in zip(server.view[Stage.MASKED_INPUT], expected.server.view[Stage.MASKED_INPUT], strict=True):
        assert _same(ours, theirs)
    assert server.rebuilt_seeds == expected.server.rebuilt_seeds
    assert server.rebuilt_mask_keys == expected.server.rebuilt_mask_keys
    for i, client in clients.items():
        assert client.stage == expected.clients[i].stage
        if client.stage >= Stage.UNMASKING:
            ours, theirs = client.corrupt(), expected.clients[i].corrupt()
            assert (ours.mask_private_key, ours.self_mask_seed) == (theirs.mask_private_key, theirs.self_mask_seed)
            assert ours.received_shares == theirs.received_shares


def test_a_round_over_the_wire_with_keys_from_the_operating_system():
    config = SecAggConfig(harary_graph(10, 4, random_state=0), threshold=3, vector_length=8)
    x = np.random.default_rng(1).integers(0, 2**32, size=(10, 8), dtype=np.uint32)
    total, _, _ = _round_over_the_wire(x, config, dropouts={"masked_input": [4]}, random_state="secrets")
    assert total.tolist() == np.delete(x, 4, axis=0).sum(axis=0, dtype=np.uint32).tolist()


# ------------------------------------------------------------------------------------------------ client state
def _clients_at_every_stage(random_state=5):
    """Client 0 of a six-client Harary round, saved after each stage (and its peers, to go on)."""
    config = SecAggConfig(harary_graph(6, 4, random_state=0), threshold=3, vector_length=5)
    x = np.arange(30, dtype=np.uint32).reshape(6, 5)
    clients = [SecAggClient(i, x[i], config, random_state=random_state + i) for i in range(6)]
    server = SecAggServer(config)
    saved = {Stage.ADVERTISE_KEYS: clients[0].to_bytes()}
    bundles = server.collect_keys([c.advertise_keys() for c in clients])
    saved[Stage.SHARE_KEYS] = clients[0].to_bytes()
    u2, deliveries = server.route_shares({c.client_id: c.share_keys(bundles[c.client_id]) for c in clients})
    saved[Stage.MASKED_INPUT] = clients[0].to_bytes()
    u3 = server.collect_masked_inputs([c.masked_input(u2, deliveries[c.client_id]) for c in clients])
    saved[Stage.UNMASKING] = clients[0].to_bytes()
    clients[0].unmask(u3)
    saved[Stage.DONE] = clients[0].to_bytes()
    return config, saved, bundles, u2, deliveries, u3


def _original_at(stage, config, bundles, u2, deliveries, u3) -> SecAggClient:
    """Client 0 of :func:`_clients_at_every_stage` driven up to ``stage`` with the same messages, never serialized."""
    client = SecAggClient(0, np.arange(5, dtype=np.uint32), config, random_state=5)
    steps = (
        client.advertise_keys,
        lambda: client.share_keys(bundles[0]),
        lambda: client.masked_input(u2, deliveries[0]),
        lambda: client.unmask(u3),
    )
    for step in steps[: int(stage)]:
        step()
    return client


def _answer(client, k, bundles, u2, deliveries, u3):
    """Message ``k`` (that of stage k; 4: an unmasking request naming a client that sent no shares), answered."""
    calls = (
        client.advertise_keys,
        lambda: client.share_keys(bundles[0]),
        lambda: client.masked_input(u2, deliveries[0]),
        lambda: client.unmask(u3),
        lambda: client.unmask(set(u3) | {99}),
    )
    try:
        result = calls[k]()
    except (ProtocolStageError, PrivacyViolationError, SecAggAbort) as error:
        return type(error).__name__, str(error)
    sent = result if isinstance(result, list) else [result]
    return "ok", [m.to_bytes(client.config) for m in sent]


@pytest.mark.parametrize("stage", list(Stage), ids=lambda s: s.name)
def test_a_restored_client_answers_every_message_as_the_original_does(stage):
    config, saved, bundles, u2, deliveries, u3 = _clients_at_every_stage()
    args = (bundles, u2, deliveries, u3)
    assert _original_at(stage, config, *args).to_bytes() == saved[stage]
    restored = SecAggClient.from_bytes(saved[stage])
    assert restored.stage == stage and restored.to_bytes() == saved[stage]
    for k in range(5):  # each message on a fresh pair, so that an accepted one moves neither along
        original, restored = _original_at(stage, config, *args), SecAggClient.from_bytes(saved[stage])
        answer = _answer(restored, k, *args)
        assert answer == _answer(original, k, *args)
        if k == int(stage) < Stage.DONE:
            assert answer[0] == "ok"
        elif k == 4 and stage == Stage.UNMASKING:
            assert answer[0] == "PrivacyViolationError" and "never sent shares" in answer[1]
        else:
            assert answer[0] == "ProtocolStageError" and f"is at stage {stage.name}" in answer[1]


def test_a_restored_client_continues_the_seeded_stream_and_matches_the_original_at_each_stage():
    config, _, bundles, u2, deliveries, u3 = _clients_at_every_stage()
    original = SecAggClient(0, np.arange(5, dtype=np.uint32), config, random_state=5)
    restored = SecAggClient.from_bytes(original.to_bytes())
    assert original.advertise_keys() == restored.advertise_keys()
    restored = SecAggClient.from_bytes(restored.to_bytes())
    assert original.share_keys(bundles[0]) == restored.share_keys(bundles[0])
    restored = SecAggClient.from_bytes(restored.to_bytes())
    assert _same(original.masked_input(u2, deliveries[0]), restored.masked_input(u2, deliveries[0]))
    restored = SecAggClient.from_bytes(restored.to_bytes())
    assert original.unmask(u3) == restored.unmask(u3)
    assert original.to_bytes() == restored.to_bytes()


def test_a_secrets_client_is_restored_as_a_secrets_client():
    config = SecAggConfig(MaskingGraph.complete(3), threshold=2, vector_length=2)
    client = SecAggClient(1, np.zeros(2, dtype=np.uint32), config)
    restored = SecAggClient.from_bytes(client.to_bytes())
    assert restored._random_state == "secrets"
    assert restored.advertise_keys() != SecAggClient.from_bytes(client.to_bytes()).advertise_keys()


def test_a_client_on_another_bit_generator_cannot_be_saved():
    config = SecAggConfig(MaskingGraph.complete(3), threshold=2, vector_length=2)
    client = SecAggClient(
        0, np.zeros(2, dtype=np.uint32), config, random_state=np.random.Generator(np.random.Philox(0))
    )
    with pytest.raises(ValueError, match="PCG64"):
        client.to_bytes()


def test_the_state_holds_the_private_material_the_messages_do_not():
    _, saved, *_ = _clients_at_every_stage()
    view = SecAggClient.from_bytes(saved[Stage.DONE]).corrupt()
    state = saved[Stage.DONE]
    assert view.mask_private_key in state and view.self_mask_seed in state
    assert view.vector.astype("<u4").tobytes() in state


# -------------------------------------------------------------------------------------------- malformed bytes
def _encodings():
    """(name, bytes, parser) for one encoding of every kind: the config, the four messages, the state at each stage."""
    config, saved, bundles, u2, deliveries, u3 = _clients_at_every_stage()
    client = SecAggClient.from_bytes(saved[Stage.UNMASKING])
    out = [("config", config.to_bytes(), SecAggConfig.from_bytes)]
    messages = [
        bundles[0][1],
        deliveries[0][0],
        SecAggClient.from_bytes(saved[Stage.MASKED_INPUT]).masked_input(u2, deliveries[0]),
        client.unmask(u3),
    ]
    for message in messages:
        kind = type(message)
        out.append((kind.__name__, message.to_bytes(config), lambda b, kind=kind: kind.from_bytes(b, config)))
    for stage, data in saved.items():
        out.append((f"state at {stage.name}", data, SecAggClient.from_bytes))
    return out


ENCODINGS = _encodings()


@pytest.mark.parametrize("index", range(len(ENCODINGS)), ids=[e[0] for e in ENCODINGS])
def test_every_truncation_and_any_trailing_byte_is_refused(index):
    _, data, parse = ENCODINGS[index]
    parse(data)
    for cut in range(len(data)):
        with pytest.raises(WireFormatError):
            parse(data[:cut])
    with pytest.raises(WireFormatError, match="follow the end"):
        parse(data + b"\x00")


@pytest.mark.parametrize("index", range(len(ENCODINGS)), ids=[e[0] for e in ENCODINGS])
def test_a_wrong_magic_version_or_tag_is_refused(index):
    _, data, parse = ENCODINGS[index]
    with pytest.raises(WireFormatError, match="FLSA"):
        parse(b"XLSA" + data[4:])
    with pytest.raises(WireFormatError, match=f"version {VERSION + 1} is not supported"):
        parse(data[:4] + bytes([VERSION + 1]) + data[5:])
    for tag in (0, 7, 255, *(t for t in range(1, 7) if t != data[5])):
        with pytest.raises(WireFormatError, match="expected a"):
            parse(data[:5] + bytes([tag]) + data[6:])
    with pytest.raises(TypeError, match="must be bytes"):
        parse(data.hex())


@given(st.data())
def test_damaged_bytes_are_refused_or_decode_to_exactly_what_they_encode(data):
    """Random byte edits: WireFormatError, or an object whose encoding is those very bytes (never anything else)."""
    name, original, parse = data.draw(st.sampled_from(ENCODINGS))
    damaged = bytearray(original)
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(damaged) - 1))
        edit = data.draw(st.sampled_from(["flip", "insert", "delete"]))
        if edit == "flip":
            damaged[at] ^= data.draw(st.integers(1, 255))
        elif edit == "insert":
            damaged.insert(at, data.draw(st.integers(0, 255)))
        else:
            del damaged[at]
    config = SecAggConfig.from_bytes(ENCODINGS[0][1])
    try:
        back = parse(bytes(damaged))
    except WireFormatError:
        return
    again = back.to_bytes(config) if isinstance(back, KeyAdvertisement | EncryptedShare | MaskedInput |
                                                  UnmaskingResponse) else back.to_bytes()  # fmt: skip
    assert again == bytes(damaged), name


def _patched(data: bytes, at: int, value: bytes) -> bytes:
    return data[:at] + value + data[at + len(value) :]


def test_out_of_range_ids_wrong_lengths_and_non_field_shares_are_refused():
    config = SecAggConfig(harary_graph(8, 2, random_state=0), threshold=2, vector_length=4)
    sender_at = HEADER + 4  # after the round id
    advert = KeyAdvertisement(3, bytes(32), bytes(32)).to_bytes(config)
    with pytest.raises(WireFormatError, match=r"sender is 8, outside \[0, 8\)"):
        KeyAdvertisement.from_bytes(_patched(advert, sender_at, (8).to_bytes(4, "little")), config)
    with pytest.raises(WireFormatError, match="round_id=0 arrived in round round_id=1"):
        KeyAdvertisement.from_bytes(advert, SecAggConfig(config.graph, 2, 4, round_id=1))
    # A vector of another length than d, a count that promises more words than there are.
    masked = MaskedInput(3, np.arange(5, dtype=np.uint32)).to_bytes(SecAggConfig(config.graph, 2, 5))
    with pytest.raises(WireFormatError, match="5 words; vector_length is d=4"):
        MaskedInput.from_bytes(masked, config)
    with pytest.raises(WireFormatError, match="truncated"):
        MaskedInput.from_bytes(_patched(masked, sender_at + 4, (2**32 - 1).to_bytes(4, "little")), config)
    # A share addressed to a client that holds none of the sender's shares, or of the wrong length.
    far = next(j for j in range(8) if j not in config.holders(3))
    with pytest.raises(WireFormatError, match="another holder"):
        EncryptedShare.from_bytes(EncryptedShare(3, far, bytes(_SEALED_SHARE_BYTES)).to_bytes(config), config)
    near = int(config.graph.neighbors[3][0])
    with pytest.raises(WireFormatError, match=f"exactly {_SEALED_SHARE_BYTES}"):
        EncryptedShare.from_bytes(EncryptedShare(3, near, bytes(_SEALED_SHARE_BYTES - 1)).to_bytes(config), config)
    # Shares at or above the prime, owners out of order, repeated, in both lists or not held by the sender.
    holder_of = [j for j in range(8) if 3 in config.holders(j)]
    response = UnmaskingResponse(3, {}, {holder_of[0]: P - 1}).to_bytes(config)
    share_at = len(response) - SHARE_BYTES
    for value in (P, 2 ** (8 * SHARE_BYTES) - 1):
        with pytest.raises(WireFormatError, match="GF"):
            UnmaskingResponse.from_bytes(_patched(response, share_at, value.to_bytes(SHARE_BYTES, "little")), config)
    both = UnmaskingResponse(3, {holder_of[0]: 1}, {holder_of[0]: 2}).to_bytes(config)
    with pytest.raises(WireFormatError, match="one of the two per peer"):
        UnmaskingResponse.from_bytes(both, config)
    unheld = UnmaskingResponse(3, {far: 1}, {}).to_bytes(config)
    with pytest.raises(WireFormatError, match="does not hold"):
        UnmaskingResponse.from_bytes(unheld, config)
    ordered = UnmaskingResponse(3, {}, {holder_of[0]: 1, holder_of[1]: 2}).to_bytes(config)
    first = HEADER + 4 + 4 + 4 + 4  # round, sender, empty key list, seed count
    swapped = _patched(ordered, first, holder_of[1].to_bytes(4, "little"))
    swapped = _patched(swapped, first + 4 + SHARE_BYTES, holder_of[0].to_bytes(4, "little"))
    with pytest.raises(WireFormatError, match="strictly increasing"):
        UnmaskingResponse.from_bytes(swapped, config)
    repeated = _patched(ordered, first + 4 + SHARE_BYTES, holder_of[0].to_bytes(4, "little"))
    with pytest.raises(WireFormatError, match="strictly increasing"):
        UnmaskingResponse.from_bytes(repeated, config)
    with pytest.raises(WireFormatError, match="at most 8 are possible"):
        UnmaskingResponse.from_bytes(_patched(ordered, first - 4, (9).to_bytes(4, "little")), config)


def test_the_writer_refuses_what_the_reader_would_refuse():
    config = SecAggConfig(MaskingGraph.complete(4), threshold=2, vector_length=3)
    with pytest.raises(ValueError, match=r"sender must be a client id in \[0, 4\)"):
        KeyAdvertisement(4, bytes(32), bytes(32)).to_bytes(config)
    with pytest.raises(ValueError, match="32 bytes"):
        KeyAdvertisement(0, bytes(31), bytes(32)).to_bytes(config)
    with pytest.raises(ValueError, match="vector_length d=3"):
        MaskedInput(0, np.zeros(4, dtype=np.uint32)).to_bytes(config)
    with pytest.raises(ValueError, match="uint32"):
        MaskedInput(0, np.zeros(3, dtype=np.int64)).to_bytes(config)
    with pytest.raises(ValueError, match="GF"):
        UnmaskingResponse(0, {1: P}, {}).to_bytes(config)
    with pytest.raises(ValueError, match="GF"):
        UnmaskingResponse(0, {1: -1}, {}).to_bytes(config)
    with pytest.raises(TypeError, match="SecAggConfig"):
        KeyAdvertisement(0, bytes(32), bytes(32)).to_bytes(config.to_bytes())
    with pytest.raises(TypeError, match="SecAggConfig"):
        KeyAdvertisement.from_bytes(KeyAdvertisement(0, bytes(32), bytes(32)).to_bytes(config), None)


def test_configs_that_are_not_valid_or_not_canonical_are_refused(monkeypatch):
    complete = SecAggConfig(MaskingGraph.complete(5), threshold=2, vector_length=3).to_bytes()
    n_at = HEADER + 2
    with pytest.raises(WireFormatError, match="1 to 4096"):
        SecAggConfig.from_bytes(_patched(complete, n_at, (2**32 - 1).to_bytes(4, "little")))
    with pytest.raises(WireFormatError, match="threshold t=6 exceeds"):  # t above the 5 holders
        SecAggConfig.from_bytes(_patched(complete, n_at + 4, (6).to_bytes(4, "little")))
    with pytest.raises(WireFormatError, match="share_holders"):
        SecAggConfig.from_bytes(_patched(complete, n_at + 12, b"\x02"))
    # A complete graph written as neighbour lists decodes to the same config, but is not its encoding.
    lists = bytearray(complete[:HEADER])
    lists += b"\x00\x00" + (5).to_bytes(4, "little")
    for i in range(5):
        lists += (4).to_bytes(4, "little") + np.delete(np.arange(5), i).astype("<u4").tobytes()
    lists += complete[n_at + 4 :]
    with pytest.raises(WireFormatError, match="by its size"):
        SecAggConfig.from_bytes(bytes(lists))
    # An asymmetric graph.
    ring = SecAggConfig(harary_graph(6, 2, shuffle=False), threshold=2, vector_length=3).to_bytes()
    first = HEADER + 2 + 4 + 4  # client 0's first neighbour (1)
    with pytest.raises(WireFormatError, match="undirected"):
        SecAggConfig.from_bytes(_patched(ring, first, (2).to_bytes(4, "little")))
    monkeypatch.setattr("fedlib.secagg._secagg._MAX_COMPLETE_CLIENTS", 4)
    with pytest.raises(ValueError, match="at most 4 clients"):
        SecAggConfig(MaskingGraph.complete(5), threshold=2, vector_length=3).to_bytes()


def test_a_damaged_state_is_refused():
    config, saved, *_ = _clients_at_every_stage()
    data = saved[Stage.DONE]
    config_bytes = len(config.to_bytes()) - HEADER
    stage_at = HEADER + config_bytes + 4
    with pytest.raises(WireFormatError, match="stage is 5"):
        SecAggClient.from_bytes(_patched(data, stage_at, b"\x05"))
    with pytest.raises(WireFormatError, match=r"client_id is 6, outside \[0, 6\)"):
        SecAggClient.from_bytes(_patched(data, stage_at - 4, (6).to_bytes(4, "little")))
    with pytest.raises(WireFormatError, match="words; vector_length is d=5"):
        SecAggClient.from_bytes(_patched(data, stage_at + 1, (4).to_bytes(4, "little")))
    source_at = stage_at + 1 + 4 + 4 * 5
    with pytest.raises(WireFormatError, match="source of randomness is 2"):
        SecAggClient.from_bytes(_patched(data, source_at, b"\x02"))
