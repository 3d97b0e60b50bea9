"""A double miss end to end, in a browser: two misses, review, revision, fresh answers."""

import json

import pytest

from annotate.models import Answer, Assignment, Fable, Option
from annotate.services.batches import batch_create, fables_choose
from tests.browser.conftest import sign_in
from tests.factories import make_fables

pytestmark = pytest.mark.django_db(transaction=True)


def sign_out(page, live_server):
    page.context.clear_cookies()


def answer_in_browser(page, live_server, user, batch, *, correct: bool):
    sign_in(page, live_server, user.username)
    page.goto(f"{live_server.url}/batches/{batch.id}/next/")
    page.wait_for_selector("#screen[data-screen=mcqa]")
    assignment = Assignment.objects.filter(annotator=user, status="claimed").latest("id")
    truth = Option.objects.get(revision_id=assignment.revision_id, kind="ground_truth").id
    index = assignment.order.index(truth)
    if not correct:
        index = (index + 1) % len(assignment.order)
    page.keyboard.press(chr(ord("a") + index))
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Batch finished")
    sign_out(page, live_server)


def test_double_miss_review_revision_and_fresh_answers(
    page, live_server, make_user, admin_user, reviewer, artifacts
):
    make_fables(1)
    ann, ben, cat, dan = (make_user(n) for n in ("ann2", "ben2", "cat2", "dan2"))
    first = batch_create(name="Round 1", fables=fables_choose(), annotators=[ann, ben])
    make_fables(1, prefix="spare")
    fresh = batch_create(
        name="Round 2", fables=fables_choose(prefix="spare"), annotators=[cat, dan]
    )
    answer_in_browser(page, live_server, ann, first, correct=False)
    answer_in_browser(page, live_server, ben, first, correct=False)

    sign_in(page, live_server, reviewer.username)
    page.click("text=Review")
    page.click("text=test_1")
    page.wait_for_selector("text=Edit the options")
    assert page.locator("text=missed").count() == 2
    page.fill("textarea[name=text_1]", "A clearer distractor written by the reviewer.")
    page.select_option("select[name=kind_1]", "expert")
    page.fill("input[name=reason]", "distractor 2 was arguably true")
    page.click("text=Save as a new revision")
    page.wait_for_selector("text=Saved as revision 2.")
    assert page.locator("text=v1 → v2").count() == 1
    page.select_option("select[name=batch]", label="Round 2")
    page.click("button:has-text('Send back')")
    page.wait_for_selector("text=sent back into Round 2")
    page.screenshot(path=str(artifacts / "review-page.png"), full_page=True)
    page.fill("input[name=note]", "revised and sent back")
    page.click("button:has-text('Resolve')")
    page.wait_for_selector("text=No open flags")
    sign_out(page, live_server)

    fable = Fable.objects.get(alias="test_1")
    for user in (cat, dan):
        sign_in(page, live_server, user.username)
        page.goto(f"{live_server.url}/batches/{fresh.id}/next/")
        for _ in range(2):  # the spare fable and the revised one, in either order
            page.wait_for_selector("#screen[data-screen=mcqa]")
            page.keyboard.press("a")
            page.keyboard.press("Enter")
            page.wait_for_selector("text=Answer saved.")
        page.wait_for_selector("text=Batch finished")
        sign_out(page, live_server)
    revisions = sorted(
        Answer.objects.filter(fable=fable).values_list("revision__number", flat=True)
    )
    assert revisions == [1, 1, 2, 2]

    sign_in(page, live_server, admin_user.username)
    text = page.request.get(f"{live_server.url}/api/export/answers.jsonl").text()
    rows = [json.loads(line) for line in text.splitlines()]
    assert sorted(r["revision"] for r in rows if r["alias"] == "test_1") == [1, 1, 2, 2]
    history = page.request.get(f"{live_server.url}/api/export/revisions.jsonl").text()
    history_rows = [json.loads(line) for line in history.splitlines()]
    assert [r["revision"] for r in history_rows if r["alias"] == "test_1"] == [1, 2]
