"""The synthgpt pytest plugin (registered through the `pytest11` entry point).

It only adds fixtures and the `synthgpt` marker: nothing runs unless a test asks for a fixture.

    @pytest.mark.synthgpt(seed=7, rules=[Rule("hi", m.always(), "hello")])
    def test_app(synthgpt, synthgpt_openai):
        answer = my_app(synthgpt_openai)
        synthgpt.assert_called_with(m.last_user(contains="weather"))

Marker arguments (all optional; a marker on the test wins over one on its class or module):
- `rules`: Rules, a RuleSet, or a callable returning either (called per test, so state never leaks);
- `rules_file`: a path or a list of paths to rule files, relative to the test file's directory;
- `seed` (default: the rule file's seed, else 0), `clock` (a Clock or a spec such as "fixed:0"),
  `journal_size`, `context_window`.
Without `rules` or `rules_file` the built-in rule set answers.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import anthropic
    import openai

    from .assertions import SynthGPTFixture
    from .live_server import LiveServer
    from .transport import ASGIApp

_MARKER_HELP = (
    "synthgpt(rules=None, rules_file=None, seed=None, clock=None, journal_size=None, context_window=None): "
    "configure the `synthgpt` fixture (a MockGPT) for this test"
)
_KNOWN = {"rules", "rules_file", "seed", "clock", "journal_size", "context_window"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", _MARKER_HELP)


def _marker_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for marker in request.node.iter_markers("synthgpt"):  # closest first: the first value seen wins
        if marker.args:
            raise pytest.UsageError("@pytest.mark.synthgpt takes keyword arguments only, e.g. seed=1")
        unknown = sorted(set(marker.kwargs) - _KNOWN)
        if unknown:
            raise pytest.UsageError(
                f"@pytest.mark.synthgpt: unknown argument(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(_KNOWN))}"
            )
        for k, v in marker.kwargs.items():
            options.setdefault(k, v)
    return options


def build_mock(options: dict[str, Any], base_dir: Path | None = None) -> SynthGPTFixture:
    """The fixture's MockGPT for marker-style options (also usable outside pytest)."""
    from ..clock import parse_clock
    from ..rules.rule import RuleSet
    from .assertions import SynthGPTFixture

    rules: Any = options.get("rules")
    if callable(rules) and not isinstance(rules, RuleSet):
        rules = rules()
    seed = options.get("seed")
    clock = options.get("clock")
    if isinstance(clock, str):
        clock = parse_clock(clock)
    kwargs: dict[str, Any] = {}
    for name in ("journal_size", "context_window"):
        if options.get(name) is not None:
            kwargs[name] = options[name]
    rules_file = options.get("rules_file")
    if rules_file is not None:
        from ..rules.loader import mock_from_files

        if rules is not None:
            raise pytest.UsageError("@pytest.mark.synthgpt: give rules= or rules_file=, not both")
        paths = [rules_file] if isinstance(rules_file, str | Path) else list(rules_file)
        resolved = [Path(p) if Path(p).is_absolute() or base_dir is None else base_dir / p for p in paths]
        return mock_from_files(resolved, seed=None if seed is None else int(seed), clock=clock,
                               cls=SynthGPTFixture, **kwargs)  # fmt: skip
    if rules is not None:
        rules = rules if isinstance(rules, RuleSet) else RuleSet(rules)
        rules.reset()  # Rule objects count their calls: a module-level rule list must start fresh
    return SynthGPTFixture(rules, seed=0 if seed is None else int(seed), clock=clock, **kwargs)


@pytest.fixture
def synthgpt(request: pytest.FixtureRequest) -> Iterator[SynthGPTFixture]:
    """A MockGPT for this test, configured by `@pytest.mark.synthgpt(...)`, with respx-style assertions
    (`calls`, `called`, `call_count`, `last`, `assert_called_with`, `assert_all_rules_called`)."""
    base_dir = Path(str(request.node.path)).parent if getattr(request.node, "path", None) else None
    mock = build_mock(_marker_options(request), base_dir)
    yield mock
    mock.rules.reset()


