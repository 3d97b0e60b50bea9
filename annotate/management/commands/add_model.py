from django.core.management.base import BaseCommand, CommandError

from annotate.models import ModelConfig
from annotate.services.errors import ServiceError
from annotate.services.generation import model_add


class Command(BaseCommand):
    help = "Add (or update) a model to ask for morals. API keys stay in the environment."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument(
            "--provider", required=True, choices=[ModelConfig.OPENAI, ModelConfig.BASELINE]
        )
        parser.add_argument("--base-url", default="")
        parser.add_argument("--model", default="", help="the provider's model id")
        parser.add_argument(
            "--api-key-env", default="", help="NAME of the environment variable holding the key"
        )
        parser.add_argument("--temperature", type=float, default=0.0)
        parser.add_argument("--max-tokens", type=int, default=100)
        parser.add_argument("--rpm", type=int, default=60, help="requests per minute")

    def handle(
        self,
        *args,
        name,
        provider,
        base_url,
        model,
        api_key_env,
        temperature,
        max_tokens,
        rpm,
        **options,
    ):
        try:
            config = model_add(
                name=name,
                provider=provider,
                base_url=base_url,
                model_id=model,
                api_key_env=api_key_env,
                temperature=temperature,
                max_tokens=max_tokens,
                requests_per_minute=rpm,
            )
        except ServiceError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"model {config.name} ({config.provider}) saved")
