"""The admin surface (issue 11, §3): `/_synthgpt/` behind `--admin-token`, `--no-admin`, the `Host`
allow-list against DNS rebinding, and the warning for an open journal on a non-loopback address."""

from __future__ import annotations

from pathlib import Path

import httpx
import httpx2
import pytest

from synthgpt import MockGPT
from synthgpt.server import ServeConfig, create_app, create_app_from_config
from synthgpt.server.hosts import check_host_pattern, default_allowed_hosts, is_loopback, open_admin_warning
from synthgpt.testing import InProcessTransport2, LiveServer
from tests.conftest import StartServer

CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
REQUIRED = {
    "error": {
        "message": "The /_synthgpt/ routes need the admin token: send `Authorization: Bearer <token>`, the "
        "token given to `synthgpt serve --admin-token` (or SYNTHGPT_ADMIN_TOKEN).",
        "type": "authentication_error",
        "param": None,
        "code": "admin_token_required",
    }
}
WRONG = {
    "error": {
        "message": "The admin token is not valid for this server.",
        "type": "authentication_error",
        "param": None,
        "code": "invalid_admin_token",
    }
}


def _client(app: object, host: str = "localhost") -> httpx2.Client:
    return httpx2.Client(transport=InProcessTransport2(app), base_url=f"http://{host}")


def test_admin_routes_need_the_token() -> None:
    client = _client(create_app(MockGPT(), admin_token="s3cret-token"))
    assert client.post("/v1/chat/completions", json=CHAT).status_code == 200  # the APIs stay open
    assert client.get("/healthz").json() == {"status": "ok"}  # so does the health check
    for method in ("GET", "DELETE"):
        r = client.request(method, "/_synthgpt/calls")
        assert (r.status_code, r.json()) == (401, REQUIRED)
        assert r.headers["www-authenticate"] == 'Bearer realm="synthgpt admin"'
        for auth in (
            "Bearer s3cret-tokeN",
            "Bearer s3cret-token-longer",
            "Basic s3cret-token",
            "s3cret-token",
        ):
            r = client.request(method, "/_synthgpt/calls", headers={"authorization": auth})
            assert r.status_code == 401, auth
            assert r.json() == (WRONG if auth.startswith("Bearer") else REQUIRED)
    r = client.get("/_synthgpt/calls", headers={"authorization": "bearer s3cret-token"})
    assert r.status_code == 200 and len(r.json()) == 1
    r = client.delete("/_synthgpt/calls", headers={"authorization": "Bearer s3cret-token"})
    assert r.json() == {"deleted": 1}
    # any path under the prefix, known or not, is behind the token
    assert client.get("/_synthgpt/other").status_code == 401


def test_no_admin_removes_the_routes() -> None:
    client = _client(create_app(MockGPT(), admin=False))
    for method in ("GET", "DELETE"):
        r = client.request(method, "/_synthgpt/calls")
        assert r.status_code == 404
        assert r.json()["error"]["code"] == "unknown_url"
    assert client.get("/healthz").status_code == 200


def test_a_foreign_host_is_refused_when_bound_to_loopback() -> None:
    app = create_app_from_config(ServeConfig(host="127.0.0.1"))
    for host in ("localhost", "localhost:8000", "127.0.0.1:9", "[::1]:8000", "app.localhost"):
        r = _client(app, host).post("/v1/chat/completions", json=CHAT)
        assert r.status_code == 200, host
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", "localhost.evil.example"):
        client = _client(app, host)
        for r in (client.post("/v1/chat/completions", json=CHAT), client.get("/_synthgpt/calls")):
            assert (r.status_code, r.text) == (400, "Invalid host header"), host


def test_any_host_is_accepted_when_bound_elsewhere_unless_listed() -> None:
    assert (
        _client(create_app_from_config(ServeConfig(host="0.0.0.0")), "mock.internal")
        .get("/healthz")
        .status_code
        == 200
    )
    listed = create_app_from_config(ServeConfig(host="0.0.0.0", allowed_hosts=("mock.internal", "*.svc")))
    assert _client(listed, "mock.internal").get("/healthz").status_code == 200
    assert _client(listed, "synthgpt.ns.svc").get("/healthz").status_code == 200
    assert _client(listed, "localhost").get("/healthz").status_code == 400


@pytest.mark.parametrize(
    ("host", "expected"),
    [("127.0.0.1", ("localhost", "*.localhost", "127.0.0.1", "[::1]")),
     ("::1", ("localhost", "*.localhost", "127.0.0.1", "[::1]")),
     ("127.0.0.2", ("localhost", "*.localhost", "127.0.0.1", "[::1]", "127.0.0.2")),
     ("localhost", ("localhost", "*.localhost", "127.0.0.1", "[::1]")),
     ("0.0.0.0", ("*",)), ("::", ("*",)), ("192.168.1.5", ("*",)), ("mock.internal", ("*",))],
)  # fmt: skip
def test_default_allowed_hosts(host: str, expected: tuple[str, ...]) -> None:
    assert default_allowed_hosts(host) == expected
    assert is_loopback(host) is (expected != ("*",))


