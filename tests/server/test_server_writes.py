"""`server.writes.BatchedWrites`: a connection's writes held until the loop's next pass, then made as one."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import httpx
import pytest

from synthgpt.codec.sse import WirePlan, Write
from synthgpt.server.pacing import PacedStream
from synthgpt.server.writes import BATCH_CONNECTIONS, FLUSH_BYTES, SCOPE_KEY, BatchedWrites
from tests.conftest import StartServer


class FakeTransport:
    def __init__(self, fail: bool = False) -> None:
        self.writes: list[bytes] = []
        self.closed = False
        self.aborted = False
        self.fail = fail
        self.extra = {"peername": ("127.0.0.1", 5)}

    def write(self, data: bytes) -> None:
        if self.fail:
            raise RuntimeError("handle closed")
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.extra.get(name, default)

    def can_write_eof(self) -> bool:
        return True


async def _next_pass() -> None:
    await asyncio.sleep(0)
    await asyncio.sleep(0)


def test_writes_of_one_pass_go_out_as_one_write_at_the_next_pass() -> None:
    async def main() -> None:
        real = FakeTransport()
        conn = BatchedWrites(real, asyncio.get_running_loop())  # type: ignore[arg-type]
        conn.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
        conn.write(bytearray(b"ok"))
        conn.write(b"")
        assert real.writes == []
        await _next_pass()
        assert real.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"]
        conn.write(b"next")
        await _next_pass()
        assert real.writes[1:] == [b"next"]

    asyncio.run(main())


def test_every_connection_of_a_loop_is_written_in_the_same_pass() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        reals = [FakeTransport() for _ in range(3)]
        conns = [BatchedWrites(r, loop) for r in reals]  # type: ignore[arg-type]
        for i, c in enumerate(conns):
            c.write(b"a%d" % i)
        conns[0].write(b"b0")
        await _next_pass()
        assert [r.writes for r in reals] == [[b"a0b0"], [b"a1"], [b"a2"]]

    asyncio.run(main())


def test_a_full_batch_of_connections_writes_at_once_and_the_next_waits_for_the_pass() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        reals = [FakeTransport() for _ in range(BATCH_CONNECTIONS + 2)]
        conns = [BatchedWrites(r, loop) for r in reals]  # type: ignore[arg-type]
        for c in conns[:BATCH_CONNECTIONS]:
            c.write(b"frame")
        assert all(r.writes == [] for r in reals)
        conns[0].write(b"+")  # one that already waits: no new connection in the batch
        assert reals[0].writes == []
        conns[BATCH_CONNECTIONS].write(b"late")  # the batch is full: it goes out, this one waits
        assert [r.writes for r in reals[:BATCH_CONNECTIONS]] == [[b"frame+"]] + [[b"frame"]] * (
            BATCH_CONNECTIONS - 1
        )
        assert reals[BATCH_CONNECTIONS].writes == []
        conns[BATCH_CONNECTIONS + 1].write(b"later")
        await _next_pass()
        assert reals[BATCH_CONNECTIONS].writes == [b"late"] and reals[-1].writes == [b"later"]
        assert all(len(r.writes) == 1 for r in reals)

    asyncio.run(main())


def test_a_large_write_goes_out_at_once_after_what_was_held() -> None:
    async def main() -> None:
        real = FakeTransport()
        conn = BatchedWrites(real, asyncio.get_running_loop())  # type: ignore[arg-type]
        big = b"x" * FLUSH_BYTES
        conn.write(big)  # nothing held: written now
        assert real.writes == [big]
        conn.write(b"head")
        conn.write(big)  # held bytes reach the bound: the head and the body together, now
        assert real.writes[1:] == [b"head" + big]
        await _next_pass()
        assert len(real.writes) == 2

    asyncio.run(main())


def test_close_writes_what_is_held_first_and_later_writes_are_dropped() -> None:
    async def main() -> None:
        real = FakeTransport()
        conn = BatchedWrites(real, asyncio.get_running_loop())  # type: ignore[arg-type]
        conn.write(b"HTTP/1.1 408 Request Timeout\r\n\r\n")
        conn.close()
        assert real.writes == [b"HTTP/1.1 408 Request Timeout\r\n\r\n"] and real.closed
        conn.write(b"late")
        await _next_pass()
        assert real.writes == [b"HTTP/1.1 408 Request Timeout\r\n\r\n"]

    asyncio.run(main())


def test_a_connection_that_cannot_be_written_does_not_keep_the_others_answers() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        broken, fine = FakeTransport(fail=True), FakeTransport()
        for real in (broken, fine):
            BatchedWrites(real, loop).write(b"answer")  # type: ignore[arg-type]
        await _next_pass()
        assert broken.aborted and fine.writes == [b"answer"]

    asyncio.run(main())


def test_the_rest_of_the_transport_is_the_wrapped_one() -> None:
    real = FakeTransport()
    loop = asyncio.new_event_loop()
    try:
        conn = BatchedWrites(real, loop)  # type: ignore[arg-type]
        assert conn.get_extra_info("peername") == ("127.0.0.1", 5)
        assert conn.get_extra_info("sockname", "none") == "none"
        assert conn.can_write_eof() is True
        assert conn.is_closing() is False
    finally:
        loop.close()


@pytest.mark.parametrize("requests", [1, 3])
def test_a_served_answer_comes_whole_on_a_kept_alive_connection(
    start_server: StartServer, requests: int
) -> None:
    # Pipelined requests in one write: each answer whole, in order, on the same connection.
    body = b'{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}'
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    with start_server() as url:
        expected = httpx.post(url + "/v1/chat/completions", content=body,
                              headers={"content-type": "application/json"}).content  # fmt: skip
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(request * requests)
            sock.settimeout(10.0)
            data = b""
            while data.count(expected) < requests:
                chunk = sock.recv(65536)
                assert chunk, data
                data += chunk
        answers = data.split(b"HTTP/1.1 200 OK\r\n")[1:]
        assert len(answers) == requests
        assert all(a.endswith(b"\r\n\r\n" + expected) for a in answers)


def test_a_connection_told_to_write_at_once_writes_what_it_held_then_each_write() -> None:
    async def main() -> None:
        real = FakeTransport()
        conn = BatchedWrites(real, asyncio.get_running_loop())  # type: ignore[arg-type]
        conn.write(b"head")
        conn.immediate = True
        conn.write(b"frame1")
        conn.write(b"")
        conn.write(b"frame2")
        assert real.writes == [b"head", b"frame1", b"frame2"]  # what was held first, then each as it comes
        conn.immediate = False
        conn.write(b"next")
        assert real.writes[3:] == []
        await _next_pass()
        assert real.writes[3:] == [b"next"]

    asyncio.run(main())


def test_a_paced_stream_writes_at_once_while_it_runs_and_batched_after() -> None:
    async def main() -> None:
        real = FakeTransport()
        conn = BatchedWrites(real, asyncio.get_running_loop())  # type: ignore[arg-type]
        seen: list[bool] = []

        async def send(message: dict[str, Any]) -> None:
            seen.append(conn.immediate)
            conn.write(message.get("body", b"h"))

        async def receive() -> dict[str, Any]:
            await asyncio.sleep(10)
            return {"type": "http.disconnect"}

        wire = WirePlan((Write(b"one", 0.0), Write(b"two", 1.0)), frames=())
        await PacedStream(wire)({"type": "http", SCOPE_KEY: conn}, receive, send)
        assert seen and all(seen)  # every frame, the head and the end too
        assert real.writes == [b"h", b"one", b"two"]  # each at once (the empty end writes nothing)
        assert conn.immediate is False

    asyncio.run(main())
