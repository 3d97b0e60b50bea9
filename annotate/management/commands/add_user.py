from django.core.management.base import BaseCommand, CommandError

from annotate.roles import ROLES
from annotate.services.errors import ServiceError
from annotate.services.users import user_add


class Command(BaseCommand):
    help = "Create (or update) a user with a role and print their API token."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", choices=ROLES, required=True)
        parser.add_argument("--password", default=None)

    def handle(self, *args, username, role, password, **options):
        try:
            _, token = user_add(username=username, role=role, password=password)
        except ServiceError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(token)
