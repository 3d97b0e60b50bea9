from annotate.roles import role_of


def roles(request):
    user = getattr(request, "user", None)
    role = role_of(user) if user is not None and user.is_authenticated else None
    return {"role": role, "is_staff_role": role in ("admin", "reviewer")}
