"""An annotator works through a batch with the keyboard only, in Debian's Chromium."""

import pytest

from annotate.models import Answer, Assignment, Option
from annotate.services.batches import batch_create, fables_choose
from tests.browser.conftest import sign_in
from tests.factories import make_fables

pytestmark = pytest.mark.django_db(transaction=True)


def current_assignment(user) -> Assignment:
    return Assignment.objects.filter(annotator=user, status=Assignment.CLAIMED).latest("id")


def test_keyboard_only_mcqa_session(page, live_server, annotators, admin_user, artifacts):
    make_fables(4)
    ann = annotators[0]
    batch = batch_create(
        name="Browser batch",
        fables=fables_choose(),
        annotators=annotators[:2],
        overlap=2,
        created_by=admin_user,
    )
    sign_in(page, live_server, ann.username)
    assert "Browser batch" in page.inner_text("main")
    page.click("text=Start")
    page.wait_for_selector("#screen[data-screen=mcqa]")
    page.screenshot(path=str(artifacts / "mcqa-screen.png"), full_page=True)
    # Set on this page only: it survives htmx swaps, not a full page load.
    page.evaluate("window.sameDocument = true")

    # "?" shows the shortcuts; Escape closes them.
    page.keyboard.press("?")
    assert page.is_visible("#shortcuts")
    page.keyboard.press("Escape")

    # 1: one choice with a letter key.
    first = current_assignment(ann)
    page.keyboard.press("c")
    assert page.inner_text(".option[data-label=C] .state") == "Your choice"
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Answer saved.")

    # 2: two equally valid choices with number keys; pressing one again removes it.
    second = current_assignment(ann)
    assert second.id != first.id
    page.keyboard.press("2")
    page.keyboard.press("4")
    page.keyboard.press("5")
    page.keyboard.press("5")
    assert page.inner_text(".option[data-label=D] .state") == "Equally valid"
    assert page.inner_text(".option[data-label=E] .state") == ""
    assert "equally valid: D" in page.inner_text("[data-role=summary]")
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"() => !document.querySelector('#answer-form').action.includes('/{second.id}/')"
    )

    # 3: skip with a comment (S opens the box; the comment is required).
    third = current_assignment(ann)
    page.keyboard.press("s")
    page.keyboard.type("The ending is missing.")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Fable skipped.")

    # 4: another single answer, then the finished page.
    fourth = current_assignment(ann)
    page.keyboard.press("a")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Batch finished")
    assert page.evaluate("window.sameDocument") is True
    assert page.url.endswith(f"/batches/{batch.id}/next/")

    answers = {a.assignment_id: a for a in Answer.objects.filter(annotator=ann)}
    assert answers[first.id].payload["selected"] == ["C"]
    assert answers[second.id].payload["selected"] == ["B", "D"]
    assert answers[second.id].selected == [second.order[1], second.order[3]]
    assert answers[fourth.id].payload["selected"] == ["A"]
    skipped = Assignment.objects.get(id=third.id)
    assert skipped.status == Assignment.SKIPPED
    assert skipped.skip_comment == "The ending is missing."
    # The page never carried an option id.
    html = page.content()
    assert not any(f'"{i}"' in html for i in Option.objects.values_list("id", flat=True))


def test_choosing_nothing_and_submitting_says_so(page, live_server, annotators, admin_user):
    make_fables(2)
    batch_create(
        name="B2",
        fables=fables_choose(),
        annotators=annotators[:2],
        overlap=2,
        created_by=admin_user,
    )
    sign_in(page, live_server, annotators[0].username)
    page.click("text=Start")
    page.wait_for_selector("#screen")
    page.keyboard.press("Enter")
    assert "Choose a moral first" in page.inner_text("[data-role=summary]")
    assert not Answer.objects.exists()
