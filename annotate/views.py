"""Function views: parse the request, call one service or selector, render a page or partial."""

from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST
from django.views.defaults import page_not_found
from django.views.defaults import server_error as django_server_error

from annotate import selectors
from annotate.forms import BatchForm, ImportForm
from annotate.models import Assignment, Batch, BatchMember
from annotate.roles import is_admin, is_reviewer
from annotate.services import routing
from annotate.services.batches import batch_create, fables_choose
from annotate.services.errors import ServiceError
from annotate.services.importing import ImportRefused, fables_import


def role_required(check):
    def decorator(view):
        @wraps(view)
        @login_required
        def wrapped(request, *args, **kwargs):
            if not check(request.user):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


admin_required = role_required(is_admin)
reviewer_required = role_required(is_reviewer)


@login_required
def home(request):
    batches = list(selectors.batches_with_progress(user=request.user))
    for batch in batches:
        batch.mine_expected = selectors.expected_share(batch)
        batch.mine_percent = selectors.percent(batch.mine_done, batch.mine_expected)
        batch.percent = selectors.percent(batch.answers_done, batch.answers_needed)
    return render(request, "annotate/home.html", {"batches": batches})


@login_required
def guidelines(request):
    return render(request, "annotate/guidelines.html")


def _own_assignment(request, assignment_id: int) -> Assignment:
    assignment = get_object_or_404(
        Assignment.objects.select_related("batch", "fable"), id=assignment_id
    )
    if assignment.annotator_id != request.user.id:
        raise Http404("No such assignment.")
    return assignment


def _screen_context(
    request,
    assignment: Assignment,
    *,
    notice: str = "",
    error: str = "",
    posted=None,
    comment: str = "",
) -> dict:
    batch = assignment.batch
    progress = selectors.batches_with_progress(user=request.user, batch_ids=[batch.id]).first()
    expected = selectors.expected_share(progress)
    options = selectors.assignment_screen(assignment=assignment)
    if isinstance(posted, dict):
        for option in options:
            option.score = str(posted.get(option.label, "")) or None
    return {
        "assignment": assignment,
        "batch": batch,
        "fable": assignment.fable,
        "options": options,
        "done": progress.mine_done,
        "expected": expected,
        "position": progress.mine_done + 1,
        "notice": notice,
        "error": error,
        "posted": posted or [],
        "comment": comment,
    }


def _render_screen(request, assignment, status=200, **extra):
    template = (
        "annotate/rating.html" if assignment.batch.kind == Batch.RATING else "annotate/mcqa.html"
    )
    if request.htmx:
        template += "#screen"
    response = render(
        request, template, _screen_context(request, assignment, **extra), status=status
    )
    if request.htmx:
        response["HX-Push-Url"] = reverse("assignment", args=[assignment.id])
    return response


def _render_finished(request, batch, notice: str = ""):
    template = "annotate/finished.html" + ("#finished" if request.htmx else "")
    response = render(request, template, {"batch": batch, "notice": notice})
    if request.htmx:
        response["HX-Push-Url"] = reverse("batch_next", args=[batch.id])
    return response


def _next_or_finished(request, batch, notice: str = ""):
    try:
        assignment = routing.assignment_claim(batch=batch, annotator=request.user)
    except ServiceError as exc:
        raise PermissionDenied(str(exc)) from None
    if assignment is None:
        return _render_finished(request, batch, notice)
    if request.htmx:
        assignment = Assignment.objects.select_related("batch", "fable").get(id=assignment.id)
        return _render_screen(request, assignment, notice=notice)
    if notice:
        messages.info(request, notice)
    return redirect("assignment", assignment.id)


@login_required
@require_http_methods(["GET", "POST"])
def batch_next(request, batch_id: int):
    """Claim (or return the held) fable of a batch; a finished page when none is left."""
    batch = get_object_or_404(Batch, id=batch_id)
    if not BatchMember.objects.filter(batch=batch, user=request.user).exists():
        raise Http404("You are not an annotator of this batch.")
    return _next_or_finished(request, batch)


@login_required
def assignment_page(request, assignment_id: int):
    assignment = _own_assignment(request, assignment_id)
    if assignment.status != Assignment.CLAIMED:
        return redirect("batch_next", assignment.batch_id)
    return _render_screen(request, assignment)


def _selected_from_post(post) -> list[str]:
    # With JavaScript the form posts `selected` in click order; without, a radio button
    # (`selected`, the primary) and checkboxes (`also`, equally valid ones).
    order = [s.strip() for s in post.get("order", "").split(",") if s.strip()]
    if order:
        return order
    selected = [s for s in post.getlist("selected") if s]
    return selected + [s for s in post.getlist("also") if s and s not in selected]


