from collections import Counter
from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotate.models import Answer, Assignment, Fable, Option, Slot
from annotate.services.batches import batch_create, fables_choose
from annotate.services.errors import Conflict, Forbidden, Invalid
from annotate.services.routing import answer_submit, assignment_claim, assignment_skip
from tests.factories import make_fables


@pytest.fixture
def batch(db, annotators, admin_user):
    make_fables(6)
    return batch_create(
        name="B",
        fables=fables_choose(),
        annotators=annotators[:3],
        overlap=2,
        created_by=admin_user,
    )


def answer(assignment, user, selected=("A",), comment="", now=None):
    return answer_submit(
        assignment_id=assignment.id,
        annotator=user,
        payload={"selected": list(selected), "comment": comment},
        now=now,
    )


def truth_label(assignment):
    truth = Option.objects.get(revision_id=assignment.revision_id, kind="ground_truth")
    return chr(ord("A") + assignment.order.index(truth.id))


def test_claim_creates_assignment_with_lease_and_permutation(batch, annotators):
    a = assignment_claim(batch=batch, annotator=annotators[0])
    assert a.status == Assignment.CLAIMED
    assert a.expires_at - a.claimed_at == timedelta(minutes=30)
    assert sorted(a.order) == sorted(
        Option.objects.filter(revision=a.revision).values_list("id", flat=True)
    )
    slot = Slot.objects.get(holder=a)
    assert slot.lease_expires_at == a.expires_at and not slot.filled


def test_asking_again_returns_the_same_assignment(batch, annotators):
    first = assignment_claim(batch=batch, annotator=annotators[0])
    again = assignment_claim(batch=batch, annotator=annotators[0])
    assert again.id == first.id and again.order == first.order
    assert Assignment.objects.count() == 1


def test_non_member_cannot_claim(batch, make_user):
    with pytest.raises(Forbidden):
        assignment_claim(batch=batch, annotator=make_user("outsider"))


def test_rejected_screening_candidate_cannot_claim(batch, annotators):
    from annotate.models import BatchMember

    BatchMember.objects.filter(batch=batch, user=annotators[0]).update(
        screening=BatchMember.REJECTED
    )
    with pytest.raises(Forbidden):
        assignment_claim(batch=batch, annotator=annotators[0])
    assert assignment_claim(batch=batch.id, annotator=annotators[1]) is not None


def test_unknown_batch_is_refused_like_a_foreign_one(batch, annotators):
    with pytest.raises(Forbidden):
        assignment_claim(batch=batch.id + 1000, annotator=annotators[0])


def test_closed_batch_hands_out_nothing(batch, annotators):
    batch.closed_at = timezone.now()
    batch.save(update_fields=["closed_at"])
    assert assignment_claim(batch=batch.id, annotator=annotators[0]) is None
    assert not Assignment.objects.exists()


def test_answer_fills_the_slot_and_repeats_are_idempotent(batch, annotators):
    a = assignment_claim(batch=batch, annotator=annotators[0])
    result = answer(a, annotators[0], ["C", "A"])
    assert result.outcome == "created"
    assert result.answer.selected == [a.order[2], a.order[0]]
    assert Slot.objects.get(id=result.answer.slot_id).filled
    assert answer(a, annotators[0], ["c", "a"]).outcome == "repeated"
    with pytest.raises(Conflict):
        answer(a, annotators[0], ["B"])
    assert Answer.objects.count() == 1


def test_invalid_labels_are_refused_and_change_nothing(batch, annotators):
    a = assignment_claim(batch=batch, annotator=annotators[0])
    for selected, message in (
        ([], "choose at least one"),
        (["Z"], "'Z' is not one of"),
        (["A", "A"], "A is given twice"),
    ):
        with pytest.raises(Invalid, match=message):
            answer(a, annotators[0], selected)
    assert Answer.objects.count() == 0
    assert Assignment.objects.get(id=a.id).status == Assignment.CLAIMED


def test_someone_elses_assignment_is_refused(batch, annotators):
    a = assignment_claim(batch=batch, annotator=annotators[0])
    with pytest.raises(Forbidden):
        answer(a, annotators[1])


def test_finish_what_is_started_first(batch, annotators):
    a = assignment_claim(batch=batch, annotator=annotators[0])
    answer(a, annotators[0])
    b = assignment_claim(batch=batch, annotator=annotators[1])
    assert b.fable_id == a.fable_id


