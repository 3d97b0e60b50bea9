"""Reads for pages, the API and exports. Each function does a fixed number of queries."""

import gc
import hashlib
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import orjson
from django.db import connections
from django.db.models import Count, Func, IntegerField, OuterRef, Q, Subquery, TextField, Value
from django.db.models.functions import Cast, Coalesce

from annotate.models import (
    GROUND_TRUTH,
    Answer,
    Assignment,
    Batch,
    BatchItem,
    BatchMember,
    Fable,
    Option,
    Revision,
    Slot,
)
from annotate.services.routing import labels_for


def _count(qs, field="batch"):
    return Coalesce(
        Subquery(
            qs.values(field).annotate(c=Count("id")).values("c")[:1], output_field=IntegerField()
        ),
        Value(0),
    )


def batches_with_progress(*, user=None, batch_ids=None):
    """Batches (of an annotator, or all) with answers needed/done (and the user's own count).

    1 query: batches with three counting subqueries.
    """
    qs = Batch.objects.all()
    if user is not None:
        qs = qs.filter(members__user=user).exclude(
            members__screening=BatchMember.REJECTED, members__user=user
        )
    if batch_ids is not None:
        qs = qs.filter(id__in=batch_ids)
    qs = qs.annotate(
        answers_needed=_count(Slot.objects.filter(batch=OuterRef("pk"))),
        answers_done=_count(Slot.objects.filter(batch=OuterRef("pk"), filled=True)),
        # Subqueries, not Count() over joins: the membership filter above would narrow them.
        fable_count=_count(BatchItem.objects.filter(batch=OuterRef("pk"))),
        annotator_count=_count(BatchMember.objects.filter(batch=OuterRef("pk"))),
    )
    if user is not None:
        qs = qs.annotate(
            mine_done=_count(
                Answer.objects.filter(batch=OuterRef("pk"), annotator=user, slot__isnull=False)
            ),
            mine_open=_count(
                Assignment.objects.filter(
                    batch=OuterRef("pk"), annotator=user, status=Assignment.CLAIMED
                )
            ),
        )
    return qs.order_by("-created_at", "-id")


def percent(done: int, needed: int) -> int:
    return round(100 * done / needed) if needed else 100


