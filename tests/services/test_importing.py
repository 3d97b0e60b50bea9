import csv
import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotate.models import Fable, Option, Revision
from annotate.services.exporting import benchmark_records
from annotate.services.importing import ImportRefused, fables_import, source_of

KINDS = [
    "ground_truth",
    "similar_characters",
    "injected_adjectives",
    "based_on_adjectives",
    "partial_story",
]


def record(alias="aesop_section_1_1", **changes):
    base = {
        "alias": alias,
        "story_title": "The Ant and the Dove",
        "story": "An ant fell into a stream; a dove dropped a leaf and saved it.",
        "moral": "One good turn deserves another.",
        "is_altered": False,
        "correct_moral_label": 0,
        "classes": list(KINDS),
        "choices": [
            "One good turn deserves another.",
            "Birds of a feather flock together.",
            "One tiny good turn deserves another grand one.",
            "Small creatures should be humble.",
            "Streams are dangerous for ants.",
        ],
    }
    base.update(changes)
    return base


def as_json(*records, name="in.json"):
    return (name, json.dumps(list(records)))


def do_import(*records, update=False, name="in.json"):
    return fables_import(sources=[as_json(*records, name=name)], update=update)


@pytest.mark.django_db
class TestImport:
    def test_creates_fable_revision_and_options_in_source_order(self):
        report = do_import(record(), record("gibbs_1_2"))
        assert report.created == ["aesop_section_1_1", "gibbs_1_2"]
        fable = Fable.objects.get(alias="aesop_section_1_1")
        assert fable.source == "aesop"
        assert fable.current_revision.number == 1
        assert [(o.position, o.kind) for o in fable.current_revision.options.all()] == list(
            enumerate(KINDS)
        )
        assert Option.objects.count() == 10

    def test_true_moral_at_any_index_and_classes_in_any_order(self):
        rec = record(
            correct_moral_label=3,
            classes=[
                "partial_story",
                "similar_characters",
                "injected_adjectives",
                "ground_truth",
                "based_on_adjectives",
            ],
            choices=["a", "b", "c", "One good turn deserves another.", "e"],
        )
        do_import(rec)
        fable = Fable.objects.get()
        truth = fable.current_revision.options.get(kind="ground_truth")
        assert truth.position == 3

    def test_same_text_with_different_kinds_is_accepted(self):
        rec = record(choices=["One good turn deserves another.", "same", "same", "x", "y"])
        do_import(rec)
        assert Option.objects.filter(text="same").count() == 2

    def test_eight_and_two_choices(self):
        do_import(
            record(
                classes=KINDS + ["pre_moral", "post_moral", "moral_from_injected_adjs"],
                choices=[f"c{i}" for i in range(8)],
                moral="c0",
            ),
            record("perry_1", classes=KINDS[:2], choices=["m", "d"], moral="m"),
        )
        assert Option.objects.count() == 10

    def test_identical_reimport_is_a_no_op(self):
        do_import(record())
        report = do_import(record())
        assert report.unchanged == ["aesop_section_1_1"] and not report.created
        assert Revision.objects.count() == 1

    def test_changed_content_is_refused_without_update(self):
        do_import(record())
        with pytest.raises(ImportRefused, match="use --update"):
            do_import(record(story_title="Changed"))
        assert Fable.objects.get().title == "The Ant and the Dove"

    def test_update_creates_a_new_revision(self):
        do_import(record())
        changed = record(choices=["One good turn deserves another.", "b2", "c", "d", "e"])
        report = do_import(changed, update=True)
        assert report.updated == ["aesop_section_1_1"]
        fable = Fable.objects.get()
        assert fable.current_revision.number == 2
        assert fable.current_revision.reason == "re-import"
        assert fable.revisions.count() == 2
        assert (
            fable.revisions.get(number=1)
            .options.filter(text="Birds of a feather flock together.")
            .exists()
        )

    def test_jsonl_and_csv(self):
        jsonl = "\n".join(json.dumps(r) for r in (record("a_1"), record("a_2"))) + "\n"
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(record().keys()))
        writer.writeheader()
        row = record("b_1")
        writer.writerow(
            {
                **row,
                "classes": json.dumps(row["classes"]),
                "choices": json.dumps(row["choices"]),
                "is_altered": "false",
            }
        )
        report = fables_import(sources=[("x.jsonl", jsonl), ("y.csv", buffer.getvalue())])
        assert sorted(report.created) == ["a_1", "a_2", "b_1"]
        assert Fable.objects.get(alias="b_1").current_revision.options.count() == 5

    def test_notes_shape_sets_content_note_and_proposes_alternative(self):
        do_import(record())
        notes = [
            {
                "alias": "aesop_section_1_1",
                "title": "The Ant and the Dove",
                "story": "…",
                "moral": "One good turn deserves another.",
                "note": "Mild peril.",
                "alternative_moral": "Kindness is repaid.",
            }
        ]
        report = fables_import(sources=[("fables.json", json.dumps(notes))])
        fable = Fable.objects.get()
        assert report.notes == ["aesop_section_1_1"] and fable.content_note == "Mild peril."
        proposal = fable.revisions.get(proposed=True)
        assert proposal.options.get(kind="ground_truth").text == "Kindness is repaid."
        assert fable.current_revision.number == 1  # a proposal is not adopted on import
        again = fables_import(sources=[("fables.json", json.dumps(notes))])
        assert not again.proposals and fable.revisions.count() == 2

    def test_benchmark_and_notes_in_one_import(self):
        notes = [
            {
                "alias": "aesop_section_1_1",
                "title": "t",
                "story": "s",
                "moral": "m",
                "note": "A note.",
                "alternative_moral": None,
            }
        ]
        report = fables_import(sources=[as_json(record()), ("fables.json", json.dumps(notes))])
        assert report.created == ["aesop_section_1_1"] and report.notes == ["aesop_section_1_1"]

    def test_demo_fixtures_import_together(self):
        from tests.conftest import read_fixture

        report = fables_import(
            sources=[
                read_fixture("demo_mcqa.json"),
                read_fixture("demo_adversarial.json"),
                read_fixture("demo_fables.json"),
            ]
        )
        assert len(report.created) == 33 and len(report.notes) == 3
        assert len(report.proposals) == 2
        adversarial = Fable.objects.get(alias="gibbs_adv_1").current_revision.options
        assert adversarial.count() == 8 and adversarial.get(kind="ground_truth").position == 1

    def test_source_of(self):
        assert source_of("aesop_section_1_5") == "aesop"
        assert source_of("gibbs_520_169") == "gibbs"
        assert source_of("perry_156") == "perry"


