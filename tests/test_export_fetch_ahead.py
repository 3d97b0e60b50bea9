"""The answers export fetches its next chunk in a thread (outside transactions)."""

import threading

import pytest
from django.db import connection, connections

from annotate import selectors
from tests.test_views_review import double_miss

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sixteen_answers(annotators, admin_user, monkeypatch):
    double_miss(annotators, admin_user, "fa", 8)  # 8 fables × 2 answers
    monkeypatch.setattr(selectors, "ANSWER_CHUNK", 5)  # four chunks: 5, 5, 5, 1


def _record_fetch_threads(monkeypatch) -> list:
    threads = []
    options_by_id = selectors._options_by_id

    def recording(revision_ids, *, using):
        threads.append((threading.get_ident(), connections[using].in_atomic_block))
        return options_by_id(revision_ids, using=using)

    monkeypatch.setattr(selectors, "_options_by_id", recording)
    return threads


def test_fetched_ahead_rows_equal_inline_rows(sixteen_answers, monkeypatch):
    assert not connection.in_atomic_block
    inline = list(selectors.answer_rows(fetch_ahead=False))
    threads = _record_fetch_threads(monkeypatch)
    ahead = list(selectors.answer_rows(fetch_ahead=True))
    assert len(inline) == 16 and ahead == inline
    # Every chunk's options were fetched on one other thread (the chunk queries run on a
    # third: test_an_error_in_the_chunk_query_thread_reaches_the_consumer).
    assert len(threads) == 4
    assert {ident for ident, _ in threads} != {threading.get_ident()}
    assert len({ident for ident, _ in threads}) == 1


def test_inside_a_transaction_chunks_are_fetched_inline(sixteen_answers, monkeypatch):
    from django.db import transaction

    from annotate.models import Answer

    threads = _record_fetch_threads(monkeypatch)
    with transaction.atomic():
        # Uncommitted: only this connection can see the change, so no thread may fetch.
        Answer.objects.update(comment="not committed yet")
        rows = list(selectors.answer_rows())
    assert [row["comment"] for row in rows] == ["not committed yet"] * 16
    assert {ident for ident, _ in threads} == {threading.get_ident()}


def test_stopping_early_closes_the_fetch_thread_and_its_connection(sixteen_answers):
    before = {t.ident for t in threading.enumerate()}
    rows = selectors.answer_rows()
    first = next(rows)
    helpers = [t for t in threading.enumerate() if t.name.startswith("fetch-ahead")]
    assert first["alias"].startswith("fa_") and helpers
    rows.close()  # a client that goes away after the first line
    for helper in helpers:
        helper.join(5)
        assert not helper.is_alive()
    assert {t.ident for t in threading.enumerate()} <= before | {threading.get_ident()}


def test_an_error_in_the_fetch_thread_reaches_the_consumer(sixteen_answers, monkeypatch):
    calls = []
    options_by_id = selectors._options_by_id

    def failing_on_the_third_chunk(revision_ids, *, using):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("connection lost")
        return options_by_id(revision_ids, using=using)

    monkeypatch.setattr(selectors, "_options_by_id", failing_on_the_third_chunk)
    rows = []
    with pytest.raises(RuntimeError, match="connection lost"):
        for row in selectors.answer_rows():
            rows.append(row)
    assert len(rows) == 10  # the two chunks before the failure, then the error
    assert not [t for t in threading.enumerate() if t.name.startswith("fetch-ahead")]


def test_an_error_in_the_chunk_query_thread_reaches_the_consumer(sixteen_answers, monkeypatch):
    calls = []
    fetch_tuples = selectors.fetch_tuples

    def failing_on_the_second_chunk(query):
        if query.model is selectors.Answer:  # (on SQLite, options come through here too)
            calls.append(threading.current_thread().name)
            if len(calls) == 2:
                raise RuntimeError("server closed the connection")
        return fetch_tuples(query)

    monkeypatch.setattr(selectors, "fetch_tuples", failing_on_the_second_chunk)
    rows = []
    with pytest.raises(RuntimeError, match="server closed the connection"):
        for row in selectors.answer_rows():
            rows.append(row)
    # Through the completing thread: the first chunk, then the error.
    assert len(rows) == 5 and calls == ["fetch-ahead-rows"] * 2
    assert not [t for t in threading.enumerate() if t.name.startswith("fetch-ahead")]


def test_fetch_thread_leaves_no_session_open(needs_postgres, sixteen_answers):
    def sessions() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            )
            return cursor.fetchone()[0]

    before = sessions()
    assert len(list(selectors.answer_rows())) == 16
    assert sessions() == before


def test_gc_paused_restores_the_collector_on_exit_error_and_nesting():
    import gc

    assert gc.isenabled()
    with selectors.gc_paused():
        assert not gc.isenabled()
        with selectors.gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause found it paused, and leaves it so
    assert gc.isenabled()
    with pytest.raises(ValueError), selectors.gc_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_export_pauses_the_collector_only_while_it_runs(sixteen_answers):
    import gc

    rows = selectors.answer_rows()
    next(rows)
    assert not gc.isenabled()  # while the writer is between rows
    rows.close()  # a client that goes away
    assert gc.isenabled()
    assert len(list(selectors.answer_rows())) == 16
    assert gc.isenabled()


def test_fetch_thread_plans_without_parallel_workers(needs_postgres, sixteen_answers, monkeypatch):
    seen = []
    options_by_id = selectors._options_by_id

    def recording(revision_ids, *, using):
        with connections[using].cursor() as cursor:
            cursor.execute("SHOW max_parallel_workers_per_gather")
            seen.append(cursor.fetchone()[0])
        return options_by_id(revision_ids, using=using)

    with connection.cursor() as cursor:
        cursor.execute("SHOW max_parallel_workers_per_gather")
        before = cursor.fetchone()[0]
    monkeypatch.setattr(selectors, "_options_by_id", recording)
    assert len(list(selectors.answer_rows())) == 16
    assert seen == ["0"] * 4  # every chunk, on the thread's own connection
    with connection.cursor() as cursor:
        cursor.execute("SHOW max_parallel_workers_per_gather")
        assert cursor.fetchone()[0] == before != "0"  # the caller's connection is untouched
