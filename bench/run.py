"""make bench: figures for the closing notes. Ratios are measured within one run."""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def pg_available() -> bool:
    try:
        import psycopg
        from common import PG_ADMIN_URL

        psycopg.connect(f"{PG_ADMIN_URL}/postgres", connect_timeout=3).close()
        return True
    except Exception:
        return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--data",
        type=Path,
        required=True,
        help="folder with the real MORABLES mcqa.json and fables.json",
    )
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    if not (args.data / "mcqa.json").exists():
        sys.exit(f"{args.data}/mcqa.json not found: pass MORABLES=path/to/folder")
    use_pg = pg_available()
    suites = {}
    import import_export
    import routing_load

    suites["import_export"] = lambda: import_export.run(args.data, use_pg=use_pg)
    if use_pg:
        suites["routing"] = lambda: routing_load.run(args.data)
    else:
        print("PostgreSQL not reachable: skipping the routing load benchmark", file=sys.stderr)
    for extra in ("agreement_bench", "generation_bench", "answers_export_bench"):
        try:
            module = __import__(extra)
        except ImportError:
            continue
        suites[extra] = lambda module=module: module.run(args.data, use_pg=use_pg)
    results = {}
    for name, fn in suites.items():
        if args.only and name not in args.only:
            continue
        print(f"--- {name}", file=sys.stderr, flush=True)
        results[name] = fn()
        print(json.dumps({name: results[name]}, indent=2), flush=True)


if __name__ == "__main__":
    main()
