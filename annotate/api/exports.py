"""Streamed exports: constant memory whatever the number of rows."""

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import api_view, permission_classes
from rest_framework.exceptions import NotFound, ValidationError

from annotate import selectors
from annotate.api.permissions import IsAdminRole
from annotate.services.exporting import (
    VARIANTS,
    benchmark_records,
    csv_lines,
    json_array_lines,
    jsonl_lines,
)

TABLES = {
    "answers": (selectors.answer_rows, selectors.ANSWER_COLUMNS),
    "skips": (selectors.skip_rows, selectors.SKIP_COLUMNS),
    "flags": (selectors.flag_rows, selectors.FLAG_COLUMNS),
    "revisions": (selectors.revision_rows, selectors.REVISION_COLUMNS),
    "annotator-codes": (selectors.annotator_code_rows, selectors.CODE_COLUMNS),
    "morals": (selectors.moral_rows, selectors.MORAL_COLUMNS),
    "ratings": (selectors.rating_rows, selectors.RATING_COLUMNS),
}


def register(name: str, rows, columns) -> None:
    """Other modules (ratings, model morals) add their tables here."""
    TABLES[name] = (rows, columns)


def table_rows(name: str, params) -> tuple:
    if name not in TABLES:
        raise NotFound(f"no export called {name!r}; choose one of {', '.join(sorted(TABLES))}")
    rows, columns = TABLES[name]
    kwargs = {}
    if params.get("batch"):
        if name not in ("answers", "skips", "ratings"):
            raise ValidationError({"batch": f"the {name} export is not per batch"})
        try:
            kwargs["batch_id"] = int(params["batch"])
        except ValueError:
            raise ValidationError({"batch": "must be a batch id (an integer)"}) from None
    if params.get("status") and name == "flags":
        kwargs["status"] = params["status"]
    return rows(**kwargs), columns


@extend_schema(
    operation_id="export_table",
    parameters=[OpenApiParameter("batch", int), OpenApiParameter("status", str)],
    responses={
        (200, "application/x-ndjson"): OpenApiTypes.STR,
        (200, "text/csv"): OpenApiTypes.STR,
    },
)
@api_view(["GET"])
@permission_classes([IsAdminRole])
def export_table_view(request, name: str, fmt: str):
    rows, columns = table_rows(name, request.query_params)
    if fmt == "csv":
        body, content_type = csv_lines(rows, columns=columns), "text/csv; charset=utf-8"
    else:
        body, content_type = jsonl_lines(rows), "application/x-ndjson; charset=utf-8"
    response = StreamingHttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


@extend_schema(
    operation_id="export_benchmark",
    parameters=[
        OpenApiParameter("variant", str, enum=["core", "tf", "noto"]),
        OpenApiParameter("shuffle_seed", int),
    ],
    responses={(200, "application/json"): OpenApiTypes.OBJECT},
)
@api_view(["GET"])
@permission_classes([IsAdminRole])
def export_benchmark_view(request):
    variant = request.query_params.get("variant", "core")
    if variant not in VARIANTS:
        raise ValidationError({"variant": f"must be one of {', '.join(VARIANTS)}"})
    seed = request.query_params.get("shuffle_seed")
    try:
        seed = int(seed) if seed not in (None, "") else None
    except ValueError:
        raise ValidationError({"shuffle_seed": "must be an integer"}) from None
    response = StreamingHttpResponse(
        json_array_lines(benchmark_records(variant=variant, shuffle_seed=seed)),
        content_type="application/json; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="morables-{variant}.json"'
    return response
