"""Exports: the revised benchmark in its own schema, and streamed JSON/JSONL/CSV writers.

Everything here is a generator, so exports run in constant memory whatever their size.
"""

import itertools
import json
import operator
import random
from collections.abc import Iterable, Iterator, Sequence

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


def _json_joined(values: Sequence, separator: bytes) -> bytes:
    """The values as JSON, joined. orjson called with no arguments but the value costs half
    as much as with default=str, which only values orjson cannot write (a Decimal) need."""
    try:
        return separator.join(map(orjson.dumps, values))
    except TypeError:
        return separator.join(orjson.dumps(value, default=str) for value in values)


BLOCK = 256  # records written out at a time: memory stays constant, however many there are


def _blocks(records: Iterable) -> Iterator[tuple]:
    records = iter(records)
    return iter(lambda: tuple(itertools.islice(records, BLOCK)), ())


def jsonl_lines(records: Iterable[dict]) -> Iterator[str]:
    """One JSON object per line, yielded BLOCK lines at a time."""
    for block in _blocks(records):
        yield _json_joined(block, b"\n").decode() + "\n"


def _needs_quotes(text: str) -> bool:
    """Whether csv.writer (QUOTE_MINIMAL) quotes this text. Four scans for one character
    each are several times faster than one regular expression over a long text."""
    return '"' in text or "," in text or "\n" in text or "\r" in text


def csv_field(value) -> str:
    """One value as csv.writer (QUOTE_MINIMAL) writes it; lists and dicts as JSON.

    Written out here rather than through csv.writer: the same text at a third less time,
    which was most of a million-row CSV export (a test checks it against csv.writer).
    """
    text = value if type(value) is str else _field_text(value)
    return '"' + text.replace('"', '""') + '"' if _needs_quotes(text) else text


def _field_text(value) -> str:
    """A value that is not text, as text (still to be quoted where it needs to be)."""
    if value is None:
        return ""
    kind = type(value)
    if kind is list or kind is dict:
        return _encode(value)
    return str(value)


def csv_lines(records: Iterable[dict], *, columns: list[str]) -> Iterator[str]:
    """CSV with a header (lines end in \\r\\n, as csv.writer's), yielded BLOCK lines at a time."""
    yield (",".join(map(csv_field, columns)) or '""') + "\r\n"
    for block in _blocks(records):
        yield "\r\n".join(_csv_block(block, columns)) + "\r\n"


_NUMBERS = frozenset((int, float, bool))
_BOOLEAN_TEXT = {True: "True", False: "False"}
_SEPARATOR = "\x00"  # joins the texts of a column (a text with it in is written alone)


def _csv_block(records: tuple[dict, ...], columns: list[str]) -> Iterator[str]:
    """The CSV lines of these records, built a column at a time (see _csv_column)."""
    if not columns:
        return itertools.repeat('""', len(records))
    if len(columns) == 1:
        values = [[record.get(columns[0]) for record in records]]
    else:
        try:
            values = list(zip(*map(operator.itemgetter(*columns), records), strict=True))
        except KeyError:  # a record without some column: that field is empty
            values = list(zip(*(map(record.get, columns) for record in records), strict=True))
    lines = map(",".join, zip(*map(_csv_column, values), strict=True))
    if len(columns) == 1:  # a lone empty field is written "" (as csv.writer does)
        lines = (line or '""' for line in lines)
    return lines


def _csv_column(column) -> Iterable[str]:
    """One column of a block of records, as CSV fields.

    Numbers go through str() in one map; text, and lists and dicts as JSON, are joined and
    searched once for characters that need quotes (most columns have none), and where some
    do, their quotes are doubled in one replace. Field by field in Python, the same work
    took most of a million-row CSV export."""
    types = set(map(type, column))
    if types == {bool}:
        return map(_BOOLEAN_TEXT.__getitem__, column)  # twice as fast as str()
    if types <= _NUMBERS:
        return map(str, column)  # never needs quotes
    if types <= {list, dict}:
        # orjson escapes the separator inside strings: it only ever stands between values.
        joined = _json_joined(column, _SEPARATOR.encode()).decode()
        if joined.startswith('["') and joined.count(_SEPARATOR + '["') == len(column) - 1:
            # Every field is a list that starts with a text (as lists of kinds and of texts
            # do): each holds quotes, so each is quoted, with no field looked at alone.
            quoted = joined.replace('"', '""').replace(_SEPARATOR, '"' + _SEPARATOR + '"')
            return ('"' + quoted + '"').split(_SEPARATOR)
    else:
        if types != {str}:
            column = [v if type(v) is str else _field_text(v) for v in column]
        joined = _SEPARATOR.join(column)
        if not _needs_quotes(joined):
            return column
        if joined.count(_SEPARATOR) != len(column) - 1:  # some text has the separator in it
            return list(map(csv_field, column))
    if not _needs_quotes(joined):
        return joined.split(_SEPARATOR)
    fields = joined.replace('"', '""').split(_SEPARATOR)
    return ['"' + f + '"' if _needs_quotes(f) else f for f in fields]
