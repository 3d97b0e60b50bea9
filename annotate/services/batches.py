"""Creating batches: items and their answer slots."""

import random
import zlib
from collections.abc import Sequence

from django.contrib.auth import get_user_model
from django.db import connection, transaction

from annotate.models import Batch, BatchItem, BatchMember, Fable, Slot
from annotate.services.errors import Invalid

User = get_user_model()


def fables_choose(
    *,
    aliases: Sequence[str] | None = None,
    prefix: str | None = None,
    sample: int | None = None,
    seed: int | None = None,
) -> list[Fable]:
    """The fables of a new batch: all, a list of aliases, an alias prefix, and/or a sample."""
    qs = Fable.objects.filter(current_revision__isnull=False).order_by("import_order", "id")
    if aliases:
        found = {f.alias: f for f in qs.filter(alias__in=aliases)}
        unknown = [a for a in aliases if a not in found]
        if unknown:
            raise Invalid(f"unknown fable aliases: {', '.join(unknown[:10])}")
        fables = [found[a] for a in dict.fromkeys(aliases)]
    else:
        if prefix:
            qs = qs.filter(alias__startswith=prefix)
        fables = list(qs)
    if sample is not None:
        if sample < 1:
            raise Invalid("sample must be at least 1")
        if sample < len(fables):
            fables = random.Random(seed).sample(fables, sample)
    if not fables:
        raise Invalid("no fables match: import fables first or change the selection")
    return fables


def order_key(batch_id: int, fable_id: int, round_: int = 1) -> int:
    """A stable pseudo-random position of a fable in a batch."""
    return zlib.crc32(f"{batch_id}:{fable_id}:{round_}".encode()) & 0x7FFFFFFF


@transaction.atomic
def batch_create(
    *,
    name: str,
    fables: Sequence[Fable],
    annotators: Sequence,
    overlap: int = 2,
    kind: str = Batch.MCQA,
    created_by=None,
    models: Sequence = (),
    **settings,
) -> Batch:
    name = name.strip()
    if not name:
        raise Invalid("name: a batch needs a name")
    if kind not in (Batch.MCQA, Batch.RATING):
        raise Invalid(f"kind: must be 'mcqa' or 'rating', got {kind!r}")
    if not annotators:
        raise Invalid("annotators: choose at least one annotator")
    if overlap < 1:
        raise Invalid("overlap: must be at least 1")
    annotators = list(dict.fromkeys(annotators))
    if overlap > len(annotators):
        raise Invalid(
            f"overlap: {overlap} answers per fable need at least {overlap} annotators, "
            f"got {len(annotators)}"
        )
    if not fables:
        raise Invalid("fables: choose at least one fable")
    if kind == Batch.RATING and not models:
        raise Invalid("models: a rating batch needs the models whose morals are rated")
    batch = Batch.objects.create(
        name=name, kind=kind, overlap=overlap, created_by=created_by, **settings
    )
    if kind == Batch.RATING:
        from annotate.services.rating import targets_create

        fables = targets_create(batch=batch, fables=fables, models=models)
        if not fables:
            raise Invalid(
                "models: none of these fables has a finished moral of these models; "
                "generate morals first"
            )
    BatchMember.objects.bulk_create(BatchMember(batch=batch, user=u) for u in annotators)
    items_add(batch=batch, fables=fables)
    _refresh_statistics()
    return batch


def _refresh_statistics() -> None:
    """Let PostgreSQL's planner see a new batch's slots at once.

    Without fresh statistics it believes the new batch has one open slot and probes the
    annotator's assignments without using the fable, which grows with their work.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE annotate_slot, annotate_assignment")


def items_add(
    *, batch: Batch, fables: Sequence[Fable], round_: int = 1, fresh_only: bool = False
) -> list[BatchItem]:
    items = BatchItem.objects.bulk_create(
        BatchItem(batch=batch, fable=f, round=round_) for f in fables
    )
    Slot.objects.bulk_create(
        Slot(
            batch=batch,
            item=item,
            fable_id=item.fable_id,
            number=n,
            order_key=order_key(batch.id, item.fable_id, round_),
            fresh_only=fresh_only,
        )
        for item in items
        for n in range(1, batch.overlap + 1)
    )
    return items


def users_by_name(usernames: Sequence[str]) -> list:
    found = {u.username: u for u in User.objects.filter(username__in=usernames)}
    unknown = [n for n in usernames if n not in found]
    if unknown:
        raise Invalid(f"annotators: unknown users: {', '.join(unknown)}")
    return [found[n] for n in usernames]
