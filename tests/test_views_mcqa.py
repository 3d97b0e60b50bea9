import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate.models import Answer, Assignment, Batch, Fable, Option
from annotate.services.batches import batch_create, fables_choose
from tests.factories import make_fables


@pytest.fixture
def batch(db, annotators, admin_user):
    make_fables(5)
    return batch_create(
        name="Views batch",
        fables=fables_choose(),
        annotators=annotators[:2],
        overlap=2,
        created_by=admin_user,
    )


@pytest.fixture
def ann_client(client, annotators):
    client.force_login(annotators[0])
    return client


def claim(client, batch) -> Assignment:
    response = client.get(reverse("batch_next", args=[batch.id]))
    assert response.status_code == 302
    return Assignment.objects.get(id=int(response.url.strip("/").split("/")[-1]))


def test_login_page_and_redirect(client, db):
    assert client.get("/").status_code == 302
    response = client.get(reverse("login"))
    assert response.status_code == 200 and b"Sign in" in response.content


def test_home_lists_my_batches_with_progress(ann_client, batch):
    response = ann_client.get("/")
    html = response.content.decode()
    assert "Views batch" in html and "Start" in html and "0 of 5 answers" not in html
    assert "0 of 10 answers" in html


def test_home_empty_state(client, make_user):
    client.force_login(make_user("lonely"))
    assert "No batches for you yet" in client.get("/").content.decode()


def test_home_query_count_is_constant(ann_client, annotators, admin_user, batch):
    def count():
        with CaptureQueriesContext(connection) as q:
            assert ann_client.get("/").status_code == 200
        return len(q)

    before = count()
    make_fables(30, prefix="more")
    for i in range(3):
        batch_create(
            name=f"extra {i}",
            fables=fables_choose(prefix="more"),
            annotators=annotators[:2],
            overlap=2,
            created_by=admin_user,
        )
    # 4 queries: session, user, role groups, batches with progress subqueries
    assert count() == before == 4


def test_screen_shows_options_in_assignment_order_without_leaks(ann_client, batch):
    a = claim(ann_client, batch)
    response = ann_client.get(reverse("assignment", args=[a.id]))
    html = response.content.decode()
    texts = dict(Option.objects.filter(id__in=a.order).values_list("id", "text"))
    positions = [html.index(texts[i]) for i in a.order]
    assert positions == sorted(positions)
    assert "fable 1 of 5" in html
    for kind in ("ground_truth", "similar_characters", "injected", "partial_story", "truth"):
        assert kind not in html
    option_ids = {str(i) for i in a.order}
    attributes = re.findall(r'(?:id|class|data-[\w-]+|value|name)="([^"]*)"', html)
    assert not option_ids & set(attributes)


def test_content_note_banner(ann_client, batch):
    Fable.objects.update(content_note="Describes a hunt.")
    a = claim(ann_client, batch)
    html = ann_client.get(reverse("assignment", args=[a.id])).content.decode()
    assert "Content note:" in html and "Describes a hunt." in html and "Skip this fable" in html


def test_plain_form_post_answers_and_redirects_to_next(ann_client, batch):
    a = claim(ann_client, batch)
    response = ann_client.post(
        reverse("assignment_answer", args=[a.id]),
        {"selected": "B", "also": ["D", "B"], "comment": "close call"},
    )
    assert response.status_code == 302
    answer = Answer.objects.get(assignment=a)
    assert answer.payload == {"selected": ["B", "D"], "comment": "close call"}
    assert answer.selected == [a.order[1], a.order[3]]


