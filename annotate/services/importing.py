"""Import fables from the benchmark's JSON schema, JSONL, CSV, or the fables.json shape.

Everything is validated before anything is written, and all files go in one
transaction: a bad file writes nothing. Errors name the file, record, alias and field.
"""

import csv
import io
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from annotate.models import GROUND_TRUTH, Fable, Option, Revision

BENCHMARK_FIELDS = (
    "alias",
    "story_title",
    "story",
    "moral",
    "correct_moral_label",
    "classes",
    "choices",
)
NOTES_FIELDS = ("alias", "title", "story", "moral")
MIN_CHOICES, MAX_CHOICES = 2, 10
PROGRESS_THRESHOLD = 200


class ImportRefused(Exception):
    """A refusal naming where the input is wrong. Nothing has been written."""

    def __init__(
        self,
        *,
        file: str,
        message: str,
        record: int | None = None,
        alias: str | None = None,
        field: str | None = None,
    ):
        self.file, self.record, self.alias, self.field = file, record, alias, field
        where = [file]
        if record is not None:
            where.append(f"record {record}")
        if alias:
            where.append(f"alias {alias!r}")
        if field:
            where.append(f"field {field!r}")
        super().__init__(f"{', '.join(where)}: {message}")


@dataclass
class FableRecord:
    """A validated benchmark record."""

    file: str
    number: int
    alias: str
    title: str
    story: str
    is_altered: bool
    options: list[tuple[str, str]]  # (text, kind) in source order


@dataclass
class NotesRecord:
    """A validated fables.json record: curation notes for an existing fable."""

    file: str
    number: int
    alias: str
    title: str
    moral: str
    note: str
    alternative_moral: str


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    proposals: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{len(self.created)} created, {len(self.unchanged)} unchanged, "
            f"{len(self.updated)} updated, {len(self.notes)} content notes set, "
            f"{len(self.proposals)} proposed revisions"
        )


def source_of(alias: str) -> str:
    """The collection a fable comes from: the alias prefix (`aesop_section_1_5` → aesop)."""
    return alias.split("_", 1)[0].lower()


# ---------------------------------------------------------------- parsing


def parse_text(*, name: str, text: str) -> list[dict]:
    """Records of one file, by extension (.json, .jsonl, .csv) or by content."""
    suffix = Path(name).suffix.lower()
    stripped = text.lstrip("\ufeff").lstrip()
    if suffix == ".csv":
        return _parse_csv(name, text)
    if suffix in (".jsonl", ".ndjson") or (suffix != ".json" and not stripped.startswith("[")):
        if suffix not in (".jsonl", ".ndjson") and not stripped.startswith("{"):
            raise ImportRefused(
                file=name, message="unknown format: expected a .json array, .jsonl or .csv file"
            )
        return _parse_jsonl(name, text)
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise ImportRefused(file=name, message=f"not valid JSON: {exc}") from None
    if not isinstance(data, list):
        raise ImportRefused(file=name, message="not a JSON array of records")
    return data


def _parse_jsonl(name: str, text: str) -> list[dict]:
    records = []
    for number, line in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ImportRefused(
                file=name, record=number, message=f"not valid JSON: {exc}"
            ) from None
    return records


def _parse_csv(name: str, text: str) -> list[dict]:
    try:
        reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff"), newline=""))
        rows = list(reader)
    except csv.Error as exc:
        raise ImportRefused(file=name, message=f"not valid CSV: {exc}") from None
    if not reader.fieldnames:
        raise ImportRefused(file=name, message="not valid CSV: no header row")
    records = []
    for number, row in enumerate(rows, start=1):
        if None in row:
            raise ImportRefused(
                file=name,
                record=number,
                alias=row.get("alias"),
                message="not valid CSV: more cells than header columns",
            )
        record: dict = dict(row)
        for key in ("classes", "choices"):
            if key in record:
                try:
                    record[key] = json.loads(record[key])
                except json.JSONDecodeError as exc:
                    raise ImportRefused(
                        file=name,
                        record=number,
                        alias=row.get("alias"),
                        field=key,
                        message=f"not a JSON list: {exc}",
                    ) from None
        if "correct_moral_label" in record:
            raw = record["correct_moral_label"].strip()
            record["correct_moral_label"] = int(raw) if raw.lstrip("-").isdigit() else raw
        if "is_altered" in record:
            record["is_altered"] = record["is_altered"].strip().lower() in ("true", "1", "yes")
        for key in ("note", "alternative_moral"):
            if key in record and record[key] == "":
                record[key] = None
        records.append(record)
    return records


# ---------------------------------------------------------------- validation


