"""Import and export throughput on the real benchmark file, with peak memory."""

import json
import tempfile
from pathlib import Path

from common import PYTHON, base_env, fresh_pg_database, manage, timed_child


def run(data: Path, *, use_pg: bool) -> dict:
    mcqa = data / "mcqa.json"
    records = len(json.loads(mcqa.read_text()))
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        targets = {"sqlite": f"sqlite:///{tmp}/bench.sqlite3"}
        if use_pg:
            targets["postgresql"] = fresh_pg_database("morables_bench_import")
        for name, url in targets.items():
            env = base_env(DATABASE_URL=url, VAR_DIR=tmp)
            manage("migrate", "--noinput", "-v0", env=env)
            seconds, rss, _ = timed_child([PYTHON, "manage.py", "import_fables", str(mcqa)], env)
            out = Path(tmp) / "core.json"
            exp_seconds, exp_rss, _ = timed_child(
                [PYTHON, "manage.py", "export_benchmark", "--variant", "core", "--out", str(out)],
                env,
            )
            original = json.loads(mcqa.read_text())
            exported = json.loads(out.read_text())
            identical = len(original) == len(exported) and all(
                {k: v for k, v in e.items() if k != "revision"} == o
                for o, e in zip(original, exported, strict=True)
            )
            results[name] = {
                "records": records,
                "import_records_per_s": round(records / seconds),
                "import_peak_mb": round(rss),
                "export_records_per_s": round(records / exp_seconds),
                "export_peak_mb": round(exp_rss),
                "round_trip_identical": identical,
            }
    return results
