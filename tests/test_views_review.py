import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate.models import Flag, ReviewEvent
from annotate.services.batches import batch_create, fables_choose
from tests.factories import answer_as, make_fables


def pair_batch(annotators, admin_user, prefix: str, count: int, name: str = ""):
    """`count` new fables aliased prefix_1…, in a batch of overlap 2 for two annotators."""
    make_fables(count, prefix=prefix)
    return batch_create(
        name=name or f"batch {prefix}",
        fables=fables_choose(prefix=prefix),
        annotators=annotators[:2],
        overlap=2,
        created_by=admin_user,
    )


def double_miss(annotators, admin_user, prefix="dm", count=1):
    batch = pair_batch(annotators, admin_user, prefix, count)
    for _ in range(count):
        answer_as(annotators[0], batch, correct=False, comment="hard one")
        answer_as(annotators[1], batch, correct=False)
    return batch


@pytest.fixture
def rev_client(client, reviewer):
    client.force_login(reviewer)
    return client


def test_queue_lists_open_flags_and_filters(rev_client, annotators, admin_user):
    double_miss(annotators, admin_user)
    html = rev_client.get(reverse("review_queue")).content.decode()
    assert "dm_1" in html and "double miss" in html
    html = rev_client.get(reverse("review_queue") + "?reason=skip_comment").content.decode()
    assert "dm_1" not in html and "No open flags" in html


def test_queue_query_count_is_constant(rev_client, annotators, admin_user):
    double_miss(annotators, admin_user, "a", 1)
    with CaptureQueriesContext(connection) as one:
        rev_client.get(reverse("review_queue"))
    double_miss(annotators, admin_user, "b", 6)
    with CaptureQueriesContext(connection) as seven:
        html = rev_client.get(reverse("review_queue")).content.decode()
    assert html.count('<span class="tag">double miss</span>') == 7
    # 5 queries: session, user, role groups, flags (with fable, batch, revision), batches
    assert len(one) == len(seven) == 5


def test_review_page_shows_kinds_answers_and_query_count(rev_client, annotators, admin_user):
    double_miss(annotators, admin_user, "q", 1)
    flag = Flag.objects.get()
    url = reverse("review_fable", args=[flag.fable_id]) + f"?flag={flag.id}"
    with CaptureQueriesContext(connection) as q:
        html = rev_client.get(url).content.decode()
    assert "ground_truth" in html and "hard one" in html and "ann-" in html and "missed" in html
    double_miss(annotators, admin_user, "r", 4)
    before = len(q)
    fable_id = Flag.objects.latest("id").fable_id
    with CaptureQueriesContext(connection) as q2:
        rev_client.get(reverse("review_fable", args=[fable_id]))
    assert len(q2) == before


def test_revise_send_back_and_close_from_the_page(rev_client, annotators, admin_user):
    batch = double_miss(annotators, admin_user)
    flag = Flag.objects.get()
    fable = flag.fable
    options = list(fable.current_revision.options.all())
    data = {"flag": flag.id, "count": len(options), "reason": "distractor 2 was also true"}
    for i, o in enumerate(options):
        data[f"text_{i}"] = "A sharper distractor." if i == 1 else o.text
        data[f"kind_{i}"] = "expert" if i == 1 else o.kind
    response = rev_client.post(reverse("review_revise", args=[fable.id]), data)
    assert response.status_code == 302
    fable.refresh_from_db()
    assert fable.current_revision.number == 2
    page = rev_client.get(response.url).content.decode()
    assert "v1 → v2" in page and "A sharper distractor." in page

    response = rev_client.post(
        reverse("review_send_back", args=[fable.id]), {"flag": flag.id, "batch": batch.id}
    )
    assert response.status_code == 302
    assert batch.items.filter(fable=fable, round=2).exists()
    response = rev_client.post(
        reverse("review_close", args=[fable.id]),
        {"flag": flag.id, "status": "resolved", "note": "fixed"},
    )
    flag.refresh_from_db()
    assert flag.status == "resolved"
    actions = list(ReviewEvent.objects.filter(fable=fable).values_list("action", flat=True))
    assert actions == ["flagged", "revised", "sent_back", "resolved"]


