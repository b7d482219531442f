"""Protocol v1 framing and validation, and the two sockets on a random loopback port."""
from __future__ import annotations

import time

import msgpack
import pytest

from arena.match.protocol import (
    HELLO_MAX_BYTES,
    MAX_MESSAGE_BYTES,
    MAX_NESTING_DEPTH,
    PROTOCOL_VERSION,
    BotClient,
    ProtocolError,
    RefereeEndpoint,
    decode_bot_message,
    decode_referee_message,
    encode,
    nesting_depth_over,
)

HELLO = {"type": "hello", "token": "t0k", "name": "me", "protocol": 1}
MOVE = {"type": "move", "game_id": "m-g0", "ply": 3, "move": "4C", "info": {"depth": 2}}
REFEREE_MESSAGES = [
    {"type": "new_game", "game_id": "m-g0", "game": "domineering", "params": {"rows": 8}, "seat": 0,
     "opponent": "random", "seed": 7, "protocol": 1,
     "time": {"control": "per_move", "per_move_s": 1.0, "base_s": 0.0, "increment_s": 0.0, "margin_s": 0.05}},
    {"type": "turn", "game_id": "m-g0", "ply": 0, "state": {"game": "domineering"}, "moves": [],
     "legal": ["1A"], "time_left_s": 0.5},
    {"type": "game_over", "game_id": "m-g0", "winner": None, "scores": None, "reason": "timeout"},
    {"type": "game_over", "game_id": "m-g0", "winner": 1, "scores": [3, 4], "reason": "board full"},
    {"type": "bye"},
]


@pytest.mark.parametrize("message", [HELLO, MOVE, {k: v for k, v in MOVE.items() if k != "info"}])
def test_bot_messages_round_trip(message):
    assert decode_bot_message(encode(message)) == message


@pytest.mark.parametrize("message", REFEREE_MESSAGES)
def test_referee_messages_round_trip(message):
    assert decode_referee_message(encode(message)) == message


def test_strings_travel_as_msgpack_str_not_bin():
    assert msgpack.unpackb(encode({"type": "bye"}), raw=True) == {b"type": b"bye"}


@pytest.mark.parametrize(
    "frame, expected",
    [
        (b"\xc1\xc1 not msgpack", "not a msgpack message"),
        (b"", "not a msgpack message"),
        (msgpack.packb(HELLO) + b"\x00", "not a msgpack message"),  # trailing bytes
        (b"\x91" * 5000 + b"\xc0", "not a msgpack message"),  # nesting bomb
        (msgpack.packb([1, 2]), "must be a msgpack map"),
        (msgpack.packb("hello"), "must be a msgpack map"),
        (msgpack.packb({1: 2}), "not a msgpack message"),  # non-string key
        (msgpack.packb({"token": "x"}), "needs a string 'type'"),
        (msgpack.packb({"type": 5}), "needs a string 'type'"),
        (msgpack.packb({"type": "turn"}), "unknown message type 'turn'"),
        (msgpack.packb({"type": "move", "game_id": "g", "ply": 1}), "'move' message without 'move'"),
        (msgpack.packb({**MOVE, "ply": "3"}), "'ply' must be int"),
        (msgpack.packb({**MOVE, "ply": True}), "'ply' must be int"),
        (msgpack.packb({**MOVE, "ply": 2.0}), "'ply' must be int"),
        (msgpack.packb({**MOVE, "move": 44}), "'move' must be str"),
        (msgpack.packb({**MOVE, "move": b"4C"}, use_bin_type=True), "'move' must be str"),
        (msgpack.packb({**MOVE, "info": [1]}), "'info' must be dict"),
        (msgpack.packb({**HELLO, "protocol": "1"}), "'protocol' must be int"),
        (msgpack.packb({k: v for k, v in HELLO.items() if k != "token"}), "without 'token'"),
    ],
)
def test_malformed_bot_frames_raise_protocol_error_saying_why(frame, expected):
    with pytest.raises(ProtocolError, match=expected):
        decode_bot_message(frame)


def test_extra_fields_are_allowed_for_forward_compatibility():
    assert decode_bot_message(encode({**MOVE, "future": [1, 2]}))["move"] == "4C"


def test_unencodable_message_is_a_protocol_error():
    with pytest.raises(ProtocolError, match="cannot encode 'move'"):
        encode({"type": "move", "info": {"x": object()}})
    assert decode_bot_message(encode(HELLO)) == HELLO  # the packer recovered


def test_referee_side_rejects_bot_message_types():
    with pytest.raises(ProtocolError, match="unknown message type 'hello'"):
        decode_referee_message(encode(HELLO))


def test_sockets_exchange_messages_both_ways():
    with RefereeEndpoint() as endpoint, BotClient(endpoint.endpoint) as client:
        assert endpoint.endpoint.startswith("tcp://127.0.0.1:")
        client.send(HELLO)
        identity, frame = endpoint.receive(5.0)
        assert decode_bot_message(frame) == HELLO
        endpoint.send(identity, {"type": "bye"})
        assert client.receive(5.0) == {"type": "bye"}
        assert PROTOCOL_VERSION == 1