@login_required
@require_POST
def assignment_answer(request, assignment_id: int):
    assignment = _own_assignment(request, assignment_id)
    comment = request.POST.get("comment", "")
    if assignment.batch.kind == Batch.RATING:
        payload = {
            "ratings": {
                k[len("score_") :]: v for k, v in request.POST.items() if k.startswith("score_")
            },
            "comment": comment,
        }
        posted = payload["ratings"]
    else:
        posted = _selected_from_post(request.POST)
        payload = {"selected": posted, "comment": comment}
    try:
        result = routing.answer_submit(
            assignment_id=assignment.id, annotator=request.user, payload=payload
        )
    except ServiceError as exc:
        if exc.status == 409:
            return _next_or_finished(request, assignment.batch, notice=f"Not saved: {exc}")
        # Invalid input: show the same fable again with the message; nothing was saved.
        return _render_screen(
            request,
            assignment,
            status=200 if request.htmx else 400,
            error=str(exc),
            posted=posted,
            comment=comment,
        )
    notice = "Answer saved."
    if result.outcome == "surplus":
        notice = (
            "Your time on that fable ran out and others completed it meanwhile. "
            "Your answer is kept as an extra record."
        )
    return _next_or_finished(request, assignment.batch, notice=notice)


@login_required
@require_POST
def assignment_skip(request, assignment_id: int):
    assignment = _own_assignment(request, assignment_id)
    comment = request.POST.get("comment", "")
    try:
        routing.assignment_skip(
            assignment_id=assignment.id, annotator=request.user, comment=comment
        )
    except ServiceError as exc:
        if exc.status == 409:
            return _next_or_finished(request, assignment.batch, notice=f"Not saved: {exc}")
        return _render_screen(
            request,
            assignment,
            status=200 if request.htmx else 400,
            error=str(exc),
            comment=comment,
        )
    return _next_or_finished(request, assignment.batch, notice="Fable skipped.")


@reviewer_required
def batch_list(request):
    batches = list(selectors.batches_with_progress())
    for batch in batches:
        batch.percent = selectors.percent(batch.answers_done, batch.answers_needed)
    return render(request, "annotate/batch_list.html", {"batches": batches})


@admin_required
def batch_new(request):
    form = BatchForm(request.POST or None, initial={"overlap": 2, "selection": "all"})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            fables = fables_choose(
                aliases=data["aliases"] or None,
                prefix=data["prefix"] or None,
                sample=data["sample"],
                seed=data["seed"],
            )
            annotators = list(data["annotators"])
            overlap = len(annotators) if data["screening"] else data["overlap"]
            batch = batch_create(
                name=data["name"],
                kind=data["kind"],
                fables=fables,
                annotators=annotators,
                overlap=overlap,
                created_by=request.user,
                flag_double_miss=data["flag_double_miss"],
                flag_skip_comment=data["flag_skip_comment"],
                flag_ambiguous=data["flag_ambiguous"],
                include_control=data["include_control"],
                one_per_screen=data["one_per_screen"],
            )
        except ServiceError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Batch “{batch.name}” created with {len(fables)} fables.")
            return redirect("batch_list")
    return render(request, "annotate/batch_new.html", {"form": form})


@admin_required
def import_upload(request):
    form = ImportForm(request.POST or None, request.FILES or None)
    report = None
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            text = upload.read().decode("utf-8")
        except UnicodeDecodeError:
            form.add_error("file", f"{upload.name}: not UTF-8 text")
        else:
            try:
                report = fables_import(
                    sources=[(upload.name, text)],
                    update=form.cleaned_data["update"],
                    author=request.user,
                )
            except ImportRefused as exc:
                form.add_error("file", f"{exc}. Nothing was imported.")
    return render(
        request,
        "annotate/import.html",
        {"form": form, "report": report},
        status=400 if form.errors else 200,
    )


def healthz(request):
    """For load balancers: 200 when the database and the broker answer, else 503."""
    from django.db import connection

    problems = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any failure means unhealthy; say which
        problems["database"] = exc.__class__.__name__
    try:
        from annotate.celery import app

        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:
        problems["broker"] = exc.__class__.__name__
    if problems:
        detail = ", ".join(f"{k}: {v}" for k, v in problems.items())
        return HttpResponse(f"unhealthy: {detail}", status=503, content_type="text/plain")
    return HttpResponse("ok", content_type="text/plain")


def not_found(request, exception=None):
    """404: JSON for API clients (scripts parse `detail`), the HTML page for people."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception)


def server_error(request):
    """500 without a stack trace: JSON under /api/, the HTML page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse(
            {"detail": "Server error: it has been logged; please try again."}, status=500
        )
    return django_server_error(request)
