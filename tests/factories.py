"""Test data built through the same services the app uses."""

import json

from annotate.services.importing import fables_import

KINDS = [
    "ground_truth",
    "similar_characters",
    "injected_adjectives",
    "based_on_adjectives",
    "partial_story",
]


def benchmark_record(alias: str, *, truth_at: int = 0) -> dict:
    choices = [f"{alias}: distractor {i}" for i in range(5)]
    classes = [k for k in KINDS if k != "ground_truth"]
    choices[truth_at] = f"{alias}: the true moral"
    classes.insert(truth_at, "ground_truth")
    return {
        "alias": alias,
        "story_title": f"Fable {alias}",
        "story": f"Once upon a time, in fable {alias}, something instructive happened.",
        "moral": choices[truth_at],
        "is_altered": False,
        "correct_moral_label": truth_at,
        "classes": classes,
        "choices": choices,
    }


def make_fables(count: int, prefix: str = "test") -> None:
    records = [benchmark_record(f"{prefix}_{i}") for i in range(1, count + 1)]
    fables_import(sources=[("factory.json", json.dumps(records))])


def answer_as(user, batch, *, correct: bool | None = None, labels=None, comment=""):
    """Claim the next fable and answer it: right, wrong, or with given labels."""
    from annotate.models import Option
    from annotate.services.routing import answer_submit, assignment_claim

    assignment = assignment_claim(batch=batch, annotator=user)
    if assignment is None:
        return None
    if labels is None:
        truth = Option.objects.get(revision_id=assignment.revision_id, kind="ground_truth").id
        index = assignment.order.index(truth)
        if not correct:
            index = (index + 1) % len(assignment.order)
        labels = [chr(ord("A") + index)]
    return answer_submit(
        assignment_id=assignment.id,
        annotator=user,
        payload={"selected": labels, "comment": comment},
    ).answer
