"""synthgpt in one screen: rules, seeded generators, deterministic answers and the call journal.

Run it: `python examples/quickstart.py`. It prints the same bytes on every run, on every machine.
"""

from __future__ import annotations

from synthgpt import MockGPT, Rule
from synthgpt import generators as g
from synthgpt import matchers as m

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}

mock = MockGPT(
    seed=42,
    clock=g.fixed_clock(1_700_000_000),
    rules=[
        # the model calls a tool, with seeded fake arguments
        Rule(
            "weather",
            m.last_user(contains="weather") & m.has_tools(),
            g.tool_call("get_weather", {"city": g.fake("city")}),
        ),
        # regex named groups are captures, visible to templates
        Rule(
            "greeting",
            m.last_user(regex=r"my name is (?P<name>\w+)"),
            g.template("Nice to meet you, {{ name }}! Your lucky number is {{ integer(1, 99) }}."),
        ),
        # structured data: each field draws from its own fork of the seed
        Rule(
            "profile",
            m.model("gpt-4o*"),
            g.json_object({"id": g.id("user"), "name": g.fake("name"), "age": g.integer(18, 60)}),
        ),
        # anything else: the first sentences of the question, as a stand-in answer
        Rule("default", m.always(), g.summary(max_chars=120, count=2)),
    ],
)


def ask(model: str, text: str, **extra: object) -> None:
    out = mock.generate({"model": model, "messages": [{"role": "user", "content": text}], **extra})
    if out.tool_calls:
        call = out.tool_calls[0]
        answer = f"tool call {call.name}({call.arguments}) id={call.id}"
    else:
        answer = repr(out.text)
    print(f"[{out.rule}] {text!r}")
    print(f"    -> {answer}")
    usage = out.usage
    print(f"    finish={out.finish_reason} usage={usage.prompt_tokens}+{usage.completion_tokens} tokens")


ask("synth-1", "What's the weather in town?", tools=[WEATHER_TOOL])
ask("synth-1", "Hi, my name is Ada.")
ask("gpt-4o-mini", "Create a user profile.")
ask("synth-1", "Summarise this. It has three sentences. The last is dropped.")
ask("synth-1", "Summarise this. It has three sentences. The last is dropped.", max_output_tokens=4)

print("\njournal:")
for record in mock.records:
    print(f"  #{record.index} rule={record.rule} seed={record.seed} at={record.at:.0f} ", end="")
    print(f"captures={record.captures}")

# The same seed and request always give the same answer, in any process and any order.
again = mock.generate({"model": "synth-1", "messages": [{"role": "user", "content": "Hi, my name is Ada."}]})
print("\nsame answer again:", again.text == mock.records[1].output.text)
mock.rules.assert_all_called()
