"""The pytest plugin, run inside a throw-away pytest session (`pytester`)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

# Imported here so the inner sessions reuse them: pytester drops modules first imported inside a run. A
# rule file read inside one imports yaml_source (and PyYAML) first: dropped, a later test re-imported them
# beside modules still holding the old ones, and read no rule file ("could not determine a constructor for
# the tag None" in tests/state, when both ran in one process).
import synthgpt.generators.template_scope
import synthgpt.rules.loader
import synthgpt.rules.yaml_source
import synthgpt.server
import synthgpt.testing.plugin
import synthgpt.testing.snapshots

pytest_plugins = ["pytester"]
_PRELOADED = (
    synthgpt.generators.template_scope, synthgpt.rules.loader, synthgpt.rules.yaml_source, synthgpt.server,
    synthgpt.testing.plugin, synthgpt.testing.snapshots,
)


@pytest.fixture(autouse=True)
def _inner_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "-p", "no:hypothesispytest", *args)


def test_fixtures_markers_and_assertions(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_app="""
        import pytest
        from synthgpt import MockGPT, Rule, matchers as m
        from synthgpt.rules.defaults import default_rules
        from synthgpt.testing import SynthGPTFixture

        RULES = [Rule("weather", m.last_user(contains="weather"), "Sunny."),
                 Rule("other", m.always(), "Fine.")]

        def ask(client, text):
            r = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": text}])
            return r.choices[0].message.content

        def test_defaults(synthgpt):
            assert isinstance(synthgpt, SynthGPTFixture) and isinstance(synthgpt, MockGPT)
            assert synthgpt.seed == 0
            assert [r.name for r in synthgpt.rules] == [r.name for r in default_rules()]
            assert not synthgpt.called

        @pytest.mark.synthgpt(rules=RULES, seed=9)
        def test_rules_and_client(synthgpt, synthgpt_openai):
            assert ask(synthgpt_openai, "weather?") == "Sunny."
            assert ask(synthgpt_openai, "hello") == "Fine."
            assert synthgpt.seed == 9 and synthgpt.call_count == 2
            synthgpt.assert_called_with(m.last_user(contains="hello"), rule="other", api="chat")
            synthgpt.assert_all_rules_called()

        @pytest.mark.synthgpt(rules=RULES)
        def test_rule_state_starts_fresh(synthgpt):
            assert synthgpt.rules["weather"].call_count == 0  # not 1 from the test before

        @pytest.mark.synthgpt(rules=lambda: [Rule("x", m.always(), "made per test")])
        def test_factory(synthgpt, synthgpt_openai):
            assert ask(synthgpt_openai, "hi") == "made per test"

        @pytest.mark.synthgpt(seed=1)
        class TestClassMarker:
            def test_inherits(self, synthgpt):
                assert synthgpt.seed == 1

            @pytest.mark.synthgpt(seed=2)
            def test_closest_wins(self, synthgpt):
                assert synthgpt.seed == 2
        """
    )
    result = _run(pytester, "-q")
    result.assert_outcomes(passed=6)


def test_same_seed_same_answer_in_every_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_seed="""
        import pytest

        def answer(client):
            r = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
            return r.id + " " + r.choices[0].message.content

        @pytest.mark.parametrize("run", range(3))
        def test_collect(synthgpt_openai, run):
            print("ANSWER", answer(synthgpt_openai))

        @pytest.mark.synthgpt(seed=1)
        def test_other_seed(synthgpt_openai):
            print("ANSWER", answer(synthgpt_openai))
        """
    )
    result = _run(pytester, "-q", "-s")
    result.assert_outcomes(passed=4)
    answers = [line[line.index("ANSWER") :] for line in result.outlines if "ANSWER" in line]
    assert len(answers) == 4 and len(set(answers[:3])) == 1 and answers[3] != answers[0]


def test_a_miss_reports_expected_and_arrived(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_miss="""
        from synthgpt import matchers as m

        def test_miss(synthgpt, synthgpt_openai):
            synthgpt_openai.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "book a table"}])
            synthgpt.assert_called_with(m.last_user(contains="weather"), model="gpt-4o")
        """
    )
    result = _run(pytester, "-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*AssertionError: expected the last call to match last_user(contains='weather') & model='gpt-4o'",
        "*but the last call was:",
        "*#0 rule='default' request(api=chat, model='gpt-4o-mini', last_user='book a table')",
        "*calls that arrived (1):",
    ])  # fmt: skip


def test_bad_marker_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_bad="""
        import pytest

        @pytest.mark.synthgpt(sed=1)
        def test_typo(synthgpt):
            pass
        """
    )
    result = _run(pytester, "-q")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*unknown argument(s) sed; known: clock, context_window, journal_size*"])


def test_rules_file_marker_is_relative_to_the_test(pytester: pytest.Pytester) -> None:
    pytester.mkdir("sub")
    (pytester.path / "sub" / "rules.yaml").write_text(
        "seed: 5\nrules:\n  - name: canned\n    match: always\n    output: {text: From the file.}\n"
    )
    (pytester.path / "sub" / "test_file_rules.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.synthgpt(rules_file='rules.yaml')\n"
        "def test_it(synthgpt, synthgpt_openai):\n"
        "    msgs = [{'role': 'user', 'content': 'x'}]\n"
        "    r = synthgpt_openai.chat.completions.create(model='m', messages=msgs)\n"
        "    assert r.choices[0].message.content == 'From the file.'\n"
        "    assert synthgpt.seed == 5 and synthgpt.last.rule == 'canned'\n"
    )
    _run(pytester, "-q").assert_outcomes(passed=1)


def test_async_clients(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_async="""
        import pytest

        @pytest.mark.asyncio
        async def test_async_stream(synthgpt, synthgpt_async_openai):
            stream = await synthgpt_async_openai.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "hi"}], stream=True)
            text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
            assert text == synthgpt.last.output.text != ""
        """
    )
    _run(pytester, "-q").assert_outcomes(passed=1)


def test_live_server_is_reachable_then_stopped(pytester: pytest.Pytester, tmp_path: Path) -> None:
    url_file = tmp_path / "url.txt"
    pytester.makepyfile(
        test_live=f"""
        import pathlib

        import httpx

        def test_server(synthgpt, synthgpt_server):
            pathlib.Path({str(url_file)!r}).write_text(synthgpt_server.url)
            r = httpx.post(synthgpt_server.url + "/v1/chat/completions",
                           json={{"model": "gpt-4o", "messages": [{{"role": "user", "content": "hi"}}]}})
            assert r.status_code == 200 and r.json()["object"] == "chat.completion"
            assert synthgpt.call_count == 1
        """
    )
    _run(pytester, "-q").assert_outcomes(passed=1)
    url = url_file.read_text()
    assert url.startswith("http://127.0.0.1:")
    port = int(url.rsplit(":", 1)[1])
    with socket.socket() as s, pytest.raises(ConnectionRefusedError):
        s.connect(("127.0.0.1", port))


def test_a_changed_stream_fails_its_snapshot(pytester: pytest.Pytester) -> None:
    test = """
        def test_stream(synthgpt_sse_snapshot):
            frames = b'data: {"n":1,"text":"a"}\\n\\ndata: {"n":2,"text":"TEXT"}\\n\\ndata: [DONE]\\n\\n'
            assert frames == synthgpt_sse_snapshot
        """
    pytester.makepyfile(test_snap=test.replace("TEXT", "b"))
    _run(pytester, "-q", "--snapshot-update").assert_outcomes(passed=1)
    written = next(pytester.path.rglob("*.sse")).read_text()
    assert written == 'data: {"n":1,"text":"a"}\n\ndata: {"n":2,"text":"b"}\n\ndata: [DONE]\n\n'
    _run(pytester, "-q").assert_outcomes(passed=1)
    pytester.makepyfile(test_snap=test.replace("TEXT", "c"))
    result = _run(pytester, "-q")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(['*- data: {"n":2,"text":"b"}*', '*+ data: {"n":2,"text":"c"}*'])


def test_without_syrupy_the_snapshot_fixtures_say_what_to_install(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_snap="def test_stream(synthgpt_sse_snapshot):\n    pass\n")
    result = _run(pytester, "-q", "-p", "no:syrupy")
    result.assert_outcomes(errors=1)
    assert (
        "\nsynthgpt_sse_snapshot needs syrupy's `snapshot` fixture, but syrupy's plugin is disabled: "
        "pip install 'synthgpt[pytest]'\n"
    ) in result.stdout.str()
