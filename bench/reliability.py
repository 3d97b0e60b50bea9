"""make reliability: load, faults and fuzzing against the real parts. Exit 1 on any violation.

1. load: ANNOTATORS concurrent simulated annotators (asyncio + httpx) against gunicorn and
   PostgreSQL over FABLES fables with overlap 2, with random skips and abandoned leases (some
   answered late); then a reconciliation query that must return nothing.
2. db_drop: annotators answer while another connection keeps terminating the app's database
   sessions (pg_terminate_backend). Clients retry failed requests with the same body; the
   retry must be idempotent: every answer stored once, nothing lost.
3. worker_kill: a Celery worker is SIGKILLed while it generates morals; a new worker (and the
   beat requeue) finish the job with no duplicate moral.
4. broker_restart: morals are queued while no worker runs; the Redis broker is killed and
   restarted without persistence (the queued messages are gone); the requeue of forgotten
   pending rows still finishes every moral, once.
5. fuzz: the hypothesis importer fuzzer and the schemathesis API fuzzer with more examples.

Sizes: RELIABILITY_FABLES (10000), RELIABILITY_ANNOTATORS (200). Needs PostgreSQL; the
broker faults need redis-server on the PATH (a private one is started on a free port).
"""

import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    PYTHON,
    ROOT,
    base_env,
    create_users,
    django_shell,
    free_port,
    fresh_pg_database,
    manage,
    wait_for_http,
)

sys.path.insert(0, str(ROOT / "tests"))
from fake_openai import FakeOpenAI  # noqa: E402

FABLES = int(os.environ.get("RELIABILITY_FABLES", "10000"))
ANNOTATORS = int(os.environ.get("RELIABILITY_ANNOTATORS", "200"))
LEASE = 6  # seconds: abandoned leases come back quickly
P_SKIP, P_ABANDON, P_LATE = 0.03, 0.01, 0.5


# Every row returned is a violation: over-answered fables, a person answering a fable twice
# in a batch, fables short of their overlap, assignments with two answers, answers whose slot
# belongs to another fable or batch.
RECONCILE = """
import json, sys
from django.db import connection
with connection.cursor() as c:
    c.execute('''
      SELECT 'over-answered', s.item_id FROM annotate_answer a
        JOIN annotate_slot s ON s.id = a.slot_id
        WHERE a.batch_id = %(b)s GROUP BY s.item_id HAVING COUNT(*) > %(o)s
      UNION ALL
      SELECT 'answered twice by one person', fable_id FROM annotate_answer
        WHERE batch_id = %(b)s GROUP BY fable_id, annotator_id HAVING COUNT(*) > 1
      UNION ALL
      SELECT 'unanswered', i.id FROM annotate_batchitem i
        LEFT JOIN annotate_slot s ON s.item_id = i.id
        LEFT JOIN annotate_answer a ON a.slot_id = s.id
        WHERE i.batch_id = %(b)s GROUP BY i.id HAVING COUNT(a.id) <> %(o)s
      UNION ALL
      SELECT 'slot of another fable', a.id FROM annotate_answer a
        JOIN annotate_slot s ON s.id = a.slot_id
        WHERE a.batch_id = %(b)s AND (s.fable_id <> a.fable_id OR s.batch_id <> a.batch_id)
    ''', {"b": int(sys.argv[1]), "o": int(sys.argv[2])})
    rows = c.fetchall()
    c.execute("SELECT COUNT(*) FILTER (WHERE slot_id IS NOT NULL), "
              "COUNT(*) FILTER (WHERE slot_id IS NULL) "
              "FROM annotate_answer WHERE batch_id = %s", [int(sys.argv[1])])
    counted, surplus = c.fetchone()
print(json.dumps({"violations": rows[:20], "violation_count": len(rows),
                  "counted": counted, "surplus": surplus}))
"""

MORALS = """
import json
from django.db.models import Count
from annotate.models import ModelMoral
by_status = dict(ModelMoral.objects.values_list("status").annotate(n=Count("id")))
dupes = (ModelMoral.objects.values("fable_id", "model_id", "prompt_version")
         .annotate(n=Count("id")).filter(n__gt=1).count())
print(json.dumps({"by_status": by_status, "duplicate_rows": dupes}))
"""


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q / 100 * len(values)))] * 1000, 1)


