"""Admin page for model-written morals: progress per model, request, retry."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotate.models import Fable, ModelConfig
from annotate.services import generation
from annotate.services.errors import ServiceError
from annotate.views import admin_required


@admin_required
def generation_page(request):
    rows = generation.generation_progress()
    template = "annotate/generation.html" + ("#progress" if request.htmx else "")
    busy = any(r["pending"] or r["running"] for r in rows)
    return render(
        request,
        template,
        {"rows": rows, "busy": busy, "models": ModelConfig.objects.order_by("name")},
    )


@admin_required
@require_POST
def generation_request(request):
    models = list(ModelConfig.objects.filter(id__in=request.POST.getlist("models")))
    fables = list(Fable.objects.filter(current_revision__isnull=False))
    try:
        new = generation.morals_request(models=models, fables=fables)
    except ServiceError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{len(new)} morals queued.")
    return redirect("generation")


@admin_required
@require_POST
def generation_retry(request):
    count = generation.morals_retry_failed()
    messages.success(request, f"{count} failed morals queued again.")
    return redirect("generation")