def test_revise_without_reason_shows_error(rev_client, annotators, admin_user):
    double_miss(annotators, admin_user)
    fable = Flag.objects.get().fable
    options = list(fable.current_revision.options.all())
    data = {"count": len(options), "reason": ""}
    for i, o in enumerate(options):
        data[f"text_{i}"], data[f"kind_{i}"] = o.text + "?", o.kind
    response = rev_client.post(reverse("review_revise", args=[fable.id]), data)
    assert response.status_code == 400 and "say why" in response.content.decode()
    assert fable.revisions.count() == 1


def test_annotators_cannot_review(client, annotators, admin_user):
    double_miss(annotators, admin_user)
    client.force_login(annotators[0])
    assert client.get(reverse("review_queue")).status_code == 403
    fable_id = Flag.objects.get().fable_id
    assert client.get(reverse("review_fable", args=[fable_id])).status_code == 403


def jsonl_rows(client, url: str) -> list[dict]:
    return [json.loads(line) for line in client.get(url).getvalue().decode().splitlines()]


def test_exports(client, admin_user, annotators):
    batch = double_miss(annotators, admin_user)
    client.force_login(admin_user)
    rows = jsonl_rows(client, f"/api/export/answers.jsonl?batch={batch.id}")
    assert len(rows) == 2
    row = rows[0]
    assert row["alias"] == "dm_1" and row["revision"] == 1 and row["correct"] is False
    assert row["annotator"].startswith("ann-") and len(row["shown_kinds"]) == 5
    assert row["primary_kind"] != "ground_truth" and row["surplus"] is False
    csv_text = client.get("/api/export/answers.csv").getvalue().decode()
    assert csv_text.splitlines()[0].startswith("batch,alias,revision,annotator")
    flags = client.get("/api/export/flags.jsonl").getvalue().decode()
    assert "double_miss" in flags
    codes = client.get("/api/export/annotator-codes.csv").getvalue().decode()
    assert "ann," in codes and row["annotator"] in codes
    bench = json.loads(client.get("/api/export/benchmark.json?variant=noto").getvalue())
    assert bench[0]["classes"][bench[0]["correct_moral_label"]] == "none_of_the_others"
    assert client.get("/api/export/nothing.jsonl").status_code == 404


def test_export_query_count_is_constant(client, admin_user, annotators):
    client.force_login(admin_user)
    double_miss(annotators, admin_user, "x", 1)
    with CaptureQueriesContext(connection) as small:
        client.get("/api/export/answers.jsonl").getvalue()
    double_miss(annotators, admin_user, "y", 8)
    with CaptureQueriesContext(connection) as large:
        body = client.get("/api/export/answers.jsonl").getvalue()
    assert body.count(b"\n") == 18
    assert len(small) == len(large)


def test_annotators_cannot_export(client, annotators, db):
    client.force_login(annotators[0])
    assert client.get("/api/export/answers.jsonl").status_code == 403


def test_answer_export_streams_in_chunks_with_three_queries_each(
    client, admin_user, annotators, monkeypatch
):
    from annotate import selectors

    client.force_login(admin_user)
    double_miss(annotators, admin_user, "y", 8)  # 16 answers
    with CaptureQueriesContext(connection) as whole:
        one_chunk = client.get("/api/export/answers.jsonl").getvalue()
    monkeypatch.setattr(selectors, "ANSWER_CHUNK", 5)
    with CaptureQueriesContext(connection) as chunked:
        four_chunks = client.get("/api/export/answers.jsonl").getvalue()
    assert four_chunks == one_chunk and one_chunk.count(b"\n") == 16
    # 16 answers: 1 chunk or 4 chunks of (answers, their options, their revisions).
    assert len(chunked) == len(whole) + 3 * 3


