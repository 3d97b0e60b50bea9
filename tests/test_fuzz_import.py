"""Property-based fuzzing of the importer (hypothesis): any input is either imported or
refused with a message naming where it is wrong, and a refusal writes nothing."""

import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from annotate.models import Fable, Option, Revision
from annotate.services.importing import ImportRefused, fables_import
from tests.factories import benchmark_record

FIELDS = [
    "alias",
    "story_title",
    "story",
    "moral",
    "is_altered",
    "correct_moral_label",
    "classes",
    "choices",
]
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 12),
    st.text(max_size=20),
    st.lists(st.text(max_size=12), max_size=12),
    st.lists(
        st.sampled_from(["ground_truth", "partial_story", "similar_characters", ""]), max_size=12
    ),
)


@st.composite
def records(draw):
    record = benchmark_record(f"fz_{draw(st.integers(0, 3))}", truth_at=draw(st.integers(0, 4)))
    for _ in range(draw(st.integers(0, 3))):
        field = draw(st.sampled_from(FIELDS))
        if draw(st.booleans()):
            record.pop(field, None)
        else:
            record[field] = draw(values)
    return record


@st.composite
def files(draw):
    kind = draw(st.sampled_from(["json", "jsonl", "garbage"]))
    recs = draw(st.lists(records(), min_size=1, max_size=4))
    if kind == "json":
        return ("in.json", json.dumps(recs))
    if kind == "jsonl":
        return ("in.jsonl", "\n".join(json.dumps(r) for r in recs))
    return ("in.json", draw(st.text(max_size=60)))


class ImporterFuzz(TestCase):
    @settings(
        max_examples=int(os.environ.get("FUZZ_EXAMPLES_IMPORT", "300")),
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(source=files())
    def test_imported_or_cleanly_refused(self, source):
        before = (Fable.objects.count(), Revision.objects.count(), Option.objects.count())
        try:
            report = fables_import(sources=[source])
        except ImportRefused as exc:
            assert str(exc).startswith("in.json") or str(exc).startswith("in.jsonl")
            assert ": " in str(exc)
            after = (Fable.objects.count(), Revision.objects.count(), Option.objects.count())
            assert after == before, "a refused import wrote something"
        else:
            assert Fable.objects.count() == before[0] + len(report.created)
            for fable in Fable.objects.filter(alias__in=report.created):
                kinds = list(fable.current_revision.options.values_list("kind", flat=True))
                assert kinds.count("ground_truth") == 1
