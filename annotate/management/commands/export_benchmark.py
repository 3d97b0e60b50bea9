import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from annotate.services.exporting import VARIANTS, benchmark_records, json_array_lines


class Command(BaseCommand):
    help = "Export the current revisions in the benchmark's JSON schema."

    def add_arguments(self, parser):
        parser.add_argument("--variant", choices=VARIANTS, default="core")
        parser.add_argument(
            "--shuffle-seed",
            type=int,
            default=None,
            help="Shuffle options deterministically (labels and classes follow).",
        )
        parser.add_argument("--out", type=Path, required=True, help="Output file, or - for stdout.")

    def handle(self, *args, variant, shuffle_seed, out, **options):
        records = benchmark_records(variant=variant, shuffle_seed=shuffle_seed)
        count = 0

        def counted():
            nonlocal count
            for record in records:
                count += 1
                yield record

        if str(out) == "-":
            for chunk in json_array_lines(counted()):
                sys.stdout.write(chunk)
            return
        tmp = out.with_name(out.name + ".part")
        with tmp.open("w", encoding="utf-8") as fh:
            for chunk in json_array_lines(counted()):
                fh.write(chunk)
        tmp.replace(out)
        self.stderr.write(f"wrote {count} records ({variant}) to {out}")
