import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from annotate.models import Batch, Fable, Flag, ModelMoral
from annotate.services.batches import batch_create, fables_choose
from tests.factories import answer_as, benchmark_record, make_fables


def client_for(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {user.token}")
    return client


@pytest.fixture
def admin(admin_user):
    return client_for(admin_user)


def test_fable_list_filters_paginates_and_counts_queries(admin, db):
    make_fables(5, prefix="aa")
    make_fables(3, prefix="bb")
    body = admin.get("/api/fables/?alias=bb&limit=2").json()
    assert body["count"] == 3 and len(body["results"]) == 2
    assert body["results"][0] == {
        "alias": "bb_1",
        "title": "Fable bb_1",
        "source": "bb",
        "content_note": "",
        "revision": 1,
    }
    with CaptureQueriesContext(connection) as small:
        admin.get("/api/fables/?limit=3")
    with CaptureQueriesContext(connection) as large:
        admin.get("/api/fables/?limit=8")
    # 3 queries: token+user (a superuser needs no group query), count, page with revisions
    assert len(small) == len(large) == 3


def test_fable_detail_shows_revisions_with_kinds(admin, db):
    make_fables(1)
    body = admin.get("/api/fables/test_1/").json()
    assert body["revision"] == 1 and len(body["revisions"]) == 1
    assert body["revisions"][0]["options"][0]["kind"] == "ground_truth"
    assert admin.get("/api/fables/nope/").status_code == 404


def test_import_upload_and_refusal(admin, db):
    good = SimpleUploadedFile("a.json", json.dumps([benchmark_record("up_1")]).encode())
    response = admin.post("/api/fables/import/", {"file": good}, format="multipart")
    assert response.status_code == 201 and response.json()["created"] == 1
    bad_record = benchmark_record("up_2")
    bad_record["classes"] = bad_record["classes"][:3]
    bad = SimpleUploadedFile("b.json", json.dumps([bad_record]).encode())
    response = admin.post("/api/fables/import/", {"file": bad}, format="multipart")
    body = response.json()
    assert response.status_code == 400
    assert (body["file"], body["record"], body["alias"], body["field"]) == (
        "b.json",
        1,
        "up_2",
        "classes",
    )
    assert Fable.objects.count() == 1


def test_batch_list_and_close(admin, admin_user, annotators):
    make_fables(2)
    batch = batch_create(name="closable", fables=fables_choose(), annotators=annotators[:2])
    assert admin.get("/api/batches/").json()["results"][0]["name"] == "closable"
    assert admin.post(f"/api/batches/{batch.id}/close/").json()["closed"] is True
    assert admin.post(f"/api/batches/{batch.id}/close/").status_code == 409
    nxt = client_for(annotators[0]).post(f"/api/batches/{batch.id}/next/")
    assert nxt.status_code == 204


def test_flag_list_resolve_and_send_back(admin, annotators, reviewer):
    make_fables(1)
    batch = batch_create(name="f", fables=fables_choose(), annotators=annotators[:2])
    answer_as(annotators[0], batch, correct=False)
    answer_as(annotators[1], batch, correct=False)
    rev = client_for(reviewer)
    flags = rev.get("/api/flags/?status=open").json()["results"]
    assert [f["reason"] for f in flags] == ["double_miss"]
    assert rev.get("/api/flags/?status=bogus").status_code == 400
    flag_id = flags[0]["id"]
    other = batch_create(name="fresh", fables=fables_choose(), annotators=annotators[2:])
    response = rev.post(f"/api/flags/{flag_id}/send-back/", {"batch": other.id}, format="json")
    assert response.status_code == 200 and response.json()["round"] == 2
    response = rev.post(f"/api/flags/{flag_id}/resolve/", {"note": "sent back"}, format="json")
    assert response.json()["status"] == "resolved"
    assert Flag.objects.get().note == "sent back"


def test_models_and_generation(admin, db, django_capture_on_commit_callbacks):
    make_fables(2)
    response = admin.post("/api/models/", {"name": "base", "provider": "baseline"}, format="json")
    assert response.status_code == 201 and "api_key" not in response.json()
    bad = admin.post("/api/models/", {"name": "x", "provider": "openai_compatible"}, format="json")
    assert bad.status_code == 400 and "base_url" in bad.json()["detail"]
    with django_capture_on_commit_callbacks(execute=False):
        queued = admin.post("/api/generation/", {"models": ["base"]}, format="json")
    assert queued.status_code == 202 and queued.json()["queued"] == 2
    assert ModelMoral.objects.count() == 2
    assert admin.get("/api/generation/").json()[0]["pending"] == 2
    unknown = admin.post("/api/generation/", {"models": ["nope"]}, format="json")
    assert unknown.status_code == 400 and "unknown models: nope" in json.dumps(unknown.json())


def test_schema_names_the_design_interfaces(admin, db):
    schema = admin.get("/api/schema/?format=json").json()
    for path in (
        "/api/batches/",
        "/api/batches/{batch_id}/next/",
        "/api/assignments/{assignment_id}/answer/",
        "/api/assignments/{assignment_id}/skip/",
        "/api/flags/",
    ):
        assert path in schema["paths"], path
    assert Batch.objects.count() == 0
