# Shortcuts for the README's commands (make is optional: each target is one plain command).
PY ?= python3

.PHONY: sample test bench install

install:
	$(PY) -m pip install -e '.[test,bench]'

sample:
	$(PY) -m pip install -e . && quadfleet sample --out sample-out

test:
	$(PY) -m pip install -e '.[test]' && $(PY) -m pytest

bench:
	$(PY) -m pip install -e '.[bench]' && $(PY) bench/bench_extract.py
