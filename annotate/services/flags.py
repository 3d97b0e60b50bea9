"""Flags for expert review, raised by the answer and skip services (never by signals)."""

import json

from django.db import connection

from annotate.models import GROUND_TRUTH, Assignment, Batch, Flag, ReviewEvent

# Each counted answer of an item, with the true moral of the revision it answered.
_ITEM_ANSWERS_SQL = f"""
SELECT ans.selected, ans.revision_id, ans.fable_id, truth.id
FROM annotate_answer ans JOIN annotate_slot s ON s.id = ans.slot_id
LEFT JOIN annotate_option truth
  ON truth.revision_id = ans.revision_id AND truth.kind = '{GROUND_TRUTH}'
WHERE s.item_id = %(item)s
ORDER BY ans.id"""


def _raise(
    *,
    batch: Batch,
    item_id: int,
    fable_id: int,
    revision_id: int,
    reason: str,
    assignment: Assignment | None = None,
) -> Flag:
    flag, created = Flag.objects.get_or_create(
        item_id=item_id,
        reason=reason,
        assignment=assignment,
        defaults={"batch": batch, "fable_id": fable_id, "revision_id": revision_id},
    )
    if created:
        ReviewEvent.objects.create(
            fable_id=fable_id,
            flag=flag,
            action="flagged",
            detail={"reason": reason, "batch": batch.name},
        )
    return flag


def flags_check_item(*, batch: Batch, item_id: int) -> list[Flag]:
    """Run the batch's rules once the item's last expected answer has arrived."""
    if batch.kind != Batch.MCQA or not (batch.flag_double_miss or batch.flag_ambiguous):
        return []
    # One query on the answer's hot path (see "Hand-written SQL" in routing.md).
    with connection.cursor() as cursor:
        cursor.execute(_ITEM_ANSWERS_SQL, {"item": item_id})
        answers = [  # JSON comes as text, as in routing's hand-written queries
            (json.loads(selected), rev, fable, truth)
            for selected, rev, fable, truth in cursor.fetchall()
        ]
    if len(answers) < batch.overlap:
        return []
    fable_id, revision_id = answers[0][2], answers[-1][1]
    flags = []
    if batch.flag_double_miss and all(truth not in sel for sel, _, _, truth in answers):
        flags.append(
            _raise(
                batch=batch,
                item_id=item_id,
                fable_id=fable_id,
                revision_id=revision_id,
                reason=Flag.DOUBLE_MISS,
            )
        )
    if batch.flag_ambiguous and all(len(sel) > 1 for sel, *_ in answers):
        flags.append(
            _raise(
                batch=batch,
                item_id=item_id,
                fable_id=fable_id,
                revision_id=revision_id,
                reason=Flag.AMBIGUOUS,
            )
        )
    return flags


def flags_on_skip(*, assignment: Assignment) -> Flag | None:
    batch = assignment.batch
    if not batch.flag_skip_comment or not assignment.skip_comment:
        return None
    return _raise(
        batch=batch,
        item_id=assignment.item_id,
        fable_id=assignment.fable_id,
        revision_id=assignment.revision_id,
        reason=Flag.SKIP_COMMENT,
        assignment=assignment,
    )