def test_host_patterns_are_checked() -> None:
    assert check_host_pattern("*.example.com") == "*.example.com"
    for bad in ("", "a*.example.com", "*example.com", "ex*ample"):
        with pytest.raises(ValueError, match="is not a host pattern"):
            check_host_pattern(bad)


def test_warning_only_for_an_open_journal_beyond_loopback() -> None:
    assert open_admin_warning("127.0.0.1", True, None) is None
    assert open_admin_warning("0.0.0.0", True, "t") is None
    assert open_admin_warning("0.0.0.0", False, None) is None
    assert open_admin_warning("0.0.0.0", True, None) == (
        "listening on 0.0.0.0 without --admin-token: anyone who can reach this port can read every journaled "
        "request and clear the journal (/_synthgpt/calls). Set --admin-token (or SYNTHGPT_ADMIN_TOKEN), or "
        "--no-admin to remove those routes."
    )


def test_live_server_and_transports_keep_working() -> None:
    with LiveServer(MockGPT()) as server:
        assert httpx.post(server.url + "/v1/chat/completions", json=CHAT).status_code == 200
        assert httpx.get(server.url + "/_synthgpt/calls").status_code == 200


def test_serve_reads_the_token_from_the_environment(start_server: StartServer) -> None:
    with start_server(env={"SYNTHGPT_ADMIN_TOKEN": "from-env"}) as url:
        assert httpx.get(url + "/_synthgpt/calls").json() == REQUIRED
        ok = httpx.get(url + "/_synthgpt/calls", headers={"authorization": "Bearer from-env"})
        assert ok.status_code == 200
        assert httpx.get(url + "/healthz", headers={"host": "rebound.example"}).status_code == 400


def test_serve_flags(start_server: StartServer, tmp_path: Path) -> None:
    log = tmp_path / "err.log"
    with start_server("--host", "0.0.0.0", "--no-admin", stderr=log) as url:
        assert httpx.get(url + "/_synthgpt/calls").status_code == 404
        assert httpx.get(url + "/healthz", headers={"host": "anything.example"}).status_code == 200
    assert "warning" not in log.read_text()  # --no-admin: nothing open to warn about
    with start_server("--host", "0.0.0.0", stderr=log) as url:
        assert httpx.get(url + "/_synthgpt/calls").status_code == 200
    assert log.read_text().startswith("synthgpt serve: warning: listening on 0.0.0.0 without --admin-token")


METRICS_REQUIRED = {
    "error": {
        "message": "GET /metrics needs the admin token: send `Authorization: Bearer <token>`, the token "
        "given to `synthgpt serve --admin-token` (or SYNTHGPT_ADMIN_TOKEN), or serve with --metrics-public.",
        "type": "authentication_error",
        "param": None,
        "code": "admin_token_required",
    }
}


def test_metrics_follow_the_admin_token() -> None:
    """`/metrics` labels name every model and rule clients used: behind the token like the journal."""
    client = _client(create_app_from_config(ServeConfig(admin_token="s3cret-token")))
    assert client.post("/v1/chat/completions", json=CHAT).status_code == 200
    r = client.get("/metrics")
    assert (r.status_code, r.json()) == (401, METRICS_REQUIRED)
    r = client.get("/metrics", headers={"authorization": "Bearer wrong"})
    assert (r.status_code, r.json()) == (401, WRONG)
    r = client.get("/metrics", headers={"authorization": "Bearer s3cret-token"})
    assert r.status_code == 200 and 'synthgpt_requests_total{api="chat"' in r.text


def test_metrics_public_leaves_only_metrics_open() -> None:
    client = _client(create_app_from_config(ServeConfig(admin_token="s3cret-token", metrics_public=True)))
    assert client.get("/metrics").status_code == 200
    assert client.get("/_synthgpt/calls").status_code == 401  # the journal stays closed
    open_server = _client(create_app_from_config(ServeConfig()))  # no token: everything open, as before
    assert open_server.get("/metrics").status_code == 200


def test_metrics_public_flag_and_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from synthgpt import cli

    seen: list[ServeConfig] = []
    monkeypatch.setattr("synthgpt.server.run.serve", lambda config: seen.append(config))
    assert cli.main(["serve", "--admin-token", "t", "--metrics-public"]) == 0
    monkeypatch.setenv("SYNTHGPT_METRICS_PUBLIC", "1")
    assert cli.main(["serve", "--admin-token", "t"]) == 0
    monkeypatch.setenv("SYNTHGPT_METRICS_PUBLIC", "0")
    assert cli.main(["serve", "--admin-token", "t"]) == 0
    assert [c.metrics_public for c in seen] == [True, True, False]
