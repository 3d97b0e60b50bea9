"""Test settings: the app's own settings with a test-only secret and broker folder."""

import os

# Tests never read a developer's .env: they run on the environment CI gives them.
os.environ["MORABLES_IGNORE_DOTENV"] = "1"
os.environ.setdefault("SECRET_KEY", "insecure-test-only-key")
# Inside the checkout (var/ is ignored): two checkouts running tests never share files.
os.environ.setdefault(
    "VAR_DIR",
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "var", "test"),
)

from annotate.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
SECURE_SSL_REDIRECT = False
STORAGES["staticfiles"]["BACKEND"] = "django.contrib.staticfiles.storage.StaticFilesStorage"  # noqa: F405

# A file, not memory, so that Celery worker processes started by tests see the test data.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-db.sqlite3")}  # noqa: F405
