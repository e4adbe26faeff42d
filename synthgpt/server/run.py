"""Running the app under uvicorn: configuration, engine construction, one or several workers.

The CLI builds a `ServeConfig`; `serve(config)` binds the socket itself (so `--port 0` can print the real
port before serving), then runs one uvicorn server, or a uvicorn supervisor whose workers each build the
same app from the config passed in `SYNTHGPT_SERVE_CONFIG` (`create_app_from_env`, a uvicorn factory).
Given the same rule files, seed and clock every worker answers the same request with the same bytes.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import json
import logging
import os
import socket
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import IO, TYPE_CHECKING, Any

from starlette.applications import Starlette

from ..clock import Clock, parse_clock
from ..codec.sse import StreamAborted
from ..engine import MockGPT
from ..errors import ConfigError, RuleError
from ..journal import DEFAULT_JOURNAL_BYTES
from ..limits import DEFAULT_LIMITS, Limits
from ..state import DEFAULT_TIMEOUT, DEFAULT_TTL, StateStore, open_state
from .app import DEFAULT_MAX_BODY_BYTES, create_app
from .hosts import default_allowed_hosts, open_admin_warning
from .limits import (
    CONFIG_ATTRIBUTE,
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_LIMIT_CONCURRENCY,
    DEFAULT_TIMEOUT_KEEP_ALIVE,
    HeaderTimeoutProtocol,
    die_with_parent,
    fit_open_files,
)
from .memo import DEFAULT_MEMO_ENTRIES
from .metrics import MULTIPROC_ENV
from .observe import configure_request_log

if TYPE_CHECKING:
    from ..rules.loader import LoadedRules
    from ..rules.rule import RuleSet

__all__ = ["ENV_VAR", "ConfigError", "ServeConfig", "build_mock", "create_app_from_config",
           "create_app_from_env", "serve"]  # fmt: skip

ENV_VAR = "SYNTHGPT_SERVE_CONFIG"
SUPERVISOR_VAR = "SYNTHGPT_SUPERVISOR_PID"
log = logging.getLogger("synthgpt.server")


@dataclass(frozen=True)
class ServeConfig:
    rule_files: tuple[str, ...] = ()
    host: str = "127.0.0.1"
    port: int = 8000
    seed: int | None = None
    """None: the rule files' seed, else 0."""
    clock: str | None = None
    """`fixed:<unix-seconds>`, `system`, …; None: the rule files' clock, else the fixed default."""
    workers: int = 1
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    watch: bool = False
    journal_size: int = 1000
    journal_bytes: int = DEFAULT_JOURNAL_BYTES
    """Memory the in-memory journal may hold (and each rule's call history, `KEEP_CALLS_BYTES` at most)."""
    journal: str | None = None
    """A SQLite file shared by every worker (`synthgpt.journal.sqlite`); None: each worker's own memory."""
    journal_scratch: bool = False
    """`journal` is the temporary file the workers share, deleted at exit: never synced to disk."""
    context_window: int | None = None
    """Every model's context window (`MockGPT(context_window=…)`); a rule file's model profiles win."""
    access_log: bool = False
    log_level: str = "warning"
    log_format: str = "text"
    """The request log's format: `text` (key=value) or `json` (one object per line); see `server.observe`."""
    request_log: bool = True
    """One line per answered API request on the `synthgpt.access` logger (stderr)."""
    memo_entries: int = DEFAULT_MEMO_ENTRIES
    """Bound of the memo of encoded answers to repeated requests (`server.memo`); 0 turns it off."""
    state: str | None = None
    """`redis://HOST:PORT/DB`: call counts, journal and Responses store shared by every replica
    (`synthgpt.state`); None or `memory`: each process keeps its own."""
    state_ttl: int = DEFAULT_TTL
    """Seconds a stored Responses conversation lives in the shared state store."""
    state_timeout: float = DEFAULT_TIMEOUT
    """Seconds one state-store command may take before the request gets a 503."""
    state_memo_us: int = 0
    """With a shared state store: answers that took at least this many µs to draw are kept there for every
    replica to replay (`synthgpt.state.memo`); 0: none."""
    admin: bool = True
    """False: no `/_synthgpt/` routes (404)."""
    admin_token: str | None = None
    """Bearer token the `/_synthgpt/` routes and `/metrics` require; None: they are open."""
    metrics_public: bool = False
    """`/metrics` answers without the admin token (for a scraper that cannot send one)."""
    allowed_hosts: tuple[str, ...] | None = None
    """`Host` header patterns accepted; None: loopback names when bound to loopback, else any."""
    limit_concurrency: int = DEFAULT_LIMIT_CONCURRENCY
    timeout_keep_alive: int = DEFAULT_TIMEOUT_KEEP_ALIVE
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    max_answer_bytes: int = DEFAULT_LIMITS.max_answer_bytes
    max_schema_values: int = DEFAULT_LIMITS.max_schema_values
    template_ops: int = DEFAULT_LIMITS.template_ops
    """The per-request budgets (`synthgpt.limits.Limits`)."""
    strict: bool = False
    """A request no rule of the files answers gets a 404 instead of a built-in answer (`record.strict`)."""

    def limits(self) -> Limits:
        return Limits(self.max_answer_bytes, self.max_schema_values, self.template_ops)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ServeConfig:
        data = json.loads(text)
        data["rule_files"] = tuple(data.get("rule_files", ()))
        if data.get("allowed_hosts") is not None:
            data["allowed_hosts"] = tuple(data["allowed_hosts"])
        return cls(**data)


