"""The synthgpt benchmark: `python bench/run.py` (or `make bench`). See bench/README.md."""