def expected_share(batch) -> int:
    """How many answers one annotator is expected to give in a batch (for '12 of 70')."""
    if not batch.annotator_count:
        return 0
    return -(-batch.answers_needed // batch.annotator_count)


def batch_progress(*, batch_id: int) -> dict | None:
    batch = batches_with_progress(batch_ids=[batch_id]).first()
    if batch is None:
        return None
    counts = dict(
        Assignment.objects.filter(batch_id=batch_id).values_list("status").annotate(c=Count("id"))
    )
    return {
        "id": batch.id,
        "name": batch.name,
        "kind": batch.kind,
        "overlap": batch.overlap,
        "fables": batch.fable_count,
        "annotators": batch.annotator_count,
        "answers_done": batch.answers_done,
        "answers_needed": batch.answers_needed,
        "percent": percent(batch.answers_done, batch.answers_needed),
        "skips": counts.get(Assignment.SKIPPED, 0),
        "claimed": counts.get(Assignment.CLAIMED, 0),
        "surplus": Answer.objects.filter(batch_id=batch_id, slot__isnull=True).count(),
        "closed": batch.closed_at is not None,
    }


@dataclass
class ShownOption:
    """What an annotator sees of one option: a per-assignment label and the text. No id."""

    label: str
    text: str
    score: str | None = None  # a rating posted with an error, shown again


def assignment_screen(*, assignment: Assignment) -> list[ShownOption]:
    """The options of an assignment in its shown order. 1 query."""
    texts = getattr(assignment, "shown_texts", None)  # set by a claim that just happened
    if assignment.batch.kind == Batch.RATING:
        from annotate.models import RatingTarget

        if texts is None:
            texts = dict(
                RatingTarget.objects.filter(id__in=assignment.order).values_list("id", "text")
            )
        labels = [str(i + 1) for i in range(len(assignment.order))]
    else:
        if texts is None:
            texts = dict(Option.objects.filter(id__in=assignment.order).values_list("id", "text"))
        labels = labels_for(len(assignment.order))
    return [ShownOption(label, texts[i]) for label, i in zip(labels, assignment.order, strict=True)]


def annotator_code(user_id: int, date_joined) -> str:
    """A stable pseudonym for exports and review pages."""
    digest = hashlib.sha256(f"{user_id}:{date_joined.isoformat()}".encode()).hexdigest()
    return f"ann-{digest[:6]}"


def my_done_count(*, batch_id: int, user) -> int:
    return (
        Answer.objects.filter(batch_id=batch_id, annotator=user)
        .filter(Q(slot__isnull=False))
        .count()
    )


# ---------------------------------------------------------------- exports

ANSWER_COLUMNS = [
    "batch",
    "alias",
    "revision",
    "annotator",
    "shown_kinds",
    "selected_kinds",
    "selected_texts",
    "primary_kind",
    "correct",
    "multi",
    "surplus",
    "comment",
    "seconds",
    "claimed_at",
    "submitted_at",
]


def _annotator_codes() -> dict[int, str]:
    """User id → pseudonymous annotator code, for every user (one query)."""
    from django.contrib.auth import get_user_model

    return {
        uid: annotator_code(uid, joined)
        for uid, joined in get_user_model().objects.values_list("id", "date_joined")
    }


def json_texts(texts) -> list:
    """Decode many JSON texts in one call: per-row decoding (JSONField) was most of the
    cost of reading 100,000 answers. orjson decodes the joined text in half the time of
    json.loads (lists of option ids, measured on 5,000-row chunks)."""
    return orjson.loads("[" + ",".join(texts) + "]")


def tenths(values: list[float]) -> list[float]:
    """[round(value, 1) for value in values], the same floats, in a few array operations.

    rint(10x) / 10 is round(x, 1) exactly (IEEE division is correctly rounded, and round()
    returns the float nearest to its decimal result) except where 10x lies so close to a
    half that multiplying by 10 may have moved it across, or past the magnitude where that
    margin still holds: those few values go through round() itself. round() on each of a
    million answers' seconds was a fifth of building their rows."""
    with np.errstate(all="ignore"):  # infinities and NaN are among the doubtful
        x = np.asarray(values, dtype=np.float64) * 10
        rounded = (np.rint(x) / 10).tolist()
        doubtful = np.abs(np.abs(x - np.trunc(x)) - 0.5) < 1e-6
        doubtful |= ~(np.abs(x) < 1e7)
    for i in np.flatnonzero(doubtful).tolist():
        rounded[i] = round(values[i], 1)
    return rounded


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cycle collector while bulk reads build many short-lived containers.

    Reference counting still frees every row as soon as it is written; what pauses is
    the collector's repeated walks over all live objects (Django's own included), which
    cost a fifth to a third of the CPU time of agreement and of a million-row export.
    The collector's previous state comes back on exit, also on error or early close.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


ANSWER_CHUNK = 5000