def validate_record(raw, *, file: str, number: int) -> FableRecord | NotesRecord:
    if not isinstance(raw, dict):
        raise ImportRefused(file=file, record=number, message="a record must be a JSON object")
    alias = raw.get("alias") if isinstance(raw.get("alias"), str) else None

    def refuse(field_name: str, message: str):
        raise ImportRefused(
            file=file, record=number, alias=alias, field=field_name, message=message
        )

    is_notes = "choices" not in raw and "classes" not in raw and "title" in raw
    required = NOTES_FIELDS if is_notes else BENCHMARK_FIELDS
    for name in required:
        if name not in raw:
            refuse(name, "missing field")
    for name in ("alias", "story", "moral", "title" if is_notes else "story_title"):
        if not isinstance(raw[name], str):
            refuse(name, "must be a string")
    if not raw["alias"].strip():
        refuse("alias", "must not be empty")
    if not raw["story"].strip():
        refuse("story", "must not be empty")
    if not raw["moral"].strip():
        refuse("moral", "must not be empty")

    if is_notes:
        note, alternative = raw.get("note"), raw.get("alternative_moral")
        for name, value in (("note", note), ("alternative_moral", alternative)):
            if value is not None and not isinstance(value, str):
                refuse(name, "must be a string or null")
        return NotesRecord(
            file=file,
            number=number,
            alias=raw["alias"],
            title=raw["title"],
            moral=raw["moral"],
            note=(note or "").strip(),
            alternative_moral=(alternative or "").strip(),
        )

    classes, choices, label = raw["classes"], raw["choices"], raw["correct_moral_label"]
    if not isinstance(choices, list):
        refuse("choices", "must be a list")
    if not isinstance(classes, list):
        refuse("classes", "must be a list")
    if len(classes) != len(choices):
        refuse("classes", f"has {len(classes)} entries but choices has {len(choices)}")
    if not MIN_CHOICES <= len(choices) <= MAX_CHOICES:
        refuse("choices", f"must have {MIN_CHOICES} to {MAX_CHOICES} entries, has {len(choices)}")
    for index, (kind, text) in enumerate(zip(classes, choices, strict=True)):
        if not isinstance(text, str) or not text.strip():
            refuse(f"choices[{index}]", "must be a non-empty string")
        if not isinstance(kind, str) or not kind.strip():
            refuse(f"classes[{index}]", "must be a non-empty string")
    if isinstance(label, bool) or not isinstance(label, int):
        refuse("correct_moral_label", f"must be an integer, got {label!r}")
    if not 0 <= label < len(choices):
        refuse("correct_moral_label", f"{label} is out of range 0..{len(choices) - 1}")
    truths = [i for i, kind in enumerate(classes) if kind == GROUND_TRUTH]
    if len(truths) > 1:
        refuse(
            "classes",
            f"has {len(truths)} '{GROUND_TRUTH}' entries (at {truths}); exactly one is allowed",
        )
    if classes[label] != GROUND_TRUTH:
        refuse(
            "classes",
            f"classes[{label}] (the correct_moral_label) is {classes[label]!r}, "
            f"not '{GROUND_TRUTH}'",
        )
    if choices[label] != raw["moral"]:
        refuse("moral", f"differs from choices[{label}] (the correct_moral_label)")
    seen = set()
    for index, pair in enumerate(zip(choices, classes, strict=True)):
        if pair in seen:
            refuse(f"choices[{index}]", "the same text appears twice with the same kind")
        seen.add(pair)
    is_altered = raw.get("is_altered", False)
    if not isinstance(is_altered, bool):
        refuse("is_altered", "must be true or false")
    return FableRecord(
        file=file,
        number=number,
        alias=raw["alias"],
        title=raw["story_title"],
        story=raw["story"],
        is_altered=is_altered,
        options=list(zip(choices, classes, strict=True)),
    )


def validate_sources(sources: Iterable[tuple[str, str]]) -> list[FableRecord | NotesRecord]:
    records: list[FableRecord | NotesRecord] = []
    first_seen: dict[tuple[str, str], tuple[str, int]] = {}
    for name, text in sources:
        for number, raw in enumerate(parse_text(name=name, text=text), start=1):
            record = validate_record(raw, file=name, number=number)
            key = (type(record).__name__, record.alias)
            if key in first_seen:
                other_file, other_number = first_seen[key]
                raise ImportRefused(
                    file=name,
                    record=number,
                    alias=record.alias,
                    field="alias",
                    message=f"the same alias appears twice in the input (also "
                    f"{other_file}, record {other_number})",
                )
            first_seen[key] = (name, number)
            records.append(record)
    return records


# ---------------------------------------------------------------- writing


def _options_of(fable: Fable) -> list[tuple[str, str]]:
    return [(o.text, o.kind) for o in fable.current_revision.options.all()]


