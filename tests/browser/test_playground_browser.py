"""The playground and journal viewer in a real browser: Debian's Chromium driven by Playwright.

Skips with the reason where Chromium or the `playwright` package is missing; `make test` installs both
(the `chromium` package through scripts/system-deps; `playwright` is in the dev extra, and its own browser
download is never used: the tests launch `/usr/bin/chromium`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from synthgpt.rules.loader import load_text
from synthgpt.server import create_app
from synthgpt.testing import LiveServer

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

CHROMIUM = os.environ.get("SYNTHGPT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)", allow_module_level=True)

pytestmark = pytest.mark.slow

LAUNCH_ARGS = [
    "--no-sandbox",  # the tests run as root in CI
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
WAIT_MS = 15_000  # a loaded CI machine: actions and expectations wait this long before failing
sync_api.expect.set_options(timeout=WAIT_MS)

RULES = """\
seed: 11
rules:
  - name: refund
    match: {last_user: {contains: refund}}
    output: {text: Refunds take 5 days.}
    times: 1
  - name: weather
    match: {last_user: {regex: "weather in (?P<city>\\\\w+)"}}
    template: "Sunny in {{ city }}."
    stream: {interval_ms: 3, chunk_chars: 4}
  - name: default
    match: always
    generate: {summary: {max_chars: 80}}
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def server() -> Iterator[str]:
    with LiveServer(load_text(RULES, "rules.yaml").mock()) as live:
        yield live.url


