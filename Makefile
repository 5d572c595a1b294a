# teamdeck -- `make run` starts the dashboard, `make test` runs the checks and the tests.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP_RUN  := $(VENV)/.installed-run
STAMP_DEV  := $(VENV)/.installed-dev
# Test workers: most tests wait on processes, files and timers, not the CPU, so four share two
# cores well. TEST_WORKERS=0 runs them in one process.
TEST_WORKERS ?= 4

.PHONY: run test lint typecheck bench clean

$(BIN)/python:
	@echo "teamdeck: creating $(VENV), then installing teamdeck and its dependencies (first run only: a minute or two)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Not --quiet: the first install takes a while, and pip's progress shows it is working.
$(STAMP_RUN): pyproject.toml | $(BIN)/python
	@echo "teamdeck: installing teamdeck and its dependencies into $(VENV)"
	$(BIN)/python -m pip install -e .
	touch $@

$(STAMP_DEV): pyproject.toml | $(BIN)/python
	@echo "teamdeck: installing teamdeck and its development tools into $(VENV)"
	$(BIN)/python -m pip install -e '.[dev]'
	touch $@ $(STAMP_RUN)

run: $(STAMP_RUN)
	$(BIN)/teamdeck $(ARGS)

test: $(STAMP_DEV)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n $(TEST_WORKERS)

lint: $(STAMP_DEV)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy app widgets
	$(BIN)/mypy --strict app/core app/runtime

bench: $(STAMP_DEV)
	$(BIN)/python bench/mailbox.py
	$(BIN)/python bench/watch.py
	$(BIN)/python bench/delivery.py
	$(BIN)/python bench/team.py
	$(BIN)/python bench/ui.py
	$(BIN)/python bench/history.py
	$(BIN)/python bench/live.py
	$(BIN)/python bench/hook.py
	$(BIN)/python bench/startup.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
