"""Admin and reviewer API: fables, batches, flags, models and generation."""

from django.db.models import Q
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view, parser_classes, permission_classes
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from annotate import selectors
from annotate.api.permissions import IsAdminRole, IsReviewerRole
from annotate.models import Batch, Fable, Flag, ModelConfig
from annotate.services import generation, review
from annotate.services.errors import ServiceError
from annotate.services.importing import ImportRefused, fables_import


def _error(exc: ServiceError) -> Response:
    return Response({"detail": str(exc)}, status=exc.status)


def _page(request, queryset, serialize):
    paginator = LimitOffsetPagination()
    page = paginator.paginate_queryset(queryset, request)
    return paginator.get_paginated_response([serialize(x) for x in page])


# ---------------------------------------------------------------- fables


def _fable_summary(f: Fable) -> dict:
    return {
        "alias": f.alias,
        "title": f.title,
        "source": f.source,
        "content_note": f.content_note,
        "revision": f.current_revision.number,
    }


@extend_schema(
    operation_id="fables_list",
    parameters=[
        OpenApiParameter("alias", str, description="alias prefix"),
        OpenApiParameter("source", str),
        OpenApiParameter("search", str),
        OpenApiParameter("limit", int),
        OpenApiParameter("offset", int),
    ],
    responses=OpenApiTypes.OBJECT,
)
@api_view(["GET"])
@permission_classes([IsReviewerRole])
def fable_list_view(request):
    qs = Fable.objects.select_related("current_revision").order_by("import_order", "id")
    params = request.query_params
    if params.get("alias"):
        qs = qs.filter(alias__startswith=params["alias"])
    if params.get("source"):
        qs = qs.filter(source=params["source"])
    if params.get("search"):
        qs = qs.filter(Q(title__icontains=params["search"]) | Q(story__icontains=params["search"]))
    return _page(request, qs, _fable_summary)


@extend_schema(operation_id="fables_detail", responses=OpenApiTypes.OBJECT)
@api_view(["GET"])
@permission_classes([IsReviewerRole])
def fable_detail_view(request, alias: str):
    fable = get_object_or_404(Fable, alias=alias)
    revisions = fable.revisions.select_related("author").prefetch_related("options")
    return Response(
        {
            **_fable_summary(Fable.objects.select_related("current_revision").get(id=fable.id)),
            "story": fable.story,
            "revisions": [
                {
                    "number": r.number,
                    "reason": r.reason,
                    "proposed": r.proposed,
                    "author": r.author.username if r.author else None,
                    "created_at": r.created_at,
                    "current": r.id == fable.current_revision_id,
                    "options": [
                        {"position": o.position, "kind": o.kind, "text": o.text}
                        for o in r.options.all()
                    ],
                }
                for r in revisions.order_by("number")
            ],
        }
    )


class ImportSerializer(serializers.Serializer):
    file = serializers.FileField()
    update = serializers.BooleanField(default=False)


