"""`synthgpt render`: fixture files for frontends, written from rule files with no server running.

    synthgpt render rules.yaml --requests requests.jsonl --api chat --stream --out fixtures/ --seed 1

Each line of `requests.jsonl` is one request body in the chosen API's wire shape. For line N the answer
goes to `NNNN-<hash>.json` (the JSON body) or `NNNN-<hash>.sse` (the exact bytes of the stream, faults
and keep-alives included), where `<hash>` is a short hash of the request line: file names derive from the
request, never from the rules, so editing a rule changes only the files whose answers it affects.
`manifest.json` maps each line to its file, the rule that answered, the seed and the HTTP status (paths
in it are relative to the output folder, so it does not depend on where the command ran). A line whose
body says `"stream": true` is rendered as a stream even without `--stream`. A JSON answer with a
`truncate` or `disconnect` fault (`!MOCK_TRUNCATE`) is written as the server sends it: the first half of its
compact bytes, which do not parse, and its manifest entry says `"fault"`.

Re-running gives byte-identical files (unchanged files are not rewritten). Files listed in an earlier
manifest in the same folder but no longer produced are removed. Every line is answered by the server's own
pipeline (`synthgpt.pipeline.answer`), so a file holds what the server sends for that body (JSON indented
for people to read), with the server's status: lines that cannot be answered (invalid JSON, a body the API
rejects, no matching rule, a model the rules do not serve) are written as the provider's error body and
reported; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO, get_args

from .codec.base import WireCodec
from .engine import MockGPT
from .errors import SynthGPTError
from .pipeline import answer, body_cut, cut_half, finish_answered, json_bytes

__all__ = ["RenderApi", "Rendered", "main", "render_files", "render_requests"]

RenderApi = Literal["chat", "responses", "messages", "gemini", "ollama", "cohere", "bedrock"]
_APIS: tuple[RenderApi, ...] = get_args(RenderApi)
_PATHS: dict[RenderApi, str] = {"chat": "/v1/chat/completions", "responses": "/v1/responses",
                                "messages": "/v1/messages", "gemini": "/v1beta/models/{model}:{method}",
                                "ollama": "/api/chat", "cohere": "/v2/chat",
                                "bedrock": "/model/{model}/{method}"}  # fmt: skip
"""Where the server answers each API: an error answer's request id derives from the path, as there."""
_MODEL_IN_URL = ("gemini", "bedrock")
"""APIs whose model is part of the URL: their request lines name it in a `model` (or `modelId`) field."""
_PROGRESS_MIN = 50  # batches smaller than this finish too fast for a bar to help


@dataclass(frozen=True, slots=True)
class Rendered:
    """One request line's answer."""

    line: int
    file: str
    data: bytes
    rule: str | None
    seed: str | None
    status: int
    error: str | None = None
    """Why the line could not be answered (an error *answer* from a rule is not an error here)."""
    headers: dict[str, str] = field(default_factory=dict)
    """Headers an error answer carries (`retry-after`, `x-ratelimit-*`) for a replaying server."""
    fault: str | None = None
    """`truncate` or `disconnect` for a JSON answer the server cuts: `data` is then the half it sends."""

    def manifest_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"line": self.line, "file": self.file, "rule": self.rule, "seed": self.seed,
                                 "status": self.status}  # fmt: skip
        if self.headers:
            entry["headers"] = dict(sorted(self.headers.items()))
        if self.error is not None:
            entry["error"] = self.error
        if self.fault is not None:
            entry["fault"] = self.fault
        return entry


def _codec(api: RenderApi, stream: bool = False) -> WireCodec:
    if api == "gemini":
        from .codec.gemini.encode import GeminiCodec

        return GeminiCodec(stream=stream)
    if api == "bedrock":
        from .codec.bedrock.encode import BedrockCodec

        return BedrockCodec(stream=stream)
    if api == "cohere":
        from .codec.cohere.encode import CohereCodec

        return CohereCodec()
    if api == "ollama":
        from .codec.ollama.encode import OllamaCodec

        return OllamaCodec()
    if api == "chat":
        from .codec.openai_chat.encode import ChatCodec

        return ChatCodec()
    if api == "responses":
        from .codec.openai_responses.encode import ResponsesCodec

        return ResponsesCodec()  # one per batch: later lines may cite earlier ones by previous_response_id
    from .codec.anthropic.encode import MessagesCodec

    return MessagesCodec()


_STREAM_SUFFIXES = {
    "text/event-stream": ".sse",
    "application/x-ndjson": ".ndjson",
    "application/vnd.amazon.eventstream": ".eventstream",
}