@pytest.fixture
def page(browser: Any, server: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    problems: list[str] = []

    def console(message: Any) -> None:
        if message.type == "error":
            problems.append(f"console error: {message.text}")

    def request(sent: Any) -> None:
        if not sent.url.startswith(server):
            problems.append(f"left the server: {sent.url}")

    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("console", console)
    page.on("request", request)
    page.goto(server + "/_synthgpt/")
    yield page
    context.close()
    assert problems == []  # no script error, and everything came from the package


def chat(server: str, text: str, **extra: Any) -> httpx.Response:
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": text}], **extra}
    return httpx.post(server + "/v1/chat/completions", json=body, timeout=10)


def test_a_playground_request_shows_the_rule_the_trace_and_both_seeds_answers(page: Any, server: str) -> None:
    request = (
        '{"model": "gpt-4o", "stream": true, "messages": [{"role": "user", "content": "weather in Oslo"}]}'
    )
    page.fill("#pg-request", request)
    page.fill("#pg-seed-b", "99")
    page.click("#pg-run")
    sync_api.expect(page.locator("#pg-rule")).to_have_text("weather")
    sync_api.expect(page.locator("#pg-rule-source")).to_have_text("(rules.yaml:7:5)")
    trace = page.locator("#pg-trace li")
    sync_api.expect(trace).to_have_text([
        "refund (rules.yaml:3:5) did not match: last_user(contains='refund') is false",
        "weather (rules.yaml:7:5) answers — captures city=\"Oslo\"",
    ])  # fmt: skip
    a, b = page.locator("#pg-answer-a"), page.locator("#pg-answer-b")
    sync_api.expect(a.locator("h2")).to_contain_text("Seed 11")
    sync_api.expect(b.locator("h2")).to_contain_text("Seed 99")
    for side in (a, b):
        sync_api.expect(side.locator(".answer-json")).to_contain_text('"content": "Sunny in Oslo."')
        sync_api.expect(side.locator(".frames tbody tr").nth(1)).to_contain_text('{"content":"Sunn"}')
    ids = [side.locator(".answer-json").inner_text().split('"id": "')[1].split('"')[0] for side in (a, b)]
    assert ids[0] != ids[1]  # another seed, another answer
    real = chat(server, "weather in Oslo").json()
    assert ids[0] == real["id"]  # the playground's answer is the server's


def test_a_rejected_request_and_invalid_json_are_said_on_the_page(page: Any) -> None:
    page.fill("#pg-request", "{not json")
    page.click("#pg-run")
    sync_api.expect(page.locator("#pg-error")).to_contain_text("The request is not valid JSON")
    page.fill("#pg-request", '{"model": "gpt-4o"}')
    page.click("#pg-run")
    sync_api.expect(page.locator("#pg-problem")).to_have_text("Missing required parameter: 'messages'.")
    sync_api.expect(page.locator("#pg-answer-a")).to_contain_text("Status 400")


def test_the_journal_is_live_filterable_and_each_call_replays(page: Any, server: str) -> None:
    page.click("#tab-journal")
    sync_api.expect(page.locator("#j-count")).to_have_text("0 calls in the journal")
    assert chat(server, "I want a refund").status_code == 200
    assert chat(server, "weather in Rome", stream=True).status_code == 200
    rows = page.locator("#j-table tbody tr")
    sync_api.expect(rows).to_have_count(2)  # arrived without a reload
    sync_api.expect(rows.nth(0)).to_contain_text("1chatgpt-4oweather200yesweather in Rome")
    page.fill("#j-rule", "ref*")
    sync_api.expect(rows).to_have_count(1)
    sync_api.expect(rows.nth(0)).to_contain_text("Refunds take 5 days.")
    page.fill("#j-rule", "")
    sync_api.expect(rows).to_have_count(2)
    rows.nth(0).click()
    detail = page.locator("#j-detail")
    sync_api.expect(detail.locator("h2")).to_have_text("Call #1 · rule weather")
    sync_api.expect(detail.locator("p.muted")).to_contain_text("outcome done (")
    frames = detail.locator(".frames tbody tr")
    sync_api.expect(frames.nth(1)).to_contain_text('{"content":"Sunn"}')
    sync_api.expect(frames.nth(1).locator("td").nth(2)).to_have_text("+3.0")  # the rule's interval
    page.click("#j-replay")
    sync_api.expect(page.locator("#pg-rule")).to_have_text("weather")
    sync_api.expect(page.locator("#pg-answer-a .answer-json")).to_contain_text("Sunny in Rome.")
    assert page.locator("#pg-api").input_value() == "neutral"
    sync_api.expect(page.locator("#pg-replay")).to_have_text(
        "Replayed call #1: the same answer as the journal's, from rule weather."
    )
    page.click("#tab-journal")
    rows.nth(1).click()
    sync_api.expect(detail.locator("h2")).to_have_text("Call #0 · rule refund")
    page.click("#j-replay")
    sync_api.expect(page.locator("#pg-replay")).to_contain_text(
        "Replayed call #0: another answer than the journal's (it came from rule refund)."
    )
    sync_api.expect(page.locator("#pg-trace li").nth(0)).to_contain_text("matched, but its times are used up")
    # replaying explains: the `times` rule that answered the first call stays used up, nothing is journaled
    assert len(httpx.get(server + "/_synthgpt/calls").json()) == 2


def test_the_rules_tab_lists_each_rule_with_its_source(page: Any) -> None:
    page.click("#tab-rules")
    rows = page.locator("#r-table tbody tr")
    sync_api.expect(rows).to_have_count(3)
    sync_api.expect(rows.nth(0)).to_contain_text("refundrules.yaml:3:5last_user(contains='refund')")
    sync_api.expect(rows.nth(1)).to_contain_text("weatherrules.yaml:7:5")
    sync_api.expect(page.locator("#server-info")).to_have_text("seed 11 · FixedClock(1767225600) · 3 rules")


def test_with_an_admin_token_the_page_asks_for_it_and_sends_it(browser: Any) -> None:
    app = create_app(load_text(RULES, "rules.yaml").mock(), admin_token="s3cret")
    with LiveServer(app) as live:
        assert httpx.get(live.url + "/_synthgpt/rules").status_code == 401
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(live.url + "/_synthgpt/")
        sync_api.expect(page.locator("#token-form")).to_be_visible()
        page.fill("#token", "wrong")
        page.click("#token-form button")
        sync_api.expect(page.locator("#token-error")).to_have_text(
            "The admin token is not valid for this server."
        )
        page.fill("#token", "s3cret")
        page.click("#token-form button")
        sync_api.expect(page.locator("#server-info")).to_have_text(
            "seed 11 · FixedClock(1767225600) · 3 rules"
        )
        page.click("#pg-run")
        sync_api.expect(page.locator("#pg-rule")).to_have_text("default")
        page.reload()  # the tab keeps the token for its session
        sync_api.expect(page.locator("#server-info")).to_contain_text("seed 11")
        assert page.locator("#token-form").is_hidden()
        context.close()
