"""`python -m synthgpt …` is the `synthgpt` command."""

from __future__ import annotations

from .cli import main

raise SystemExit(main())
