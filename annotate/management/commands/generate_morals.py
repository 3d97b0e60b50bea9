import sys
import time

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count
from tqdm import tqdm

from annotate.models import Fable, ModelConfig, ModelMoral
from annotate.services.errors import ServiceError
from annotate.services.generation import morals_request, morals_requeue_stale, prompt_version


class Command(BaseCommand):
    help = "Ask models for the moral of fables (one Celery task per missing moral)."

    def add_arguments(self, parser):
        parser.add_argument("--models", nargs="+", required=True)
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--fables", nargs="+", metavar="ALIAS")
        group.add_argument("--all", action="store_true")
        parser.add_argument(
            "--wait", action="store_true", help="show progress until every moral is done or failed"
        )
        parser.add_argument(
            "--timeout",
            type=float,
            default=None,
            help="with --wait: give up after this many seconds (exit 2)",
        )

    def handle(self, *args, models, fables, all, wait, timeout, **options):
        found = {m.name: m for m in ModelConfig.objects.filter(name__in=models)}
        unknown = [n for n in models if n not in found]
        if unknown:
            raise CommandError(f"unknown models: {', '.join(unknown)} (add them with add_model)")
        if all:
            chosen = list(Fable.objects.filter(current_revision__isnull=False))
        else:
            by_alias = {f.alias: f for f in Fable.objects.filter(alias__in=fables)}
            missing = [a for a in fables if a not in by_alias]
            if missing:
                raise CommandError(f"unknown fable aliases: {', '.join(missing[:10])}")
            chosen = [by_alias[a] for a in fables]
        try:
            new = morals_request(models=list(found.values()), fables=chosen)
        except ServiceError as exc:
            raise CommandError(str(exc)) from None
        total = len(found) * len(chosen)
        self.stdout.write(f"{len(new)} morals queued, {total - len(new)} already requested")
        if not wait:
            return
        rows = ModelMoral.objects.filter(
            model__in=found.values(), fable__in=chosen, prompt_version=prompt_version()
        )
        deadline = time.monotonic() + timeout if timeout else None
        bar = tqdm(total=total, desc="morals", unit="moral", file=sys.stderr)
        last_requeue = time.monotonic()
        while True:
            counts = {s: 0 for s, _ in ModelMoral.STATUS_CHOICES}
            counts.update(rows.values_list("status").annotate(n=Count("id")).order_by())
            finished = counts["done"] + counts["failed"]
            bar.n = finished
            bar.set_postfix(
                done=counts["done"],
                failed=counts["failed"],
                running=counts["running"],
                pending=counts["pending"],
            )
            bar.refresh()
            if finished >= total:
                break
            if deadline and time.monotonic() > deadline:
                bar.close()
                raise CommandError(f"timed out with {total - finished} morals unfinished")
            if time.monotonic() - last_requeue > 30:
                morals_requeue_stale()
                last_requeue = time.monotonic()
            time.sleep(1)
        bar.close()
        self.stdout.write(f"{counts['done']} done, {counts['failed']} failed")
        if counts["failed"]:
            for alias, name, error in rows.filter(status="failed").values_list(
                "fable__alias", "model__name", "error"
            )[:20]:
                self.stderr.write(f"failed: {alias} × {name}: {error}")
            sys.exit(1)