def test_expired_lease_frees_the_slot_and_late_answer_is_surplus(batch, annotators):
    ann, ben, cat = annotators[:3]
    first = assignment_claim(batch=batch, annotator=ann)
    later = timezone.now() + timedelta(minutes=31)
    # Two others take both slots of that fable after the lease ran out.
    for user in (ben, cat):
        taken = assignment_claim(batch=batch, annotator=user, now=later)
        answer(taken, user, now=later)
    assert Assignment.objects.get(id=first.id).status == Assignment.EXPIRED
    result = answer(first, ann, now=later)
    assert result.outcome == "surplus" and result.answer.slot is None
    counted = Answer.objects.filter(fable_id=first.fable_id, slot__isnull=False).count()
    assert counted == 2


def test_late_answer_counts_when_a_slot_is_still_free(batch, annotators):
    ann = annotators[0]
    a = assignment_claim(batch=batch, annotator=ann)
    later = timezone.now() + timedelta(hours=2)
    assert answer(a, ann, now=later).outcome == "created"


def test_expired_lease_of_a_reloading_annotator_is_renewed(batch, annotators):
    a = assignment_claim(batch=batch, annotator=annotators[0])
    later = timezone.now() + timedelta(minutes=45)
    again = assignment_claim(batch=batch, annotator=annotators[0], now=later)
    assert again.id == a.id and again.expires_at > later


def test_skip_requires_a_comment_frees_the_slot_and_never_comes_back(batch, annotators):
    ann = annotators[0]
    a = assignment_claim(batch=batch, annotator=ann)
    with pytest.raises(Invalid, match="comment"):
        assignment_skip(assignment_id=a.id, annotator=ann, comment="  ")
    assignment_skip(assignment_id=a.id, annotator=ann, comment="story is cut off")
    assert not Slot.objects.filter(holder=a).exists()
    seen = {a.fable_id}
    while (nxt := assignment_claim(batch=batch, annotator=ann)) is not None:
        assert nxt.fable_id not in seen
        seen.add(nxt.fable_id)
        answer(nxt, ann)
    assert len(seen) == 6
    with pytest.raises(Conflict):
        answer(a, ann)


def test_liveness_every_slot_gets_filled(batch, annotators):
    users = annotators[:3]
    progress = True
    while progress:
        progress = False
        for user in users:
            a = assignment_claim(batch=batch, annotator=user)
            if a is not None:
                answer(a, user)
                progress = True
    assert Slot.objects.filter(batch=batch, filled=False).count() == 0
    per_fable = Counter(Answer.objects.filter(batch=batch).values_list("fable_id", flat=True))
    assert set(per_fable.values()) == {2}
    pairs = Answer.objects.values_list("fable_id", "annotator_id")
    assert len(set(pairs)) == len(pairs)


def test_database_refuses_a_second_assignment_for_the_same_fable(batch, annotators):
    a = assignment_claim(batch=batch, annotator=annotators[0])
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(
            batch=batch,
            item=a.item,
            fable=a.fable,
            revision=a.revision,
            annotator=annotators[0],
            order=a.order,
            claimed_at=a.claimed_at,
            expires_at=a.expires_at,
        )


def test_database_refuses_a_second_answer_in_a_filled_slot(batch, annotators):
    a = assignment_claim(batch=batch, annotator=annotators[0])
    first = answer(a, annotators[0]).answer
    b = assignment_claim(batch=batch, annotator=annotators[1])
    with pytest.raises(IntegrityError), transaction.atomic():
        Answer.objects.create(
            assignment=b,
            slot=first.slot,
            batch=batch,
            fable=b.fable,
            revision=b.revision,
            annotator=annotators[1],
            payload={},
            seconds=1,
        )


def test_no_leak_true_moral_lands_in_each_position_about_equally(db, make_user, admin_user):
    make_fables(1)
    users = [make_user(f"u{i}") for i in range(500)]
    batch = batch_create(
        name="leak",
        fables=list(Fable.objects.all()),
        annotators=users,
        overlap=500,
        created_by=admin_user,
    )
    positions = Counter(truth_label(assignment_claim(batch=batch, annotator=u)) for u in users)
    assert set(positions) == set("ABCDE")
    # 100 expected per position; a fair shuffle stays within ±40 with overwhelming probability.
    assert all(60 <= n <= 140 for n in positions.values()), positions
