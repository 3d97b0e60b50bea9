"""Dashboards for admins and reviewers: progress, agreement heatmap, error analysis."""

from django.contrib import messages
from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotate import charts, selectors, statistics
from annotate.models import Batch, BatchMember, Flag
from annotate.views import admin_required, reviewer_required


@reviewer_required
def batch_dashboard(request, batch_id: int):
    progress = selectors.batch_progress(batch_id=batch_id)
    if progress is None:
        raise Http404("No such batch.")
    batch = Batch.objects.get(id=batch_id)
    stats = statistics.batch_agreement(batch_id=batch_id) if batch.kind == Batch.MCQA else None
    flags = dict(
        Flag.objects.filter(batch_id=batch_id).values_list("reason").annotate(n=Count("id"))
    )
    context = {
        "batch": batch,
        "progress": progress,
        "stats": stats,
        "flags": flags,
        "screening": batch.overlap > 1 and batch.overlap == progress["annotators"],
    }
    if stats:
        coders = [a["code"] for a in stats["annotators"]]
        context["heatmap"] = charts.heatmap(
            coders,
            {(p["a"], p["b"]): (p["kappa_kind"]["value"], p["shared"]) for p in stats["pairs"]},
        )
        context["wrong_bars"] = charts.bars(list(stats["wrong_choice_kinds"].items()))
        context["position_bars"] = charts.bars(
            list(stats["position_share"].items()), label_width=40
        )
        context["accuracy_bars"] = charts.bars(
            [(a["code"], a["accuracy"]) for a in stats["annotators"]], label_width=90
        )
        if context["screening"]:
            members = {
                selectors.annotator_code(m.user_id, m.user.date_joined): m
                for m in BatchMember.objects.filter(batch=batch).select_related("user")
            }
            context["candidates"] = [
                {**a, "member": members.get(a["code"])} for a in stats["annotators"]
            ]
    return render(request, "annotate/dashboard.html", context)


@admin_required
@require_POST
def screening_decide(request, batch_id: int, member_id: int):
    member = get_object_or_404(BatchMember, id=member_id, batch_id=batch_id)
    decision = request.POST.get("decision")
    if decision not in (BatchMember.ACCEPTED, BatchMember.REJECTED, BatchMember.PENDING):
        messages.error(request, "Choose accept or reject.")
    else:
        BatchMember.objects.filter(id=member.id).update(screening=decision)
        messages.success(request, f"{member.user.username}: {decision}.")
    return redirect("batch_dashboard", batch_id)
