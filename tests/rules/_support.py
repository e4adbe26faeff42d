"""What the rule-file tests share."""

from __future__ import annotations

BARE_LIST_TWO_TYPOS = """
- name: a
  match: always
  output: {text: x}
- name: b
  match: {last_usr: y}
  output: {text: y}
- name: c
  match: {last_usr: z}
  output: {text: z}
"""
"""A rule file that is a bare list of rules, with the same typo on lines 5 and 8 (after the first
newline is stripped, as the tests' writers do)."""
