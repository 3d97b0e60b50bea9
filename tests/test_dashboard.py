import gc

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotate import statistics
from annotate.models import BatchMember
from annotate.services.batches import batch_create, fables_choose
from tests.factories import answer_as, make_fables


@pytest.fixture
def screening(db, annotators, admin_user):
    make_fables(6)
    batch = batch_create(
        name="Screening",
        fables=fables_choose(),
        annotators=annotators,
        overlap=4,
        created_by=admin_user,
    )
    # ann and ben always right; cat right on half; dan always wrong and picks two.
    for i in range(6):
        answer_as(annotators[0], batch, correct=True)
        answer_as(annotators[1], batch, correct=True)
        answer_as(annotators[2], batch, correct=i % 2 == 0)
        answer_as(annotators[3], batch, correct=False)
    return batch


def test_agreement_from_stored_answers(screening):
    stats = statistics.batch_agreement(batch_id=screening.id, bootstrap_n=200)
    assert stats["answers"] == 24
    by_pair = {(p["a"], p["b"]): p for p in stats["pairs"]}
    assert len(by_pair) == 6 and all(p["shared"] == 6 for p in by_pair.values())
    accuracy = sorted(a["accuracy"] for a in stats["annotators"])
    assert accuracy == [0.0, 0.5, 1.0, 1.0]
    # Two always-right annotators agree perfectly on kinds, but both used one label only.
    perfect = [p for p in stats["pairs"] if p["percent_agreement"]["value"] == 1.0]
    assert perfect and perfect[0]["kappa_kind"]["value"] is None
    assert perfect[0]["kappa_kind"]["reason"]
    assert stats["overall"]["fleiss_kappa"] is not None  # every fable has 4 answers
    assert stats["overall"]["alpha_kind"]["n"] == 6
    assert set(stats["wrong_choice_kinds"]) <= {
        "similar_characters",
        "injected_adjectives",
        "based_on_adjectives",
        "partial_story",
    }
    assert abs(sum(stats["position_share"].values()) - 1) < 0.01
    assert gc.isenabled()  # paused only while computing


def test_dashboard_shows_heatmap_charts_and_screening(client, screening, admin_user):
    client.force_login(admin_user)
    html = client.get(reverse("batch_dashboard", args=[screening.id])).content.decode()
    assert 'aria-label="pairwise kappa heatmap"' in html and "Krippendorff" in html
    assert "Accept" in html and "When wrong, the kind chosen" in html
    assert "undefined" in html  # a pair with a single shared label


def test_dashboard_query_count_is_constant(client, admin_user, annotators):
    client.force_login(admin_user)
    counts = []
    for n in (2, 8):
        make_fables(n, prefix=f"d{n}")
        batch = batch_create(
            name=f"d{n}",
            fables=fables_choose(prefix=f"d{n}_"),
            annotators=annotators[:2],
            overlap=2,
        )
        for _ in range(n):
            answer_as(annotators[0], batch, correct=True)
            answer_as(annotators[1], batch, correct=False)
        with CaptureQueriesContext(connection) as q:
            assert client.get(reverse("batch_dashboard", args=[batch.id])).status_code == 200
        counts.append(len(q))
    assert counts[0] == counts[1], counts


def test_screening_accept_reject(client, screening, admin_user, annotators):
    client.force_login(admin_user)
    member = BatchMember.objects.get(batch=screening, user=annotators[3])
    client.post(
        reverse("screening_decide", args=[screening.id, member.id]), {"decision": "rejected"}
    )
    member.refresh_from_db()
    assert member.screening == "rejected"


def test_agreement_api(client, screening, reviewer):
    client.force_login(reviewer)
    body = client.get(f"/api/batches/{screening.id}/agreement/").json()
    assert len(body["pairs"]) == 6 and "overall" in body
