"""K simulated annotators drive next → answer over HTTP against gunicorn + PostgreSQL."""

import random
import subprocess
import threading
import time
from pathlib import Path

import httpx
from common import (
    PYTHON,
    ROOT,
    base_env,
    create_users,
    django_shell,
    free_port,
    fresh_pg_database,
    manage,
    timed_child,
    wait_for_http,
)

EXPLAIN = """
import sys
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone
from annotate.services.routing import claim_sql
user = get_user_model().objects.get(username="bench0")
sql, params = claim_sql(batch_id=int(sys.argv[1]), annotator_id=user.id, now=timezone.now())
with transaction.atomic(), connection.cursor() as cursor:
    cursor.execute("EXPLAIN " + sql, params)
    print("\\n".join(line for line, in cursor.fetchall()))
"""

RECONCILE = """
import sys
from django.db import connection
with connection.cursor() as c:
    c.execute('''
      SELECT COUNT(*) FROM (
        SELECT s.item_id FROM annotate_answer a JOIN annotate_slot s ON s.id = a.slot_id
          WHERE a.batch_id = %(b)s GROUP BY s.item_id HAVING COUNT(*) > 2
        UNION ALL
        SELECT fable_id FROM annotate_answer WHERE batch_id = %(b)s
          GROUP BY fable_id, annotator_id HAVING COUNT(*) > 1
        UNION ALL
        SELECT i.id FROM annotate_batchitem i LEFT JOIN annotate_slot s
          ON s.item_id = i.id AND s.filled
          WHERE i.batch_id = %(b)s GROUP BY i.id HAVING COUNT(s.id) <> 2
      ) problems''', {"b": int(sys.argv[1])})
    print(c.fetchone()[0])
"""


def pct(values, q):
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q / 100 * len(values)))] * 1000, 1)


def server_ms(response) -> float:
    """Django's own time for the request (Server-Timing), in seconds like the latencies."""
    return float(response.headers["Server-Timing"].rsplit("app;dur=", 1)[1]) / 1000


def drive(base: str, batch_id: int, tokens: list[str]) -> dict:
    lat_next, lat_answer, errors = [], [], []
    srv_next, srv_answer = [], []
    lock = threading.Lock()

    def annotator(token, seed):
        rng = random.Random(seed)
        headers = {"Authorization": f"Token {token}"}
        with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
            while True:
                t = time.perf_counter()
                r = client.post(f"/api/batches/{batch_id}/next/")
                dt_next = time.perf_counter() - t
                if r.status_code == 204:
                    with lock:
                        lat_next.append(dt_next)
                        srv_next.append(server_ms(r))
                    return
                if r.status_code != 200:
                    with lock:
                        errors.append(f"next {r.status_code} {r.text[:200]}")
                    return
                assignment = r.json()["assignment"]
                srv = server_ms(r)
                body = {"selected": [rng.choice("ABCDE")], "comment": ""}
                t = time.perf_counter()
                r = client.post(f"/api/assignments/{assignment}/answer/", json=body)
                dt_answer = time.perf_counter() - t
                with lock:
                    lat_next.append(dt_next)
                    lat_answer.append(dt_answer)
                    srv_next.append(srv)
                    srv_answer.append(server_ms(r))
                    if r.status_code != 201:
                        errors.append(f"answer {r.status_code} {r.text[:200]}")

    threads = [threading.Thread(target=annotator, args=(tok, i)) for i, tok in enumerate(tokens)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    return {
        "cycles_per_s": round(len(lat_answer) / wall, 1),
        "answers": len(lat_answer),
        "next_ms": {"p50": pct(lat_next, 50), "p95": pct(lat_next, 95), "p99": pct(lat_next, 99)},
        "answer_ms": {
            "p50": pct(lat_answer, 50),
            "p95": pct(lat_answer, 95),
            "p99": pct(lat_answer, 99),
        },
        # Time spent in Django, without the wait for a free gunicorn worker: with K
        # closed-loop clients and 2 workers, a client's latency is about K ÷ throughput.
        "next_server_ms": {q: pct(srv_next, n) for q, n in (("p50", 50), ("p95", 95))},
        "answer_server_ms": {q: pct(srv_answer, n) for q, n in (("p50", 50), ("p95", 95))},
        "errors": errors[:5],
        "error_count": len(errors),
    }


def trivial(base: str, tokens: list[str], seconds: float = 8.0) -> tuple[float, dict]:
    """Requests/s of the trivial view with these clients, and the latency they saw: the
    floor of what any endpoint can show on this server at this K."""
    latencies = []
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def worker(token):
        mine = []
        with httpx.Client(
            base_url=base, headers={"Authorization": f"Token {token}"}, timeout=30
        ) as client:
            while time.perf_counter() < deadline:
                t = time.perf_counter()
                client.post("/api/bench/probe/").raise_for_status()
                mine.append(time.perf_counter() - t)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=worker, args=(t,)) for t in tokens]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rate = len(latencies) / (time.perf_counter() - start)
    return rate, {q: pct(latencies, n) for q, n in (("p50", 50), ("p95", 95))}


def run(data: Path, ks=(6, 20)) -> dict:
    url = fresh_pg_database("morables_bench_routing")
    env = base_env(DATABASE_URL=url)
    manage("migrate", "--noinput", "-v0", env=env)
    timed_child([PYTHON, "manage.py", "import_fables", str(data / "mcqa.json")], env)
    tokens = create_users(max(ks), "bench", env=env)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [
            str(Path(PYTHON).parent / "gunicorn"),
            "annotate.wsgi",
            "-w",
            "2",
            "-b",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,  # the access log (gunicorn.conf.py), one line a request
    )
    results = {}
    try:
        wait_for_http(f"{base}/healthz")
        admin = {"Authorization": f"Token {tokens['admin']}"}
        for k in ks:
            names = [f"bench{i}" for i in range(k)]
            r = httpx.post(
                f"{base}/api/batches/",
                headers=admin,
                timeout=60,
                json={"name": f"bench K={k}", "kind": "mcqa", "annotators": names, "overlap": 2},
            )
            r.raise_for_status()
            batch_id = r.json()["id"]
            if k == max(ks):
                results["explain_claim"] = django_shell(EXPLAIN, str(batch_id), env=env)
            run_k = drive(base, batch_id, [tokens[n] for n in names])
            trivial_rps, run_k["trivial_ms"] = trivial(base, [tokens[n] for n in names])
            run_k["trivial_requests_per_s"] = round(trivial_rps, 1)
            run_k["ratio"] = round(2 * run_k["cycles_per_s"] / trivial_rps, 2)
            run_k["invariant_violations"] = int(django_shell(RECONCILE, str(batch_id), env=env))
            results[f"K={k}"] = run_k
    finally:
        server.terminate()
        server.wait(10)
    return results
