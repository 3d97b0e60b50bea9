"""The request-rate limit under real concurrency: threads with their own connections."""

import threading

import pytest
from django.db import connections
from django.utils import timezone

from annotate.models import ModelConfig
from annotate.services import generation

THREADS, EACH = 8, 10


@pytest.mark.django_db(transaction=True)
def test_concurrent_reservations_never_share_a_moment(needs_postgres):
    model = generation.model_add(
        name="limited",
        provider="openai_compatible",
        base_url="http://127.0.0.1:9/v1",
        model_id="m",
        requests_per_minute=600,  # one request every 0.1 s
    )
    now = timezone.now()
    waits, errors = [], []
    lock = threading.Lock()
    start = threading.Barrier(THREADS)

    def reserve():
        try:
            start.wait()
            mine = [generation.rate_limit_wait(model_id=model.id, now=now) for _ in range(EACH)]
            with lock:
                waits.extend(mine)
        except Exception as exc:  # reported below, not lost in the thread
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=reserve) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    # Every reservation got its own moment, 0.1 s after the one before: no lost update.
    assert sorted(round(w, 6) for w in waits) == [round(0.1 * k, 6) for k in range(THREADS * EACH)]


def test_reserving_for_a_missing_model_is_an_error(db):
    with pytest.raises(ModelConfig.DoesNotExist):
        generation.rate_limit_wait(model_id=9999)
