"""REST API: validate input, call one service or selector, serialise the result."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import api_view, permission_classes
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from annotate import selectors
from annotate.api import schema
from annotate.api import serializers as s
from annotate.api.permissions import IsAdminRole, IsReviewerRole
from annotate.models import Assignment, Batch, BatchMember
from annotate.services import routing
from annotate.services.batches import batch_create, fables_choose, users_by_name
from annotate.services.errors import Forbidden, ServiceError


def _service_error(exc: ServiceError) -> Response:
    if isinstance(exc, Forbidden):
        # Someone else's batch or assignment: as if it did not exist.
        return Response({"detail": "not found among yours"}, status=status.HTTP_404_NOT_FOUND)
    return Response({"detail": str(exc)}, status=exc.status)


class BatchesPermission(IsAdminRole):
    """GET (list) for reviewers and admins, POST (create) for admins."""

    def has_permission(self, request, view):
        if request.method == "GET":
            return IsReviewerRole().has_permission(request, view)
        return super().has_permission(request, view)


@extend_schema(methods=["GET"], operation_id="batches_list", responses=OpenApiTypes.OBJECT)
@extend_schema(
    methods=["POST"],
    operation_id="batches_create",
    request=s.BatchCreateSerializer,
    responses={201: s.BatchProgressSerializer, 400: schema.DetailSerializer},
)
@api_view(["GET", "POST"])
@permission_classes([BatchesPermission])
def batches_view(request):
    if request.method == "GET":
        from annotate.api.admin_views import batch_list_view

        return batch_list_view(request._request)
    data = s.BatchCreateSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    v = data.validated_data
    try:
        fables = fables_choose(
            aliases=v.get("fables"),
            prefix=v.get("prefix"),
            sample=v.get("sample"),
            seed=v.get("seed"),
        )
        batch = batch_create(
            name=v["name"],
            kind=v["kind"],
            fables=fables,
            annotators=users_by_name(v["annotators"]),
            overlap=v["overlap"],
            created_by=request.user,
            **{
                k: v[k]
                for k in (
                    "flag_double_miss",
                    "flag_skip_comment",
                    "flag_ambiguous",
                    "include_control",
                    "one_per_screen",
                )
            },
        )
    except ServiceError as exc:
        return _service_error(exc)
    return Response(selectors.batch_progress(batch_id=batch.id), status=status.HTTP_201_CREATED)


@extend_schema(operation_id="batches_progress", responses=s.BatchProgressSerializer)
@api_view(["GET"])
@permission_classes([IsAdminRole])
def batch_detail_view(request, batch_id: int):
    progress = selectors.batch_progress(batch_id=batch_id)
    if progress is None:
        raise NotFound("no such batch")
    return Response(s.BatchProgressSerializer(progress).data)


def _assignment_payload(assignment: Assignment) -> dict:
    shown = selectors.assignment_screen(assignment=assignment)
    fable = assignment.fable
    body = {
        "assignment": assignment.id,
        "fable": {
            "alias": fable.alias,
            "title": fable.title,
            "story": fable.story,
            "content_note": fable.content_note,
        },
        "expires_at": assignment.expires_at,
    }
    key = "morals" if assignment.batch.kind == Batch.RATING else "options"
    body[key] = [{"label": o.label, "text": o.text} for o in shown]
    return body


@extend_schema(
    operation_id="batches_next",
    request=None,
    responses={200: schema.NextSerializer, 204: None, 404: schema.DetailSerializer},
)
@api_view(["POST"])
def batch_next_view(request, batch_id: int):
    try:
        # By id: the batch comes with the membership query (an unknown batch is a 404).
        assignment = routing.assignment_claim(batch=batch_id, annotator=request.user)
    except ServiceError as exc:
        return _service_error(exc)
    if assignment is None:
        return Response(status=status.HTTP_204_NO_CONTENT)
    return Response(_assignment_payload(assignment))


@extend_schema(
    operation_id="assignments_answer",
    request=s.AnswerSerializer,
    responses={
        200: schema.AnswerResultSerializer,
        201: schema.AnswerResultSerializer,
        400: schema.DetailSerializer,
        404: schema.DetailSerializer,
        409: schema.DetailSerializer,
    },
)
@api_view(["POST"])
def assignment_answer_view(request, assignment_id: int):
    body = s.AnswerSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    try:
        result = routing.answer_submit(
            assignment_id=assignment_id, annotator=request.user, payload=dict(body.validated_data)
        )
    except ServiceError as exc:
        return _service_error(exc)
    if result.outcome == "surplus":
        return Response(
            {
                "detail": "the lease ran out and every slot of this fable is filled; the answer "
                "is kept as a surplus record and not counted",
                "answer": result.answer.id,
                "surplus": True,
            },
            status=status.HTTP_409_CONFLICT,
        )
    code = status.HTTP_201_CREATED if result.outcome == "created" else status.HTTP_200_OK
    return Response({"answer": result.answer.id, "surplus": False}, status=code)


@extend_schema(
    operation_id="assignments_skip",
    request=s.SkipSerializer,
    responses={
        200: schema.SkipResultSerializer,
        400: schema.DetailSerializer,
        404: schema.DetailSerializer,
        409: schema.DetailSerializer,
    },
)
@api_view(["POST"])
def assignment_skip_view(request, assignment_id: int):
    body = s.SkipSerializer(data=request.data)
    if not body.is_valid():
        raise ValidationError(body.errors)
    try:
        assignment = routing.assignment_skip(
            assignment_id=assignment_id,
            annotator=request.user,
            comment=body.validated_data["comment"],
        )
    except ServiceError as exc:
        return _service_error(exc)
    return Response({"assignment": assignment.id, "status": assignment.status})


@extend_schema(exclude=True)
@api_view(["POST"])
def bench_probe_view(request):
    """The benchmark's yardstick: one indexed SELECT and one INSERT (BENCH_ENDPOINTS only)."""
    from annotate.models import BenchProbe

    member = BatchMember.objects.filter(user=request.user).values_list("id", flat=True).first()
    BenchProbe.objects.create(user=request.user)
    return Response({"member": member})


@extend_schema(operation_id="batches_agreement", responses=OpenApiTypes.OBJECT)
@api_view(["GET"])
@permission_classes([IsReviewerRole])
def batch_agreement_view(request, batch_id: int):
    from annotate import statistics

    kind = statistics.batch_kind(batch_id)
    if kind is None:
        raise NotFound("no such batch")
    if kind == Batch.RATING:
        from annotate.rating_analysis import rating_summary

        summary = rating_summary(batch_id=batch_id)
        for model in summary["models"]:
            model.pop("points")
        return Response(summary)
    return Response(statistics.batch_agreement(batch_id=batch_id))