def write_fables(path: Path, n: int) -> None:
    kinds = ["similar_characters", "based_on_adjectives", "injected_adjectives", "partial_story"]
    records = []
    for i in range(n):
        truth = f"Moral {i}: patience brings its own reward."
        choices = [f"Distractor {k} of fable {i}." for k in kinds]
        at = i % 5
        choices.insert(at, truth)
        classes = list(kinds)
        classes.insert(at, "ground_truth")
        records.append(
            {
                "alias": f"rel_{i:05d}",
                "story_title": f"The fox and the crow, {i}",
                "is_altered": False,
                "story": f"Fable {i}. A fox met a crow, and they talked at length.",
                "moral": truth,
                "choices": choices,
                "classes": classes,
                "correct_moral_label": at,
            }
        )
    path.write_text(json.dumps(records))


class Client:
    """One simulated annotator: retries transport errors and 5xx with the same body."""

    def __init__(self, http: httpx.AsyncClient, token: str, admin: str, stats: dict):
        self.http, self.stats = http, stats
        self.headers = {"Authorization": f"Token {token}"}
        self.admin = {"Authorization": f"Token {admin}"}  # progress is an admin endpoint

    async def post(self, path: str, body=None, *, timing: str | None = None) -> httpx.Response:
        for attempt in range(8):
            started = time.perf_counter()
            try:
                response = await self.http.post(path, json=body, headers=self.headers)
            except httpx.TransportError as exc:
                self.stats["errors"].append(f"{path}: {type(exc).__name__}")
                await asyncio.sleep(0.1 * 2**attempt)
                continue
            if response.status_code >= 500:
                self.stats["errors"].append(f"{path}: {response.status_code}")
                await asyncio.sleep(0.1 * 2**attempt)
                continue
            if timing:
                self.stats[timing].append(time.perf_counter() - started)
            if attempt:
                self.stats["retried"][response.status_code] += 1
            return response
        raise RuntimeError(f"{path} failed 8 times: {self.stats['errors'][-3:]}")

    async def progress_done(self, batch_id: int) -> bool:
        try:
            r = await self.http.get(f"/api/batches/{batch_id}/", headers=self.admin)
        except httpx.TransportError:
            return False
        if r.status_code != 200:
            return False
        body = r.json()
        return body["answers_done"] >= body["answers_needed"]


async def annotate(client: Client, batch_id: int, rng: random.Random, deadline: float) -> None:
    stats = client.stats
    while time.monotonic() < deadline:
        r = await client.post(f"/api/batches/{batch_id}/next/", timing="next")
        if r.status_code == 204:
            # Nothing for me now; others may still hold leases that can run out.
            if await client.progress_done(batch_id):
                return
            await asyncio.sleep(1.0)
            continue
        if r.status_code != 200:
            stats["unexpected"].append(f"next {r.status_code} {r.text[:200]}")
            return
        payload = r.json()
        assignment = payload["assignment"]
        labels = [o["label"] for o in payload["options"]]
        body = {"selected": [rng.choice(labels)], "comment": ""}
        roll = rng.random()
        if roll < P_SKIP:
            r = await client.post(
                f"/api/assignments/{assignment}/skip/", {"comment": "not sure, skipping"}
            )
            stats["skips"] += r.status_code == 200
            continue
        if roll < P_SKIP + P_ABANDON:
            stats["abandoned"] += 1
            await asyncio.sleep(LEASE + 1 + rng.random() * 3)
            if rng.random() < P_LATE:
                r = await client.post(f"/api/assignments/{assignment}/answer/", body)
                stats["late"][r.status_code] += 1
            continue
        r = await client.post(f"/api/assignments/{assignment}/answer/", body, timing="answer")
        stats["answer_status"][r.status_code] += 1


def new_stats() -> dict:
    from collections import Counter

    return {
        "next": [],
        "answer": [],
        "errors": [],
        "unexpected": [],
        "retried": Counter(),
        "late": Counter(),
        "answer_status": Counter(),
        "skips": 0,
        "abandoned": 0,
    }


async def drive(base: str, batch_id: int, tokens: list[str], admin: str, *, seconds: float) -> dict:
    stats = new_stats()
    limits = httpx.Limits(max_connections=len(tokens) + 10)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        deadline = time.monotonic() + seconds
        clients = [Client(http, token, admin, stats) for token in tokens]
        started = time.perf_counter()
        await asyncio.gather(
            *(annotate(c, batch_id, random.Random(i), deadline) for i, c in enumerate(clients))
        )
        stats["wall"] = time.perf_counter() - started
    return stats


def summary(stats: dict) -> dict:
    return {
        "seconds": round(stats["wall"], 1),
        "answers_per_s": round(stats["answer_status"][201] / stats["wall"], 1),
        "next_ms": {q: pct(stats["next"], q) for q in (50, 95, 99)},
        "answer_ms": {q: pct(stats["answer"], q) for q in (50, 95, 99)},
        "answer_status": dict(stats["answer_status"]),
        "skips": stats["skips"],
        "abandoned": stats["abandoned"],
        "late_answers": dict(stats["late"]),
        "server_errors_retried": len(stats["errors"]),
        "retry_outcomes": dict(stats["retried"]),
        "unexpected": stats["unexpected"][:5],
    }


