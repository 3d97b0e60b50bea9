"""Rating batches: morals of models (and optionally the true moral) rated 1–5."""

from collections.abc import Sequence

from annotate.models import (
    GROUND_TRUTH,
    Batch,
    Fable,
    ModelConfig,
    ModelMoral,
    Option,
    Rating,
    RatingTarget,
)
from annotate.services.errors import Invalid

SCORES = range(1, 6)


def targets_create(
    *, batch: Batch, fables: Sequence[Fable], models: Sequence[ModelConfig]
) -> list[Fable]:
    """The morals each fable's raters will see; returns the fables that have any."""
    morals = list(
        ModelMoral.objects.filter(
            fable__in=fables, model__in=models, status=ModelMoral.DONE
        ).values_list("id", "fable_id", "text")
    )
    targets = [
        RatingTarget(batch=batch, fable_id=f, model_moral_id=m, text=t) for m, f, t in morals
    ]
    rated = {f for _, f, _ in morals}
    if batch.include_control:
        controls = Option.objects.filter(
            revision_id__in=[f.current_revision_id for f in fables if f.id in rated],
            kind=GROUND_TRUTH,
        ).values_list("id", "revision__fable_id", "text")
        targets += [
            RatingTarget(batch=batch, fable_id=f, control_option_id=o, text=t)
            for o, f, t in controls
        ]
    RatingTarget.objects.bulk_create(targets)
    return [f for f in fables if f.id in rated]


def rating_targets(*, batch: Batch, fable_id: int) -> dict[int, str]:
    return dict(
        RatingTarget.objects.filter(batch=batch, fable_id=fable_id).values_list("id", "text")
    )


def parse_ratings(ratings, count: int) -> dict[str, int]:
    if not isinstance(ratings, dict) or not ratings:
        raise Invalid('ratings: give a score 1–5 for every moral, e.g. {"1": 4, "2": 5}')
    labels = [str(i + 1) for i in range(count)]
    clean = {}
    for label, score in ratings.items():
        if str(label) not in labels:
            raise Invalid(f"ratings: {label!r} is not one of the morals {', '.join(labels)}")
        try:
            value = int(score)
        except (TypeError, ValueError):
            raise Invalid(
                f"ratings: the score of moral {label} must be 1–5, got {score!r}"
            ) from None
        if value not in SCORES or str(value) != str(score).strip():
            raise Invalid(f"ratings: the score of moral {label} must be 1–5, got {score!r}")
        clean[str(label)] = value
    missing = [label for label in labels if label not in clean]
    if missing:
        raise Invalid(f"ratings: moral {', '.join(missing)} has no score yet")
    return {label: clean[label] for label in labels}


def ratings_record(*, answer, assignment, ratings: dict[str, int]) -> list[Rating]:
    return Rating.objects.bulk_create(
        Rating(answer=answer, target_id=assignment.order[int(label) - 1], score=score)
        for label, score in ratings.items()
    )