REFUSALS = [
    ("missing field", lambda r: r.pop("story"), "field 'story': missing field"),
    (
        "label out of range",
        lambda r: r.update(correct_moral_label=7),
        "field 'correct_moral_label': 7 is out of range",
    ),
    (
        "label not an integer",
        lambda r: r.update(correct_moral_label="0"),
        "field 'correct_moral_label': must be an integer",
    ),
    (
        "label a bool",
        lambda r: r.update(correct_moral_label=True),
        "field 'correct_moral_label': must be an integer",
    ),
    ("lengths differ", lambda r: r["classes"].pop(), "field 'classes': has 4 entries"),
    (
        "label not ground truth",
        lambda r: r.update(correct_moral_label=1, moral=r["choices"][1]),
        "field 'classes': classes[1]",
    ),
    (
        "two ground truths",
        lambda r: r["classes"].__setitem__(2, "ground_truth"),
        "field 'classes': has 2 'ground_truth'",
    ),
    (
        "moral differs",
        lambda r: r.update(moral="Something else."),
        "field 'moral': differs from choices[0]",
    ),
    ("empty story", lambda r: r.update(story="   "), "field 'story': must not be empty"),
    (
        "empty choice",
        lambda r: r["choices"].__setitem__(2, ""),
        "field 'choices[2]': must be a non-empty string",
    ),
    (
        "too many choices",
        lambda r: r.update(classes=KINDS * 3, choices=[str(i) for i in range(15)]),
        "field 'choices': must have 2 to 10",
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("case", "mutate", "message"), REFUSALS, ids=[c[0] for c in REFUSALS])
def test_refusals_name_file_record_alias_field_and_write_nothing(case, mutate, message):
    bad = record("gibbs_9_9")
    mutate(bad)
    with pytest.raises(ImportRefused) as info:
        do_import(record(), bad, name="bench.json")
    text = str(info.value)
    assert text.startswith("bench.json, record 2, alias 'gibbs_9_9'"), text
    assert message in text, text
    assert Fable.objects.count() == 0 and Option.objects.count() == 0


@pytest.mark.django_db
def test_duplicate_alias_in_input_is_refused():
    with pytest.raises(
        ImportRefused,
        match=r"record 1, alias 'dup_1', field 'alias': the same "
        r"alias appears twice in the input \(also a.json",
    ):
        fables_import(
            sources=[
                as_json(record("dup_1"), name="a.json"),
                as_json(record("dup_1"), name="b.json"),
            ]
        )
    assert Fable.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("bad.json", '[{"alias": ', "bad.json: not valid JSON"),
        ("bad.json", '{"alias": 1}', "bad.json: not a JSON array"),
        ("bad.jsonl", '{"alias": "x"}\n{oops', "bad.jsonl, record 2: not valid JSON"),
        (
            "bad.csv",
            "alias,classes\nx,[oops",
            "bad.csv, record 1, alias 'x', field 'classes': not a JSON list",
        ),
    ],
)
def test_unparsable_files_are_refused(name, text, message):
    with pytest.raises(ImportRefused) as info:
        fables_import(sources=[as_json(record()), (name, text)])
    assert str(info.value).startswith(message)
    assert Fable.objects.count() == 0


@pytest.mark.django_db
def test_command_prints_counts_and_exits_1_on_bad_input(tmp_path, capsys):
    good = tmp_path / "good.json"
    good.write_text(json.dumps([record()]))
    call_command("import_fables", str(good))
    assert "1 created, 0 unchanged, 0 updated" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([record("x_1", moral="nope")]))
    with pytest.raises(CommandError, match="bad.json, record 1, alias 'x_1', field 'moral'"):
        call_command("import_fables", str(bad))
    assert Fable.objects.count() == 1


@pytest.mark.django_db
def test_round_trip_core_export_gives_back_the_records():
    records = [
        record("a_1"),
        record(
            "a_2",
            correct_moral_label=2,
            classes=[
                "partial_story",
                "similar_characters",
                "ground_truth",
                "based_on_adjectives",
                "injected_adjectives",
            ],
            choices=["p", "s", "One good turn deserves another.", "b", "i"],
        ),
    ]
    do_import(*records)
    exported = list(benchmark_records(variant="core"))
    assert [{k: v for k, v in r.items() if k != "revision"} for r in exported] == records
    assert [list(r) for r in exported] == [list(records[0]) + ["revision"]] * 2
    assert {r["revision"] for r in exported} == {1}