def test_answer_export_keeps_to_its_batch_and_to_mcqa_batches(client, admin_user, annotators):
    from annotate.models import Batch

    client.force_login(admin_user)
    first = double_miss(annotators, admin_user, "p", 2)
    second = double_miss(annotators, admin_user, "q", 1)
    rows = jsonl_rows(client, f"/api/export/answers.jsonl?batch={first.id}")
    # (Which fable an annotator gets first is routing's pseudo-random order.)
    assert (
        sorted((r["batch"], r["alias"]) for r in rows)
        == [("batch p", "p_1")] * 2 + [("batch p", "p_2")] * 2
    )
    assert len(jsonl_rows(client, "/api/export/answers.jsonl")) == 6
    assert jsonl_rows(client, f"/api/export/answers.jsonl?batch={second.id + 100}") == []
    # Answers of a batch that is not multiple choice are not in this export.
    Batch.objects.filter(id=first.id).update(kind=Batch.RATING)
    assert jsonl_rows(client, f"/api/export/answers.jsonl?batch={first.id}") == []
    rows = jsonl_rows(client, "/api/export/answers.jsonl")
    assert {(r["batch"], r["alias"]) for r in rows} == {("batch q", "q_1")} and len(rows) == 2


def test_answer_export_fields_follow_the_stored_answers(client, admin_user, annotators):
    from annotate.models import Answer, Option

    client.force_login(admin_user)
    batch = pair_batch(annotators, admin_user, "sel", 3)
    # Three selections in click order, one, and one again; then the same for the other.
    for labels in (["C", "A", "E"], ["B"], ["D"]):
        answer_as(annotators[0], batch, labels=labels)
        answer_as(annotators[1], batch, labels=labels[::-1])
    Answer.objects.filter(batch=batch).update(seconds=12.25)  # a tie: round() gives 12.2
    rows = jsonl_rows(client, f"/api/export/answers.jsonl?batch={batch.id}")
    answers = Answer.objects.filter(batch=batch).select_related("assignment").order_by("id")
    assert len(rows) == len(answers) == 6
    assert sorted(len(answer.selected) for answer in answers) == [1, 1, 1, 1, 3, 3]
    for row, answer in zip(rows, answers, strict=True):
        options = {o.id: o for o in Option.objects.filter(revision_id=answer.revision_id)}
        kinds = [options[i].kind for i in answer.selected]
        assert row["shown_kinds"] == [options[i].kind for i in answer.assignment.order]
        assert row["selected_kinds"] == kinds and len(kinds) in (1, 3)
        assert row["selected_texts"] == [options[i].text for i in answer.selected]
        assert row["primary_kind"] == kinds[0]
        assert row["correct"] is (kinds[0] == "ground_truth")
        assert row["multi"] is (len(kinds) > 1)
        assert row["seconds"] == 12.2


def test_answer_export_timestamps_equal_python_isoformat(client, admin_user, annotators):
    import datetime as dt

    from annotate.models import Answer

    client.force_login(admin_user)
    batch = double_miss(annotators, admin_user)
    first, second = Answer.objects.filter(batch=batch).order_by("id")
    # One timestamp with whole seconds: isoformat() then leaves out the fraction.
    Answer.objects.filter(id=first.id).update(
        created_at=dt.datetime(2026, 3, 4, 5, 6, 7, tzinfo=dt.UTC)
    )
    rows = jsonl_rows(client, f"/api/export/answers.jsonl?batch={batch.id}")
    assert rows[0]["submitted_at"] == "2026-03-04T05:06:07+00:00"
    second = Answer.objects.select_related("assignment").get(id=second.id)
    assert rows[1]["submitted_at"] == second.created_at.isoformat()
    assert rows[1]["claimed_at"] == second.assignment.claimed_at.isoformat()


def test_skips_export(client, admin_user, annotators):
    from annotate.services.routing import assignment_claim, assignment_skip

    batch = pair_batch(annotators, admin_user, "sk", 1, name="skips")
    assignment = assignment_claim(batch=batch, annotator=annotators[0])
    assignment_skip(assignment_id=assignment.id, annotator=annotators[0], comment="too dark")
    client.force_login(admin_user)
    (row,) = jsonl_rows(client, f"/api/export/skips.jsonl?batch={batch.id}")
    assert row["batch"] == "skips" and row["alias"] == "sk_1" and row["revision"] == 1
    assert row["annotator"].startswith("ann-") and row["comment"] == "too dark"
    assert row["skipped_at"] >= row["claimed_at"]