def test_htmx_post_uses_click_order_and_returns_next_screen(ann_client, batch):
    a = claim(ann_client, batch)
    response = ann_client.post(
        reverse("assignment_answer", args=[a.id]),
        {"order": "E,A", "comment": ""},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert Answer.objects.get(assignment=a).payload["selected"] == ["E", "A"]
    nxt = Assignment.objects.exclude(id=a.id).get()
    assert response["HX-Push-Url"] == reverse("assignment", args=[nxt.id])
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="screen"') and "<html" not in html
    assert "Answer saved." in html and "fable 2 of 5" in html


def test_htmx_answer_query_count_is_constant(ann_client, annotators, admin_user):
    counts = []
    for n in (3, 30):
        make_fables(n, prefix=f"h{n}")
        b = batch_create(
            name=f"h{n}",
            fables=fables_choose(prefix=f"h{n}_"),
            annotators=annotators[:2],
            overlap=2,
            created_by=admin_user,
        )
        a = claim(ann_client, b)
        with CaptureQueriesContext(connection) as q:
            ann_client.post(
                reverse("assignment_answer", args=[a.id]), {"order": "A"}, HTTP_HX_REQUEST="true"
            )
        counts.append(len(q))
        with CaptureQueriesContext(connection) as page:
            ann_client.get(reverse("assignment", args=[Assignment.objects.latest("id").id]))
        counts.append(len(page))
    assert counts[0] == counts[2] and counts[1] == counts[3], counts


def test_empty_answer_shows_error_and_saves_nothing(ann_client, batch):
    a = claim(ann_client, batch)
    response = ann_client.post(reverse("assignment_answer", args=[a.id]), {"comment": "hm"})
    assert response.status_code == 400
    assert "choose at least one option" in response.content.decode()
    assert 'value="hm"' in response.content.decode()
    assert not Answer.objects.exists()


def test_skip_needs_comment(ann_client, batch):
    a = claim(ann_client, batch)
    response = ann_client.post(reverse("assignment_skip", args=[a.id]), {"comment": ""})
    assert response.status_code == 400 and "say why" in response.content.decode()
    response = ann_client.post(reverse("assignment_skip", args=[a.id]), {"comment": "broken"})
    assert response.status_code == 302
    assert Assignment.objects.get(id=a.id).status == Assignment.SKIPPED


def test_finished_page_when_nothing_is_left(ann_client, batch):
    for _ in range(5):
        a = claim(ann_client, batch)
        ann_client.post(reverse("assignment_answer", args=[a.id]), {"selected": "A"})
    response = ann_client.get(reverse("batch_next", args=[batch.id]))
    assert response.status_code == 200 and "Batch finished" in response.content.decode()


def test_other_peoples_assignments_are_404(client, annotators, batch):
    client.force_login(annotators[0])
    a = claim(client, batch)
    client.force_login(annotators[1])
    assert client.get(reverse("assignment", args=[a.id])).status_code == 404
    assert (
        client.post(reverse("assignment_answer", args=[a.id]), {"selected": "A"}).status_code == 404
    )


def test_guidelines_page(ann_client, db):
    html = ann_client.get(reverse("guidelines")).content.decode()
    assert "Equally valid" in html and "Captures the essence fully" in html


def test_admin_creates_batch_in_browser_form(client, admin_user, annotators, fables):
    client.force_login(admin_user)
    assert client.get(reverse("batch_new")).status_code == 200
    response = client.post(
        reverse("batch_new"),
        {
            "name": "Gibbs only",
            "kind": "mcqa",
            "selection": "prefix",
            "prefix": "gibbs_",
            "annotators": [a.id for a in annotators],
            "overlap": 2,
            "flag_double_miss": "on",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    batch = Batch.objects.get(name="Gibbs only")
    assert batch.items.count() == Fable.objects.filter(alias__startswith="gibbs_").count() > 0


def test_screening_preset_sets_overlap_to_everyone(client, admin_user, annotators, fables):
    client.force_login(admin_user)
    client.post(
        reverse("batch_new"),
        {
            "name": "Screening",
            "kind": "mcqa",
            "selection": "sample",
            "sample": 20,
            "seed": 1,
            "annotators": [a.id for a in annotators],
            "overlap": 2,
            "screening": "on",
        },
    )
    batch = Batch.objects.get(name="Screening")
    assert batch.overlap == 4 and batch.items.count() == 20


def test_batch_form_errors_are_shown(client, admin_user, annotators, fables):
    client.force_login(admin_user)
    response = client.post(
        reverse("batch_new"),
        {
            "name": "x",
            "kind": "mcqa",
            "selection": "aliases",
            "aliases": "nope_1",
            "annotators": [annotators[0].id],
            "overlap": 1,
        },
    )
    assert "unknown fable aliases: nope_1" in response.content.decode()


def test_annotator_cannot_open_admin_pages(ann_client, db):
    for name in ("batch_new", "batch_list", "import"):
        assert ann_client.get(reverse(name)).status_code == 403


def test_batch_list_query_count(client, admin_user, annotators):
    client.force_login(admin_user)
    make_fables(3)
    with CaptureQueriesContext(connection) as before:
        client.get(reverse("batch_list"))
    for i in range(4):
        batch_create(
            name=f"b{i}", fables=fables_choose(), annotators=annotators[:2], created_by=admin_user
        )
    with CaptureQueriesContext(connection) as after:
        html = client.get(reverse("batch_list")).content.decode()
    assert "b3" in html
    # 3 queries: session, user, batches with progress (superuser needs no group query)
    assert len(before) == len(after) == 3


def test_import_upload(client, admin_user, db):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.factories import benchmark_record

    client.force_login(admin_user)
    import json

    good = SimpleUploadedFile("f.json", json.dumps([benchmark_record("up_1")]).encode())
    response = client.post(reverse("import"), {"file": good})
    assert response.status_code == 200 and "1 created" in response.content.decode()
    bad = SimpleUploadedFile("g.json", b"[{")
    response = client.post(reverse("import"), {"file": bad})
    assert response.status_code == 400 and "g.json: not valid JSON" in response.content.decode()
    wrong = SimpleUploadedFile("g.txt", b"hello")
    assert "choose a .json" in client.post(reverse("import"), {"file": wrong}).content.decode()
