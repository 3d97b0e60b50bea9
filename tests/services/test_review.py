import pytest

from annotate.models import Answer, Flag, Option, ReviewEvent
from annotate.services.batches import batch_create, fables_choose
from annotate.services.errors import Conflict, Invalid
from annotate.services.review import fable_revise, fable_send_back, flag_close
from annotate.services.routing import assignment_claim, assignment_skip
from tests.factories import answer_as, make_fables


@pytest.fixture
def batch(db, annotators, admin_user):
    make_fables(1)
    return batch_create(
        name="R", fables=fables_choose(), annotators=annotators, overlap=2, created_by=admin_user
    )


def test_double_miss_raises_one_flag_when_the_last_answer_arrives(batch, annotators):
    answer_as(annotators[0], batch, correct=False)
    assert not Flag.objects.exists()
    answer_as(annotators[1], batch, correct=False)
    flag = Flag.objects.get()
    assert flag.reason == Flag.DOUBLE_MISS and flag.status == Flag.OPEN
    assert ReviewEvent.objects.filter(action="flagged").count() == 1


def test_one_correct_answer_is_no_double_miss(batch, annotators):
    answer_as(annotators[0], batch, correct=False)
    answer_as(annotators[1], batch, correct=True)
    assert not Flag.objects.exists()


def test_rules_are_batch_settings(db, annotators, admin_user):
    make_fables(1)
    batch = batch_create(
        name="no flags",
        fables=fables_choose(),
        annotators=annotators,
        overlap=2,
        flag_double_miss=False,
        flag_ambiguous=True,
        created_by=admin_user,
    )
    answer_as(annotators[0], batch, labels=["A", "B"])
    answer_as(annotators[1], batch, labels=["C", "D"])
    assert list(Flag.objects.values_list("reason", flat=True)) == [Flag.AMBIGUOUS]


def test_skip_with_comment_is_flagged(batch, annotators):
    a = assignment_claim(batch=batch, annotator=annotators[0])
    assignment_skip(assignment_id=a.id, annotator=annotators[0], comment="offensive")
    assert Flag.objects.get().reason == Flag.SKIP_COMMENT


def test_revise_creates_revision_and_old_answers_keep_theirs(batch, annotators, reviewer):
    answer_as(annotators[0], batch, correct=False)
    answer_as(annotators[1], batch, correct=False)
    flag = Flag.objects.get()
    fable = flag.fable
    old = fable.current_revision
    options = [(o.text, o.kind) for o in old.options.all()]
    options[1] = ("A clearer distractor.", "expert")
    revision = fable_revise(
        fable=fable, options=options, reason="distractor was also true", actor=reviewer, flag=flag
    )
    fable.refresh_from_db()
    assert fable.current_revision == revision and revision.number == 2
    assert revision.author == reviewer
    assert set(Answer.objects.values_list("revision_id", flat=True)) == {old.id}
    assert Option.objects.filter(revision=old).count() == 5
    event = ReviewEvent.objects.get(action="revised")
    assert event.detail["from"] == 1 and event.detail["to"] == 2
    flag.refresh_from_db()
    assert flag.new_revision == revision


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda o: o, "nothing changed"),
        (lambda o: [(t, "similar_characters") for t, _ in o], "exactly one option"),
        (lambda o: o[:1] + [("", "expert")] + o[2:], "option 2: the text must not be empty"),
    ],
)
def test_revise_refusals_change_nothing(batch, reviewer, change, message):
    fable = batch.items.get().fable
    options = [(o.text, o.kind) for o in fable.current_revision.options.all()]
    with pytest.raises(Invalid, match=message):
        fable_revise(fable=fable, options=change(options), reason="x", actor=reviewer)
    assert fable.revisions.count() == 1


def test_revise_requires_reason(batch, reviewer):
    fable = batch.items.get().fable
    options = [(o.text + "!", o.kind) for o in fable.current_revision.options.all()]
    with pytest.raises(Invalid, match="reason"):
        fable_revise(fable=fable, options=options, reason=" ", actor=reviewer)


def test_close_flag_once(batch, annotators, reviewer):
    answer_as(annotators[0], batch, correct=False)
    answer_as(annotators[1], batch, correct=False)
    flag = Flag.objects.get()
    flag_close(flag=flag, actor=reviewer, status=Flag.DISMISSED, note="distractor fine")
    flag.refresh_from_db()
    assert flag.status == Flag.DISMISSED and flag.closed_by == reviewer
    with pytest.raises(Conflict):
        flag_close(flag=flag, actor=reviewer, status=Flag.RESOLVED)


def test_send_back_goes_only_to_annotators_who_never_saw_it(db, make_user, admin_user, reviewer):
    make_fables(1)
    first, second, fresh1, fresh2 = (make_user(n) for n in ("f1", "f2", "n1", "n2"))
    old_batch = batch_create(
        name="old",
        fables=fables_choose(),
        annotators=[first, second],
        overlap=2,
        created_by=admin_user,
    )
    answer_as(first, old_batch, correct=False)
    answer_as(second, old_batch, correct=False)
    flag = Flag.objects.get()
    fable = flag.fable
    options = [(o.text, o.kind) for o in fable.current_revision.options.all()]
    options[2] = ("Replaced.", "expert")
    fable_revise(fable=fable, options=options, reason="fix", actor=reviewer, flag=flag)
    fable.refresh_from_db()
    make_fables(1, prefix="other")
    target = batch_create(
        name="new",
        fables=fables_choose(prefix="other"),
        annotators=[first, fresh1, fresh2],
        overlap=2,
        created_by=admin_user,
    )
    item = fable_send_back(fable=fable, batch=target, actor=reviewer, flag=flag)
    assert item.round == 1 and item.slots.filter(fresh_only=True).count() == 2
    # The annotator who saw the fable elsewhere only gets the other fable.
    got = assignment_claim(batch=target, annotator=first)
    assert got.fable_id != fable.id
    for user in (fresh1, fresh2):
        a = answer_as(user, target, correct=True)
        if a.fable_id != fable.id:
            a = answer_as(user, target, correct=True)
        assert a.fable_id == fable.id and a.revision == fable.current_revision
    assert Answer.objects.filter(fable=fable).values("revision").distinct().count() == 2