def test_receive_waits_no_longer_than_the_timeout():
    with RefereeEndpoint() as endpoint, BotClient(endpoint.endpoint) as client:
        start = time.monotonic()
        assert endpoint.receive(0.1) is None
        assert 0.09 <= time.monotonic() - start < 0.5
        start = time.monotonic()
        assert client.receive(0.1) is None
        assert 0.09 <= time.monotonic() - start < 0.5


def test_multi_frame_message_comes_out_without_a_frame():
    with RefereeEndpoint() as endpoint, BotClient(endpoint.endpoint) as client:
        client._socket.send_multipart([encode(HELLO), b"second"])
        identity, frame = endpoint.receive(5.0)
        assert frame is None


def test_oversize_message_is_never_delivered():
    with RefereeEndpoint() as endpoint, BotClient(endpoint.endpoint) as client:
        client.send(HELLO)
        assert endpoint.receive(5.0) is not None
        client.send_raw(b"\x00" * (MAX_MESSAGE_BYTES + 1))
        got = endpoint.receive(0.5)
        assert got is None or len(got[1] or b"") <= MAX_MESSAGE_BYTES


def test_a_connection_is_heard_only_if_its_first_frame_is_a_small_message_until_it_is_bound():
    with RefereeEndpoint() as endpoint, BotClient(endpoint.endpoint) as big, \
            BotClient(endpoint.endpoint) as small:
        big.send_raw(b"\x00" * (HELLO_MAX_BYTES + 1))  # too big for a first frame: never heard again
        big.send(HELLO)
        assert endpoint.receive(0.5) is None
        small.send(HELLO)
        identity, frame = endpoint.receive(5.0)
        assert decode_bot_message(frame) == HELLO
        small.send(HELLO)  # a second frame before the referee bound it: dropped unread
        assert endpoint.receive(0.5) is None
        assert endpoint.unbound_dropped == 3
        endpoint.bind(identity)
        small.send_raw(b"\x00" * (HELLO_MAX_BYTES + 1))  # bound: every frame up to the limit
        assert endpoint.receive(5.0) == (identity, b"\x00" * (HELLO_MAX_BYTES + 1))
        endpoint.unbind(identity)
        small.send(HELLO)
        assert endpoint.receive(0.5) is None and endpoint.unbound_dropped == 4


def test_private_sockets_tag_their_identities_admit_a_hello_and_are_closed_for_good(tmp_path):
    with RefereeEndpoint() as endpoint:
        first = endpoint.bind_private(str(tmp_path / "a.sock"))
        second = endpoint.bind_private(str(tmp_path / "b.sock"))
        assert (first, second) == (1, 2) and endpoint.private_channels == 2
        with BotClient(f"ipc://{tmp_path / 'b.sock'}") as client:
            client.send(HELLO)
            identity, frame = endpoint.receive(5.0)
            assert endpoint.channel_of(identity) == second and decode_bot_message(frame) == HELLO
            client.send(HELLO)  # main's rule holds on a private socket too: unbound, dropped
            assert endpoint.receive(0.5) is None and endpoint.unbound_dropped == 1
            endpoint.bind(identity)
            endpoint.send(identity, {"type": "bye"})
            assert client.receive(5.0) == {"type": "bye"}
            endpoint.unbind_private(second)  # its process was stopped: the socket goes
            assert endpoint.private_channels == 1 and identity not in endpoint._bound
            client.send(HELLO)
            assert endpoint.receive(0.5) is None
            endpoint.send(identity, {"type": "bye"})  # to a closed channel: nothing, no error
        assert endpoint.bind_private(str(tmp_path / "c.sock")) == second  # its number is free again
        endpoint.unbind_private(second)
        endpoint.unbind_private(second)  # twice, or an unknown channel: nothing
        endpoint.unbind_private(0)  # never the TCP socket
        with BotClient(endpoint.endpoint) as tcp:
            tcp.send(HELLO)
            identity, _ = endpoint.receive(5.0)
            assert endpoint.channel_of(identity) == 0


def test_nesting_is_measured_without_recursion():
    deep: dict = {}
    for _ in range(100_000):  # far deeper than any recursive walk could go
        deep = {"a": [deep]}
    assert nesting_depth_over(deep, MAX_NESTING_DEPTH)
    assert not nesting_depth_over({"a": [1, {"b": []}]}, 4) and nesting_depth_over({"a": [1, {"b": []}]}, 3)
    assert not nesting_depth_over("scalar", 0)
    nested: list = []
    for _ in range(MAX_NESTING_DEPTH - 2):
        nested = [nested]
    assert decode_bot_message(encode({**HELLO, "extra": nested}))["extra"] == nested  # 32 levels
    frame = encode({**HELLO, "extra": [nested]})  # 33
    with pytest.raises(ProtocolError, match="nested deeper than 32 levels"):
        decode_bot_message(frame)