def fetch_tuples(query) -> list[tuple]:
    """All rows of a values_list query as plain tuples, fetched in one go.

    For thousands of rows of plain values, Django's row-by-row iteration costs more than
    the query; the SQL is still the ORM's own."""
    sql, params = query.query.sql_with_params()
    with connections[query.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


class IsoTimestamp(Func):
    """A timestamp as the text Python's datetime.isoformat() gives for it in UTC, written by
    the database: parsing a million timestamps in Python to print them again was a quarter
    of an answers export."""

    output_field = TextField()

    def as_postgresql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        # isoformat() leaves out a zero fraction: ".000000" goes, with one to_char.
        text = f"""to_char(({sql}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')"""
        return f"replace({text}, '.000000+', '+')", params

    def as_sqlite(self, compiler, connection, **extra):
        # Django stores aware datetimes in SQLite as UTC text from isoformat(" ").
        sql, params = compiler.compile(self.source_expressions[0])
        return f"(REPLACE({sql}, ' ', 'T') || '+00:00')", params


def answer_rows(
    *, batch_id: int | None = None, include_surplus: bool = True, fetch_ahead: bool = True
):
    """One dict per MCQA answer, streamed in constant memory.

    Answers come ANSWER_CHUNK at a time, with the options, alias and revision number of the
    revisions they answer fetched per chunk (once per revision, not joined once per answer:
    the two index lookups per answer were 40% of PostgreSQL's time), so memory does not
    grow with the size of the benchmark. Queries: three per chunk, plus three. With
    fetch_ahead, the next chunks are fetched in threads while this one is turned into rows
    (see _fetched_ahead).
    """
    codes = _annotator_codes()
    batches = dict(Batch.objects.filter(kind=Batch.MCQA).values_list("id", "name"))
    if batch_id is not None:
        batches = {batch_id: batches[batch_id]} if batch_id in batches else {}
    qs = Answer.objects.filter(batch_id__in=batches)
    if not include_surplus:
        qs = qs.filter(slot__isnull=False)
    rows = (
        qs.order_by("id")
        .annotate(order_text=Cast("assignment__order", TextField()))
        .annotate(selected_text=Cast("selected", TextField()))
        .annotate(claimed_text=IsoTimestamp("assignment__claimed_at"))
        .annotate(created_text=IsoTimestamp("created_at"))
        .values_list(
            "id",
            "batch_id",
            "revision_id",
            "annotator_id",
            "order_text",
            "selected_text",
            "slot_id",
            "comment",
            "seconds",
            "claimed_text",
            "created_text",
        )
    )

    def fetch(after: int):
        # Keyset pagination (id > after, LIMIT): each chunk is a short indexed query, and
        # no cursor or transaction stays open while the client reads.
        chunk = fetch_tuples(rows.filter(id__gt=after)[:ANSWER_CHUNK])
        return (chunk[-1][0], chunk) if chunk else None

    def complete(chunk: list[tuple]):
        revision_ids = {row[2] for row in chunk}
        options = _options_by_id(revision_ids, using=rows.db)
        revisions = _revisions_by_id(revision_ids, using=rows.db)
        orders = json_texts(row[4] for row in chunk)
        selections = json_texts(row[5] for row in chunk)
        seconds = tenths([row[8] for row in chunk])
        return zip(chunk, orders, selections, seconds, strict=True), options, revisions

    if not batches:
        return
    if fetch_ahead:
        chunks = _fetched_ahead(fetch, complete, using=rows.db)
    else:
        chunks = map(complete, _fetched_inline(fetch))
    with gc_paused():  # for the whole export, its writer included
        yield from _answer_dicts(chunks, codes, batches)


def _answer_dicts(chunks, codes: dict[int, str], batches: dict[int, str]):
    for rows_of_chunk, (kinds, texts), revisions in chunks:
        kind_of, text_of = kinds.__getitem__, texts.__getitem__
        for row, order, selected, seconds in rows_of_chunk:
            _, batch, revision, user, _, _, slot, comment, _, claimed, created = row
            alias, number = revisions[revision]
            if len(selected) == 1:  # most answers: a third less time than through map()
                first = selected[0]
                primary = kinds[first]
                picked, chosen = [primary], [texts[first]]
            else:
                picked, chosen = list(map(kind_of, selected)), list(map(text_of, selected))
                primary = picked[0] if picked else None
            yield {
                "batch": batches[batch],
                "alias": alias,
                "revision": number,
                "annotator": codes[user],
                "shown_kinds": list(map(kind_of, order)),
                "selected_kinds": picked,
                "selected_texts": chosen,
                "primary_kind": primary,
                "correct": primary == GROUND_TRUTH,
                "multi": len(picked) > 1,
                "surplus": slot is None,
                "comment": comment,
                "seconds": seconds,
                "claimed_at": claimed,
                "submitted_at": created,
            }


def _fetched_inline(fetch):
    """fetch(0), then fetch(last key of the previous chunk)…, until it returns None."""
    after = 0
    while (fetched := fetch(after)) is not None:
        after, chunk = fetched
        yield chunk


FETCH_AHEAD = 2  # chunks each fetch thread may hold ready before the next stage takes them


def _fetched_ahead(fetch, complete, *, using: str):
    """map(complete, _fetched_inline(fetch)), as a pipeline of two threads, each with its
    own connection: one runs the chunk queries, the other completes each chunk (its
    options query, JSON decoding) while the first already fetches the next, and this
    generator's consumer writes out the chunk before. Run one after the other in a single
    thread, the two queries left both PostgreSQL and Python idle a third of the time.

    A thread's connection cannot see a transaction that is still open on the caller's;
    inside an atomic block (a test case, a caller's transaction) the chunks are fetched
    inline instead. An error in either thread is raised here, in the consumer.
    """
    if connections[using].in_atomic_block:
        yield from map(complete, _fetched_inline(fetch))
        return
    chunks = _in_thread(lambda: _fetched_inline(fetch), name="fetch-ahead-rows", using=using)
    try:
        yield from _in_thread(
            lambda: map(complete, chunks), name="fetch-ahead-options", using=using
        )
    finally:
        chunks.close()  # ends the chunk-query thread; the completing one has ended by now


def _in_thread(make_items, *, name: str, using: str):
    """The items of make_items(), produced by a thread with its own connection that keeps up
    to FETCH_AHEAD of them ready. When the consumer stops early (a client that goes away),
    the thread ends after the item in flight and closes its connection."""
    ready: queue.Queue = queue.Queue(maxsize=FETCH_AHEAD)
    stop = threading.Event()

    def hand_over(item) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False  # the consumer has gone

    def produce():
        try:
            _plan_without_parallel_workers(using)
            for item in make_items():
                if not hand_over(("item", item)):
                    return
            hand_over(("end", None))
        except BaseException as exc:  # whatever it is, the consumer must not wait forever
            hand_over(("error", exc))
        finally:
            connections.close_all()  # this thread's connection

    thread = threading.Thread(target=produce, name=name, daemon=True)
    thread.start()
    try:
        while True:
            kind, value = ready.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        thread.join()


def _plan_without_parallel_workers(using: str) -> None:
    """On this (the fetch thread's own) connection, plan chunk queries without parallel
    workers. PostgreSQL would start two workers and a Gather Merge for every chunk of 5,000
    answers; the start-up and the gather cost more CPU than they save, and the export is
    bound by CPU shared between Python and PostgreSQL: a million-row export ran about 12%
    faster without them (interleaved A/B). The setting goes with the connection."""
    connection = connections[using]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET max_parallel_workers_per_gather = 0")


def _for_revisions(
    revision_ids: set[int], *, sql: str, query, field: str, using: str
) -> list[tuple]:
    """The rows of `query` whose `field` is one of these revision ids, or on PostgreSQL of
    the same statement written as `sql`, its ids in one array parameter (= ANY(%s::bigint[]))
    sent as text: an IN list of 5,000 placeholders, or psycopg adapting a list of 5,000 ints,
    cost more than running the query. The ORM's filter is built only where it runs: checking
    each of 2,500 ids for it took a seventh of a million-row export's Python time."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        query = query.filter(**{f"{field}__in": revision_ids})
        return fetch_tuples(query.using(using).order_by())
    with connection.cursor() as cursor:
        cursor.execute(sql, ["{" + ",".join(map(str, revision_ids)) + "}"])
        return cursor.fetchall()


def _options_by_id(revision_ids: set[int], *, using: str) -> tuple[dict, dict]:
    """Option id → kind, and option id → text, for the options of these revisions, in one
    query."""
    rows = _for_revisions(
        revision_ids,
        sql=f"SELECT id, kind, text FROM {Option._meta.db_table} "
        "WHERE revision_id = ANY(%s::bigint[])",
        query=Option.objects.values_list("id", "kind", "text"),
        field="revision_id",
        using=using,
    )
    ids, kinds, texts = zip(*rows, strict=True) if rows else ((), (), ())
    return dict(zip(ids, kinds, strict=True)), dict(zip(ids, texts, strict=True))


def _revisions_by_id(revision_ids: set[int], *, using: str) -> dict[int, tuple[str, int]]:
    """Revision id → (fable alias, revision number), in one query."""
    rows = _for_revisions(
        revision_ids,
        sql=f"SELECT r.id, f.alias, r.number FROM {Revision._meta.db_table} r "
        f"JOIN {Fable._meta.db_table} f ON f.id = r.fable_id WHERE r.id = ANY(%s::bigint[])",
        query=Revision.objects.values_list("id", "fable__alias", "number"),
        field="id",
        using=using,
    )
    return {rid: (alias, number) for rid, alias, number in rows}


SKIP_COLUMNS = ["batch", "alias", "revision", "annotator", "comment", "claimed_at", "skipped_at"]


def skip_rows(*, batch_id: int | None = None):
    codes = _annotator_codes()
    qs = Assignment.objects.filter(status=Assignment.SKIPPED)
    if batch_id is not None:
        qs = qs.filter(batch_id=batch_id)
    for batch, alias, number, user, comment, claimed, finished in (
        qs.order_by("id")
        .values_list(
            "batch__name",
            "fable__alias",
            "revision__number",
            "annotator_id",
            "skip_comment",
            "claimed_at",
            "finished_at",
        )
        .iterator(chunk_size=5000)
    ):
        yield {
            "batch": batch,
            "alias": alias,
            "revision": number,
            "annotator": codes[user],
            "comment": comment,
            "claimed_at": claimed.isoformat(),
            "skipped_at": finished.isoformat() if finished else None,
        }


FLAG_COLUMNS = [
    "id",
    "alias",
    "batch",
    "reason",
    "status",
    "revision",
    "new_revision",
    "note",
    "created_at",
    "closed_at",
    "closed_by",
]


def flag_rows(*, status: str | None = None):
    from annotate.models import Flag

    qs = Flag.objects.select_related("fable", "batch", "revision", "new_revision", "closed_by")
    if status:
        qs = qs.filter(status=status)
    for flag in qs.order_by("id").iterator(chunk_size=2000):
        yield {
            "id": flag.id,
            "alias": flag.fable.alias,
            "batch": flag.batch.name if flag.batch else None,
            "reason": flag.reason,
            "status": flag.status,
            "revision": flag.revision.number,
            "new_revision": flag.new_revision.number if flag.new_revision else None,
            "note": flag.note,
            "created_at": flag.created_at.isoformat(),
            "closed_at": flag.closed_at.isoformat() if flag.closed_at else None,
            "closed_by": flag.closed_by.username if flag.closed_by else None,
        }


REVISION_COLUMNS = [
    "alias",
    "revision",
    "reason",
    "author",
    "proposed",
    "created_at",
    "current",
    "classes",
    "choices",
]


def revision_rows():
    qs = (
        Revision.objects.select_related("fable", "author")
        .prefetch_related("options")
        .order_by("fable__import_order", "fable_id", "number")
    )
    for rev in qs.iterator(chunk_size=1000):
        opts = list(rev.options.all())
        yield {
            "alias": rev.fable.alias,
            "revision": rev.number,
            "reason": rev.reason,
            "author": rev.author.username if rev.author else None,
            "proposed": rev.proposed,
            "created_at": rev.created_at.isoformat(),
            "current": rev.fable.current_revision_id == rev.id,
            "classes": [o.kind for o in opts],
            "choices": [o.text for o in opts],
        }


CODE_COLUMNS = ["code", "username", "role"]


def annotator_code_rows():
    from django.contrib.auth import get_user_model

    for uid, username, joined, groups in (
        get_user_model()
        .objects.order_by("id")
        .values_list("id", "username", "date_joined", "groups__name")
    ):
        yield {"code": annotator_code(uid, joined), "username": username, "role": groups}


# ---------------------------------------------------------------- review


def flag_queue(*, status: str = "open", reason: str = "", batch_id: int | None = None):
    """Flags oldest first with what the queue shows. 1 query."""
    from annotate.models import Flag

    qs = Flag.objects.select_related("fable", "batch", "revision").order_by("created_at", "id")
    if status:
        qs = qs.filter(status=status)
    if reason:
        qs = qs.filter(reason=reason)
    if batch_id:
        qs = qs.filter(batch_id=batch_id)
    return qs


def revision_diff(before: list[tuple[str, str]], after: list[tuple[str, str]]) -> list[dict]:
    """Position by position: unchanged, changed (old → new), added or removed options."""
    rows = []
    for i in range(max(len(before), len(after))):
        old = before[i] if i < len(before) else None
        new = after[i] if i < len(after) else None
        state = (
            "unchanged"
            if old == new
            else "added"
            if old is None
            else "removed"
            if new is None
            else "changed"
        )
        rows.append({"position": i + 1, "old": old, "new": new, "state": state})
    return rows


def fable_review(*, fable_id: int) -> dict:
    """Everything the review page shows of one fable. A fixed number of queries."""
    from annotate.models import Flag, ReviewEvent

    fable = Fable.objects.select_related("current_revision").get(id=fable_id)
    revisions = list(
        Revision.objects.filter(fable=fable)
        .select_related("author")
        .prefetch_related("options")
        .order_by("number")
    )
    options = {o.id: o for rev in revisions for o in rev.options.all()}
    by_revision = {rev.id: rev for rev in revisions}
    answers = list(
        Answer.objects.filter(fable=fable)
        .select_related("assignment", "batch", "annotator")
        .order_by("revision__number", "created_at")
    )
    skips = list(
        Assignment.objects.filter(fable=fable, status=Assignment.SKIPPED).select_related(
            "annotator", "batch", "revision"
        )
    )
    answer_groups = []
    for rev in revisions:
        group = []
        for a in answers:
            if a.revision_id != rev.id:
                continue
            labels = labels_for(len(a.assignment.order))
            shown = {oid: labels[i] for i, oid in enumerate(a.assignment.order)}
            group.append(
                {
                    "code": annotator_code(a.annotator_id, a.annotator.date_joined),
                    "batch": a.batch.name,
                    "selected": [
                        {"label": shown[o], "kind": options[o].kind, "text": options[o].text}
                        for o in a.selected
                    ],
                    "correct": bool(a.selected) and options[a.selected[0]].kind == "ground_truth",
                    "comment": a.comment,
                    "seconds": round(a.seconds),
                    "surplus": a.slot_id is None,
                }
            )
        if group or rev.id == fable.current_revision_id:
            answer_groups.append({"revision": rev, "answers": group})
    diffs = []
    for prev, rev in zip(revisions, revisions[1:], strict=False):
        diffs.append(
            {
                "from": prev,
                "to": rev,
                "rows": revision_diff(
                    [(o.text, o.kind) for o in prev.options.all()],
                    [(o.text, o.kind) for o in rev.options.all()],
                ),
            }
        )
    return {
        "fable": fable,
        "current_options": list(by_revision[fable.current_revision_id].options.all()),
        "revisions": revisions,
        "answer_groups": answer_groups,
        "skips": [
            {
                "code": annotator_code(s.annotator_id, s.annotator.date_joined),
                "batch": s.batch.name,
                "comment": s.skip_comment,
                "revision": s.revision.number,
            }
            for s in skips
        ],
        "diffs": diffs,
        "flags": list(
            Flag.objects.filter(fable=fable)
            .select_related("batch", "closed_by")
            .order_by("created_at")
        ),
        "events": list(
            ReviewEvent.objects.filter(fable=fable)
            .select_related("actor", "flag")
            .order_by("created_at", "id")
        ),
    }


MORAL_COLUMNS = [
    "alias",
    "model",
    "provider",
    "prompt_version",
    "status",
    "text",
    "prompt_tokens",
    "completion_tokens",
    "latency_ms",
    "attempts",
    "error",
]


def moral_rows():
    from annotate.models import ModelMoral

    for row in (
        ModelMoral.objects.order_by("fable__import_order", "model__name")
        .values_list(
            "fable__alias",
            "model__name",
            "model__provider",
            "prompt_version",
            "status",
            "text",
            "prompt_tokens",
            "completion_tokens",
            "latency_ms",
            "attempts",
            "error",
        )
        .iterator(chunk_size=5000)
    ):
        yield dict(zip(MORAL_COLUMNS, row, strict=True))


RATING_COLUMNS = [
    "batch",
    "alias",
    "annotator",
    "moral_source",
    "is_control",
    "text",
    "score",
    "comment",
    "surplus",
    "submitted_at",
]


def rating_rows(*, batch_id: int | None = None):
    from annotate.models import Rating

    codes = _annotator_codes()
    qs = Rating.objects.all()
    if batch_id is not None:
        qs = qs.filter(answer__batch_id=batch_id)
    for batch, alias, user, model, control, text, score, comment, slot, created in (
        qs.order_by("id")
        .values_list(
            "answer__batch__name",
            "target__fable__alias",
            "answer__annotator_id",
            "target__model_moral__model__name",
            "target__control_option_id",
            "target__text",
            "score",
            "answer__comment",
            "answer__slot_id",
            "answer__created_at",
        )
        .iterator(chunk_size=5000)
    ):
        yield {
            "batch": batch,
            "alias": alias,
            "annotator": codes[user],
            "moral_source": model or "true moral",
            "is_control": control is not None,
            "text": text,
            "score": score,
            "comment": comment,
            "surplus": slot is None,
            "submitted_at": created.isoformat(),
        }