def open_config_state(config: ServeConfig) -> StateStore:
    """The state store `config` names, reachable (else a ConfigError saying why)."""
    return open_state(config.state, ttl=config.state_ttl, timeout=config.state_timeout,
                      memo_us=config.state_memo_us)  # fmt: skip


def build_mock(
    config: ServeConfig, state: StateStore | None = None, *, warn: IO[str] | None = None
) -> MockGPT:
    """The engine for `config`: rule files (or the built-in rules), seed and clock (flags win over files);
    with a shared `state`, its call counter and journal (an explicit `--journal` file wins).

    With `warn`, says there when the rules can leave requests unanswered (`synthgpt check`'s warning).
    """
    seed = config.seed
    clock: Clock | None = None
    if config.clock is not None:
        try:
            clock = parse_clock(config.clock)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    from ..rules.loader import mock_from_files  # rule files only: the built-in rules need no YAML

    # flags win over the files; the files' `models` are on their rule set, which a reload replaces whole
    mock = mock_from_files(config.rule_files, seed=seed, clock=clock, journal_size=config.journal_size,
                           journal_bytes=config.journal_bytes, limits=config.limits(),
                           context_window=config.context_window)  # fmt: skip
    if config.strict:
        mock.rules = _strict(mock.rules)
    elif warn is not None and config.rule_files:
        _warn_unanswered(mock, warn)
    if config.journal is not None:
        from ..journal.sqlite import SQLiteJournal
        from ..journal.workers import WorkersJournal

        try:
            if config.journal_scratch and config.workers > 1:  # the workers' own: gathered when read
                mock.journal = WorkersJournal(config.journal, maxlen=config.journal_size,
                                              max_bytes=config.journal_bytes)  # fmt: skip
            else:
                mock.journal = SQLiteJournal(config.journal, maxlen=config.journal_size,
                                             synced=not config.journal_scratch, batched=True)  # fmt: skip
        except Exception as exc:  # sqlite3.Error, OSError: a path that cannot hold a database
            raise ConfigError(f"cannot open the journal {config.journal}: {exc}") from None
    if state is not None:
        mock.counter = state.counter
        shared = state.journal(config.journal_size) if config.journal is None else None
        if shared is not None:
            mock.journal = shared
    return mock


def _strict(rules: RuleSet) -> RuleSet:
    from ..record.strict import strict_rules

    try:
        return strict_rules(rules)
    except RuleError as exc:  # a rule of the files took the strict rule's name
        raise ConfigError(f"--strict: {exc}") from None


def _warn_unanswered(mock: MockGPT, out: IO[str]) -> None:
    from ..rules.check import unanswered_warning

    said = unanswered_warning(mock.rules)
    if said:
        print(f"synthgpt serve: warning: {said}", file=out, flush=True)


def create_app_from_config(config: ServeConfig, *, warn: IO[str] | None = None) -> Starlette:
    quiet_aborted_streams()
    state = open_config_state(config)
    mock = build_mock(config, state, warn=warn)
    on_startup: list[Callable[[], object]] = []
    on_shutdown: list[Callable[[], object]] = [state.close]
    start, stop = getattr(mock.journal, "start", None), getattr(mock.journal, "stop", None)
    if start is not None and stop is not None:  # `WorkersJournal`: a worker listens for the others' reads
        on_startup.append(start)
        on_shutdown.append(stop)
    if config.watch and config.rule_files:
        from ..rules.watch import RuleWatcher

        def reload(loaded: LoadedRules) -> None:
            # one assignment: requests see the old or the new rules
            mock.rules = _strict(loaded.ruleset) if config.strict else loaded.ruleset
            log.warning("rules reloaded from %s", ", ".join(config.rule_files))

        watcher = RuleWatcher(list(config.rule_files), on_reload=reload)
        on_startup.append(watcher.start)
        on_shutdown.append(watcher.stop)
    allowed = config.allowed_hosts if config.allowed_hosts is not None else default_allowed_hosts(config.host)
    return create_app(
        mock, max_body_bytes=config.max_body_bytes, on_startup=on_startup, on_shutdown=on_shutdown,
        memo_entries=config.memo_entries, admin=config.admin, admin_token=config.admin_token,
        allowed_hosts=None if allowed == ("*",) else allowed, state=state,
        metrics_public=config.metrics_public,
    )  # fmt: skip


def create_app_from_env() -> Starlette:
    """uvicorn factory for worker processes: the config comes from `SYNTHGPT_SERVE_CONFIG`."""
    supervisor = os.environ.get(SUPERVISOR_VAR)
    if supervisor is not None:
        die_with_parent(int(supervisor))
    config = ServeConfig.from_json(os.environ[ENV_VAR])
    configure_request_log(config.log_format, enabled=config.request_log)
    app = create_app_from_config(config)
    freeze_startup_objects()
    return app


