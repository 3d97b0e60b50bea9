from rest_framework.permissions import BasePermission

from annotate.roles import is_admin, is_reviewer


class IsAdminRole(BasePermission):
    message = "Only admins may do this."

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated and is_admin(request.user))


class IsReviewerRole(BasePermission):
    message = "Only reviewers and admins may do this."

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated and is_reviewer(request.user))
