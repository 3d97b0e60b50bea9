import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from annotate.models import Answer, Assignment
from tests.factories import make_fables


def client_for(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {user.token}")
    return client


@pytest.fixture
def batch_id(db, admin_user, annotators):
    make_fables(8)
    response = client_for(admin_user).post(
        "/api/batches/",
        {
            "name": "API batch",
            "kind": "mcqa",
            "annotators": [a.username for a in annotators[:2]],
            "overlap": 2,
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()["id"]


def test_create_batch_and_progress(admin_user, batch_id):
    body = client_for(admin_user).get(f"/api/batches/{batch_id}/").json()
    assert body["kind"] == "mcqa" and body["overlap"] == 2 and body["fables"] == 8
    assert body["answers_done"] == 0 and body["answers_needed"] == 16


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"name": "x", "annotators": ["nobody"]}, "unknown users: nobody"),
        ({"name": "x", "annotators": ["ann"], "overlap": 2}, "need at least 2 annotators"),
        (
            {"name": "x", "annotators": ["ann"], "fables": ["missing_1"], "overlap": 1},
            "unknown fable aliases: missing_1",
        ),
    ],
)
def test_create_batch_refusals(db, admin_user, annotators, body, message):
    make_fables(2)
    response = client_for(admin_user).post("/api/batches/", body, format="json")
    assert response.status_code == 400 and message in response.json()["detail"]


def test_annotators_cannot_create_or_read_batches(annotators, batch_id):
    client = client_for(annotators[0])
    assert client.post("/api/batches/", {}, format="json").status_code == 403
    assert client.get(f"/api/batches/{batch_id}/").status_code == 403


def test_next_answer_skip_flow(annotators, batch_id):
    client = client_for(annotators[0])
    nxt = client.post(f"/api/batches/{batch_id}/next/")
    assert nxt.status_code == 200
    body = nxt.json()
    assert set(body) == {"assignment", "fable", "options", "expires_at"}
    assert set(body["fable"]) == {"alias", "title", "story", "content_note"}
    assert [o["label"] for o in body["options"]] == list("ABCDE")
    assert all(set(o) == {"label", "text"} for o in body["options"])
    # The same assignment comes back while the lease is live.
    assert client.post(f"/api/batches/{batch_id}/next/").json()["assignment"] == body["assignment"]

    url = f"/api/assignments/{body['assignment']}/answer/"
    assert (
        client.post(url, {"selected": ["C", "A"], "comment": ""}, format="json").status_code == 201
    )
    assert (
        client.post(url, {"selected": ["C", "A"], "comment": ""}, format="json").status_code == 200
    )
    assert client.post(url, {"selected": ["B"]}, format="json").status_code == 409
    assert Answer.objects.count() == 1

    second = client.post(f"/api/batches/{batch_id}/next/").json()
    skip = f"/api/assignments/{second['assignment']}/skip/"
    response = client.post(skip, {"comment": ""}, format="json")
    assert response.status_code == 400 and "comment" in response.json()["detail"]
    assert Assignment.objects.get(id=second["assignment"]).status == Assignment.CLAIMED
    assert client.post(skip, {"comment": "too long"}, format="json").status_code == 200


def test_bad_labels_get_400_naming_the_label(annotators, batch_id):
    client = client_for(annotators[0])
    a = client.post(f"/api/batches/{batch_id}/next/").json()["assignment"]
    response = client.post(f"/api/assignments/{a}/answer/", {"selected": ["Q"]}, format="json")
    assert response.status_code == 400 and "'Q' is not one of" in response.json()["detail"]


def test_someone_elses_assignment_is_404(annotators, batch_id):
    a = client_for(annotators[0]).post(f"/api/batches/{batch_id}/next/").json()["assignment"]
    response = client_for(annotators[1]).post(
        f"/api/assignments/{a}/answer/", {"selected": ["A"]}, format="json"
    )
    assert response.status_code == 404


def test_204_when_nothing_is_left(annotators, batch_id):
    client = client_for(annotators[0])
    for _ in range(8):
        a = client.post(f"/api/batches/{batch_id}/next/").json()["assignment"]
        client.post(f"/api/assignments/{a}/answer/", {"selected": ["A"]}, format="json")
    assert client.post(f"/api/batches/{batch_id}/next/").status_code == 204


def test_outsider_gets_404_on_next(make_user, batch_id):
    outsider = make_user("zed")
    assert client_for(outsider).post(f"/api/batches/{batch_id}/next/").status_code == 404


def test_unknown_batch_gets_404_on_next(annotators, batch_id):
    response = client_for(annotators[0]).post(f"/api/batches/{batch_id + 1000}/next/")
    assert response.status_code == 404 and response.json() == {"detail": "not found among yours"}
    assert not Assignment.objects.exists()


def test_no_option_ids_or_kinds_in_next(annotators, batch_id):
    response = client_for(annotators[0]).post(f"/api/batches/{batch_id}/next/")
    body = response.json()

    def numbers(value):
        if isinstance(value, dict):
            return [n for v in value.values() for n in numbers(v)]
        if isinstance(value, list):
            return [n for v in value for n in numbers(v)]
        return [value] if isinstance(value, int) else []

    # The only number sent is the assignment's own id: no option or revision id.
    assert numbers({k: v for k, v in body.items() if k != "assignment"}) == []
    text = response.content.decode()
    for kind in ("ground_truth", "similar_characters", "partial_story", "kind", "revision"):
        assert kind not in text


def test_query_counts_do_not_grow_with_fables(db, admin_user, annotators):
    counts = []
    for n in (4, 40):
        make_fables(n, prefix=f"q{n}")
        batch = (
            client_for(admin_user)
            .post(
                "/api/batches/",
                {
                    "name": f"q{n}",
                    "annotators": ["ann", "ben"],
                    "fables": [f"q{n}_{i}" for i in range(1, n + 1)],
                },
                format="json",
            )
            .json()["id"]
        )
        client = client_for(annotators[0])
        with CaptureQueriesContext(connection) as next_q:
            a = client.post(f"/api/batches/{batch}/next/").json()["assignment"]
        with CaptureQueriesContext(connection) as answer_q:
            client.post(f"/api/assignments/{a}/answer/", {"selected": ["A"]}, format="json")
        counts.append((len(next_q), len(answer_q)))
    assert counts[0] == counts[1], counts
    # next: token+user, (transaction), batch+membership+held slot, slot lock, options,
    # insert assignment, update slot, (commit)
    # answer: token+user, (transaction), slot lock, assignment lock, insert answer,
    # update assignment, fill slot, (commit)
    assert counts[0] == (8, 8), counts


def test_responses_say_how_long_django_took(annotators, batch_id, monkeypatch):
    import re
    import time

    from annotate.services import routing

    def slow_claim(**kwargs):
        time.sleep(0.05)
        return None  # nothing left

    monkeypatch.setattr(routing, "assignment_claim", slow_claim)
    response = client_for(annotators[0]).post(f"/api/batches/{batch_id}/next/")
    assert response.status_code == 204
    match = re.fullmatch(r"app;dur=(\d+\.\d)", response["Server-Timing"])
    assert match and 50 <= float(match[1]) < 5000
