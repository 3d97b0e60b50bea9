"""Exports: the revised benchmark in its own schema, and streamed JSON/JSONL/CSV writers.

Everything here is a generator, so exports run in constant memory whatever their size.
"""

import itertools
import json
import random
import re
from collections.abc import Iterable, Iterator

import orjson

from annotate.models import GROUND_TRUTH, Fable

VARIANTS = ("core", "tf", "noto")
NOTO_TEXT = "None of the other options."
NOTO_KIND = "none_of_the_others"
CHUNK = 500


def _current_fables() -> Iterator[Fable]:
    return (
        Fable.objects.filter(current_revision__isnull=False)
        .select_related("current_revision")
        .prefetch_related("current_revision__options")
        .order_by("import_order", "id")
        .iterator(chunk_size=CHUNK)
    )


def _ordered_options(fable: Fable, shuffle_seed: int | None) -> list[tuple[str, str]]:
    options = [(o.text, o.kind) for o in fable.current_revision.options.all()]
    if shuffle_seed is not None:
        # Seeded per fable, so one fable's order does not depend on which others exist.
        random.Random(f"{shuffle_seed}:{fable.alias}").shuffle(options)
    return options


def benchmark_records(*, variant: str = "core", shuffle_seed: int | None = None) -> Iterator[dict]:
    """Records of the current revisions in the benchmark schema (plus `revision`)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    for fable in _current_fables():
        options = _ordered_options(fable, shuffle_seed)
        revision = fable.current_revision.number
        if variant == "tf":
            for text, kind in options:
                yield {
                    "alias": fable.alias,
                    "story_title": fable.title,
                    "story": fable.story,
                    "moral": text,
                    "kind": kind,
                    "label": kind == GROUND_TRUTH,
                    "revision": revision,
                }
            continue
        if variant == "noto":
            options = [(NOTO_TEXT, NOTO_KIND) if k == GROUND_TRUTH else (t, k) for t, k in options]
        truth_kind = NOTO_KIND if variant == "noto" else GROUND_TRUTH
        label = next(i for i, (_, kind) in enumerate(options) if kind == truth_kind)
        yield {
            "alias": fable.alias,
            "story_title": fable.title,
            "story": fable.story,
            "moral": options[label][0],
            "is_altered": fable.is_altered,
            "correct_moral_label": label,
            "classes": [kind for _, kind in options],
            "choices": [text for text, _ in options],
            "revision": revision,
        }


def json_array_lines(records: Iterable[dict]) -> Iterator[str]:
    """A pretty JSON array, written one record at a time."""
    first = True
    yield "["
    for record in records:
        body = json.dumps(record, ensure_ascii=False, indent=4)
        yield ("\n    " if first else ",\n    ") + body.replace("\n", "\n    ")
        first = False
    yield "\n]\n" if not first else "]\n"


def _encode(value) -> str:
    """Compact JSON (UTF-8, not ASCII-escaped) with orjson: about 5x faster than json.dumps,
    which was a third of the time of a million-row export."""
    return orjson.dumps(value, default=str).decode()


def _in_blocks(lines: Iterable[str], newline: str) -> Iterator[str]:
    """The lines, each ended by `newline`, yielded in blocks of about 64 kB."""
    block: list[str] = []
    size = 0
    for line in lines:
        block.append(line)
        size += len(line)
        if size > 64 * 1024:
            block.append("")
            yield newline.join(block)
            block, size = [], 0
    if block:
        block.append("")
        yield newline.join(block)


def jsonl_lines(records: Iterable[dict]) -> Iterator[str]:
    """One JSON object per line, yielded in blocks of about 64 kB."""
    return _in_blocks(map(_encode, records), "\n")


_NEEDS_QUOTES = re.compile(r'[",\r\n]').search


def csv_field(value) -> str:
    """One value as csv.writer (QUOTE_MINIMAL) writes it; lists and dicts as JSON.

    Written out here rather than through csv.writer: the same text at a third less time,
    which was most of a million-row CSV export (a test checks it against csv.writer).
    """
    kind = type(value)
    if kind is not str:
        if value is None:
            return ""
        if kind is int or kind is float or kind is bool:
            return str(value)  # never needs quotes
        value = _encode(value) if kind is list or kind is dict else str(value)
    return '"' + value.replace('"', '""') + '"' if _NEEDS_QUOTES(value) else value


def csv_lines(records: Iterable[dict], *, columns: list[str]) -> Iterator[str]:
    """CSV with a header (lines end in \\r\\n, as csv.writer's), in blocks of about 64 kB."""
    header = ",".join(map(csv_field, columns)) or '""'
    lines = (
        # Plain text (most fields) inline; the rest through csv_field. A lone empty field
        # is written "" (as csv.writer does), or its line would vanish.
        ",".join(
            [
                v if type(v) is str and not _NEEDS_QUOTES(v) else csv_field(v)
                for v in map(record.get, columns)
            ]
        )
        or '""'
        for record in records
    )
    return _in_blocks(itertools.chain([header], lines), "\r\n")
