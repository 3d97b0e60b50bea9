import threading
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from annotate.models import Fable, ModelConfig, ModelMoral
from annotate.services import generation
from annotate.services.errors import Invalid
from tests.factories import make_fables
from tests.fake_openai import FakeOpenAI


@pytest.fixture
def server():
    with FakeOpenAI() as s:
        yield s


@pytest.fixture
def api_model(db, server):
    return generation.model_add(
        name="fake-gpt",
        provider="openai_compatible",
        base_url=server.url,
        model_id="fake-1",
        requests_per_minute=6000,
    )


@pytest.fixture
def fables(db):
    make_fables(3)
    return list(Fable.objects.all())


def request(models, fables, capture):
    with capture(execute=False) as callbacks:
        ids = generation.morals_request(models=models, fables=fables)
    return ids, callbacks


def test_request_creates_one_row_per_fable_and_model_and_enqueues_after_commit(
    api_model, fables, django_capture_on_commit_callbacks
):
    ids, callbacks = request([api_model], fables, django_capture_on_commit_callbacks)
    assert len(ids) == 3 and len(callbacks) == 1
    again, _ = request([api_model], fables, django_capture_on_commit_callbacks)
    assert again == [] and ModelMoral.objects.count() == 3
    assert set(ModelMoral.objects.values_list("prompt_version", flat=True)) == {
        generation.prompt_version()
    }


def test_generate_stores_text_tokens_latency_and_raw(
    api_model, fables, server, django_capture_on_commit_callbacks
):
    server.script.append(("ok", 'Moral: "Haste makes waste."'))
    (moral_id, *_), _ = request([api_model], fables, django_capture_on_commit_callbacks)
    assert generation.moral_generate(moral_id=moral_id).status == "done"
    moral = ModelMoral.objects.get(id=moral_id)
    assert (moral.status, moral.text) == ("done", "Haste makes waste.")
    assert moral.prompt_tokens == 42 and moral.latency_ms is not None and moral.raw["choices"]
    assert server.requests[0]["json"]["messages"][1]["content"].startswith("Title: ")
    assert generation.moral_generate(moral_id=moral_id).status == "skipped"
    assert len(server.requests) == 1


def test_rate_limited_then_retried_then_done(
    api_model, fables, server, django_capture_on_commit_callbacks
):
    server.script.extend([("status", 429, {"Retry-After": "3"}), ("status", 500)])
    (moral_id, *_), _ = request([api_model], fables, django_capture_on_commit_callbacks)
    first = generation.moral_generate(moral_id=moral_id)
    assert first.status == "retry" and first.retry_in >= 3
    assert ModelMoral.objects.get(id=moral_id).status == "pending"
    assert generation.moral_generate(moral_id=moral_id).status == "retry"
    assert generation.moral_generate(moral_id=moral_id).status == "done"
    assert ModelMoral.objects.get(id=moral_id).attempts == 3


def test_gives_up_after_the_last_attempt_with_the_error(
    api_model, fables, server, django_capture_on_commit_callbacks
):
    server.default = ("status", 503)
    (moral_id, *_), _ = request([api_model], fables, django_capture_on_commit_callbacks)
    outcomes = [
        generation.moral_generate(moral_id=moral_id, max_attempts=3).status for _ in range(3)
    ]
    assert outcomes == ["retry", "retry", "failed"]
    moral = ModelMoral.objects.get(id=moral_id)
    assert moral.status == "failed" and "gave up after 3 attempts" in moral.error
    assert "HTTP 503" in moral.error and moral.text == ""


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [
        (("malformed",), "malformed JSON"),
        (("empty",), "empty moral"),
        (("status", 401), "HTTP 401"),
    ],
)
def test_bad_answers_fail_with_a_clear_message(
    api_model, fables, server, behaviour, message, django_capture_on_commit_callbacks
):
    server.script.append(behaviour)
    (moral_id, *_), _ = request([api_model], fables, django_capture_on_commit_callbacks)
    assert generation.moral_generate(moral_id=moral_id).status == "failed"
    moral = ModelMoral.objects.get(id=moral_id)
    assert message in moral.error and moral.text == ""


def test_missing_api_key_variable_fails_clearly(
    db, server, fables, django_capture_on_commit_callbacks
):
    model = generation.model_add(
        name="keyed",
        provider="openai_compatible",
        base_url=server.url,
        model_id="x",
        api_key_env="MORABLES_TEST_UNSET_KEY",
    )
    (moral_id, *_), _ = request([model], fables, django_capture_on_commit_callbacks)
    generation.moral_generate(moral_id=moral_id)
    assert "MORABLES_TEST_UNSET_KEY is not set" in ModelMoral.objects.get(id=moral_id).error
    assert server.requests == []


