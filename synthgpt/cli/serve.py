"""`synthgpt serve`: its flags and how they become a `ServeConfig` for `synthgpt.server.run.serve`.

A new serve flag is one `add_argument` in `add_arguments` and one field in `config_from`; its
`SYNTHGPT_<FLAG>` variable follows by itself (`synthgpt.cli.env`).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from ..errors import SynthGPTError
from ..limits import DEFAULT_LIMITS
from .flags import clock, hosts, non_negative, port, positive, seconds, whole

if TYPE_CHECKING:
    from ..server.run import ServeConfig

__all__ = ["add_arguments", "config_from", "run"]


def add_arguments(serve: argparse.ArgumentParser) -> None:
    from ..server.limits import DEFAULT_HEADER_TIMEOUT, DEFAULT_LIMIT_CONCURRENCY, DEFAULT_TIMEOUT_KEEP_ALIVE

    serve.add_argument("rule_files", nargs="*", metavar="RULE_FILES",
                       help="YAML/JSON rule files (default: the built-in rule set)")  # fmt: skip
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=port, default=8000, help="port (0 picks a free one; default: 8000)")
    serve.add_argument("--seed", type=whole, default=None, help="engine seed (default: the files', else 0)")
    serve.add_argument("--clock", type=clock, default=None,
                       help="fixed:<unix-seconds>, step:<start>[:<step>] (advances on every read) or system "
                            "(default: fixed at 2026-01-01)")  # fmt: skip
    serve.add_argument("--workers", type=positive, default=1, help="worker processes (default: 1)")
    serve.add_argument("--max-body-bytes", type=positive, default=10 * 1024 * 1024,
                       help="larger request bodies get 413 (default: 10 MiB)")  # fmt: skip
    serve.add_argument("--watch", action="store_true", help="reload the rule files when they change")
    serve.add_argument("--strict", action="store_true",
                       help="a request no rule of the files answers gets a 404 instead of a built-in answer "
                            "(for replaying recordings: docs/record.md)")  # fmt: skip
    serve.add_argument("--journal-size", type=non_negative, default=1000,
                       help="calls kept for GET /_synthgpt/calls (default: 1000)")  # fmt: skip
    serve.add_argument("--journal-bytes", type=positive, default=64 * 1024 * 1024, metavar="N",
                       help="bytes of memory the journal may hold, the oldest calls going first "
                            "(default: 64 MiB)")  # fmt: skip
    serve.add_argument("--journal", default=None, metavar="PATH.sqlite",
                       help="keep the journal in this SQLite file, shared by all workers")  # fmt: skip
    serve.add_argument("--memo-entries", type=non_negative, default=None, metavar="N",
                       help="answers kept to replay byte-identical for repeated requests; 0 turns the memo "
                            "off (default: 256)")  # fmt: skip
    budgets = serve.add_argument_group("per-request budgets (see docs/security.md)")
    budgets.add_argument("--max-answer-bytes", type=positive, default=DEFAULT_LIMITS.max_answer_bytes,
                         metavar="N", help="bytes of one encoded answer; also bounds estimated answers, "
                         "schema strings and template values (default: 8 MiB)")  # fmt: skip
    budgets.add_argument("--max-schema-values", type=positive, default=DEFAULT_LIMITS.max_schema_values,
                         metavar="N", help="values in one document drawn for a JSON schema "
                         "(default: 10000)")  # fmt: skip
    budgets.add_argument("--template-max-ops", type=positive, default=DEFAULT_LIMITS.template_ops,
                         metavar="N", help="loop iterations and range items of one template render "
                         "(default: 100000)")  # fmt: skip
    serve.add_argument("--context-window", type=positive, default=None, metavar="N",
                       help="tokens every model's prompt and answer share (a rule file's model profiles "
                            "win); a longer max_tokens is refused (default: unlimited)")  # fmt: skip
    serve.add_argument("--state", default=os.environ.get("SYNTHGPT_STATE") or None,
                       metavar="memory|redis://HOST:PORT/DB",
                       help="where replicas share call counts (times, sequence), the journal and the "
                            "Responses store (default: $SYNTHGPT_STATE, else memory: each process its own)")
    serve.add_argument("--state-ttl", type=positive, default=3600, metavar="SECONDS",
                       help="how long the shared state keeps a stored Responses answer (default: 3600)")
    serve.add_argument("--state-timeout", type=seconds, default=0.5, metavar="SECONDS",
                       help="longest wait for the shared state store before answering 503 (default: 0.5)")
    serve.add_argument("--state-memo-us", type=non_negative, default=0, metavar="N",
                       help="with --state redis://…: answers that took at least N µs to draw are kept in "
                            "Redis for every replica to replay (see docs/scale-out.md; default: 0, off)")
    admin = serve.add_mutually_exclusive_group()
    admin.add_argument("--admin-token", default=None, metavar="TOKEN",
                       help="the /_synthgpt/ routes and /metrics require `Authorization: Bearer TOKEN` "
                            "(default: the SYNTHGPT_ADMIN_TOKEN variable, else open)")  # fmt: skip
    admin.add_argument("--no-admin", action="store_true", help="serve no /_synthgpt/ routes at all")
    serve.add_argument("--metrics-public", action="store_true",
                       help="GET /metrics answers without the admin token, for a scraper that cannot "
                            "send one")  # fmt: skip
    serve.add_argument("--allowed-hosts", type=hosts, default=None, metavar="H,…",
                       help="Host headers accepted (`*.example.com`, `*`: any); others get 400 (default: "
                            "loopback names when --host is loopback, else any)")  # fmt: skip
    serve.add_argument("--limit-concurrency", type=positive, default=DEFAULT_LIMIT_CONCURRENCY, metavar="N",
                       help="open connections per worker beyond which requests get 503 (default: "
                            f"{DEFAULT_LIMIT_CONCURRENCY})")  # fmt: skip
    serve.add_argument("--timeout-keep-alive", type=positive, default=DEFAULT_TIMEOUT_KEEP_ALIVE,
                       metavar="S",
                       help=f"idle keep-alive connections close after S seconds (default: "
                            f"{DEFAULT_TIMEOUT_KEEP_ALIVE})")  # fmt: skip
    serve.add_argument("--header-timeout", type=seconds, default=DEFAULT_HEADER_TIMEOUT, metavar="S",
                       help="a connection that has not sent a request's complete headers S seconds after it "
                            "opened (or after its last answer) gets 408 "
                            f"(default: {DEFAULT_HEADER_TIMEOUT:g})")  # fmt: skip
    serve.add_argument("--access-log", action="store_true", help="log every request")
    levels = ["critical", "error", "warning", "info", "debug"]
    serve.add_argument("--log-level", default="warning", choices=levels, help="(default: warning)")
    serve.add_argument("--log-format", default="text", choices=["text", "json"],
                       help="the request log: key=value text or one JSON object per line (default: text)")
    serve.add_argument("--request-log", action=argparse.BooleanOptionalAction, default=True,
                       help="one line per answered API request on stderr (default: on)")  # fmt: skip


def config_from(args: argparse.Namespace) -> ServeConfig:
    """The server's configuration from parsed `serve` arguments (and SYNTHGPT_ADMIN_TOKEN)."""
    from ..server.admin import ADMIN_TOKEN_ENV
    from ..server.run import ServeConfig

    token = args.admin_token if args.admin_token is not None else os.environ.get(ADMIN_TOKEN_ENV) or None
    return ServeConfig(
        rule_files=tuple(args.rule_files),
        host=args.host,
        port=args.port,
        seed=args.seed,
        clock=args.clock,
        workers=args.workers,
        max_body_bytes=args.max_body_bytes,
        watch=args.watch,
        strict=args.strict,
        journal_size=args.journal_size,
        journal_bytes=args.journal_bytes,
        journal=args.journal,
        context_window=args.context_window,
        state=args.state,
        state_ttl=args.state_ttl,
        state_timeout=args.state_timeout,
        state_memo_us=args.state_memo_us,
        access_log=args.access_log,
        log_level=args.log_level,
        log_format=args.log_format,
        request_log=args.request_log,
        admin=not args.no_admin,
        admin_token=None if args.no_admin else token,
        metrics_public=args.metrics_public,
        allowed_hosts=args.allowed_hosts,
        limit_concurrency=args.limit_concurrency,
        timeout_keep_alive=args.timeout_keep_alive,
        header_timeout=args.header_timeout,
        max_answer_bytes=args.max_answer_bytes,
        max_schema_values=args.max_schema_values,
        template_ops=args.template_max_ops,
        **({} if args.memo_entries is None else {"memo_entries": args.memo_entries}),
    )


def run(args: argparse.Namespace) -> int:
    from ..server.run import ConfigError, serve

    config = config_from(args)
    try:
        serve(config)
    except (ConfigError, SynthGPTError, OSError) as exc:
        # A rule file with several mistakes reports them all at once, one `PATH:LINE:COL: message` each.
        for each in getattr(exc, "errors", None) or (exc,):
            print(f"synthgpt serve: error: {each}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    return 0
