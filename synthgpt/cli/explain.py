"""`synthgpt explain`: which rule answers a request, why each rule before it does not, and the answer.

    synthgpt explain rules.yaml --request req.json          a request body in the API's wire shape
    synthgpt explain rules.yaml --prompt "I want a refund"  a one-message request
    synthgpt explain --prompt "hi" --api messages --stream  the built-in rules, an Anthropic stream

Prints one line per rule tried (the answering one marked `=>`, each earlier one with the first predicate
the request did not satisfy and the rule's `file:line:col`), then the answer: its status, the JSON body,
or for a stream the exact SSE text. `--json` prints what `POST /_synthgpt/explain` answers instead.
Nothing is recorded and no `times` rule is used up. Exit status: 0 when a rule answers (an error answer
a rule gives included), 1 when the call would fail (no rule matches, a rule cannot answer, a request the
API rejects), 2 for bad arguments or rule files.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from ..errors import SynthGPTError

__all__ = ["build_parser", "main", "prompt_body"]

_APIS = ("chat", "responses", "messages", "embeddings")
_DEFAULT_MODELS = {"chat": "gpt-4o", "responses": "gpt-4o", "messages": "claude-sonnet-4-5",
                   "embeddings": "text-embedding-3-small"}  # fmt: skip


def prompt_body(api: str, prompt: str, model: str | None = None) -> dict[str, Any]:
    """A one-message request body of `api` asking `prompt`."""
    chosen = model or _DEFAULT_MODELS[api]
    if api == "responses":
        return {"model": chosen, "input": prompt}
    if api == "embeddings":
        return {"model": chosen, "input": prompt}
    body: dict[str, Any] = {"model": chosen, "messages": [{"role": "user", "content": prompt}]}
    if api == "messages":
        body["max_tokens"] = 1024  # required by the Messages API
    return body


def build_parser() -> argparse.ArgumentParser:
    from .flags import clock, whole

    p = argparse.ArgumentParser(prog="synthgpt explain", description=__doc__.split("\n\n")[0])
    p.add_argument("rule_files", nargs="*", metavar="RULE_FILES",
                   help="YAML/JSON rule files (default: the built-in rule set)")  # fmt: skip
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--request", metavar="FILE", help="a JSON request body of --api ('-' reads stdin)")
    what.add_argument("--prompt", help="ask this as the one user message")
    p.add_argument("--api", choices=_APIS, default="chat", help="the request's wire format (default: chat)")
    p.add_argument("--model", default=None, help="model for --prompt (default: one of the API's)")
    p.add_argument("--stream", action="store_true", help="explain the request as a stream")
    p.add_argument("--seed", type=whole, default=None, help="engine seed (default: the files', else 0)")
    p.add_argument("--clock", type=clock, default=None, help="as for `synthgpt serve`")
    p.add_argument("--json", action="store_true", help="print the explanation as JSON")
    return p


def _read_body(path: str) -> Any:
    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()  # noqa: SIM115
    except OSError as exc:
        raise SynthGPTError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise SynthGPTError(f"{path}: not valid JSON: {exc}") from None


def _render(result: dict[str, Any]) -> str:
    lines: list[str] = []
    req = result["request"]
    if req is not None:
        lines.append(f"request: {req['summary']}")
    lines.append(f"seed {result['seed']}, rules tried in order:")
    for t in result["trace"]:
        where = f"  ({t['source']})" if t["source"] else ""
        if t["matched"]:
            caps = ", ".join(f"{k}={v!r}" for k, v in t["captures"].items())
            lines.append(f"=> {t['rule']}{where}: answers" + (f"; captures {caps}" if caps else ""))
        else:
            lines.append(f"   {t['rule']}{where}: {t['reason']}")
    if result["error"]:
        lines.append(f"!! {result['error']}")
    answer = result["answer"]
    head = f"answer: {answer['status']}"
    if result["rule"]:
        head += f" from rule {result['rule']!r} (answer seed {result['answer_seed']})"
    lines.append(head + (", streamed:" if answer["stream"] else ":"))
    if answer["stream"]:
        lines.append(answer["sse"].rstrip("\n"))
    else:
        lines.append(json.dumps(answer["body"], indent=2, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from ..server.explain_view import explain_wire
    from ..server.run import ConfigError, ServeConfig, build_mock

    try:
        body = _read_body(args.request) if args.request else prompt_body(args.api, args.prompt, args.model)
        if args.stream and isinstance(body, dict):
            body = {**body, "stream": True}
        mock = build_mock(ServeConfig(rule_files=tuple(args.rule_files), seed=args.seed, clock=args.clock,
                                      journal_size=0))  # fmt: skip
    except (ConfigError, SynthGPTError) as exc:
        for each in getattr(exc, "errors", None) or (exc,):
            print(f"synthgpt explain: error: {each}", file=sys.stderr)
        return 2
    result = explain_wire(mock, args.api, body)
    if args.json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(_render(result))
    return 0 if result["rule"] is not None and result["error"] is None else 1
