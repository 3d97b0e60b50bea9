"""Settings, read from the environment.

Every value has an embedded default that needs no server (SQLite, a filesystem
broker) except SECRET_KEY, which must be set whenever DEBUG is off.
Bad values fail loudly at start-up with ImproperlyConfigured.
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def load_dotenv(path: Path) -> None:
    """KEY=VALUE lines of a local .env file; real environment variables win."""
    if not path.is_file():
        return
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise ImproperlyConfigured(f"{path}, line {number}: expected KEY=VALUE")
        os.environ.setdefault(key.strip(), value.strip().strip("\"'"))


if not os.environ.get("MORABLES_IGNORE_DOTENV"):
    load_dotenv(BASE_DIR / ".env")
VAR_DIR = Path(os.environ.get("VAR_DIR", BASE_DIR / "var"))


def envbool(name: str, default: str) -> bool:
    value = os.environ.get(name, default).strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise ImproperlyConfigured(
        f"{name} must be one of 1/0, true/false, yes/no, on/off; got {value!r}"
    )


def envint(name: str, default: str) -> int:
    value = os.environ.get(name, default)
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer; got {value!r}") from None


def envlist(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = envbool("DEBUG", "0")

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off (see .env.example)")
    SECRET_KEY = "insecure-debug-only-key"

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "127.0.0.1,localhost" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "csp",
    "axes",
    "annotate",
]

MIDDLEWARE = [
    # First, so that it times everything else.
    "annotate.middleware.ServerTimingMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into a 429 page.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    # Login throttling: too many failed sign-ins lock the username+address out for a while.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = envint("AXES_FAILURE_LIMIT", "8")
AXES_COOLOFF_TIME = 0.25  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True

# Only the app's own scripts and styles; htmx needs nothing inline (indicator styles off).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
        "base-uri": ["'self'"],
        "object-src": ["'none'"],
    }
}

ROOT_URLCONF = "annotate.urls"
WSGI_APPLICATION = "annotate.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "annotate.context_processors.roles",
            ],
        },
    },
]

_default_db = f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
try:
    DATABASES = {"default": dj_database_url.parse(os.environ.get("DATABASE_URL", _default_db))}
except Exception as exc:  # dj-database-url raises several types for unknown schemes
    raise ImproperlyConfigured(f"DATABASE_URL is not a valid database URL: {exc}") from None
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    # WAL and IMMEDIATE transactions let the demo's web and worker processes share one file.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
else:
    DATABASES["default"]["CONN_MAX_AGE"] = envint("CONN_MAX_AGE", "60")
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Uploads (fable import form): keep them bounded.
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
IMPORT_MAX_UPLOAD_BYTES = envint("IMPORT_MAX_UPLOAD_BYTES", str(20 * 1024 * 1024))

# Routing: how long a claimed fable is held for its annotator before the slot is freed.
LEASE_SECONDS = envint("LEASE_SECONDS", str(30 * 60))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": os.environ.get("API_THROTTLE_ANON", "60/min"),
        "user": os.environ.get("API_THROTTLE_USER", "3000/min"),
    },
}
SPECTACULAR_SETTINGS = {
    # <id:…> path parameters (annotate/converters.py) are integers of at most 18 digits.
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "integer", "minimum": 0, "maximum": 10**18 - 1}},
    "TITLE": "Morables Annotate API",
    "VERSION": "1",
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Celery. The default broker is kombu's filesystem transport: it needs no server, keeps
# queued messages as files in var/ across restarts, and is safe for several local processes.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
if not CELERY_BROKER_URL.startswith(("filesystem://", "redis://", "rediss://", "amqp://")):
    raise ImproperlyConfigured(
        "CELERY_BROKER_URL must start with filesystem://, redis:// or amqp://; "
        f"got {CELERY_BROKER_URL!r}"
    )
# Redis redelivers a message that a dead worker never acknowledged after this long.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": envint("CELERY_VISIBILITY_TIMEOUT", "300")}
if CELERY_BROKER_URL.startswith("filesystem://"):
    _queue_dir = VAR_DIR / "celery-queue"
    _queue_dir.mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue_dir),
        "data_folder_out": str(_queue_dir),
        # exchange tables (broadcast/pidbox); kombu's default is ./control in the cwd
        "control_folder": str(VAR_DIR / "celery-control"),
    }
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# make bench only: a yardstick endpoint (one indexed SELECT + one INSERT).
BENCH_ENDPOINTS = envbool("BENCH_ENDPOINTS", "0")
# A moral `running` longer than this is taken to belong to a dead worker and is retried.
GENERATION_STALE_SECONDS = envint("GENERATION_STALE_SECONDS", "600")
GENERATION_REQUEUE_PENDING_SECONDS = envint("GENERATION_REQUEUE_PENDING_SECONDS", "1800")
GENERATION_TIMEOUT_SECONDS = envint("GENERATION_TIMEOUT_SECONDS", "60")
CELERY_BEAT_SCHEDULE = {
    "requeue-stale-morals": {
        "task": "annotate.tasks.requeue_stale_morals",
        "schedule": float(envint("GENERATION_REQUEUE_INTERVAL", "60")),
    },
}

# Throttling counters (API, login) must be shared by every web process: Redis when there is
# one, else the local process memory (fine for one process, e.g. make demo).
CACHE_URL = os.environ.get(
    "CACHE_URL", CELERY_BROKER_URL if CELERY_BROKER_URL.startswith("redis") else ""
)
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
    if CACHE_URL.startswith("redis")
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}

LOG_FORMAT = os.environ.get("LOG_FORMAT", "plain" if DEBUG else "json")
if LOG_FORMAT not in ("plain", "json"):
    raise ImproperlyConfigured(f"LOG_FORMAT must be plain or json; got {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "annotate.logging.JSONFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}, "axes": {"level": "WARNING"}},
}

if not DEBUG:
    SESSION_COOKIE_SECURE = envbool("SECURE_COOKIES", "1")
    CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
    SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", "31536000")
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", "1")
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_CONTENT_TYPE_NOSNIFF = True
