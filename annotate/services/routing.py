"""Routing: claim the next fable, answer it, skip it. See routing.md beside this file."""

import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from annotate.models import Answer, Assignment, Batch, BatchMember, Fable, Option, Slot
from annotate.services.errors import Conflict, Forbidden, Invalid

_shuffle = random.SystemRandom().shuffle


def lease_length() -> timedelta:
    return timedelta(seconds=settings.LEASE_SECONDS)


def labels_for(count: int) -> list[str]:
    """Screen labels of an assignment's options: A, B, C…"""
    return [chr(ord("A") + i) for i in range(count)]


def _shown_order(*, batch: Batch, revision_id: int, fable_id: int) -> tuple[list[int], dict]:
    """A fresh random order of what the annotator will see, and the texts by id."""
    if batch.kind == Batch.RATING:
        from annotate.services.rating import rating_targets

        texts = rating_targets(batch=batch, fable_id=fable_id)
    else:
        texts = dict(Option.objects.filter(revision_id=revision_id).values_list("id", "text"))
    ids = list(texts)
    _shuffle(ids)
    return ids, texts


# The hot path speaks SQL written by hand: compiling the ORM's version of the claim query
# cost ten times its run time (routing.md, "Hand-written SQL"). Table and column names are
# Django's defaults; the routing tests run every statement on SQLite and on PostgreSQL.
_CLAIM_SQL = """
SELECT s.id, s.item_id, s.holder_id, f.id, f.alias, f.title, f.story, f.content_note,
       f.current_revision_id
FROM annotate_slot s JOIN annotate_fable f ON f.id = s.fable_id
WHERE s.batch_id = %(batch)s AND NOT s.filled
  AND (s.lease_expires_at IS NULL OR s.lease_expires_at < %(now)s)
  AND NOT EXISTS (SELECT 1 FROM annotate_assignment a
                  WHERE a.annotator_id = %(user)s AND a.batch_id = %(batch)s
                    AND a.fable_id = s.fable_id)
  AND NOT (s.fresh_only AND EXISTS (SELECT 1 FROM annotate_assignment a
                                   WHERE a.annotator_id = %(user)s AND a.fable_id = s.fable_id))
ORDER BY s.priority, s.order_key, s.number
LIMIT 1 {lock}"""

# The batch, membership, and the open slot this annotator may already hold.
_MEMBER_SQL = """
SELECT b.*,
       (SELECT s.holder_id FROM annotate_slot s
          JOIN annotate_assignment a ON a.id = s.holder_id
        WHERE NOT s.filled AND a.batch_id = %(batch)s AND a.annotator_id = %(user)s
          AND a.status = %(claimed)s
        LIMIT 1) AS held_id
FROM annotate_batchmember m JOIN annotate_batch b ON b.id = m.batch_id
WHERE m.batch_id = %(batch)s AND m.user_id = %(user)s AND m.screening <> %(rejected)s"""

_FABLE_FIELDS = ["id", "alias", "title", "story", "content_note", "current_revision_id"]


def _locking(clause: str) -> str:
    """A row-locking clause where the database has one; SQLite locks the whole file."""
    return clause if connection.features.has_select_for_update_skip_locked else ""


def _rows(sql: str, params: dict) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def claim_sql(*, batch_id: int, annotator_id: int, now: datetime) -> tuple[str, dict]:
    """The claim query: open, free slots of fables this annotator has not had, first one
    in claim order, locked (SKIP LOCKED); with the slot's fable."""
    params = {
        "batch": batch_id,
        "user": annotator_id,
        "now": connection.ops.adapt_datetimefield_value(now),
    }
    return _CLAIM_SQL.format(lock=_locking("FOR UPDATE OF s SKIP LOCKED")), params


