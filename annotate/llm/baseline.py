"""The offline baseline: the moral of the most similar *other* fable (TF-IDF cosine)."""

import time

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from annotate.llm.base import Completion, PermanentError


class BaselineProvider:
    def __init__(self, fables: list[tuple[str, str, str]]):
        """fables: (alias, story, moral) of every fable that can lend its moral."""
        if len(fables) < 2:
            raise PermanentError("the baseline needs at least two fables to compare")
        self.aliases = [alias for alias, _, _ in fables]
        self.morals = [moral for _, _, moral in fables]
        self.vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True)
        self.matrix = self.vectorizer.fit_transform([story for _, story, _ in fables])

    def moral_for(self, alias: str, story: str) -> Completion:
        started = time.perf_counter()
        query = self.vectorizer.transform([story])
        scores = (self.matrix @ query.T).toarray().ravel()  # rows are L2-normalised
        for i, other in enumerate(self.aliases):
            if other == alias:
                scores[i] = -1.0
        best = int(np.argmax(scores))
        return Completion(
            text=self.morals[best],
            prompt_tokens=None,
            completion_tokens=None,
            latency_ms=round((time.perf_counter() - started) * 1000),
            raw={
                "baseline": "tfidf",
                "neighbour": self.aliases[best],
                "similarity": round(float(scores[best]), 4),
            },
        )
