import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.http import QueryDict

from annotate.api.exports import TABLES, table_rows
from annotate.services.exporting import csv_lines, jsonl_lines


class Command(BaseCommand):
    help = "Export answers, skips, flags, revisions, annotator codes (and ratings, morals)."

    def add_arguments(self, parser):
        parser.add_argument("table", help=f"one of: {', '.join(sorted(TABLES))}")
        parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
        parser.add_argument("--batch", type=int, default=None)
        parser.add_argument("--status", default=None, help="flags only: open/resolved/dismissed")
        parser.add_argument("--out", type=Path, default=Path("-"))

    def handle(self, *args, table, format, batch, status, out, **options):
        params = QueryDict(mutable=True)
        if batch is not None:
            params["batch"] = str(batch)
        if status:
            params["status"] = status
        try:
            rows, columns = table_rows(table, params)
        except Exception as exc:  # NotFound / ValidationError carry the message
            raise CommandError(str(getattr(exc, "detail", exc))) from None
        chunks = csv_lines(rows, columns=columns) if format == "csv" else jsonl_lines(rows)
        if str(out) == "-":
            for chunk in chunks:
                sys.stdout.write(chunk)
            return
        with out.open("w", encoding="utf-8", newline="") as fh:
            for chunk in chunks:
                fh.write(chunk)
