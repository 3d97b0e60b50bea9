"""Agreement of a batch: selectors build label arrays from stored answers; the maths is in
annotate.agreement. A fixed number of queries, whatever the batch's size."""

from collections import Counter
from itertools import combinations

import numpy as np
from django.db.models import TextField
from django.db.models.functions import Cast

from annotate import agreement
from annotate.models import Answer, Assignment, Batch, BatchMember, Option
from annotate.selectors import annotator_code, fetch_tuples, gc_paused, json_texts

BOOTSTRAP_N = 1000


def _stat(stat) -> dict:
    return {
        "value": None if stat.value is None else round(stat.value, 4),
        "n": stat.n,
        "reason": stat.reason,
    }


def batch_agreement(*, batch_id: int, bootstrap_n: int = BOOTSTRAP_N) -> dict:
    """Pairwise, overall and per-annotator agreement on the counted answers of a batch."""
    with gc_paused():
        return _batch_agreement(batch_id=batch_id, bootstrap_n=bootstrap_n)


def _batch_agreement(*, batch_id: int, bootstrap_n: int) -> dict:
    from django.contrib.auth import get_user_model

    # The two JSON lists come as text, decoded all at once (see json_texts).
    fetched = fetch_tuples(
        Answer.objects.filter(batch_id=batch_id, slot__isnull=False)
        .annotate(selected_text=Cast("selected", TextField()))
        .annotate(order_text=Cast("assignment__order", TextField()))
        .values_list("slot__item_id", "annotator_id", "selected_text", "order_text")
    )
    n_rows = len(fetched)
    item_ids = np.fromiter((r[0] for r in fetched), dtype=np.int64, count=n_rows)
    user_ids = np.fromiter((r[1] for r in fetched), dtype=np.int64, count=n_rows)
    selections = json_texts(r[2] for r in fetched)
    orders = json_texts(r[3] for r in fetched)
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

    # The answers become integer arrays (coders, fables, kinds) in a few vectorised
    # passes; the per-pair and overall statistics then work on NumPy arrays (coders ×
    # fables), not on nested dicts. Only the kinds' names and the chosen sets stay Python.
    first_ids = np.fromiter((sel[0] for sel in selections), dtype=np.int64, count=n_rows)
    multi = np.fromiter((len(sel) > 1 for sel in selections), dtype=bool, count=n_rows)
    kind_names = sorted(set(kinds.values()))
    option_ids = np.array(sorted(kinds), dtype=np.int64)
    kind_code = {name: code for code, name in enumerate(kind_names)}
    option_kind = np.array([kind_code[kinds[o]] for o in option_ids.tolist()] or [0])
    first_kind = option_kind[np.searchsorted(option_ids, first_ids)] if n_rows else first_ids
    # Labels are the kinds chosen first at least once, sorted by name (the output does not
    # depend on the order of the rows).
    used_kinds, primary = np.unique(first_kind, return_inverse=True)
    labels = [kind_names[k] for k in used_kinds.tolist()]
    primary = primary.reshape(-1)
    users, coder_of_row = np.unique(user_ids, return_inverse=True)
    item_keys, item = np.unique(item_ids, return_inverse=True)
    item = item.reshape(-1)
    names = [codes.get(u) or f"user-{u}" for u in users.tolist()]
    by_code = sorted(range(len(users)), key=names.__getitem__)
    coder_names = [names[c] for c in by_code]
    recoder = np.zeros(len(users) or 1, dtype=int)
    recoder[by_code] = np.arange(len(by_code))
    coder = recoder[coder_of_row.reshape(-1)] if n_rows else np.zeros(0, dtype=int)
    # Where the first choice was on this annotator's screen (A = 0).
    row_position = np.array(
        [order.index(sel[0]) for order, sel in zip(orders, selections, strict=True)], dtype=int
    )
    del orders
    # Alpha over sets needs each fable's chosen sets (a one-kind set is shared, not rebuilt).
    one_kind = {name: frozenset([name]) for name in kind_names}
    chosen = [
        one_kind[kinds[sel[0]]] if len(sel) == 1 else frozenset(map(kinds.get, sel))
        for sel in selections
    ]
    del selections
    by_item = np.argsort(item, kind="stable")
    starts = np.flatnonzero(np.diff(item[by_item])) + 1
    sets_by_item = (
        [[chosen[i] for i in rows_of_item] for rows_of_item in np.split(by_item, starts)]
        if n_rows
        else []
    )
    n_coders, n_items, n_labels = len(coder_names), len(item_keys), len(labels)
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
    alpha_grid = np.where(answered, grid, np.nan) if n_rows else np.zeros((0, 0))
    total = n_rows
    wrong = primary[~correct]
    wrong_counts = np.bincount(wrong, minlength=n_labels)
    total_wrong = int(wrong_counts.sum())
    positions = np.bincount(row_position) if n_rows else np.zeros(0)
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
