"""Generation in a real Celery worker process, including a worker killed mid-run.

Broker: whatever the suite runs on (the filesystem broker by default, Redis in CI).
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from annotate.models import Fable, ModelMoral
from annotate.services import generation
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parent.parent


def database_url() -> str:
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    user = s.get("USER") or "postgres"
    return f"postgres://{user}@{s.get('HOST') or '127.0.0.1'}:{s.get('PORT') or 5432}/{s['NAME']}"


def start_worker(*extra: str, **env) -> subprocess.Popen:
    full_env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": database_url(),
        "GENERATION_STALE_SECONDS": "3",
        "GENERATION_REQUEUE_PENDING_SECONDS": "4",
        "GENERATION_REQUEUE_INTERVAL": "1",
        "CELERY_VISIBILITY_TIMEOUT": "5",
        **env,
    }
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "annotate",
            "worker",
            "--concurrency=2",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
            *extra,
        ],
        cwd=ROOT,
        env=full_env,
        start_new_session=True,
    )


def stop(worker: subprocess.Popen, sig=signal.SIGTERM) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, sig)
        try:
            worker.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(5)


def wait_until(predicate, timeout: float, message: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.3)
    pytest.fail(message)


@pytest.fixture
def purged_queue():
    from annotate.celery import app

    app.control.purge()
    yield
    app.control.purge()


@pytest.fixture
def setup(purged_queue, fables):
    with FakeOpenAI(latency=0.6) as server:
        model = generation.model_add(
            name="fake",
            provider="openai_compatible",
            base_url=server.url,
            model_id="fake-1",
            requests_per_minute=6000,
        )
        yield server, model


def counts():
    return {
        s: ModelMoral.objects.filter(status=s).count()
        for s in ("pending", "running", "done", "failed")
    }


def test_worker_generates_morals_for_the_fixture_fables(setup):
    server, model = setup
    fables = list(Fable.objects.all()[:8])
    worker = start_worker()
    try:
        generation.morals_request(models=[model], fables=fables)
        wait_until(lambda: counts()["done"] == 8, 90, f"not all done: {counts()}")
    finally:
        stop(worker)
    assert ModelMoral.objects.filter(text__startswith="Once upon").exists() is False
    assert all(m.text for m in ModelMoral.objects.all())
    assert server.max_in_flight <= 2


def test_killed_worker_loses_nothing_and_duplicates_nothing(setup):
    server, model = setup
    fables = list(Fable.objects.all()[:12])
    first = start_worker()
    try:
        generation.morals_request(models=[model], fables=fables)
        wait_until(
            lambda: counts()["done"] >= 2 and counts()["running"] >= 1,
            90,
            f"worker never got going: {counts()}",
        )
    finally:
        stop(first, signal.SIGKILL)  # no warm shutdown: in-flight requests die with it
    before = counts()
    assert before["done"] < 12
    second = start_worker("--beat")
    try:
        wait_until(lambda: counts()["done"] == 12, 120, f"not recovered: {counts()}")
    finally:
        stop(second)
    rows = list(ModelMoral.objects.values_list("fable_id", "model_id"))
    assert len(rows) == len(set(rows)) == 12
    assert counts() == {"pending": 0, "running": 0, "done": 12, "failed": 0}
