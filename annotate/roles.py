"""Roles are Django groups: annotator, reviewer, admin (superusers count as admin)."""

ANNOTATOR, REVIEWER, ADMIN = "annotator", "reviewer", "admin"
ROLES = (ANNOTATOR, REVIEWER, ADMIN)


def role_of(user) -> str | None:
    if user.is_superuser:
        return ADMIN
    # Cached per request object so templates and views do not query twice.
    cached = getattr(user, "_role_cache", None)
    if cached is None:
        names = set(user.groups.values_list("name", flat=True))
        cached = next((r for r in (ADMIN, REVIEWER, ANNOTATOR) if r in names), "")
        user._role_cache = cached
    return cached or None


def is_admin(user) -> bool:
    return user.is_authenticated and role_of(user) == ADMIN


def is_reviewer(user) -> bool:
    return user.is_authenticated and role_of(user) in (ADMIN, REVIEWER)