def test_baseline_uses_another_fables_moral(db, django_capture_on_commit_callbacks):
    make_fables(4)
    model = generation.model_add(name="tfidf", provider="baseline")
    fables = list(Fable.objects.all())
    ids, _ = request([model], fables, django_capture_on_commit_callbacks)
    for moral_id in ids:
        assert generation.moral_generate(moral_id=moral_id).status == "done"
    for moral in ModelMoral.objects.select_related("fable"):
        assert moral.text.endswith("the true moral")
        assert not moral.text.startswith(moral.fable.alias + ":")
        assert moral.raw["baseline"] == "tfidf"


def test_claim_is_atomic_and_stale_rows_are_taken_over(
    api_model, fables, settings, django_capture_on_commit_callbacks
):
    (moral_id, *_), _ = request([api_model], fables, django_capture_on_commit_callbacks)
    assert generation.moral_claim(moral_id=moral_id)
    assert not generation.moral_claim(moral_id=moral_id)
    later = timezone.now() + timedelta(seconds=settings.GENERATION_STALE_SECONDS + 1)
    assert generation.moral_claim(moral_id=moral_id, now=later)
    with django_capture_on_commit_callbacks(execute=False):
        assert generation.morals_requeue_stale(now=later + timedelta(hours=1)) == 1
    assert ModelMoral.objects.get(id=moral_id).status == "pending"


def limited_model(requests_per_minute: int):
    return generation.model_add(
        name="limited",
        provider="openai_compatible",
        base_url="http://127.0.0.1:9/v1",
        model_id="m",
        requests_per_minute=requests_per_minute,
    )


def test_rate_limit_reservations_are_spaced(db):
    model = limited_model(120)
    waits = [generation.rate_limit_wait(model_id=model.id) for _ in range(4)]
    assert waits[0] == pytest.approx(0, abs=0.05)
    assert waits[3] == pytest.approx(1.5, abs=0.1)  # 0.5 s apart


@pytest.mark.django_db(transaction=True)
def test_concurrent_reservations_never_share_a_moment(needs_postgres):
    """8 threads with their own connections reserve 10 moments each at one instant."""
    threads_n, each = 8, 10
    model = limited_model(600)  # one request every 0.1 s
    now = timezone.now()
    waits, errors = [], []
    lock = threading.Lock()
    start = threading.Barrier(threads_n)

    def reserve():
        try:
            start.wait()
            mine = [generation.rate_limit_wait(model_id=model.id, now=now) for _ in range(each)]
            with lock:
                waits.extend(mine)
        except Exception as exc:  # reported below, not lost in the thread
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=reserve) for _ in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    # Every reservation got its own moment, 0.1 s after the one before: no lost update.
    assert sorted(round(w, 6) for w in waits) == [
        round(0.1 * k, 6) for k in range(threads_n * each)
    ]


def test_reserving_for_a_missing_model_is_an_error(db):
    with pytest.raises(ModelConfig.DoesNotExist):
        generation.rate_limit_wait(model_id=9999)


def test_backoff_grows_and_honours_retry_after():
    assert generation.backoff(1, 10.0) >= 10.0
    assert max(generation.backoff(6, None) for _ in range(50)) > 4
    assert all(generation.backoff(a, None) <= generation.MAX_DELAY for a in range(1, 20))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"provider": "magic"}, "provider"),
        ({"provider": "openai_compatible", "base_url": "ftp://x"}, "base_url"),
        ({"provider": "openai_compatible", "base_url": "http://x/v1"}, "model"),
        (
            {
                "provider": "openai_compatible",
                "base_url": "http://x/v1",
                "model_id": "m",
                "api_key_env": "sk-abc123-def",
            },
            "NAME of an environment variable",
        ),
    ],
)
def test_model_add_refusals(db, kwargs, message):
    with pytest.raises(Invalid, match=message):
        generation.model_add(name="bad", **kwargs)


def test_progress_counts(api_model, fables, django_capture_on_commit_callbacks):
    request([api_model], fables, django_capture_on_commit_callbacks)
    (row,) = generation.generation_progress()
    assert row["pending"] == 3 and row["total"] == 3 and row["percent"] == 0
