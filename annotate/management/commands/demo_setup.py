from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from annotate.models import Batch, Fable, ModelConfig
from annotate.services.batches import batch_create, fables_choose
from annotate.services.generation import model_add, morals_request
from annotate.services.importing import fables_import
from annotate.services.users import user_add

DEMO_USERS = [
    ("admin", "admin"),
    ("reviewer", "reviewer"),
    ("alice", "annotator"),
    ("bob", "annotator"),
    ("carol", "annotator"),
    ("dave", "annotator"),
]
DEMO_PASSWORD = "demo-pass-2024"


class Command(BaseCommand):
    help = "Load the demo fables, accounts and a batch. Safe to run again."

    def handle(self, *args, **options):
        fixtures = Path(settings.BASE_DIR) / "fixtures"
        sources = [
            (str(p), p.read_text(encoding="utf-8"))
            for p in (
                fixtures / "demo_mcqa.json",
                fixtures / "demo_adversarial.json",
                fixtures / "demo_fables.json",
            )
        ]
        report = fables_import(sources=sources)
        self.stdout.write(f"fables: {report.summary()} ({Fable.objects.count()} in all)")
        users = {}
        for username, role in DEMO_USERS:
            users[username], _ = user_add(
                username=username, role=role, password=DEMO_PASSWORD, validate=False
            )
        if not Batch.objects.filter(name="Demo batch").exists():
            annotators = [users[n] for n in ("alice", "bob", "carol", "dave")]
            batch_create(
                name="Demo batch",
                fables=fables_choose(prefix="aesop_demo"),
                annotators=annotators,
                overlap=2,
                created_by=users["admin"],
            )
            batch_create(
                name="Demo screening",
                fables=fables_choose(sample=5, seed=1),
                annotators=annotators,
                overlap=4,
                created_by=users["admin"],
            )
        # An offline model, so the generation page and rating batches have something to show.
        baseline = model_add(name="tfidf-baseline", provider=ModelConfig.BASELINE)
        queued = morals_request(models=[baseline], fables=list(Fable.objects.all()))
        self.stdout.write(f"model morals: {len(queued)} queued for the worker")
        self.stdout.write(f"\nDemo accounts (password for all: {DEMO_PASSWORD}):")
        for username, role in DEMO_USERS:
            self.stdout.write(f"  {username:<10} {role}")
        self.stdout.write("\nOpen http://127.0.0.1:8000 and sign in.")
