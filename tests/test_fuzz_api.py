"""Property-based fuzzing of the API against its own OpenAPI schema (schemathesis).

Every generated request, valid or not, must get an answer below 500, and a refusal must
say what is wrong.
"""

import os

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

from tests.factories import answer_as, make_fables

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))  # make reliability runs more


@pytest.fixture
def api_schema(db, admin_user, annotators, settings):
    from annotate.services.batches import batch_create, fables_choose
    from annotate.wsgi import application

    settings.ALLOWED_HOSTS = ["localhost", "testserver"]
    make_fables(3)
    batch = batch_create(name="fuzz", fables=fables_choose(), annotators=annotators[:2])
    answer_as(annotators[0], batch, correct=False)
    # As Django's test client does: the test's transaction must survive each request.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield schemathesis.openapi.from_wsgi(
        "/api/schema/?format=json",
        application,
        headers={"Authorization": f"Token {admin_user.token}"},
    )
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(
    max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
def test_no_server_errors(case, admin_user):
    response = case.call(headers={"Authorization": f"Token {admin_user.token}"})
    assert response.status_code < 500, (case.method, case.path, response.text[:500])
    if 400 <= response.status_code < 500 and response.headers.get("Content-Type", "").startswith(
        "application/json"
    ):
        assert response.json(), "a refusal must say what is wrong"