def create_batch(base: str, admin: str, name: str, annotators: list[str], **extra) -> int:
    r = httpx.post(
        f"{base}/api/batches/",
        headers={"Authorization": f"Token {admin}"},
        timeout=120,
        json={"name": name, "kind": "mcqa", "annotators": annotators, "overlap": 2, **extra},
    )
    r.raise_for_status()
    return r.json()["id"]


def reconcile(batch_id: int, env: dict) -> dict:
    return json.loads(django_shell(RECONCILE, str(batch_id), "2", env=env))


def terminator(dbname: str, stop: threading.Event, period: float, killed: list) -> None:
    import psycopg
    from common import PG_ADMIN_URL

    with psycopg.connect(f"{PG_ADMIN_URL}/postgres", autocommit=True) as conn:
        while not stop.wait(period):
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid() "
                "AND backend_type = 'client backend'",
                [dbname],
            ).fetchall()
            killed.append(len(rows))


class PrivateRedis:
    """A redis-server of our own on a free port, without persistence (as in CI)."""

    def __init__(self, workdir: Path):
        self.port = free_port()
        self.workdir = workdir
        self.proc = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.workdir)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        import redis

        for _ in range(100):
            try:
                redis.Redis(port=self.port).ping()
                return
            except redis.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError("private redis-server did not start")

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)

    def queued(self) -> int:
        import redis

        return redis.Redis(port=self.port).llen("celery")


