"""Agreement of a batch: selectors build label arrays from stored answers; the maths is in
annotate.agreement. A fixed number of queries, whatever the batch's size."""

from collections import Counter
from itertools import combinations

import numpy as np
from django.db.models import TextField
from django.db.models.functions import Cast

from annotate import agreement
from annotate.models import Answer, Assignment, Batch, BatchMember, Option
from annotate.selectors import annotator_code, fetch_tuples, json_texts

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

    # The two JSON lists come as text, decoded all at once (see json_texts).
    fetched = fetch_tuples(
        Answer.objects.filter(batch_id=batch_id, slot__isnull=False)
        .annotate(selected_text=Cast("selected", TextField()))
        .annotate(order_text=Cast("assignment__order", TextField()))
        .values_list("slot__item_id", "annotator_id", "selected_text", "order_text")
    )
    rows = list(
        zip(
            (r[0] for r in fetched),
            (r[1] for r in fetched),
            json_texts(r[2] for r in fetched),
            json_texts(r[3] for r in fetched),
            strict=True,
        )
    )
    del fetched
    kinds = dict(
        fetch_tuples(
            Option.objects.filter(
                revision_id__in=Answer.objects.filter(batch_id=batch_id).values("revision_id")
            )
            .order_by()
            .values_list("id", "kind")
        )
    )
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

    # One pass over the answers turns them into integer codes; the per-pair and overall
    # statistics then work on NumPy arrays (coders × fables), not on nested dicts.
    label_ids: dict[str, int] = {}
    coder_of: dict[int, int] = {}
    item_of: dict[int, int] = {}
    row_coder, row_item, row_primary, row_position, row_multi = [], [], [], [], []
    sets_by_item: list[list[frozenset]] = []
    for item, user, selected, order in rows:
        first = kinds[selected[0]]
        chosen = frozenset([first]) if len(selected) == 1 else frozenset(map(kinds.get, selected))
        row_coder.append(coder_of.setdefault(user, len(coder_of)))
        column = item_of.setdefault(item, len(item_of))
        if column == len(sets_by_item):
            sets_by_item.append([])
        sets_by_item[column].append(chosen)
        row_item.append(column)
        row_primary.append(label_ids.setdefault(first, len(label_ids)))
        row_position.append(order.index(selected[0]))
        row_multi.append(len(selected) > 1)

    # Codes sorted by name so that the output does not depend on the order of the rows.
    labels = sorted(label_ids)
    relabel = np.array([labels.index(k) for k in label_ids] or [0])
    users_in_order = sorted(coder_of, key=lambda u: codes.get(u) or f"user-{u}")
    coder_names = [codes.get(u) or f"user-{u}" for u in users_in_order]
    recoder = np.zeros(len(coder_of) or 1, dtype=int)
    for new_index, user in enumerate(users_in_order):
        recoder[coder_of[user]] = new_index
    coder = recoder[np.array(row_coder, dtype=int)] if rows else np.zeros(0, dtype=int)
    item = np.array(row_item, dtype=int)
    primary = relabel[np.array(row_primary, dtype=int)] if rows else np.zeros(0, dtype=int)
    multi = np.array(row_multi, dtype=bool)
    n_coders, n_items, n_labels = len(coder_names), len(item_of), len(labels)
    truth = labels.index("ground_truth") if "ground_truth" in labels else -1
    correct = primary == truth

    grid = np.full((n_coders, n_items), -1)  # primary label code, −1 = not answered
    grid[coder, item] = primary
    answered = grid >= 0
    pairs = []
    for a, b in combinations(range(n_coders), 2):
        shared = answered[a] & answered[b]
        if not shared.any():
            continue
        ka, kb = grid[a][shared].tolist(), grid[b][shared].tolist()
        codes_ab = list(range(n_labels))
        kind_kappa = agreement.cohen_kappa(ka, kb, labels=codes_ab)
        ci = agreement.cohen_kappa_bootstrap(ka, kb, labels=codes_ab, n=bootstrap_n, seed=0)
        pairs.append(
            {
                "a": coder_names[a],
                "b": coder_names[b],
                "shared": int(shared.sum()),
                "kappa_kind": _stat(kind_kappa),
                "kappa_kind_ci": [None if v is None else round(v, 4) for v in ci],
                "kappa_correct": _stat(
                    agreement.cohen_kappa(
                        [x == truth for x in ka], [y == truth for y in kb], labels=[False, True]
                    )
                ),
                "percent_agreement": _stat(agreement.percent_agreement(ka, kb)),
            }
        )

    counts = np.zeros((n_items, n_labels), dtype=int)
    np.add.at(counts, (item, primary), 1)
    sizes = set(counts.sum(axis=1).tolist())
    fleiss = None
    if len(sizes) == 1 and sizes.pop() >= 2 and labels:
        fleiss = _stat(agreement.fleiss_kappa(counts))
    # Krippendorff's alpha on the label codes (nominal: the codes' values do not matter).
    alpha_grid = np.where(answered, grid, np.nan) if rows else np.zeros((0, 0))
    total = len(rows)
    wrong = primary[~correct]
    wrong_counts = np.bincount(wrong, minlength=n_labels)
    total_wrong = int(wrong_counts.sum())
    positions = np.bincount(np.array(row_position, dtype=int)) if rows else np.zeros(0)
    per_coder = np.bincount(coder, minlength=n_coders)
    per_coder_correct = np.bincount(coder, weights=correct, minlength=n_coders)
    per_coder_multi = np.bincount(coder, weights=multi, minlength=n_coders)
    skips_by_code = {codes.get(u) or f"user-{u}": n for u, n in skips.items()}
    return {
        "answers": total,
        "labels": labels,
        "pairs": pairs,
        "overall": {
            "alpha_kind": _stat(agreement.krippendorff_alpha(alpha_grid, level="nominal")),
            "alpha_masi": _stat(agreement.krippendorff_alpha_sets_by_unit(sets_by_item)),
            "fleiss_kappa": fleiss,
        },
        "annotators": [
            {
                "code": name,
                "answers": int(per_coder[c]),
                "accuracy": round(float(per_coder_correct[c] / per_coder[c]), 4),
                "multi_share": round(float(per_coder_multi[c] / per_coder[c]), 4),
                "skips": skips_by_code.get(name, 0),
            }
            for c, name in enumerate(coder_names)
        ],
        "wrong_choice_kinds": {
            labels[k]: round(int(v) / total_wrong, 4)
            for k, v in sorted(enumerate(wrong_counts), key=lambda kv: -kv[1])
            if v
        }
        if total_wrong
        else {},
        "position_share": {
            chr(ord("A") + p): round(int(v) / total, 4) for p, v in enumerate(positions) if v
        }
        if total
        else {},
    }


def batch_kind(batch_id: int) -> str | None:
    return Batch.objects.filter(id=batch_id).values_list("kind", flat=True).first()
