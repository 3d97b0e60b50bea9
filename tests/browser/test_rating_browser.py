"""An annotator rates the morals of two fables with the keyboard only."""

import pytest

from annotate.models import Fable, Rating
from annotate.services import generation
from annotate.services.batches import batch_create
from tests.browser.conftest import sign_in
from tests.factories import make_fables

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("one_per_screen", [False, True])
def test_keyboard_only_rating(page, live_server, annotators, admin_user, artifacts, one_per_screen):
    make_fables(2)
    fables = list(Fable.objects.all())
    model = generation.model_add(name="tfidf", provider="baseline")
    generation.morals_request(models=[model], fables=fables)
    for moral in model.morals.all():
        generation.moral_generate(moral_id=moral.id)
    batch = batch_create(
        name="Rate",
        kind="rating",
        fables=fables,
        models=[model],
        annotators=annotators[:2],
        overlap=2,
        include_control=True,
        one_per_screen=one_per_screen,
    )
    sign_in(page, live_server, annotators[0].username)
    page.click("text=Start")
    page.wait_for_selector("#screen[data-screen=rating]")
    if not one_per_screen:
        page.screenshot(path=str(artifacts / "rating-screen.png"), full_page=True)
    for scores in (("4", "2"), ("5", "3")):
        if one_per_screen:
            assert page.locator(".moral:visible").count() == 1
        page.keyboard.press(scores[0])  # first moral has focus; scoring moves on
        if one_per_screen:
            assert page.locator(".moral:visible").count() == 1
        page.keyboard.press(scores[1])
        page.keyboard.press("Enter")
        page.wait_for_selector("text=Answer saved.")
    page.wait_for_selector("text=Batch finished")
    assert sorted(Rating.objects.values_list("score", flat=True)) == [2, 3, 4, 5]
    assert page.locator("text=tfidf").count() == 0
    assert batch.answers.count() == 2
