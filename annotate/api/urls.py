from django.conf import settings
from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

import annotate.converters  # noqa: F401  (registers <id:…>)
from annotate.api import admin_views, exports, views

urlpatterns = [
    path("batches/", views.batches_view, name="api_batches"),
    path("batches/<id:batch_id>/close/", admin_views.batch_close_view, name="api_batch_close"),
    path("fables/", admin_views.fable_list_view, name="api_fables"),
    path("fables/import/", admin_views.fable_import_view, name="api_fable_import"),
    path("fables/<str:alias>/", admin_views.fable_detail_view, name="api_fable"),
    path("flags/", admin_views.flag_list_view, name="api_flags"),
    re_path(
        r"^flags/(?P<flag_id>[0-9]{1,18})/(?P<action>resolve|dismiss|send-back)/$",
        admin_views.flag_action_view,
        name="api_flag_action",
    ),
    path("models/", admin_views.model_list_view, name="api_models"),
    path("generation/", admin_views.generation_view, name="api_generation"),
    path("batches/<id:batch_id>/", views.batch_detail_view, name="api_batch"),
    path("batches/<id:batch_id>/agreement/", views.batch_agreement_view, name="api_agreement"),
    path("batches/<id:batch_id>/next/", views.batch_next_view, name="api_batch_next"),
    path("assignments/<id:assignment_id>/answer/", views.assignment_answer_view, name="api_answer"),
    path("assignments/<id:assignment_id>/skip/", views.assignment_skip_view, name="api_skip"),
    path("export/benchmark.json", exports.export_benchmark_view, name="api_export_benchmark"),
    re_path(
        r"^export/(?P<name>[a-z-]+)\.(?P<fmt>jsonl|csv)$",
        exports.export_table_view,
        name="api_export",
    ),
    path("schema/", SpectacularAPIView.as_view(), name="api_schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api_schema"), name="api_docs"),
]

if settings.BENCH_ENDPOINTS:
    urlpatterns.append(path("bench/probe/", views.bench_probe_view, name="api_bench_probe"))
