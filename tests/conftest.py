import os
import shutil
from pathlib import Path

import pytest
from django.db import connection

from annotate.services.importing import fables_import
from annotate.services.users import user_add

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"
REQUIRE_BROWSER = os.environ.get("REQUIRE_BROWSER") == "1"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def missing(reason: str, *, required: bool):
    """Skip, or fail when CI says this component must be there."""
    if required:
        pytest.fail(f"required by CI but unavailable: {reason}")
    pytest.skip(reason)


@pytest.fixture
def needs_postgres():
    if connection.vendor != "postgresql":
        missing("needs PostgreSQL: set DATABASE_URL=postgres://…", required=REQUIRE_SERVICES)


@pytest.fixture
def needs_redis():
    from django.conf import settings

    if not settings.CELERY_BROKER_URL.startswith("redis"):
        missing("needs Redis: set CELERY_BROKER_URL=redis://…", required=REQUIRE_SERVICES)


@pytest.fixture(scope="session")
def chromium_path():
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        missing(
            f"needs Chromium at {CHROMIUM} (apt-get install chromium)", required=REQUIRE_BROWSER
        )
    return CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")


def read_fixture(name: str) -> tuple[str, str]:
    path = FIXTURES / name
    return (name, path.read_text(encoding="utf-8"))


@pytest.fixture
def fables(db):
    """The 30 demo fables, imported through the real importer."""
    fables_import(sources=[read_fixture("demo_mcqa.json")])
    from annotate.models import Fable

    return list(Fable.objects.order_by("import_order"))


@pytest.fixture
def make_user(db):
    def make(username: str, role: str = "annotator", password: str = "pw-for-tests-1"):
        user, token = user_add(username=username, role=role, password=password, validate=False)
        user.token = token
        return user

    return make


@pytest.fixture
def admin_user(make_user):
    return make_user("root", "admin")


@pytest.fixture
def reviewer(make_user):
    return make_user("rita", "reviewer")


@pytest.fixture
def annotators(make_user):
    return [make_user(name) for name in ("ann", "ben", "cat", "dan")]
