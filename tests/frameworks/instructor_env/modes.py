"""instructor's modes against synthgpt (run in instructor's own venv: it pins jiter<0.15).

Usage: python modes.py <server url>  -> one JSON line per mode: {"mode", "person"} or {"mode", "error"}
"""

import json
import sys

import instructor
from openai import OpenAI
from pydantic import BaseModel


class Person(BaseModel):
    name: str
    age: int


url = sys.argv[1]
TEXT = "Extract: Jason is 25 years old."
for mode in ("TOOLS", "JSON", "MD_JSON", "JSON_SCHEMA", "RESPONSES_TOOLS"):
    openai = OpenAI(base_url=url + "/v1", api_key="k")
    client = instructor.from_openai(openai, mode=getattr(instructor.Mode, mode))
    try:
        asked = [{"role": "user", "content": TEXT}]
        if mode == "RESPONSES_TOOLS":
            person = client.responses.create(
                model="gpt-4o", response_model=Person, input=asked, max_retries=1
            )
        else:
            person = client.chat.completions.create(
                model="gpt-4o", response_model=Person, messages=asked, max_retries=1
            )
        print(json.dumps({"mode": mode, "person": person.model_dump()}))
    except Exception as exc:  # reported, so the test shows which mode failed and why
        print(json.dumps({"mode": mode, "error": f"{type(exc).__name__}: {exc}"[:500]}))