@extend_schema(
    operation_id="fables_import",
    request={"multipart/form-data": ImportSerializer},
    responses={201: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
)
@api_view(["POST"])
@permission_classes([IsAdminRole])
@parser_classes([MultiPartParser, FormParser])
def fable_import_view(request):
    from django.conf import settings

    body = ImportSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    upload = body.validated_data["file"]
    if upload.size > settings.IMPORT_MAX_UPLOAD_BYTES:
        raise ValidationError(
            {"file": f"{upload.size} bytes is over the limit of {settings.IMPORT_MAX_UPLOAD_BYTES}"}
        )
    if not upload.name.lower().endswith((".json", ".jsonl", ".ndjson", ".csv")):
        raise ValidationError({"file": f"{upload.name}: choose a .json, .jsonl or .csv file"})
    try:
        text = upload.read().decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError({"file": f"{upload.name}: not UTF-8 text"}) from None
    try:
        report = fables_import(
            sources=[(upload.name, text)], update=body.validated_data["update"], author=request.user
        )
    except ImportRefused as exc:
        return Response(
            {
                "detail": f"{exc}. Nothing was imported.",
                "file": exc.file,
                "record": exc.record,
                "alias": exc.alias,
                "field": exc.field,
            },
            status=status.HTTP_400_BAD_REQUEST,
        )
    return Response(
        {
            "created": len(report.created),
            "unchanged": len(report.unchanged),
            "updated": len(report.updated),
            "content_notes": len(report.notes),
            "proposals": len(report.proposals),
        },
        status=status.HTTP_201_CREATED,
    )


# ---------------------------------------------------------------- batches


@extend_schema(exclude=True)
@api_view(["GET"])
@permission_classes([IsReviewerRole])
def batch_list_view(request):
    qs = selectors.batches_with_progress()
    if request.query_params.get("kind"):
        qs = qs.filter(kind=request.query_params["kind"])
    return _page(
        request,
        qs,
        lambda b: {
            "id": b.id,
            "name": b.name,
            "kind": b.kind,
            "overlap": b.overlap,
            "fables": b.fable_count,
            "annotators": b.annotator_count,
            "answers_done": b.answers_done,
            "answers_needed": b.answers_needed,
            "closed": b.closed_at is not None,
        },
    )


@extend_schema(
    operation_id="batches_close",
    request=None,
    responses={200: OpenApiTypes.OBJECT, 409: OpenApiTypes.OBJECT},
)
@api_view(["POST"])
@permission_classes([IsAdminRole])
def batch_close_view(request, batch_id: int):
    from django.utils import timezone

    updated = Batch.objects.filter(id=batch_id, closed_at__isnull=True).update(
        closed_at=timezone.now()
    )
    if not updated:
        get_object_or_404(Batch, id=batch_id)
        return Response({"detail": "this batch is already closed"}, status=409)
    return Response(selectors.batch_progress(batch_id=batch_id))


# ---------------------------------------------------------------- flags


def _flag(f: Flag) -> dict:
    return {
        "id": f.id,
        "alias": f.fable.alias,
        "reason": f.reason,
        "status": f.status,
        "batch": f.batch_id,
        "revision": f.revision.number,
        "note": f.note,
        "created_at": f.created_at,
        "closed_at": f.closed_at,
    }


@extend_schema(
    operation_id="flags_list",
    parameters=[
        OpenApiParameter("status", str, enum=["open", "resolved", "dismissed"]),
        OpenApiParameter("reason", str),
        OpenApiParameter("batch", int),
        OpenApiParameter("limit", int),
        OpenApiParameter("offset", int),
    ],
    responses=OpenApiTypes.OBJECT,
)
@api_view(["GET"])
@permission_classes([IsReviewerRole])
def flag_list_view(request):
    params = request.query_params
    status_ = params.get("status", "")
    if status_ and status_ not in dict(Flag.STATUS_CHOICES):
        raise ValidationError({"status": f"must be one of {', '.join(dict(Flag.STATUS_CHOICES))}"})
    reason = params.get("reason", "")
    if reason and reason not in dict(Flag.REASON_CHOICES):
        raise ValidationError({"reason": f"must be one of {', '.join(dict(Flag.REASON_CHOICES))}"})
    batch = params.get("batch")
    if batch and not batch.isdigit():
        raise ValidationError({"batch": "must be a batch id"})
    return _page(
        request,
        selectors.flag_queue(status=status_, reason=reason, batch_id=int(batch) if batch else None),
        _flag,
    )


class NoteSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class SendBackSerializer(serializers.Serializer):
    batch = serializers.IntegerField()


@extend_schema(
    operation_id="flags_action",
    request=OpenApiTypes.OBJECT,
    responses={
        200: OpenApiTypes.OBJECT,
        400: OpenApiTypes.OBJECT,
        404: OpenApiTypes.OBJECT,
        409: OpenApiTypes.OBJECT,
    },
)
@api_view(["POST"])
@permission_classes([IsReviewerRole])
def flag_action_view(request, flag_id: int, action: str):
    flag = get_object_or_404(Flag.objects.select_related("fable", "revision"), id=flag_id)
    try:
        if action == "send-back":
            body = SendBackSerializer(data=request.data)
            body.is_valid(raise_exception=True)
            batch = get_object_or_404(Batch, id=body.validated_data["batch"])
            fable = Fable.objects.select_related("current_revision").get(id=flag.fable_id)
            item = review.fable_send_back(fable=fable, batch=batch, actor=request.user, flag=flag)
            return Response(
                {"batch": batch.id, "round": item.round, "revision": fable.current_revision.number}
            )
        body = NoteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        status_ = Flag.RESOLVED if action == "resolve" else Flag.DISMISSED
        flag = review.flag_close(
            flag=flag, actor=request.user, status=status_, note=body.validated_data["note"]
        )
    except ServiceError as exc:
        return _error(exc)
    return Response(_flag(Flag.objects.select_related("fable", "revision").get(id=flag.id)))


# ---------------------------------------------------------------- models and generation


class ModelSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    provider = serializers.ChoiceField(choices=[ModelConfig.OPENAI, ModelConfig.BASELINE])
    base_url = serializers.CharField(required=False, allow_blank=True, default="")
    model_id = serializers.CharField(required=False, allow_blank=True, default="")
    api_key_env = serializers.CharField(required=False, allow_blank=True, default="")
    temperature = serializers.FloatField(default=0.0, min_value=0, max_value=2)
    max_tokens = serializers.IntegerField(default=100, min_value=1, max_value=4000)
    requests_per_minute = serializers.IntegerField(default=60, min_value=1, max_value=100000)


def _model(m: ModelConfig) -> dict:
    # The key itself is never stored or shown: only the variable's name.
    return {
        "id": m.id,
        "name": m.name,
        "provider": m.provider,
        "base_url": m.base_url,
        "model_id": m.model_id,
        "api_key_env": m.api_key_env,
        "temperature": m.temperature,
        "max_tokens": m.max_tokens,
        "requests_per_minute": m.requests_per_minute,
    }


@extend_schema(methods=["GET"], operation_id="models_list", responses=OpenApiTypes.OBJECT)
@extend_schema(
    methods=["POST"],
    operation_id="models_create",
    request=ModelSerializer,
    responses={201: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
)
@api_view(["GET", "POST"])
@permission_classes([IsAdminRole])
def model_list_view(request):
    if request.method == "GET":
        return _page(request, ModelConfig.objects.order_by("name"), _model)
    body = ModelSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    try:
        model = generation.model_add(**body.validated_data)
    except ServiceError as exc:
        return _error(exc)
    return Response(_model(model), status=status.HTTP_201_CREATED)


class GenerationSerializer(serializers.Serializer):
    models = serializers.ListField(child=serializers.CharField(), allow_empty=False)
    fables = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        allow_empty=False,
        help_text="Aliases; omitted = all.",
    )


@extend_schema(methods=["GET"], operation_id="generation_progress", responses=OpenApiTypes.OBJECT)
@extend_schema(
    methods=["POST"],
    operation_id="generation_request",
    request=GenerationSerializer,
    responses={202: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
)
@api_view(["GET", "POST"])
@permission_classes([IsAdminRole])
def generation_view(request):
    if request.method == "POST":
        body = GenerationSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        names = body.validated_data["models"]
        models = list(ModelConfig.objects.filter(name__in=names))
        unknown = sorted(set(names) - {m.name for m in models})
        if unknown:
            raise ValidationError({"models": f"unknown models: {', '.join(unknown)}"})
        aliases = body.validated_data.get("fables")
        fables = Fable.objects.filter(current_revision__isnull=False)
        if aliases:
            fables = fables.filter(alias__in=aliases)
            missing = sorted(set(aliases) - set(fables.values_list("alias", flat=True)))
            if missing:
                raise ValidationError({"fables": f"unknown aliases: {', '.join(missing[:10])}"})
        try:
            new = generation.morals_request(models=models, fables=list(fables))
        except ServiceError as exc:
            return _error(exc)
        return Response({"queued": len(new)}, status=status.HTTP_202_ACCEPTED)
    rows = generation.generation_progress()
    return Response(
        [
            {
                "model": r["model"].name,
                "total": r["total"],
                "pending": r["pending"],
                "running": r["running"],
                "done": r["done"],
                "failed": r["failed"],
            }
            for r in rows
        ]
    )
