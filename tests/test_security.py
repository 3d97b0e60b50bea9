import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import override_settings
from django.urls import reverse

ROOT = Path(__file__).resolve().parent.parent


def production_env(**extra):
    # The browser tests' conftest sets DJANGO_ALLOW_ASYNC_UNSAFE in this process; a
    # production process would not have it (check --deploy rightly refuses it).
    inherited = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    return {
        **inherited,
        "MORABLES_IGNORE_DOTENV": "1",
        "DEBUG": "0",
        "SECRET_KEY": "x" * 30 + "-production-like-secret-" + "y" * 30,
        "ALLOWED_HOSTS": "annotate.example.org",
        "DJANGO_SETTINGS_MODULE": "annotate.settings",
        **extra,
    }


def test_check_deploy_is_clean_with_production_settings():
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=production_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SECRET_KEY": ""}, "SECRET_KEY must be set when DEBUG is off"),
        ({"DEBUG": "maybe"}, "DEBUG must be one of"),
        ({"DATABASE_URL": "nosuchdb://x"}, "DATABASE_URL is not a valid database URL"),
        ({"CELERY_BROKER_URL": "kafka://x"}, "CELERY_BROKER_URL must start with"),
        ({"LEASE_SECONDS": "soon"}, "LEASE_SECONDS must be an integer"),
    ],
)
def test_bad_settings_fail_loudly(env, message):
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=production_env(**env),
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0 and message in result.stderr


def test_csp_allows_only_own_scripts(client, db):
    header = client.get(reverse("login"))["Content-Security-Policy"]
    assert "script-src 'self'" in header and "unsafe-inline" not in header
    assert "frame-ancestors 'none'" in header


def test_pages_have_no_inline_scripts_or_styles(client, annotators, admin_user):
    from tests.factories import make_fables

    make_fables(2)
    client.force_login(admin_user)
    for url in ("/", "/batches/new/", "/batches/", "/review/", "/import/", "/generation/"):
        html = client.get(url).content.decode()
        assert "<script>" not in html and " style=" not in html and "<style" not in html, url


def test_login_is_throttled_after_repeated_failures(client, make_user, settings):
    make_user("victim", password="right-password-123")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(reverse("login"), {"username": "victim", "password": "wrong"})
    response = client.post(
        reverse("login"), {"username": "victim", "password": "right-password-123"}
    )
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


def test_forms_need_csrf(annotators, db):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(annotators[0])
    assert strict.post("/assignments/1/skip/", {"comment": "x"}).status_code == 403


def test_upload_size_is_limited(client, admin_user, settings):
    from django.core.files.uploadedfile import SimpleUploadedFile

    settings.IMPORT_MAX_UPLOAD_BYTES = 100
    client.force_login(admin_user)
    big = SimpleUploadedFile("big.json", b"[" + b" " * 200 + b"]")
    response = client.post(reverse("import"), {"file": big})
    assert response.status_code == 400 and "over the limit" in response.content.decode()


@override_settings(DEBUG=False)
def test_no_stack_traces_for_users(client, admin_user, monkeypatch):
    from annotate import selectors

    def explode(**kwargs):
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(selectors, "batches_with_progress", explode)
    client.raise_request_exception = False
    client.force_login(admin_user)
    response = client.get("/")
    assert response.status_code == 500
    body = response.content.decode()
    assert "secret internal detail" not in body and "Traceback" not in body
    assert "Something went wrong" in body


def test_healthz_reports_database_and_broker(client, db):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.content == b"ok"


def test_healthz_fails_when_the_broker_is_down(client, db, settings, monkeypatch):
    from annotate.celery import app

    # A real connection attempt to a closed port. (Patching app.conf.broker_url is not enough
    # on Redis, where Celery has resolved broker_write_url already, and the configuration
    # view does not restore a patched broker_write_url.)
    connect = app.connection_for_write
    monkeypatch.setattr(
        app, "connection_for_write", lambda **kw: connect(url="redis://127.0.0.1:9/0", **kw)
    )
    response = client.get("/healthz")
    assert response.status_code == 503 and b"broker" in response.content


def test_ids_too_large_for_the_database_are_a_json_404(client, admin_user):
    # Found by the API fuzzer: a 20-digit id used to reach SQLite as an OverflowError (500).
    for path in (
        "/api/assignments/9223372036854775808/skip/",
        "/api/assignments/99999999999999999999/answer/",
        "/api/flags/99999999999999999999/dismiss/",
    ):
        response = client.post(
            path,
            {"comment": "x"},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Token {admin_user.token}",
        )
        assert response.status_code == 404, path
        assert response.json() == {"detail": "Not found."}
    page = client.get("/batches/99999999999999999999/next/")
    assert page.status_code in (302, 404) and "text/html" in page["Content-Type"]
