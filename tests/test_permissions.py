"""Every page and API endpoint × every role (and signed out) → the expected status."""

import pytest
from rest_framework.test import APIClient

from annotate.models import Assignment, Flag
from annotate.services.batches import batch_create, fables_choose
from annotate.services.generation import model_add
from tests.factories import answer_as, make_fables

ROLES = ("anon", "annotator", "reviewer", "admin")


@pytest.fixture
def world(db, make_user):
    make_fables(4)
    users = {
        "annotator": make_user("perm-ann", "annotator"),
        "other": make_user("perm-other", "annotator"),
        "reviewer": make_user("perm-rev", "reviewer"),
        "admin": make_user("perm-admin", "admin"),
    }
    batch = batch_create(
        name="perm",
        fables=fables_choose(),
        overlap=2,
        annotators=[users["annotator"], users["other"]],
    )
    answer_as(users["annotator"], batch, correct=False)
    answer_as(users["other"], batch, correct=False)
    mine = Assignment.objects.filter(annotator=users["annotator"]).first()
    flag = Flag.objects.first()
    model_add(name="baseline", provider="baseline")
    return {"users": users, "batch": batch, "assignment": mine, "flag": flag, "fable": flag.fable}


# (method, url template, {role: expected status})
ANON_LOGIN = 302  # pages redirect to the sign-in page
PAGES = [
    ("get", "/", {"anon": ANON_LOGIN, "annotator": 200, "reviewer": 200, "admin": 200}),
    ("get", "/guidelines/", {"anon": ANON_LOGIN, "annotator": 200, "reviewer": 200, "admin": 200}),
    ("get", "/batches/", {"anon": ANON_LOGIN, "annotator": 403, "reviewer": 200, "admin": 200}),
    ("get", "/batches/new/", {"anon": ANON_LOGIN, "annotator": 403, "reviewer": 403, "admin": 200}),
    (
        "get",
        "/batches/{batch}/dashboard/",
        {"anon": ANON_LOGIN, "annotator": 403, "reviewer": 200, "admin": 200},
    ),
    (
        "get",
        "/batches/{batch}/next/",
        {"anon": ANON_LOGIN, "annotator": 302, "reviewer": 404, "admin": 404},
    ),
    (
        "get",
        "/assignments/{assignment}/",
        {"anon": ANON_LOGIN, "annotator": 302, "reviewer": 404, "admin": 404},
    ),
    (
        "post",
        "/assignments/{assignment}/skip/",
        {"anon": ANON_LOGIN, "annotator": 400, "reviewer": 404, "admin": 404},
    ),
    ("get", "/review/", {"anon": ANON_LOGIN, "annotator": 403, "reviewer": 200, "admin": 200}),
    (
        "get",
        "/review/fables/{fable}/",
        {"anon": ANON_LOGIN, "annotator": 403, "reviewer": 200, "admin": 200},
    ),
    (
        "post",
        "/review/fables/{fable}/close/",
        {"anon": ANON_LOGIN, "annotator": 403, "reviewer": 302, "admin": 302},
    ),
    ("get", "/import/", {"anon": ANON_LOGIN, "annotator": 403, "reviewer": 403, "admin": 200}),
    ("get", "/generation/", {"anon": ANON_LOGIN, "annotator": 403, "reviewer": 403, "admin": 200}),
    (
        "post",
        "/generation/retry/",
        {"anon": ANON_LOGIN, "annotator": 403, "reviewer": 403, "admin": 302},
    ),
    ("get", "/admin/", {"anon": 302, "annotator": 302, "reviewer": 302, "admin": 200}),
    ("get", "/healthz", {"anon": 200, "annotator": 200, "reviewer": 200, "admin": 200}),
    ("get", "/login/", {"anon": 200, "annotator": 200, "reviewer": 200, "admin": 200}),
]

