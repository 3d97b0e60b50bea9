"""Generation throughput: 709 real fables × 3 models against a server answering in 200 ms.

Two Celery worker processes (thread pool, 4 or 8 requests each) drain the queue. The ideal
rate is requests in flight ÷ latency = 2 × concurrency ÷ 0.2 s; the figure is the
measured rate as a fraction of it. Duplicates: provider requests beyond one per moral, and
rows beyond one per (fable, model, prompt version).
"""

import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import PYTHON, ROOT, base_env, fresh_pg_database, manage

sys.path.insert(0, str(ROOT / "tests"))
from fake_openai import FakeOpenAI  # noqa: E402

LATENCY = 0.2
WORKERS = 2
CONCURRENCIES = (4, 8)  # requests in flight per worker process
MODELS = ("bench-a", "bench-b", "bench-c")

COUNTS = """
from django.db.models import Count
from annotate.models import ModelMoral
by_status = dict(ModelMoral.objects.values_list("status").annotate(n=Count("id")))
dupes = (ModelMoral.objects.values("fable_id", "model_id", "prompt_version")
         .annotate(n=Count("id")).filter(n__gt=1).count())
print(by_status.get("done", 0), by_status.get("failed", 0), ModelMoral.objects.count(), dupes)
"""


def _redis_up() -> bool:
    try:
        import redis

        redis.Redis(host="127.0.0.1", port=6379, socket_connect_timeout=2).ping()
        return True
    except Exception:
        return False


def run(data: Path, *, use_pg: bool) -> dict:
    return {f"{WORKERS}x{c}": run_one(data, use_pg=use_pg, concurrency=c) for c in CONCURRENCIES}


def run_one(data: Path, *, use_pg: bool, concurrency: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        var = Path(tmp)
        url = fresh_pg_database("morables_bench_generation") if use_pg else ""
        broker = "redis://127.0.0.1:6379/3" if _redis_up() else "filesystem://"
        env = base_env(
            VAR_DIR=str(var),
            DATABASE_URL=url or f"sqlite:///{var / 'db.sqlite3'}",
            CELERY_BROKER_URL=broker,
            GENERATION_REQUEUE_INTERVAL="3600",
        )
        if broker.startswith("redis"):
            import redis

            redis.Redis(host="127.0.0.1", port=6379, db=3).flushdb()
        manage("migrate", "--noinput", "-v0", env=env)
        manage("import_fables", str(data / "mcqa.json"), env=env, capture=True)
        with FakeOpenAI(latency=LATENCY) as server:
            for name in MODELS:
                manage(
                    "add_model", name, "--provider", "openai_compatible",
                    "--base-url", server.url, "--model", name, "--rpm", "600000",
                    env=env, capture=True,
                )  # fmt: skip
            workers = [
                subprocess.Popen(
                    [
                        PYTHON,
                        "-m",
                        "celery",
                        "-A",
                        "annotate",
                        "worker",
                        "--pool",
                        "threads",
                        "--concurrency",
                        str(concurrency),
                        "--without-gossip",
                        "--without-mingle",
                        "--without-heartbeat",
                        "-n",
                        f"bench{i}@%h",
                        "--loglevel",
                        "WARNING",
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )  # fmt: skip
                for i in range(WORKERS)
            ]
            samples: list[int] = []
            stop = threading.Event()

            def sample():
                while not stop.wait(0.02):
                    samples.append(server.in_flight)

            try:
                time.sleep(5)  # workers connect to the broker
                sampler = threading.Thread(target=sample, daemon=True)
                sampler.start()
                started = time.perf_counter()
                result = manage(
                    "generate_morals", "--models", *MODELS, "--all", "--wait", "--timeout", "900",
                    env=env, check=False, capture=True,
                )  # fmt: skip
                seconds = time.perf_counter() - started
                stop.set()
            finally:
                for worker in workers:
                    worker.terminate()
                for worker in workers:
                    worker.wait(30)
            requests = len(server.requests)
        counts = subprocess.run(
            [PYTHON, "-c", "import django; django.setup()\n" + COUNTS],
            cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE": "annotate.settings"},
            check=True, capture_output=True, text=True,
        ).stdout.split()  # fmt: skip
        done, failed, rows, duplicate_rows = map(int, counts)
    rate = done / seconds
    ideal = WORKERS * concurrency / LATENCY
    busy = [s for s in samples if s]
    return {
        "database": "postgresql" if use_pg else "sqlite",
        "broker": broker.split(":")[0],
        "exit_code": result.returncode,
        "morals": rows,
        "done": done,
        "failed": failed,
        "seconds": round(seconds, 1),
        "morals_per_s": round(rate, 1),
        "ideal_per_s": round(ideal, 1),
        "fraction_of_ideal": round(rate / ideal, 3),
        "mean_in_flight_while_busy": round(sum(busy) / len(busy), 1) if busy else 0,
        "provider_requests": requests,
        "duplicate_requests": requests - done - failed,
        "duplicate_rows": duplicate_rows,
    }