@transaction.atomic
def assignment_claim(
    *, batch: Batch | int, annotator, now: datetime | None = None
) -> Assignment | None:
    """The annotator's current fable, or a newly claimed one; None when nothing is left.

    `batch` may be a Batch or its id (the API passes the id: the batch then comes with the
    membership query instead of a query of its own). An unknown batch is refused like a
    batch the annotator is not in.
    """
    now = now or timezone.now()
    batch_id = batch if isinstance(batch, int) else batch.id
    # One query: the batch, membership, and the open slot this annotator may already hold.
    batch = next(
        iter(
            Batch.objects.raw(
                _MEMBER_SQL,
                {
                    "batch": batch_id,
                    "user": annotator.id,
                    "claimed": Assignment.CLAIMED,
                    "rejected": BatchMember.REJECTED,
                },
            )
        ),
        None,
    )
    if batch is None:
        raise Forbidden("you are not an annotator of this batch")
    if batch.closed_at is not None:
        return None

    if batch.held_id is not None:
        # Reload or second tab: the same fable comes back, its lease renewed.
        expires = now + lease_length()
        if Slot.objects.filter(holder_id=batch.held_id, filled=False).update(
            lease_expires_at=expires
        ):
            Assignment.objects.filter(id=batch.held_id).update(expires_at=expires)
            assignment = Assignment.objects.select_related("fable").get(id=batch.held_id)
            assignment.batch = batch
            return assignment

    sql, params = claim_sql(batch_id=batch.id, annotator_id=annotator.id, now=now)
    row = next(iter(_rows(sql, params)), None)
    if row is None:
        return None
    slot_id, item_id, previous_holder_id = row[:3]
    fable = Fable.from_db(connection.alias, _FABLE_FIELDS, row[3:])
    if previous_holder_id is not None:
        # The previous holder's lease ran out; their late answer may still count elsewhere.
        Assignment.objects.filter(id=previous_holder_id, status=Assignment.CLAIMED).update(
            status=Assignment.EXPIRED
        )
    order, texts = _shown_order(
        batch=batch, revision_id=fable.current_revision_id, fable_id=fable.id
    )
    assignment = Assignment.objects.create(
        batch=batch,
        item_id=item_id,
        fable=fable,
        revision_id=fable.current_revision_id,
        annotator=annotator,
        order=order,
        claimed_at=now,
        expires_at=now + lease_length(),
    )
    assignment.shown_texts = texts  # the screen needs no second query
    Slot.objects.filter(id=slot_id).update(
        holder=assignment, lease_expires_at=assignment.expires_at
    )
    return assignment


_LOCK_SLOT_SQL = """
SELECT id, item_id FROM annotate_slot
WHERE holder_id = %(assignment)s AND NOT filled ORDER BY id LIMIT 1 {lock}"""

# The batch's fields that need no conversion from the database (not its timestamps): the
# answer and skip services and the flag rules read these.
_BATCH_FIELDS = [
    f.attname
    for f in Batch._meta.concrete_fields
    if f.get_internal_type() not in ("DateTimeField", "DateField")
]
_LOCK_ASSIGNMENT_SQL = (
    "SELECT a.*, "
    + ", ".join(f"b.{name} AS batch__{name}" for name in _BATCH_FIELDS)
    + """, ans.id AS answer__id, ans.payload AS answer__payload
FROM annotate_assignment a JOIN annotate_batch b ON b.id = a.batch_id
LEFT JOIN annotate_answer ans ON ans.assignment_id = a.id
WHERE a.id = %(assignment)s {lock}"""
)


def _lock_for_finish(
    *, assignment_id: int, annotator
) -> tuple[Assignment, Slot | None, Answer | None]:
    """Lock the slot this assignment holds (if any) and then the assignment; with the
    assignment's batch and its answer, if it has one.

    Slot first, then assignment: the same order as a claim that takes over an expired
    slot, so the two can never deadlock.
    """
    params = {"assignment": assignment_id}
    row = next(iter(_rows(_LOCK_SLOT_SQL.format(lock=_locking("FOR UPDATE")), params)), None)
    slot = Slot.from_db(connection.alias, ["id", "item_id"], row) if row else None
    sql = _LOCK_ASSIGNMENT_SQL.format(lock=_locking("FOR UPDATE OF a"))
    assignment = next(iter(Assignment.objects.raw(sql, params)), None)
    if assignment is None or assignment.annotator_id != annotator.id:
        raise Forbidden("this assignment is not yours")
    assignment.batch = Batch.from_db(
        connection.alias,
        _BATCH_FIELDS,
        [getattr(assignment, f"batch__{name}") for name in _BATCH_FIELDS],
    )
    answer = None
    if assignment.answer__id is not None:
        # JSON columns reach a raw query as text on both databases (Django's own loaders).
        payload = json.loads(assignment.answer__payload)
        answer = Answer.from_db(
            connection.alias, ["id", "payload"], [assignment.answer__id, payload]
        )
    return assignment, slot, answer


def _parse_selected(selected, count: int) -> list[str]:
    if not isinstance(selected, list) or not selected:
        raise Invalid("selected: choose at least one option (a list of labels such as ['A'])")
    labels = labels_for(count)
    normal = []
    for value in selected:
        label = str(value).strip().upper()
        if label.isdigit() and 1 <= int(label) <= count:
            label = labels[int(label) - 1]
        if label not in labels:
            raise Invalid(f"selected: {value!r} is not one of the labels {', '.join(labels)}")
        if label in normal:
            raise Invalid(f"selected: {label} is given twice")
        normal.append(label)
    return normal