@transaction.atomic
def fables_import(
    *,
    sources: list[tuple[str, str]],
    update: bool = False,
    author=None,
    progress: Callable[[Iterable, int], Iterable] | None = None,
) -> ImportReport:
    """Import (name, text) sources. Refuses changed fables unless `update`."""
    records = validate_sources(sources)
    report = ImportReport()
    fable_records = [r for r in records if isinstance(r, FableRecord)]
    notes_records = [r for r in records if isinstance(r, NotesRecord)]

    aliases = [r.alias for r in records]
    existing = {
        f.alias: f
        for f in Fable.objects.filter(alias__in=aliases)
        .select_related("current_revision")
        .prefetch_related("current_revision__options")
    }
    next_order = (
        Fable.objects.order_by("-import_order").values_list("import_order", flat=True).first() or 0
    )

    to_create: list[FableRecord] = []
    to_update: list[tuple[Fable, FableRecord]] = []
    for record in fable_records:
        fable = existing.get(record.alias)
        if fable is None:
            to_create.append(record)
        elif (fable.title, fable.story, fable.is_altered, _options_of(fable)) == (
            record.title,
            record.story,
            record.is_altered,
            record.options,
        ):
            report.unchanged.append(record.alias)
        elif not update:
            raise ImportRefused(
                file=record.file,
                record=record.number,
                alias=record.alias,
                message="this alias exists with different content; "
                "use --update to import it as a new revision",
            )
        else:
            to_update.append((fable, record))

    iterate = progress or (lambda items, total: items)
    new_fables = []
    for record in iterate(to_create, len(to_create)):
        next_order += 1
        new_fables.append(
            Fable(
                alias=record.alias,
                title=record.title,
                story=record.story,
                source=source_of(record.alias),
                is_altered=record.is_altered,
                import_order=next_order,
            )
        )
    Fable.objects.bulk_create(new_fables)
    revisions = Revision.objects.bulk_create(
        [Revision(fable=f, number=1, reason="import", author=author) for f in new_fables]
    )
    Option.objects.bulk_create(
        Option(revision=rev, position=i, text=text, kind=kind)
        for rev, record in zip(revisions, to_create, strict=True)
        for i, (text, kind) in enumerate(record.options)
    )
    for fable, rev in zip(new_fables, revisions, strict=True):
        fable.current_revision = rev
    Fable.objects.bulk_update(new_fables, ["current_revision"])
    report.created = [r.alias for r in to_create]
    existing.update((f.alias, f) for f in new_fables)  # notes in the same import may need them
    for fable, record in to_update:
        fable.title, fable.story, fable.is_altered = record.title, record.story, record.is_altered
        revision_create(fable=fable, options=record.options, reason="re-import", author=author)
        report.updated.append(record.alias)

    if notes_records:
        _apply_notes(notes_records, existing, report, author)
    return report


def _apply_notes(
    records: list[NotesRecord], existing: dict[str, Fable], report: ImportReport, author
) -> None:
    """fables.json: content notes, and alternative morals as proposed revisions."""
    missing = [r for r in records if r.alias not in existing]
    if missing:
        r = missing[0]
        raise ImportRefused(
            file=r.file,
            record=r.number,
            alias=r.alias,
            field="alias",
            message="no fable with this alias: import the benchmark records (with choices) first",
        )
    proposals = {
        (rev.fable_id, opt.text)
        for rev in Revision.objects.filter(
            proposed=True, fable__alias__in=[r.alias for r in records]
        ).prefetch_related("options")
        for opt in rev.options.all()
        if opt.kind == GROUND_TRUTH
    }
    changed_notes = []
    for record in records:
        fable = existing[record.alias]
        if record.note and fable.content_note != record.note:
            fable.content_note = record.note
            changed_notes.append(fable)
            report.notes.append(record.alias)
        if record.alternative_moral and (fable.id, record.alternative_moral) not in proposals:
            options = [
                (record.alternative_moral if kind == GROUND_TRUTH else text, kind)
                for text, kind in _options_of(fable)
            ]
            revision_create(
                fable=fable,
                options=options,
                author=author,
                proposed=True,
                reason="alternative moral proposed in fables.json",
            )
            report.proposals.append(record.alias)
    Fable.objects.bulk_update(changed_notes, ["content_note"])


def revision_create(
    *,
    fable: Fable,
    options: list[tuple[str, str]],
    reason: str,
    author=None,
    proposed: bool = False,
) -> Revision:
    """A new revision of `fable` with `options` (text, kind) in order.

    Unless `proposed`, it becomes the fable's current revision (title/story changes on the
    fable object are saved too). Old revisions and their answers are untouched.
    """
    if sum(kind == GROUND_TRUTH for _, kind in options) != 1:
        raise ValueError(f"a revision needs exactly one {GROUND_TRUTH} option")
    last = fable.revisions.order_by("-number").values_list("number", flat=True).first() or 0
    revision = Revision.objects.create(
        fable=fable, number=last + 1, reason=reason, author=author, proposed=proposed
    )
    Option.objects.bulk_create(
        Option(revision=revision, position=i, text=text, kind=kind)
        for i, (text, kind) in enumerate(options)
    )
    if not proposed:
        fable.current_revision = revision
        fable.save()
    return revision
