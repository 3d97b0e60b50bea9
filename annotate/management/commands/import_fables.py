import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from annotate.services.importing import PROGRESS_THRESHOLD, ImportRefused, fables_import


class Command(BaseCommand):
    help = "Import fables: benchmark JSON array, JSONL, CSV, or the fables.json notes shape."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument(
            "--update",
            action="store_true",
            help="Import changed fables as a new revision (reason 're-import').",
        )

    def handle(self, *args, paths, update, **options):
        sources = []
        for path in paths:
            try:
                sources.append((str(path), path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(f"{path}: cannot read: {exc}") from None

        def progress(items, total):
            return tqdm(
                items,
                total=total,
                desc="importing",
                unit="fable",
                file=sys.stderr,
                disable=total < PROGRESS_THRESHOLD,
            )

        try:
            report = fables_import(sources=sources, update=update, progress=progress)
        except ImportRefused as exc:
            raise CommandError(f"{exc}\nNothing was imported.") from None
        self.stdout.write(self.style.SUCCESS(report.summary()))