def file_stem(line: int, raw: str, api: str, stream: bool, width: int = 4) -> str:
    """`NNNN-<8 hex>`: the line number, and a hash of what was asked (API, stream flag, the line)."""
    digest = hashlib.sha256(f"{api}\n{int(stream)}\n{raw.strip()}".encode()).hexdigest()[:8]
    return f"{line:0{width}d}-{digest}"


def _json_bytes(body: Any) -> bytes:
    return (json.dumps(body, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()


def render_requests(
    mock: MockGPT,
    lines: Sequence[str],
    api: RenderApi,
    *,
    stream: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[Rendered]:
    """Answer every non-blank line of a JSONL text, in order, with `mock`. Pure: nothing is written."""
    codec = _codec(api)
    stream_codec = _codec(api, stream=True) if api in _MODEL_IN_URL else codec
    numbered = [(i + 1, text) for i, text in enumerate(lines) if text.strip()]
    width = max(4, len(str(len(lines))))
    out: list[Rendered] = []
    for done, (line, text) in enumerate(numbered, 1):
        stem = file_stem(line, text, api, stream, width)
        out.append(_render_line(mock, (codec, stream_codec), api, line, text, stem, stream))
        if on_progress is not None:
            on_progress(done, len(numbered))
    return out


def _render_line(
    mock: MockGPT, codecs: tuple[WireCodec, WireCodec], api: RenderApi, line: int, text: str, stem: str,
    stream: bool,
) -> Rendered:
    """The server's answer (`pipeline.answer`, as if posted to the API's path), written as a fixture."""
    codec, raw, params, path = codecs[0], text.encode(), {}, _PATHS[api]
    body = _json_object(text)
    if body is not None and api in _MODEL_IN_URL:
        # the route names the model and whether to stream; a line says both in its body
        model = body.pop("model", body.pop("modelId", None))
        name = str(model).removeprefix("models/") if model is not None else ""
        streamed = stream or body.pop("stream", False) is True
        codec = codecs[1] if streamed else codec
        if api == "gemini":
            params = {"model": name, **({"alt": "sse"} if streamed else {})}
            method = "streamGenerateContent" if streamed else "generateContent"
        else:
            params, method = {"model_id": name}, "converse-stream" if streamed else "converse"
        raw, stream, path = json_bytes(body), False, path.format(model=name, method=method)
    elif body is not None and api == "ollama" and not stream and "stream" not in body:
        # Ollama streams a body without `stream`; here, as for every API, only --stream or the line asks to
        raw = json_bytes({**body, "stream": False})
    answered = answer(mock, codec, raw, {}, params, path=path, stream=stream)
    finish_answered(mock, answered)  # written whole: delivered
    drawn = answered.generation
    rule, seed = (drawn.rule.name, str(drawn.output.id_seed)) if drawn is not None else (None, None)
    error = None if answered.failure is None else f"line {line}: {answered.failure}"
    if answered.wire is not None:
        suffix = _STREAM_SUFFIXES.get(answered.headers.get("content-type", "text/event-stream"), ".stream")
        return Rendered(line, stem + suffix, answered.wire.data, rule, seed, answered.status, error)
    cut = body_cut(answered)
    if cut is not None:  # the server sends half of the compact bytes (`CutJsonBody`): so does the fixture
        return Rendered(line, stem + ".json", cut_half(answered.body), rule, seed, answered.status, error,
                        fault=cut.kind)  # fmt: skip
    return Rendered(line, stem + ".json", _json_bytes(answered.payload), rule, seed, answered.status, error,
                    headers=answered.error_headers)  # fmt: skip


def _json_object(text: str) -> dict[str, Any] | None:
    """The line as a JSON object to adjust, or None (the pipeline then answers it as it is)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def render_files(
    rule_files: Sequence[str | Path],
    requests: str | Path,
    api: RenderApi,
    out_dir: str | Path,
    *,
    stream: bool = False,
    seed: int | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[Rendered]:
    """Load the rules, answer the requests file, write the fixtures and `manifest.json` into `out_dir`."""
    from .rules.loader import mock_from_files  # rule files only: YAML is loaded when they are

    mock = mock_from_files(rule_files, seed=seed)
    requests_path = Path(requests)
    lines = requests_path.read_text(encoding="utf-8").split("\n")
    rendered = render_requests(mock, lines, api, stream=stream, on_progress=on_progress)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest = {
        "api": api,
        "stream": stream,
        "seed": mock.seed,
        "rule_files": [_relative(Path(p), out) for p in rule_files],
        "requests": _relative(requests_path, out),
        "entries": [r.manifest_entry() for r in rendered],
    }
    _remove_stale(out, {r.file for r in rendered})
    for r in rendered:
        _write_if_changed(out / r.file, r.data)
    _write_if_changed(out / "manifest.json", _json_bytes(manifest))
    return rendered


def _relative(path: Path, out: Path) -> str:
    """`path` as seen from the output folder: the manifest is then the same whatever the working directory."""
    try:
        return Path(os.path.relpath(path.resolve(), out.resolve())).as_posix()
    except ValueError:  # another drive on Windows
        return path.resolve().as_posix()


def _remove_stale(out: Path, keep: set[str]) -> None:
    """Delete files an earlier run listed in its manifest and this run does not produce (only those).

    An entry counts only if it names a file directly inside `out`: not `.`, `..`, a path, or a folder. A
    stale entry that is a symlink loses the link, never what it points to."""
    old = out / "manifest.json"
    try:
        if not stat.S_ISREG(old.lstat().st_mode):
            return  # a link or a folder is no manifest of ours
        entries = json.loads(old.read_text(encoding="utf-8")).get("entries", [])
    except (OSError, ValueError, AttributeError):
        return
    for entry in entries if isinstance(entries, list) else ():
        name = entry.get("file") if isinstance(entry, dict) else None
        if not isinstance(name, str) or name in keep or not _plain_name(name):
            continue
        target = out / name
        try:
            if not stat.S_ISDIR(target.lstat().st_mode):
                target.unlink()  # unlink never follows a symlink
        except OSError:
            continue  # gone already, or not ours to delete: a stale entry never stops a run


def _plain_name(name: str) -> bool:
    return name not in ("", ".", "..") and not any(c in name for c in "/\\\0")


def _write_if_changed(path: Path, data: bytes) -> None:
    """Write `data` to `path` unless it already holds exactly that. Never through a symlink: whatever is at
    `path` (a link to a file outside `--out` included) is replaced by a new regular file, atomically."""
    try:
        if stat.S_ISREG(path.lstat().st_mode) and path.read_bytes() == data:
            return  # keep the mtime: file watchers in frontend dev servers stay quiet
    except OSError:
        pass
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(tmp, flags, 0o666)  # the umask applies, as for any file the user writes
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)  # replaces a symlink itself, not its target
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


class Progress:
    """A one-line progress bar on a terminal stream (carriage return, no dependency)."""

    def __init__(self, stream: TextIO, width: int = 30) -> None:
        self.stream = stream
        self.width = width
        self._shown = -1

    def __call__(self, done: int, total: int) -> None:
        percent = done * 100 // max(total, 1)
        if percent == self._shown and done != total:
            return
        self._shown = percent
        filled = self.width * done // max(total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\rrendering [{bar}] {done}/{total} ({percent}%)")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="synthgpt render",
        description="Write one JSON body or .sse transcript per request line, plus manifest.json.",
    )
    p.add_argument("rule_files", nargs="*", metavar="RULE_FILE", help="rule files (none: the built-in rules)")
    p.add_argument("--requests", required=True, metavar="FILE.jsonl", help="one request body per line")
    p.add_argument("--api", required=True, choices=_APIS, help="the wire format of the requests and answers")
    p.add_argument("--stream", action="store_true", help="render every answer as an SSE stream")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the fixtures and manifest.json")
    p.add_argument("--seed", type=int, default=None, help="seed (default: the rule file's, else 0)")
    bar = p.add_mutually_exclusive_group()
    bar.add_argument("--progress", dest="progress", action="store_true", default=None,
                     help="show a progress bar even when stderr is not a terminal")  # fmt: skip
    bar.add_argument("--no-progress", dest="progress", action="store_false", help="never show one")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parser().parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # argparse has printed the usage error
        return int(exc.code) if isinstance(exc.code, int) else 2
    requests = Path(args.requests)
    if not requests.is_file():
        print(f"synthgpt render: requests file not found: {requests}", file=sys.stderr)
        return 2
    if Path(args.out).exists() and not Path(args.out).is_dir():
        print(f"synthgpt render: --out must be a folder, but {args.out} is a file", file=sys.stderr)
        return 2
    on_progress: Callable[[int, int], None] | None = None
    if args.progress or (args.progress is None and sys.stderr.isatty()):
        bar = Progress(sys.stderr)
        forced = bool(args.progress)

        def on_progress(done: int, total: int) -> None:
            if forced or total >= _PROGRESS_MIN:
                bar(done, total)

    try:
        rendered = render_files(args.rule_files, requests, args.api, args.out, stream=args.stream,
                                seed=args.seed, on_progress=on_progress)  # fmt: skip
    except (SynthGPTError, OSError) as exc:
        print(f"synthgpt render: {exc}", file=sys.stderr)
        return 2
    failed = [r for r in rendered if r.error is not None]
    for r in failed:
        print(f"synthgpt render: {r.error}", file=sys.stderr)
    ok = len(rendered) - len(failed)
    print(f"synthgpt render: {ok} of {len(rendered)} requests rendered into {args.out}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
