import pytest

from annotate.llm.base import PermanentError
from annotate.llm.baseline import BaselineProvider

CORPUS = [
    ("a_1", "The fox tried to reach the grapes hanging high on the vine.", "Sour grapes."),
    (
        "a_2",
        "A tortoise raced a hare; the hare slept and the tortoise won the race.",
        "Slow and steady wins.",
    ),
    (
        "a_3",
        "A hungry fox could not reach grapes on a vine and called them sour.",
        "People despise what they cannot have.",
    ),
]


def test_picks_the_most_similar_other_fable():
    done = BaselineProvider(CORPUS).moral_for("a_1", CORPUS[0][1])
    assert done.text == "People despise what they cannot have."
    assert done.raw["neighbour"] == "a_3" and done.raw["baseline"] == "tfidf"
    assert done.prompt_tokens is None


def test_never_its_own_moral():
    provider = BaselineProvider(CORPUS)
    for alias, story, moral in CORPUS:
        assert provider.moral_for(alias, story).text != moral


def test_needs_two_fables():
    with pytest.raises(PermanentError, match="at least two"):
        BaselineProvider(CORPUS[:1])