@pytest.fixture
def synthgpt_app(synthgpt: SynthGPTFixture) -> ASGIApp:
    """The Starlette app serving the `synthgpt` mock (what `synthgpt serve` runs)."""
    from .transport import as_asgi_app

    return as_asgi_app(synthgpt)


@pytest.fixture
def synthgpt_openai(synthgpt_app: ASGIApp) -> Iterator[openai.OpenAI]:
    """`openai.OpenAI` answered in process by the `synthgpt` mock (no socket; streams arrive as sent)."""
    from .clients import openai_client

    client = openai_client(synthgpt_app)
    yield client
    client.close()


@pytest.fixture
def synthgpt_async_openai(synthgpt_app: ASGIApp) -> Iterator[openai.AsyncOpenAI]:
    """`openai.AsyncOpenAI` answered in process on the test's event loop."""
    from .clients import openai_client

    yield openai_client(synthgpt_app, async_=True)  # the in-process transport holds nothing to close


@pytest.fixture
def synthgpt_anthropic(synthgpt_app: ASGIApp) -> Iterator[anthropic.Anthropic]:
    """`anthropic.Anthropic` answered in process by the `synthgpt` mock."""
    from .clients import anthropic_client

    client = anthropic_client(synthgpt_app)
    yield client
    client.close()


@pytest.fixture
def synthgpt_async_anthropic(synthgpt_app: ASGIApp) -> Iterator[anthropic.AsyncAnthropic]:
    """`anthropic.AsyncAnthropic` answered in process on the test's event loop."""
    from .clients import anthropic_client

    yield anthropic_client(synthgpt_app, async_=True)


@pytest.fixture
def synthgpt_server(synthgpt_app: ASGIApp) -> Iterator[LiveServer]:
    """A live HTTP server for the `synthgpt` mock on a free loopback port: `.url`, stopped after the test."""
    from .live_server import LiveServer

    with LiveServer(synthgpt_app) as server:
        yield server


def _syrupy_snapshot(request: pytest.FixtureRequest, fixture: str) -> Any:
    """syrupy's `snapshot`, looked up here rather than asked for: without syrupy, pytest would only say
    "fixture 'snapshot' not found", which does not say what to install."""
    try:
        return request.getfixturevalue("snapshot")
    except pytest.FixtureLookupError:
        pass  # failed below, outside the handler: the lookup error would only repeat the name
    installed = importlib.util.find_spec("syrupy") is not None
    why = "syrupy's plugin is disabled" if installed else "syrupy is not installed"
    pytest.fail(f"{fixture} needs syrupy's `snapshot` fixture, but {why}: pip install 'synthgpt[pytest]'",
                pytrace=False)  # fmt: skip


@pytest.fixture
def synthgpt_sse_snapshot(request: pytest.FixtureRequest) -> Any:
    """syrupy's `snapshot` writing `.sse` files (needs syrupy: `synthgpt[pytest]`)."""
    from .snapshots import SSESnapshotExtension

    return _syrupy_snapshot(request, "synthgpt_sse_snapshot").use_extension(SSESnapshotExtension)


@pytest.fixture
def synthgpt_json_snapshot(request: pytest.FixtureRequest) -> Any:
    """syrupy's `snapshot` writing sorted-key `.json` files (needs syrupy: `synthgpt[pytest]`)."""
    from .snapshots import JSONSnapshotExtension

    return _syrupy_snapshot(request, "synthgpt_json_snapshot").use_extension(JSONSnapshotExtension)


__all__ = [
    "build_mock",
    "synthgpt",
    "synthgpt_anthropic",
    "synthgpt_app",
    "synthgpt_async_anthropic",
    "synthgpt_async_openai",
    "synthgpt_json_snapshot",
    "synthgpt_openai",
    "synthgpt_server",
    "synthgpt_sse_snapshot",
]
