import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.models import Fable, ModelMoral, Rating, RatingTarget
from annotate.rating_analysis import rating_summary, word_iou
from annotate.services import generation
from annotate.services.batches import batch_create
from annotate.services.errors import Invalid
from tests.factories import make_fables


def generated(models, fables, capture):
    with capture(execute=False):
        ids = generation.morals_request(models=models, fables=fables)
    for moral_id in ids:
        generation.moral_generate(moral_id=moral_id)


@pytest.fixture
def rating_batch(db, annotators, admin_user, django_capture_on_commit_callbacks):
    make_fables(4)
    fables = list(Fable.objects.all())
    base = generation.model_add(name="tfidf", provider="baseline")
    generated([base], fables, django_capture_on_commit_callbacks)
    return batch_create(
        name="Ratings",
        kind="rating",
        fables=fables,
        models=[base],
        annotators=annotators[:2],
        overlap=2,
        include_control=True,
        created_by=admin_user,
    )


def test_rating_batch_has_model_morals_and_hidden_controls(rating_batch):
    targets = RatingTarget.objects.filter(batch=rating_batch)
    assert targets.filter(model_moral__isnull=False).count() == 4
    assert targets.filter(control_option__isnull=False).count() == 4


def test_rating_batch_needs_finished_morals(db, annotators):
    make_fables(2)
    model = generation.model_add(name="nothing-yet", provider="baseline")
    with pytest.raises(Invalid, match="generate morals first"):
        batch_create(
            name="r",
            kind="rating",
            fables=list(Fable.objects.all()),
            models=[model],
            annotators=annotators[:2],
        )


def test_api_next_shows_morals_without_model_names(rating_batch, annotators):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {annotators[0].token}")
    body = client.post(f"/api/batches/{rating_batch.id}/next/").json()
    assert [m["label"] for m in body["morals"]] == ["1", "2"]
    assert "options" not in body and "tfidf" not in str(body) and "control" not in str(body)
    url = f"/api/assignments/{body['assignment']}/answer/"
    bad = client.post(url, {"ratings": {"1": 6, "2": 3}}, format="json")
    assert bad.status_code == 400 and "must be 1–5" in bad.json()["detail"]
    missing = client.post(url, {"ratings": {"1": 4}}, format="json")
    assert missing.status_code == 400 and "moral 2 has no score" in missing.json()["detail"]
    assert client.post(url, {"ratings": {"1": 4, "2": 5}}, format="json").status_code == 201
    assert client.post(url, {"ratings": {"1": 4, "2": 5}}, format="json").status_code == 200
    assert sorted(Rating.objects.values_list("score", flat=True)) == [4, 5]


def test_rating_screen_and_plain_form_post(client, rating_batch, annotators):
    client.force_login(annotators[0])
    response = client.get(reverse("batch_next", args=[rating_batch.id]))
    page = client.get(response.url)
    html = page.content.decode()
    assert 'data-screen="rating"' in html and "Captures the essence fully" in html
    assert "tfidf" not in html and "ground_truth" not in html
    assignment_id = int(response.url.strip("/").split("/")[-1])
    response = client.post(reverse("assignment_answer", args=[assignment_id]), {"score_1": "3"})
    assert response.status_code == 400 and "moral 2 has no score" in response.content.decode()
    assert 'value="3" checked' in response.content.decode()
    response = client.post(
        reverse("assignment_answer", args=[assignment_id]),
        {"score_1": "3", "score_2": "5", "comment": "close"},
    )
    assert response.status_code == 302 and Rating.objects.count() == 2


def test_rating_screen_query_count_is_constant(client, rating_batch, annotators):
    client.force_login(annotators[0])
    counts = []
    for _ in range(2):
        response = client.get(reverse("batch_next", args=[rating_batch.id]))
        assignment_id = int(response.url.strip("/").split("/")[-1])
        with CaptureQueriesContext(connection) as q:
            client.get(response.url)
        counts.append(len(q))
        client.post(
            reverse("assignment_answer", args=[assignment_id]), {"score_1": "3", "score_2": "4"}
        )
    assert counts[0] == counts[1]


def test_summary_per_model_with_control_apart(rating_batch, annotators):
    client = APIClient()
    for user, scores in ((annotators[0], (2, 5)), (annotators[1], (3, 4))):
        client.credentials(HTTP_AUTHORIZATION=f"Token {user.token}")
        while (r := client.post(f"/api/batches/{rating_batch.id}/next/")).status_code == 200:
            body = r.json()
            client.post(
                f"/api/assignments/{body['assignment']}/answer/",
                {"ratings": {"1": scores[0], "2": scores[1]}},
                format="json",
            )
    summary = rating_summary(batch_id=rating_batch.id)
    names = [m["name"] for m in summary["models"]]
    assert names == ["tfidf", "true moral (control)"]
    assert all(m["n"] == 8 for m in summary["models"])
    assert sum(summary["models"][0]["histogram"]) == 8
    assert len(summary["pairs"]) == 1
    assert summary["pairs"][0]["kappa_quadratic"]["n"] == 8
    assert summary["alpha_ordinal"]["n"] == 8
    iou = summary["models"][0]["iou_vs_rating"]
    assert iou["n"] == 4


def test_word_iou():
    assert word_iou("Slow and steady wins", "slow and steady wins!") == 1.0
    assert word_iou("a b", "c d") == 0.0
    assert word_iou("a b c", "a b d") == 0.5


def test_morals_export(client, admin_user, rating_batch):
    client.force_login(admin_user)
    lines = client.get("/api/export/morals.jsonl").getvalue().decode().splitlines()
    first = json.loads(lines[0])
    assert len(lines) == 4 and first["model"] == "tfidf" and first["status"] == "done"
    assert ModelMoral.objects.filter(status="done").count() == 4