_FILL_SQL = """
UPDATE annotate_slot SET
  filled = CASE WHEN id = %(slot)s THEN TRUE ELSE filled END,
  holder_id = CASE WHEN id = %(slot)s THEN %(assignment)s ELSE holder_id END,
  lease_expires_at = CASE WHEN id = %(slot)s THEN NULL ELSE lease_expires_at END,
  priority = 0
WHERE item_id = %(item)s
  AND (id = %(slot)s OR id IN (SELECT o.id FROM annotate_slot o
                               WHERE o.item_id = %(item)s AND NOT o.filled AND o.priority > 0
                                 AND o.id <> %(slot)s {lock}))"""


@dataclass
class AnswerResult:
    answer: Answer
    outcome: str  # "created", "repeated" or "surplus"


@transaction.atomic
def answer_submit(
    *, assignment_id: int, annotator, payload: dict, now: datetime | None = None
) -> AnswerResult:
    """Record an answer. A late answer is counted if a slot is free, else kept as surplus."""
    now = now or timezone.now()
    assignment, slot, existing = _lock_for_finish(assignment_id=assignment_id, annotator=annotator)
    comment = str(payload.get("comment") or "").strip()
    if assignment.batch.kind == Batch.RATING:
        from annotate.services.rating import parse_ratings

        body = {
            "ratings": parse_ratings(payload.get("ratings"), len(assignment.order)),
            "comment": comment,
        }
        selected_ids: list[int] = []
    else:
        labels = _parse_selected(payload.get("selected"), len(assignment.order))
        body = {"selected": labels, "comment": comment}
        selected_ids = [assignment.order[ord(label) - ord("A")] for label in labels]

    if existing is not None:
        if existing.payload == body:
            return AnswerResult(existing, "repeated")
        raise Conflict("this fable was already answered with a different answer")
    if assignment.status == Assignment.SKIPPED:
        raise Conflict("this fable was skipped; a skipped fable cannot be answered")

    if slot is None:
        # Our lease ran out and the slot went to someone else: is another slot still free?
        slot = (
            Slot.objects.filter(item_id=assignment.item_id, filled=False)
            .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now))
            .select_for_update(skip_locked=True)
            .first()
        )
    answer = Answer.objects.create(
        assignment=assignment,
        slot=slot,
        batch_id=assignment.batch_id,
        fable_id=assignment.fable_id,
        revision_id=assignment.revision_id,
        annotator=annotator,
        selected=selected_ids,
        payload=body,
        comment=comment,
        seconds=max(0.0, (now - assignment.claimed_at).total_seconds()),
    )
    assignment.status = Assignment.SUBMITTED
    assignment.finished_at = now
    assignment.save(update_fields=["status", "finished_at"])
    if assignment.batch.kind == Batch.RATING:
        from annotate.services.rating import ratings_record

        ratings_record(answer=answer, assignment=assignment, ratings=body["ratings"])
    if slot is None:
        return AnswerResult(answer, "surplus")
    # Fill our slot and, in the same statement, move the item's other open slots to the
    # front of the queue (finish what is started). SKIP LOCKED: a slot locked by another
    # answer or claim is being taken anyway, and waiting for it is how two answers of one
    # fable would deadlock. The item filter keeps this an index scan (an OR with a
    # subquery alone is a seq scan).
    with connection.cursor() as cursor:
        cursor.execute(
            _FILL_SQL.format(lock=_locking("FOR UPDATE SKIP LOCKED")),
            {"slot": slot.id, "assignment": assignment.id, "item": assignment.item_id},
        )
        updated = cursor.rowcount
    if updated == 1:
        # No other open slot was free: this may have been the item's last expected answer.
        _item_completed_hook(assignment=assignment, slot=slot)
    return AnswerResult(answer, "created")


def _item_completed_hook(*, assignment: Assignment, slot: Slot) -> None:
    from annotate.services.flags import flags_check_item

    flags_check_item(batch=assignment.batch, item_id=assignment.item_id)


@transaction.atomic
def assignment_skip(
    *, assignment_id: int, annotator, comment: str, now: datetime | None = None
) -> Assignment:
    """Skip a fable (comment required): its slot is freed and it never comes back to us."""
    now = now or timezone.now()
    comment = (comment or "").strip()
    assignment, slot, _ = _lock_for_finish(assignment_id=assignment_id, annotator=annotator)
    if not comment:
        raise Invalid("comment: say why you skip this fable")
    if assignment.status == Assignment.SKIPPED:
        if assignment.skip_comment == comment:
            return assignment
        raise Conflict("this fable was already skipped with another comment")
    if assignment.status == Assignment.SUBMITTED:
        raise Conflict("this fable was already answered")
    if slot is not None:
        Slot.objects.filter(id=slot.id).update(holder=None, lease_expires_at=None)
    assignment.status = Assignment.SKIPPED
    assignment.skip_comment = comment
    assignment.finished_at = now
    assignment.save(update_fields=["status", "skip_comment", "finished_at"])
    from annotate.services.flags import flags_on_skip

    flags_on_skip(assignment=assignment)
    return assignment
