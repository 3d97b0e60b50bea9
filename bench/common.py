"""Helpers shared by the benchmarks: a scratch database, manage.py calls, servers."""

import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
PG_ADMIN_URL = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")


def base_env(**extra) -> dict:
    env = dict(os.environ)
    env.update(
        {
            "SECRET_KEY": "bench-only-secret-key-not-for-production",
            "DEBUG": "0",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "0",
            "SECURE_COOKIES": "0",
            "LOG_LEVEL": "WARNING",
            "MORABLES_IGNORE_DOTENV": "1",
            "BENCH_ENDPOINTS": "1",
        }
    )
    env.update(extra)
    return env


def fresh_pg_database(name: str) -> str:
    """Drop and create a scratch PostgreSQL database; returns its URL."""
    import psycopg

    with psycopg.connect(f"{PG_ADMIN_URL}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{PG_ADMIN_URL}/{name}"


USERS = """
import json, sys
from annotate.services.users import user_add
count, prefix = int(sys.argv[1]), sys.argv[2]
tokens = {}
for i in range(count):
    _, tokens[f"{prefix}{i}"] = user_add(username=f"{prefix}{i}", role="annotator", validate=False)
_, tokens["admin"] = user_add(username=f"{prefix}admin", role="admin", validate=False)
print(json.dumps(tokens))
"""


def django_shell(code: str, *args: str, env: dict) -> str:
    """Run code in a fresh Django process with env; returns its stdout."""
    return subprocess.run(
        [PYTHON, "-c", "import django; django.setup()\n" + code, *args],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "annotate.settings"},
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def create_users(count: int, prefix: str, *, env: dict) -> dict:
    """`count` annotators named prefix0… and one admin; their API tokens by username
    (the admin's under "admin")."""
    import json

    return json.loads(django_shell(USERS, str(count), prefix, env=env))


def manage(*args, env: dict, check=True, capture=False) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=check,
        text=True,
        capture_output=capture,
    )


def timed_child(args: list[str], env: dict) -> tuple[float, float, str]:
    """Run a child process; (seconds, peak RSS in MB of that child, stdout)."""
    code = (
        "import resource, subprocess, sys, time, json;"
        "t=time.perf_counter();"
        "p=subprocess.run(sys.argv[1:], capture_output=True, text=True);"
        "dt=time.perf_counter()-t;"
        "rss=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss;"
        "print(json.dumps([dt, rss, p.returncode, p.stdout[-2000:], p.stderr[-2000:]]))"
    )
    out = subprocess.run(
        [PYTHON, "-c", code, *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    ).stdout
    import json

    seconds, rss_kb, returncode, stdout, stderr = json.loads(out)
    if returncode != 0:
        raise RuntimeError(f"{args} failed: {stderr}")
    return seconds, rss_kb / 1024, stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_http(url: str, timeout: float = 30) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout}s")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
