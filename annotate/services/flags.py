"""Flags for expert review, raised by the answer and skip services (never by signals)."""

from annotate.models import Answer, Assignment, Batch, Flag, Option, ReviewEvent


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
    answers = list(
        Answer.objects.filter(slot__item_id=item_id).values_list(
            "selected", "revision_id", "fable_id"
        )
    )
    if len(answers) < batch.overlap:
        return []
    truths = dict(
        Option.objects.filter(
            revision_id__in={rev for _, rev, _ in answers}, kind="ground_truth"
        ).values_list("revision_id", "id")
    )
    fable_id, revision_id = answers[0][2], answers[-1][1]
    flags = []
    if batch.flag_double_miss and all(truths.get(rev) not in sel for sel, rev, _ in answers):
        flags.append(
            _raise(
                batch=batch,
                item_id=item_id,
                fable_id=fable_id,
                revision_id=revision_id,
                reason=Flag.DOUBLE_MISS,
            )
        )
    if batch.flag_ambiguous and all(len(sel) > 1 for sel, _, _ in answers):
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
