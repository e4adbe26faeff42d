"""`synthgpt render` never writes or deletes through a symlink, and ignores manifest entries that do not
name a file inside `--out` (issue 11, §5)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from synthgpt.render import main

REQUESTS = [{"model": "gpt-4o", "messages": [{"role": "user", "content": f"hello {i}"}]} for i in range(2)]


def _render(tmp: Path, out: Path) -> int:
    requests = tmp / "requests.jsonl"
    requests.write_text("".join(json.dumps(r) + "\n" for r in REQUESTS))
    return main(["--requests", str(requests), "--api", "chat", "--out", str(out), "--no-progress"])


def test_files_that_are_symlinks_are_replaced_not_written_through(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _render(tmp_path, out) == 0
    fixture = sorted(p for p in out.iterdir() if p.name != "manifest.json")[0]
    expected = fixture.read_bytes()
    victims = {}
    for target in (fixture, out / "manifest.json"):
        victim = tmp_path / f"victim-{target.name}"
        victim.write_text("precious")
        victims[target] = victim
        target.unlink()
        target.symlink_to(victim)
    manifest_before = victims[out / "manifest.json"].read_text()
    assert _render(tmp_path, out) == 0
    for target, victim in victims.items():
        assert victim.read_text() == "precious"  # the file outside --out is untouched
        assert not target.is_symlink() and target.is_file()
    assert fixture.read_bytes() == expected
    assert manifest_before == "precious"
    assert json.loads((out / "manifest.json").read_text())["entries"][0]["file"] == fixture.name


def test_stale_entries_outside_out_are_ignored(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "sub").mkdir()
    (out / "sub" / "keep.txt").write_text("keep")
    outside = tmp_path / "outside.json"
    outside.write_text("outside")
    (out / "link.json").symlink_to(outside)
    (out / "old.json").write_text("stale")
    names = [
        ".",
        "..",
        "",
        "sub",
        "link.json",
        "old.json",
        "../outside.json",
        "/etc/passwd",
        "a\x00b",
        7,
        None,
    ]
    (out / "manifest.json").write_text(json.dumps({"entries": [{"file": n} for n in names] + ["x", 3]}))
    assert _render(tmp_path, out) == 0
    assert (out / "sub" / "keep.txt").read_text() == "keep"  # a folder is not a fixture
    assert outside.read_text() == "outside"
    assert not os.path.lexists(out / "link.json")  # the stale link itself is removed, not its target
    assert not (out / "old.json").exists()
    assert tmp_path.is_dir()
