"""Agreement for a batch of 100,000 answers; answers export throughput for 1,000,000 rows."""

import tempfile
import time
from pathlib import Path

import synthetic
from common import PYTHON, base_env, django_shell, fresh_pg_database, manage, timed_child

AGREEMENT = """
import statistics as st
import time
# A web process has these imported already: time the computation, not the imports.
import krippendorff, nltk.metrics.distance, statsmodels.stats.inter_rater  # noqa
from annotate.statistics import batch_agreement
runs = []
for _ in range(3):
    t = time.perf_counter()
    stats = batch_agreement(batch_id=1)
    runs.append(time.perf_counter() - t)
print(st.median(runs), min(runs), stats["answers"], len(stats["pairs"]),
      stats["overall"]["alpha_kind"]["value"], stats["overall"]["alpha_masi"]["value"])
"""


def run(data, *, use_pg: bool) -> dict:
    if not use_pg:
        return {"skipped": "needs PostgreSQL"}
    results = {}
    url = fresh_pg_database("morables_bench_agreement")
    env = base_env(DATABASE_URL=url)
    manage("migrate", "--noinput", "-v0", env=env)
    t = time.perf_counter()
    synthetic.load(url, fables=50_000, annotators=20)
    results["setup_100k_seconds"] = round(time.perf_counter() - t, 1)
    seconds, fastest, answers, pairs, alpha, alpha_masi = django_shell(AGREEMENT, env=env).split()
    results["agreement_100k"] = {
        "seconds_median_of_3": round(float(seconds), 2),
        "seconds_fastest": round(float(fastest), 2),
        "answers": int(answers),
        "pairs": int(pairs),
        "alpha_kind": float(alpha),
        "alpha_masi": float(alpha_masi),
    }

    url = fresh_pg_database("morables_bench_export")
    env = base_env(DATABASE_URL=url)
    manage("migrate", "--noinput", "-v0", env=env)
    synthetic.load(url, fables=500_000, annotators=40)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "answers.jsonl"
        seconds, rss, _ = timed_child(
            [PYTHON, "manage.py", "export", "answers", "--format", "jsonl", "--out", str(out)], env
        )
        rows = sum(1 for _ in out.open())
        csv_out = Path(tmp) / "answers.csv"
        csv_seconds, csv_rss, _ = timed_child(
            [PYTHON, "manage.py", "export", "answers", "--format", "csv", "--out", str(csv_out)],
            env,
        )
    results["answers_export_1m"] = {
        "rows": rows,
        "jsonl_rows_per_s": round(rows / seconds),
        "jsonl_peak_mb": round(rss),
        "csv_rows_per_s": round(rows / csv_seconds),
        "csv_peak_mb": round(csv_rss),
    }
    return results
