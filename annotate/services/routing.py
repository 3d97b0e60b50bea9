"""Routing: claim the next fable, answer it, skip it. See routing.md beside this file."""

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import (
    BooleanField,
    Case,
    DateTimeField,
    Exists,
    F,
    OuterRef,
    Q,
    Subquery,
    Value,
    When,
)
from django.utils import timezone

from annotate.models import Answer, Assignment, Batch, BatchMember, Option, Slot
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


def claim_queryset(*, batch: Batch, annotator, now: datetime):
    """Open, free slots of fables this annotator has not had, in claim order, locked."""
    mine = Assignment.objects.filter(
        batch_id=batch.id, fable_id=OuterRef("fable_id"), annotator=annotator
    )
    seen_anywhere = Assignment.objects.filter(fable_id=OuterRef("fable_id"), annotator=annotator)
    return (
        Slot.objects.filter(batch=batch, filled=False)
        .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now))
        .filter(~Exists(mine))
        .exclude(Q(fresh_only=True) & Exists(seen_anywhere))
        .order_by("priority", "order_key", "number")
        .select_related("fable")
        .select_for_update(skip_locked=True, of=("self",))
    )


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
    held = Slot.objects.filter(
        holder__batch_id=batch_id,
        holder__annotator=annotator,
        holder__status=Assignment.CLAIMED,
        filled=False,
    ).values("holder_id")[:1]
    member = (
        BatchMember.objects.filter(batch_id=batch_id, user=annotator)
        .exclude(screening=BatchMember.REJECTED)
        .select_related("batch")
        .annotate(held_id=Subquery(held))
        .first()
    )
    if member is None:
        raise Forbidden("you are not an annotator of this batch")
    batch = member.batch
    if batch.closed_at is not None:
        return None

    if member.held_id is not None:
        # Reload or second tab: the same fable comes back, its lease renewed.
        expires = now + lease_length()
        if Slot.objects.filter(holder_id=member.held_id, filled=False).update(
            lease_expires_at=expires
        ):
            Assignment.objects.filter(id=member.held_id).update(expires_at=expires)
            assignment = Assignment.objects.select_related("fable").get(id=member.held_id)
            assignment.batch = batch
            return assignment

    slot = claim_queryset(batch=batch, annotator=annotator, now=now).first()
    if slot is None:
        return None
    if slot.holder_id is not None:
        # The previous holder's lease ran out; their late answer may still count elsewhere.
        Assignment.objects.filter(id=slot.holder_id, status=Assignment.CLAIMED).update(
            status=Assignment.EXPIRED
        )
    fable = slot.fable
    order, texts = _shown_order(
        batch=batch, revision_id=fable.current_revision_id, fable_id=fable.id
    )
    assignment = Assignment.objects.create(
        batch=batch,
        item_id=slot.item_id,
        fable=fable,
        revision_id=fable.current_revision_id,
        annotator=annotator,
        order=order,
        claimed_at=now,
        expires_at=now + lease_length(),
    )
    assignment.shown_texts = texts  # the screen needs no second query
    slot.holder = assignment
    slot.lease_expires_at = assignment.expires_at
    slot.save(update_fields=["holder", "lease_expires_at"])
    return assignment


def _lock_for_finish(*, assignment_id: int, annotator) -> tuple[Assignment, Slot | None]:
    """Lock the slot this assignment holds (if any) and then the assignment.

    Slot first, then assignment: the same order as a claim that takes over an expired
    slot, so the two can never deadlock.
    """
    slot = Slot.objects.select_for_update().filter(holder_id=assignment_id, filled=False).first()
    assignment = (
        Assignment.objects.select_for_update(of=("self",))
        .select_related("batch", "answer")
        .filter(id=assignment_id)
        .first()
    )
    if assignment is None or assignment.annotator_id != annotator.id:
        raise Forbidden("this assignment is not yours")
    return assignment, slot


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
    assignment, slot = _lock_for_finish(assignment_id=assignment_id, annotator=annotator)
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

    existing = getattr(assignment, "answer", None)
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
    # fable would deadlock.
    others = (
        Slot.objects.filter(item_id=assignment.item_id, filled=False, priority__gt=0)
        .exclude(id=slot.id)
        .select_for_update(skip_locked=True)
        .values("id")
    )
    ours = Q(id=slot.id)
    # The item filter keeps this an index scan (an OR with a subquery alone is a seq scan).
    updated = Slot.objects.filter(
        Q(item_id=assignment.item_id), ours | Q(id__in=Subquery(others))
    ).update(
        filled=Case(When(ours, then=Value(True)), default=F("filled"), output_field=BooleanField()),
        holder=Case(
            When(ours, then=Value(assignment.id)),
            default=F("holder"),
            output_field=Slot._meta.get_field("holder"),
        ),
        lease_expires_at=Case(
            When(ours, then=None), default=F("lease_expires_at"), output_field=DateTimeField()
        ),
        priority=0,
    )
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
    assignment, slot = _lock_for_finish(assignment_id=assignment_id, annotator=annotator)
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