def freeze_startup_objects() -> None:
    """Exempt everything built so far (modules, rules, compiled schemas) from the garbage collector.

    A server process holds a few hundred thousand such objects for its whole life; every full collection
    walked all of them (tens of milliseconds, enough to hold back every paced stream's next frame).
    """
    gc.collect()
    gc.freeze()


class _DropAbortedStreams(logging.Filter):
    """uvicorn logs every exception out of an app as an error; a stream dropped on purpose is not one."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        return not isinstance(exc, StreamAborted)


def quiet_aborted_streams() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _DropAbortedStreams) for f in logger.filters):
        logger.addFilter(_DropAbortedStreams())


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(2048)  # connections queue until the server accepts them, so announcing now is truthful
    sock.set_inheritable(True)
    return sock


def url_for(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def serve(config: ServeConfig, *, out: IO[str] | None = None) -> None:
    """Serve until interrupted. Prints `synthgpt listening on http://HOST:PORT` (the real port) first."""
    with contextlib.ExitStack() as cleanup:
        if config.workers > 1:
            config = _share_between_workers(config, cleanup, sys.stderr)
        _serve(config, out)


def _share_between_workers(config: ServeConfig, cleanup: contextlib.ExitStack, out: IO[str]) -> ServeConfig:
    """What several workers must share to answer like one server: the journal and the metrics.

    Without `--journal`, each worker would answer `/_synthgpt/calls` from its own memory (10 calls over 2
    workers: 5 listed by whichever answers), so they share a temporary SQLite journal instead, deleted at
    exit (`journal.workers`); with `--state redis://…`, the Redis journal every replica shares.
    prometheus_client's multiprocess mode needs its directory in the environment before any worker
    imports it (the workers are spawned, so they inherit it); one set by the user is kept as is.
    """
    tmp: str | None = None

    def scratch() -> str:
        nonlocal tmp
        if tmp is None:
            tmp = cleanup.enter_context(tempfile.TemporaryDirectory(prefix="synthgpt-"))
        return tmp

    if not os.environ.get(MULTIPROC_ENV):
        os.environ[MULTIPROC_ENV] = os.path.join(scratch(), "metrics")
        os.mkdir(os.environ[MULTIPROC_ENV])
        cleanup.callback(os.environ.pop, MULTIPROC_ENV, None)
    if config.journal is None and config.journal_size > 0 and config.state in (None, "memory"):
        # (with `--state redis://…` the workers journal into Redis, as every replica does)
        path = os.path.join(scratch(), "calls.sqlite")
        print(f"synthgpt: {config.workers} workers share one journal in a temporary file "
              "(--journal PATH.sqlite keeps it)", file=out, flush=True)  # fmt: skip
        config = replace(config, journal=path, journal_scratch=True)
    return config


def _serve(config: ServeConfig, out: IO[str] | None) -> None:
    import uvicorn

    configure_request_log(config.log_format, enabled=config.request_log)
    app: Starlette | str
    if config.workers > 1:
        checked = build_mock(config, warn=sys.stderr)  # fail (or warn) here once, rather than in every worker
        close = getattr(checked.journal, "close", None)
        if close is not None:  # the workers open their own (a file's connections, the workers' counter)
            close()
        open_config_state(config).close()
        os.environ[ENV_VAR] = config.to_json()
        os.environ[SUPERVISOR_VAR] = str(os.getpid())
        app = "synthgpt.server.run:create_app_from_env"
    else:
        app = create_app_from_config(config, warn=sys.stderr)
        freeze_startup_objects()
    fit_open_files(config.limit_concurrency)  # workers inherit the limit
    sock = _bind(config.host, config.port)
    port = sock.getsockname()[1]
    warning = open_admin_warning(config.host, config.admin, config.admin_token)
    if warning is not None:
        print(f"synthgpt serve: warning: {warning}", file=sys.stderr, flush=True)
    print(f"synthgpt listening on {url_for(config.host, port)}", file=out or sys.stdout, flush=True)
    uv_config = uvicorn.Config(
        app,
        factory=config.workers > 1,
        host=config.host,
        port=port,
        workers=config.workers,
        loop="uvloop" if importlib.util.find_spec("uvloop") else "auto",
        http=HeaderTimeoutProtocol,
        limit_concurrency=config.limit_concurrency,
        timeout_keep_alive=config.timeout_keep_alive,
        access_log=config.access_log,
        log_level=config.log_level,
        server_header=False,
        date_header=False,  # headers as reproducible as bodies
        lifespan="on",
    )
    setattr(uv_config, CONFIG_ATTRIBUTE, config.header_timeout)
    if config.workers > 1:
        from uvicorn.supervisors import Multiprocess

        Multiprocess(uv_config, sockets=[sock]).run()
    else:
        uvicorn.Server(uv_config).run(sockets=[sock])
