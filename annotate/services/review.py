"""Expert review: revise a flagged fable, close flags, send fables back for fresh answers.

Every action is a ReviewEvent (who, when, what), shown in the fable's history.
"""

from django.db import transaction
from django.utils import timezone

from annotate.models import (
    GROUND_TRUTH,
    Batch,
    BatchItem,
    Fable,
    Flag,
    Option,
    ReviewEvent,
    Revision,
)
from annotate.services.batches import items_add
from annotate.services.errors import Conflict, Invalid
from annotate.services.importing import revision_create


def _check_options(options: list[tuple[str, str]]) -> list[tuple[str, str]]:
    cleaned = []
    for index, (text, kind) in enumerate(options):
        text, kind = (text or "").strip(), (kind or "").strip()
        if not text:
            raise Invalid(f"option {index + 1}: the text must not be empty")
        if not kind:
            raise Invalid(f"option {index + 1}: choose a kind")
        cleaned.append((text, kind))
    if sum(kind == GROUND_TRUTH for _, kind in cleaned) != 1:
        raise Invalid(f"exactly one option must be the {GROUND_TRUTH}")
    if len(set(cleaned)) != len(cleaned):
        raise Invalid("two options have the same text and kind")
    if not 2 <= len(cleaned) <= 10:
        raise Invalid("a fable needs 2 to 10 options")
    return cleaned


@transaction.atomic
def fable_revise(
    *, fable: Fable, options: list[tuple[str, str]], reason: str, actor, flag: Flag | None = None
) -> Revision:
    """A new current revision of the fable's options; old answers keep their revision."""
    reason = (reason or "").strip()
    if not reason:
        raise Invalid("reason: say why the fable is revised")
    fable = Fable.objects.select_for_update().get(id=fable.id)
    options = _check_options(options)
    before = list(
        Option.objects.filter(revision_id=fable.current_revision_id).values_list("text", "kind")
    )
    if before == options:
        raise Invalid("nothing changed: edit the moral or a distractor first")
    old_number = fable.current_revision.number
    revision = revision_create(fable=fable, options=options, reason=reason, author=actor)
    if flag is not None:
        flag.new_revision = revision
        flag.save(update_fields=["new_revision"])
    ReviewEvent.objects.create(
        fable=fable,
        flag=flag,
        actor=actor,
        action="revised",
        detail={
            "from": old_number,
            "to": revision.number,
            "reason": reason,
            "before": [list(o) for o in before],
            "after": [list(o) for o in options],
        },
    )
    return revision


@transaction.atomic
def flag_close(*, flag: Flag, actor, status: str, note: str = "") -> Flag:
    if status not in (Flag.RESOLVED, Flag.DISMISSED):
        raise Invalid(f"status: must be {Flag.RESOLVED} or {Flag.DISMISSED}")
    flag = Flag.objects.select_for_update().get(id=flag.id)
    if flag.status != Flag.OPEN:
        raise Conflict(f"this flag is already {flag.status}")
    flag.status, flag.note = status, (note or "").strip()
    flag.closed_by, flag.closed_at = actor, timezone.now()
    flag.save(update_fields=["status", "note", "closed_by", "closed_at"])
    ReviewEvent.objects.create(
        fable_id=flag.fable_id,
        flag=flag,
        actor=actor,
        action=status,
        detail={"note": flag.note, "reason": flag.reason},
    )
    return flag


@transaction.atomic
def fable_send_back(*, fable: Fable, batch: Batch, actor, flag: Flag | None = None) -> BatchItem:
    """Put the fable's current revision into `batch` again, for annotators who have not seen it.

    In the same batch, the unique (batch, fable, annotator) assignment keeps earlier
    annotators out; the new item's slots are `fresh_only`, which keeps out annotators who
    saw the fable in any other batch too.
    """
    if batch.closed_at is not None:
        raise Invalid(f"batch {batch.name!r} is closed")
    if batch.kind != Batch.MCQA:
        raise Invalid("fables can only be sent back into multiple-choice batches")
    last = (
        BatchItem.objects.filter(batch=batch, fable=fable)
        .order_by("-round")
        .values_list("round", flat=True)
        .first()
        or 0
    )
    (item,) = items_add(batch=batch, fables=[fable], round_=last + 1, fresh_only=True)
    ReviewEvent.objects.create(
        fable=fable,
        flag=flag,
        actor=actor,
        action="sent_back",
        detail={
            "batch": batch.name,
            "round": item.round,
            "revision": fable.current_revision.number,
        },
    )
    return item
