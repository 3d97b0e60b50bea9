"""Routing under real concurrency: threads with their own PostgreSQL connections."""

import random
import threading
import time

import pytest
from django.db import connection, connections

from annotate.models import Answer, Assignment, Fable, Slot
from annotate.services.batches import batch_create
from annotate.services.routing import answer_submit, assignment_claim, assignment_skip
from tests.factories import make_fables

ANNOTATORS, FABLES, OVERLAP = 50, 500, 2

RECONCILE = """
SELECT 'over-answered' AS problem, s.item_id, COUNT(*) FROM annotate_answer a
  JOIN annotate_slot s ON s.id = a.slot_id GROUP BY s.item_id HAVING COUNT(*) > %(overlap)s
UNION ALL
SELECT 'answered twice by one annotator', fable_id, COUNT(*) FROM annotate_answer
  WHERE batch_id = %(batch)s AND slot_id IS NOT NULL
  GROUP BY fable_id, annotator_id HAVING COUNT(*) > 1
UNION ALL
SELECT 'not answered overlap times', i.id, COUNT(s.id) FROM annotate_batchitem i
  LEFT JOIN annotate_slot s ON s.item_id = i.id AND s.filled
  WHERE i.batch_id = %(batch)s GROUP BY i.id HAVING COUNT(s.id) <> %(overlap)s
"""


@pytest.mark.django_db(transaction=True)
def test_fifty_annotators_five_hundred_fables(needs_postgres, make_user, admin_user, settings):
    settings.LEASE_SECONDS = 1
    make_fables(FABLES)
    users = [make_user(f"sim{i}") for i in range(ANNOTATORS)]
    batch = batch_create(
        name="concurrency",
        fables=list(Fable.objects.all()),
        annotators=users,
        overlap=OVERLAP,
        created_by=admin_user,
    )
    submitted, surplus, errors = [], [], []
    lock = threading.Lock()
    deadline = time.monotonic() + 240

    def work(user, seed):
        rng = random.Random(seed)
        try:
            while time.monotonic() < deadline:
                a = assignment_claim(batch=batch, annotator=user)
                if a is None:
                    if not Slot.objects.filter(batch=batch, filled=False).exists():
                        return
                    time.sleep(0.2)  # leases held by others may still run out
                    continue
                roll = rng.random()
                if roll < 0.02:
                    return  # walks away holding a lease
                if roll < 0.07:
                    assignment_skip(assignment_id=a.id, annotator=user, comment="unclear")
                    continue
                if roll < 0.12:
                    time.sleep(1.3)  # answers after the lease ran out
                labels = rng.sample("ABCDE", rng.choice([1, 1, 1, 2]))
                result = answer_submit(
                    assignment_id=a.id, annotator=user, payload={"selected": labels, "comment": ""}
                )
                with lock:
                    submitted.append(result.answer.id)
                    if result.outcome == "surplus":
                        surplus.append(result.answer.id)
        except Exception as exc:  # surfaced below: a thread must not die silently
            with lock:
                errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(u, i)) for i, u in enumerate(users)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    with connection.cursor() as cursor:
        cursor.execute(RECONCILE, {"batch": batch.id, "overlap": OVERLAP})
        problems = cursor.fetchall()
    assert problems == []
    # Nothing submitted was lost: every accepted submit is a row, surplus ones marked so.
    assert Answer.objects.filter(id__in=submitted).count() == len(set(submitted))
    assert Answer.objects.count() == len(set(submitted))
    assert Answer.objects.filter(slot__isnull=True).count() == len(set(surplus))
    assert Answer.objects.filter(slot__isnull=False).count() == FABLES * OVERLAP
    assert Assignment.objects.filter(status=Assignment.SKIPPED).exists()
