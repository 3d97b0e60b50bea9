SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev

.PHONY: demo test lint format bench reliability clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

.env:
	cp .env.example .env

# The web app on http://127.0.0.1:8000 and one Celery worker; one Ctrl-C stops both.
demo: $(STAMP) .env
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py demo_setup
	@set -m; trap 'kill -- -$$worker 2>/dev/null; exit 0' INT TERM EXIT; \
	$(BIN)/celery -A annotate worker --beat --loglevel=INFO --concurrency=2 & worker=$$!; \
	$(BIN)/python manage.py runserver 127.0.0.1:8000 --noreload

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Benchmarks on the real MORABLES files (not committed): MORABLES=path/to/folder
MORABLES ?= ../shared/data/morables
bench: $(STAMP)
	$(BIN)/python bench/run.py --data $(MORABLES)

# Load, faults and fuzzing against gunicorn, PostgreSQL, Celery and a private Redis
# (RELIABILITY_FABLES, RELIABILITY_ANNOTATORS to resize). Exit 1 on any violation.
reliability: $(STAMP)
	$(BIN)/python bench/reliability.py

clean:
	rm -rf var/ .pytest_cache .ruff_cache