def start_worker(env: dict, name: str, *, beat: bool = False) -> subprocess.Popen:
    args = [PYTHON, "-m", "celery", "-A", "annotate", "worker", "--concurrency", "4",
            "--without-gossip", "--without-mingle", "-n", f"{name}@%h",
            "--loglevel", "WARNING"]  # fmt: skip
    if beat:
        args.append("--beat")
    return subprocess.Popen(
        args, cwd=ROOT, env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def stop_worker(worker: subprocess.Popen, sig=signal.SIGTERM) -> None:
    try:
        os.killpg(worker.pid, sig)
    except ProcessLookupError:
        return
    worker.wait(60)


def wait_morals(env: dict, expected: int, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        state = json.loads(django_shell(MORALS, env=env))
        finished = state["by_status"].get("done", 0) + state["by_status"].get("failed", 0)
        if finished >= expected or time.monotonic() > deadline:
            state["seconds_waited"] = round(timeout - (deadline - time.monotonic()), 1)
            return state
        time.sleep(1)


def generation_faults(env: dict, workdir: Path, violations: list) -> dict:
    results = {}
    if not shutil.which("redis-server"):
        violations.append("redis-server not found: broker faults not tried")
        return {"skipped": "redis-server not found"}
    broker = PrivateRedis(workdir)
    broker.start()
    genv = {
        **env,
        "CELERY_BROKER_URL": broker.url,
        "CACHE_URL": "",
        "CELERY_VISIBILITY_TIMEOUT": "10",
        "GENERATION_STALE_SECONDS": "8",
        "GENERATION_REQUEUE_PENDING_SECONDS": "6",
        "GENERATION_REQUEUE_INTERVAL": "2",
        "VAR_DIR": str(workdir),
    }
    with FakeOpenAI(latency=0.5) as server:
        manage(
            "add_model", "rel-model", "--provider", "openai_compatible", "--base-url", server.url,
            "--model", "rel", "--rpm", "100000", env=genv, capture=True,
        )  # fmt: skip
        aliases = [f"rel_{i:05d}" for i in range(60)]

        # Worker killed mid-generation.
        worker = start_worker(genv, "victim")
        time.sleep(4)
        manage("generate_morals", "--models", "rel-model", "--fables", *aliases[:40], env=genv,
               capture=True)  # fmt: skip
        for _ in range(100):
            if server.in_flight >= 2:
                break
            time.sleep(0.05)
        in_flight = server.in_flight
        stop_worker(worker, signal.SIGKILL)
        done_before = json.loads(django_shell(MORALS, env=genv))["by_status"].get("done", 0)
        survivor = start_worker(genv, "survivor", beat=True)
        state = wait_morals(genv, 40, timeout=180)
        results["worker_kill"] = {
            "in_flight_when_killed": in_flight,
            "done_before_kill": done_before,
            **state,
            "provider_requests": len(server.requests),
        }
        if state["by_status"].get("done", 0) != 40 or state["duplicate_rows"]:
            violations.append(f"worker_kill: {state}")
        stop_worker(survivor)

        # Broker restarted (without persistence) while tasks are queued.
        manage("generate_morals", "--models", "rel-model", "--fables", *aliases[40:], env=genv,
               capture=True)  # fmt: skip
        queued = broker.queued()
        broker.kill()
        broker.start()
        requests_before = len(server.requests)
        survivor = start_worker(genv, "after-restart", beat=True)
        state = wait_morals(genv, 60, timeout=180)
        stop_worker(survivor)
        results["broker_restart"] = {
            "messages_queued_before_restart": queued,
            "messages_after_restart": broker.queued(),
            **state,
            "provider_requests_after_restart": len(server.requests) - requests_before,
        }
        if state["by_status"].get("done", 0) != 60 or state["duplicate_rows"]:
            violations.append(f"broker_restart: {state}")
    broker.kill()
    return results


def main() -> int:
    violations: list[str] = []
    report: dict = {"fables": FABLES, "annotators": ANNOTATORS}
    dbname = "morables_reliability"
    url = fresh_pg_database(dbname)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        env = base_env(DATABASE_URL=url, LEASE_SECONDS=str(LEASE), VAR_DIR=str(workdir),
                       API_THROTTLE_USER="100000/min")  # fmt: skip
        manage("migrate", "--noinput", "-v0", env=env)
        write_fables(workdir / "fables.json", FABLES)
        manage("import_fables", str(workdir / "fables.json"), env=env, capture=True)
        tokens = create_users(ANNOTATORS, "rel", env=env)
        names = [f"rel{i}" for i in range(ANNOTATORS)]
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [str(Path(PYTHON).parent / "gunicorn"), "annotate.wsgi", "-w", "4", "-b",
             f"127.0.0.1:{port}", "--log-level", "warning", "--access-logfile", "/dev/null"],
            cwd=ROOT, env=env,
        )  # fmt: skip
        try:
            wait_for_http(f"{base}/healthz")
            print(f"--- load: {ANNOTATORS} annotators, {FABLES} fables", file=sys.stderr)
            batch = create_batch(base, tokens["admin"], "reliability load", names)
            stats = asyncio.run(
                drive(base, batch, [tokens[n] for n in names], tokens["admin"], seconds=1800)
            )
            report["load"] = {**summary(stats), **reconcile(batch, env)}
            refused = stats["late"][409] + stats["answer_status"][409]
            if report["load"]["violation_count"]:
                violations.append(f"load: {report['load']['violations']}")
            if report["load"]["surplus"] != refused:
                violations.append(
                    f"load: {refused} answers refused with 409 but {report['load']['surplus']} "
                    "surplus records"
                )
            if stats["unexpected"]:
                violations.append(f"load: unexpected responses {stats['unexpected'][:3]}")

            print("--- db_drop: sessions terminated during answers", file=sys.stderr)
            chaos_names = names[:20]
            batch = create_batch(
                base, tokens["admin"], "reliability db drop", chaos_names,
                sample=300, seed=1,
            )  # fmt: skip
            stop, killed = threading.Event(), []
            thread = threading.Thread(target=terminator, args=(dbname, stop, 0.25, killed))
            thread.start()
            try:
                stats = asyncio.run(
                    drive(
                        base, batch, [tokens[n] for n in chaos_names], tokens["admin"], seconds=600
                    )
                )
            finally:
                stop.set()
                thread.join()
            report["db_drop"] = {
                "sessions_terminated": sum(killed),
                **summary(stats),
                **reconcile(batch, env),
            }
            if report["db_drop"]["violation_count"] or stats["unexpected"]:
                violations.append(f"db_drop: {report['db_drop']}")
            if not stats["errors"]:
                violations.append("db_drop: no request failed, the fault was not exercised")
        finally:
            server.terminate()
            server.wait(30)

        print("--- worker_kill and broker_restart", file=sys.stderr)
        report.update(generation_faults(env, workdir, violations))

    print("--- fuzz", file=sys.stderr)
    fuzz = subprocess.run(
        [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_fuzz_api.py",
         "tests/test_fuzz_import.py"],
        cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "FUZZ_EXAMPLES": "60", "FUZZ_EXAMPLES_IMPORT": "1000"},
    )  # fmt: skip
    report["fuzz"] = {"exit_code": fuzz.returncode, "summary": fuzz.stdout.strip().splitlines()[-1]}
    if fuzz.returncode:
        violations.append(f"fuzz: {fuzz.stdout[-2000:]}")
    report["violations"] = violations
    print(json.dumps(report, indent=2))
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
