from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

import annotate.converters  # noqa: F401  (registers <id:…>)
from annotate import views, views_dashboard, views_generation, views_review

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("guidelines/", views.guidelines, name="guidelines"),
    path("batches/", views.batch_list, name="batch_list"),
    path("batches/new/", views.batch_new, name="batch_new"),
    path("batches/<id:batch_id>/next/", views.batch_next, name="batch_next"),
    path(
        "batches/<id:batch_id>/dashboard/", views_dashboard.batch_dashboard, name="batch_dashboard"
    ),
    path(
        "batches/<id:batch_id>/members/<id:member_id>/screening/",
        views_dashboard.screening_decide,
        name="screening_decide",
    ),
    path("assignments/<id:assignment_id>/", views.assignment_page, name="assignment"),
    path(
        "assignments/<id:assignment_id>/answer/", views.assignment_answer, name="assignment_answer"
    ),
    path("assignments/<id:assignment_id>/skip/", views.assignment_skip, name="assignment_skip"),
    path("import/", views.import_upload, name="import"),
    path("generation/", views_generation.generation_page, name="generation"),
    path("generation/request/", views_generation.generation_request, name="generation_request"),
    path("generation/retry/", views_generation.generation_retry, name="generation_retry"),
    path("review/", views_review.review_queue, name="review_queue"),
    path("review/fables/<id:fable_id>/", views_review.review_fable, name="review_fable"),
    path("review/fables/<id:fable_id>/revise/", views_review.review_revise, name="review_revise"),
    path("review/fables/<id:fable_id>/close/", views_review.review_close, name="review_close"),
    path(
        "review/fables/<id:fable_id>/send-back/",
        views_review.review_send_back,
        name="review_send_back",
    ),
    path("healthz", views.healthz, name="healthz"),
    path("api/", include("annotate.api.urls")),
    path("admin/", admin.site.urls),
]

handler404 = "annotate.views.not_found"
handler500 = "annotate.views.server_error"
