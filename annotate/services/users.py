"""Accounts and roles."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from rest_framework.authtoken.models import Token

from annotate.roles import ADMIN, ROLES
from annotate.services.errors import Invalid

User = get_user_model()


@transaction.atomic
def user_add(
    *, username: str, role: str, password: str | None = None, validate: bool = True
) -> tuple[object, str]:
    """Create or update a user with one role; returns (user, API token key)."""
    if role not in ROLES:
        raise Invalid(f"role: must be one of {', '.join(ROLES)}, got {role!r}")
    if not username.strip():
        raise Invalid("username: must not be empty")
    user, _ = User.objects.get_or_create(username=username)
    if password is not None:
        if validate:
            try:
                validate_password(password, user)
            except ValidationError as exc:
                raise Invalid("password: " + " ".join(exc.messages)) from None
        user.set_password(password)
    elif not user.has_usable_password():
        user.set_unusable_password()
    user.is_staff = role == ADMIN
    user.is_superuser = role == ADMIN
    user.save()
    groups = {name: Group.objects.get_or_create(name=name)[0] for name in ROLES}
    user.groups.set([groups[role]])
    token, _ = Token.objects.get_or_create(user=user)
    return user, token.key
