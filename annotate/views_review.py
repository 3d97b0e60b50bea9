"""Reviewer pages: the flag queue, one fable's review page and its actions."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotate import selectors
from annotate.models import KNOWN_KINDS, Batch, Fable, Flag
from annotate.services import review
from annotate.services.errors import ServiceError
from annotate.views import reviewer_required


@reviewer_required
def review_queue(request):
    status = request.GET.get("status", Flag.OPEN)
    reason = request.GET.get("reason", "")
    batch_id = request.GET.get("batch") or None
    if batch_id and not batch_id.isdigit():
        batch_id = None
    flags = list(selectors.flag_queue(status=status, reason=reason, batch_id=batch_id)[:500])
    return render(
        request,
        "annotate/review_queue.html",
        {
            "flags": flags,
            "status": status,
            "reason": reason,
            "batch_id": int(batch_id) if batch_id else None,
            "reasons": Flag.REASON_CHOICES,
            "statuses": Flag.STATUS_CHOICES,
            "batches": Batch.objects.order_by("-created_at").values_list("id", "name"),
        },
    )


def _review_context(request, fable_id: int, **extra) -> dict:
    context = selectors.fable_review(fable_id=fable_id)
    flag_id = request.GET.get("flag") or request.POST.get("flag")
    context["flag"] = next((f for f in context["flags"] if str(f.id) == str(flag_id)), None)
    context["kinds"] = KNOWN_KINDS
    context["send_back_batches"] = (
        Batch.objects.filter(kind=Batch.MCQA, closed_at__isnull=True)
        .order_by("-created_at")
        .values_list("id", "name")
    )
    context.update(extra)
    return context


@reviewer_required
def review_fable(request, fable_id: int):
    get_object_or_404(Fable, id=fable_id)
    return render(request, "annotate/review_fable.html", _review_context(request, fable_id))


def _back(fable_id, flag_id):
    url = reverse("review_fable", args=[fable_id])
    return redirect(f"{url}?flag={flag_id}" if flag_id else url)


def _flag_of(request, fable) -> Flag | None:
    flag_id = request.POST.get("flag")
    if not flag_id:
        return None
    return get_object_or_404(Flag, id=flag_id, fable=fable)


@reviewer_required
@require_POST
def review_revise(request, fable_id: int):
    fable = get_object_or_404(Fable.objects.select_related("current_revision"), id=fable_id)
    flag = _flag_of(request, fable)
    count = int(request.POST.get("count", "0") or 0)
    options = [
        (request.POST.get(f"text_{i}", ""), request.POST.get(f"kind_{i}", "")) for i in range(count)
    ]
    options = [o for i, o in enumerate(options) if not request.POST.get(f"remove_{i}")]
    if request.POST.get("text_new", "").strip():
        options.append((request.POST["text_new"], request.POST.get("kind_new", "expert")))
    try:
        revision = review.fable_revise(
            fable=fable,
            options=options,
            reason=request.POST.get("reason", ""),
            actor=request.user,
            flag=flag,
        )
    except ServiceError as exc:
        context = _review_context(
            request, fable_id, revise_error=str(exc), posted_reason=request.POST.get("reason", "")
        )
        return render(request, "annotate/review_fable.html", context, status=400)
    messages.success(request, f"Saved as revision {revision.number}.")
    return _back(fable_id, flag.id if flag else None)


@reviewer_required
@require_POST
def review_close(request, fable_id: int):
    fable = get_object_or_404(Fable, id=fable_id)
    flag = _flag_of(request, fable)
    if flag is None:
        messages.error(request, "Choose the flag to close.")
        return _back(fable_id, None)
    try:
        review.flag_close(
            flag=flag,
            actor=request.user,
            status=request.POST.get("status", ""),
            note=request.POST.get("note", ""),
        )
    except ServiceError as exc:
        messages.error(request, str(exc))
        return _back(fable_id, flag.id)
    messages.success(request, f"Flag {flag.get_reason_display()} {request.POST['status']}.")
    return redirect("review_queue")


@reviewer_required
@require_POST
def review_send_back(request, fable_id: int):
    fable = get_object_or_404(Fable.objects.select_related("current_revision"), id=fable_id)
    flag = _flag_of(request, fable)
    batch = get_object_or_404(Batch, id=request.POST.get("batch") or 0)
    try:
        item = review.fable_send_back(fable=fable, batch=batch, actor=request.user, flag=flag)
    except ServiceError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"Revision {fable.current_revision.number} sent back into "
            f"{batch.name} (round {item.round}).",
        )
    return _back(fable_id, flag.id if flag else None)
