"""Agreement of a batch: selectors build label arrays from stored answers; the maths is in
annotate.agreement. A fixed number of queries, whatever the batch's size."""

from collections import Counter, defaultdict
from itertools import combinations

from annotate import agreement
from annotate.models import Answer, Assignment, Batch, BatchMember, Option
from annotate.selectors import annotator_code

BOOTSTRAP_N = 1000


def _stat(stat) -> dict:
    return {
        "value": None if stat.value is None else round(stat.value, 4),
        "n": stat.n,
        "reason": stat.reason,
    }


def batch_agreement(*, batch_id: int, bootstrap_n: int = BOOTSTRAP_N) -> dict:
    """Pairwise, overall and per-annotator agreement on the counted answers of a batch."""
    from django.contrib.auth import get_user_model

    rows = list(
        Answer.objects.filter(batch_id=batch_id, slot__isnull=False)
        .values_list(
            "slot__item_id", "annotator_id", "selected", "assignment__order", "revision_id"
        )
        .iterator(chunk_size=10000)
    )
    revisions = {r[4] for r in rows}
    kinds = dict(Option.objects.filter(revision_id__in=revisions).values_list("id", "kind"))
    users = dict(
        get_user_model()
        .objects.filter(id__in=BatchMember.objects.filter(batch_id=batch_id).values("user_id"))
        .values_list("id", "date_joined")
    )
    codes = {uid: annotator_code(uid, joined) for uid, joined in users.items()}
    skips = Counter(
        Assignment.objects.filter(batch_id=batch_id, status=Assignment.SKIPPED).values_list(
            "annotator_id", flat=True
        )
    )

    primary: dict[str, dict[int, str]] = defaultdict(dict)
    chosen_sets: dict[str, dict[int, frozenset]] = defaultdict(dict)
    correct: dict[str, dict[int, bool]] = defaultdict(dict)
    per_item: dict[int, list[str]] = defaultdict(list)
    wrong_kinds: Counter = Counter()
    positions: Counter = Counter()
    multi: Counter = Counter()
    for item, user, selected, order, _ in rows:
        code = codes.get(user) or f"user-{user}"
        picked = [kinds[o] for o in selected]
        primary[code][item] = picked[0]
        chosen_sets[code][item] = frozenset(picked)
        correct[code][item] = picked[0] == "ground_truth"
        per_item[item].append(picked[0])
        if picked[0] != "ground_truth":
            wrong_kinds[picked[0]] += 1
        positions[order.index(selected[0])] += 1
        multi[code] += len(selected) > 1

    labels = sorted({k for by_item in primary.values() for k in by_item.values()})
    coders = sorted(primary)
    pairs = []
    for a, b in combinations(coders, 2):
        shared = sorted(set(primary[a]) & set(primary[b]))
        if not shared:
            continue
        ka = [primary[a][i] for i in shared]
        kb = [primary[b][i] for i in shared]
        kind_kappa = agreement.cohen_kappa(ka, kb, labels=labels)
        ci = agreement.cohen_kappa_bootstrap(ka, kb, labels=labels, n=bootstrap_n, seed=0)
        pairs.append(
            {
                "a": a,
                "b": b,
                "shared": len(shared),
                "kappa_kind": _stat(kind_kappa),
                "kappa_kind_ci": [None if v is None else round(v, 4) for v in ci],
                "kappa_correct": _stat(
                    agreement.cohen_kappa(
                        [correct[a][i] for i in shared],
                        [correct[b][i] for i in shared],
                        labels=[False, True],
                    )
                ),
                "percent_agreement": _stat(agreement.percent_agreement(ka, kb)),
            }
        )

    items = sorted(per_item)
    alpha_data = [[primary[c].get(i) for i in items] for c in coders]
    sets_data = [[chosen_sets[c].get(i) for i in items] for c in coders]
    sizes = {len(v) for v in per_item.values()}
    fleiss = None
    if len(sizes) == 1 and sizes.pop() >= 2 and labels:
        counts = [[Counter(per_item[i])[k] for k in labels] for i in items]
        fleiss = _stat(agreement.fleiss_kappa(counts))
    total_wrong = sum(wrong_kinds.values())
    total = len(rows)
    return {
        "answers": total,
        "labels": labels,
        "pairs": pairs,
        "overall": {
            "alpha_kind": _stat(agreement.krippendorff_alpha(alpha_data, level="nominal")),
            "alpha_masi": _stat(agreement.krippendorff_alpha_sets(sets_data)),
            "fleiss_kappa": fleiss,
        },
        "annotators": [
            {
                "code": c,
                "answers": len(primary[c]),
                "accuracy": round(sum(correct[c].values()) / len(correct[c]), 4),
                "multi_share": round(multi[c] / len(primary[c]), 4),
                "skips": skips.get(next((u for u, cc in codes.items() if cc == c), None), 0),
            }
            for c in coders
        ],
        "wrong_choice_kinds": {k: round(v / total_wrong, 4) for k, v in wrong_kinds.most_common()}
        if total_wrong
        else {},
        "position_share": {
            chr(ord("A") + p): round(v / total, 4) for p, v in sorted(positions.items())
        }
        if total
        else {},
    }


def batch_kind(batch_id: int) -> str | None:
    return Batch.objects.filter(id=batch_id).values_list("kind", flat=True).first()