API = [
    ("get", "/api/batches/", {"anon": 401, "annotator": 403, "reviewer": 200, "admin": 200}),
    ("post", "/api/batches/", {"anon": 401, "annotator": 403, "reviewer": 403, "admin": 400}),
    (
        "get",
        "/api/batches/{batch}/",
        {"anon": 401, "annotator": 403, "reviewer": 403, "admin": 200},
    ),
    (
        "get",
        "/api/batches/{batch}/agreement/",
        {"anon": 401, "annotator": 403, "reviewer": 200, "admin": 200},
    ),
    (
        "post",
        "/api/batches/{batch}/next/",
        {"anon": 401, "annotator": 200, "reviewer": 404, "admin": 404},
    ),
    (
        "post",
        "/api/batches/{batch}/close/",
        {"anon": 401, "annotator": 403, "reviewer": 403, "admin": 200},
    ),
    (
        "post",
        "/api/assignments/{assignment}/answer/",
        {"anon": 401, "annotator": 400, "reviewer": 404, "admin": 404},
    ),
    (
        "post",
        "/api/assignments/{assignment}/skip/",
        {"anon": 401, "annotator": 400, "reviewer": 404, "admin": 404},
    ),
    ("get", "/api/fables/", {"anon": 401, "annotator": 403, "reviewer": 200, "admin": 200}),
    ("get", "/api/fables/{alias}/", {"anon": 401, "annotator": 403, "reviewer": 200, "admin": 200}),
    ("post", "/api/fables/import/", {"anon": 401, "annotator": 403, "reviewer": 403, "admin": 400}),
    (
        "get",
        "/api/flags/?status=open",
        {"anon": 401, "annotator": 403, "reviewer": 200, "admin": 200},
    ),
    (
        "post",
        "/api/flags/{flag}/dismiss/",
        {"anon": 401, "annotator": 403, "reviewer": 200, "admin": 409},
    ),
    ("get", "/api/models/", {"anon": 401, "annotator": 403, "reviewer": 403, "admin": 200}),
    ("get", "/api/generation/", {"anon": 401, "annotator": 403, "reviewer": 403, "admin": 200}),
    (
        "get",
        "/api/export/answers.jsonl",
        {"anon": 401, "annotator": 403, "reviewer": 403, "admin": 200},
    ),
    (
        "get",
        "/api/export/answers.csv",
        {"anon": 401, "annotator": 403, "reviewer": 403, "admin": 200},
    ),
    (
        "get",
        "/api/export/ratings.jsonl",
        {"anon": 401, "annotator": 403, "reviewer": 403, "admin": 200},
    ),
    (
        "get",
        "/api/export/morals.jsonl",
        {"anon": 401, "annotator": 403, "reviewer": 403, "admin": 200},
    ),
    (
        "get",
        "/api/export/annotator-codes.csv",
        {"anon": 401, "annotator": 403, "reviewer": 403, "admin": 200},
    ),
    (
        "get",
        "/api/export/benchmark.json?variant=core",
        {"anon": 401, "annotator": 403, "reviewer": 403, "admin": 200},
    ),
    ("get", "/api/schema/", {"anon": 401, "annotator": 200, "reviewer": 200, "admin": 200}),
    ("get", "/api/docs/", {"anon": 401, "annotator": 200, "reviewer": 200, "admin": 200}),
]


def url_for(template: str, world) -> str:
    return template.format(
        batch=world["batch"].id,
        assignment=world["assignment"].id,
        fable=world["fable"].id,
        alias=world["fable"].alias,
        flag=world["flag"].id,
    )


def run_matrix(world, rows, client_for):
    failures = []
    # Roles in this order: the reviewer's dismiss comes before the admin's (then 409).
    for role in ROLES:
        client = client_for(role)
        for method, template, expected in rows:
            url = url_for(template, world)
            response = getattr(client, method)(url)
            if response.status_code != expected[role]:
                failures.append(
                    f"{role:9} {method.upper():4} {url}: "
                    f"{response.status_code}, expected {expected[role]}"
                )
    assert failures == [], "\n".join(failures)


def test_page_matrix(world, client):
    def client_for(role):
        client.logout()
        if role != "anon":
            client.force_login(world["users"][role])
        return client

    run_matrix(world, PAGES, client_for)


def test_api_matrix(world):
    def client_for(role):
        client = APIClient()
        if role != "anon":
            client.credentials(HTTP_AUTHORIZATION=f"Token {world['users'][role].token}")
        return client

    run_matrix(world, API, client_for)


def test_annotator_never_sees_kinds_or_model_names(world):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {world['users']['annotator'].token}")
    for url in ("/api/batches/{batch}/next/",):
        body = client.post(url_for(url, world)).content.decode()
        for secret in ("ground_truth", "similar_characters", "kind", "baseline"):
            assert secret not in body
