"""gunicorn settings for production: `gunicorn annotate.wsgi` reads this file."""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 30
keepalive = 5
# Recycle workers now and then so that a slow leak can never grow without bound.
max_requests = 2000
max_requests_jitter = 200
accesslog = "-"
errorlog = "-"
access_log_format = (
    '{"remote": "%(h)s", "request": "%(r)s", "status": %(s)s, "bytes": %(B)s, "ms": %(M)s}'
)
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
preload_app = True
