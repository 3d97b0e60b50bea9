"""Agreement statistics: pure functions on plain Python / NumPy data (no ORM).

Built on statsmodels (Cohen's kappa from a contingency table, Fleiss' kappa), the `krippendorff`
package (alpha at every level of measurement) and NLTK (MASI distance, alpha with a custom
distance). Every coefficient comes back as a `Stat`: an undefined value is `None` with the
reason, never a crash, a NaN or a silent 0 or 1.
"""

import math
import warnings
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

LEVELS = ("nominal", "ordinal", "interval", "ratio")


@dataclass(frozen=True)
class Stat:
    value: float | None
    n: int
    reason: str | None = None


def _undefined(n: int, reason: str) -> Stat:
    return Stat(None, n, reason)


def _finite(value: float, n: int, reason: str) -> Stat:
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        return _undefined(n, reason)
    return Stat(value, n)


def _pairs(a: Sequence, b: Sequence) -> list[tuple]:
    if len(a) != len(b):
        raise ValueError(f"the two raters have {len(a)} and {len(b)} labels")
    return [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]


def _contingency(xs: Sequence[int], ys: Sequence[int], k: int) -> np.ndarray:
    """k × k table of label-index pairs (rows: first rater)."""
    return np.bincount(np.asarray(xs) * k + np.asarray(ys), minlength=k * k).reshape(k, k)


def cohen_kappa(
    a: Sequence[Hashable], b: Sequence[Hashable], *, labels=None, weights: str | None = None
) -> Stat:
    """Cohen's kappa of two raters; `labels` fixes the category set (and its order).

    Computed by statsmodels from the contingency table over the whole label set, so a level
    nobody used still counts in the weights (the result equals scikit-learn's
    `cohen_kappa_score(…, labels=…)`, which is twenty times slower per call and is checked
    against in the tests).
    """
    from statsmodels.stats.inter_rater import cohens_kappa

    if weights not in (None, "linear", "quadratic"):
        raise ValueError("weights must be None, 'linear' or 'quadratic'")
    pairs = _pairs(a, b)
    n = len(pairs)
    if n == 0:
        return _undefined(0, "no units rated by both")
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    if labels is None:
        labels = sorted(set(xs) | set(ys), key=repr)
    labels = list(labels)
    unknown = (set(xs) | set(ys)) - set(labels)
    if unknown:
        raise ValueError(f"labels not in the label set: {sorted(map(repr, unknown))}")
    if len(set(xs)) == 1 and set(xs) == set(ys):
        return _undefined(n, "both raters used a single, identical label: chance agreement is 1")
    # Labels become positions in `labels`: weighted kappa measures distance in that order.
    index = {label: i for i, label in enumerate(labels)}
    table = _contingency([index[x] for x in xs], [index[y] for y in ys], len(labels))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        value = cohens_kappa(table, wt=weights, return_results=False)
    return _finite(value, n, "expected agreement is 1")


def fleiss_kappa(counts) -> Stat:
    """Fleiss' kappa from a units × categories matrix of rater counts."""
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    table = np.asarray(counts, dtype=float)
    if table.ndim != 2 or table.shape[0] == 0:
        return _undefined(0, "no units")
    totals = table.sum(axis=1)
    if not np.all(totals == totals[0]):
        return _undefined(len(table), "rows have different numbers of ratings")
    if totals[0] < 2:
        return _undefined(len(table), "each unit needs at least two ratings")
    used = table.sum(axis=0) > 0
    if used.sum() < 2:
        return _undefined(len(table), "every rating is in a single category")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = sm_fleiss(table[:, used], method="fleiss")
    return _finite(value, len(table), "expected agreement is 1")


def _pairable_units(data: list[list]) -> int:
    return sum(1 for unit in zip(*data, strict=True) if sum(v is not None for v in unit) >= 2)


def krippendorff_alpha(data, *, level: str = "nominal") -> Stat:
    """Krippendorff's alpha; rows = coders, columns = units, None = missing."""
    import krippendorff

    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}")
    if isinstance(data, np.ndarray):
        # Fast path: a coders × units float array with NaN for missing values.
        matrix = np.asarray(data, dtype=float)
        if matrix.ndim != 2 or matrix.size == 0:
            return _undefined(0, "no data")
        present = ~np.isnan(matrix)
        n = int((present.sum(axis=0) >= 2).sum())
        values = set(np.unique(matrix[present]).tolist())
    else:
        rows = [list(row) for row in data]
        if not rows or not rows[0]:
            return _undefined(0, "no data")
        n = _pairable_units(rows)
        values = {v for row in rows for v in row if v is not None}
        if level == "nominal" and not all(isinstance(v, int | float) for v in values):
            codes = {v: i for i, v in enumerate(sorted(values, key=repr))}
            matrix = np.array([[np.nan if v is None else codes[v] for v in row] for row in rows])
        else:
            matrix = np.array([[np.nan if v is None else float(v) for v in row] for row in rows])
    if n == 0:
        return _undefined(0, "no unit has two or more values")
    if len(values) < 2:
        return _undefined(n, "a single value is used throughout: expected disagreement is 0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = krippendorff.alpha(
            reliability_data=np.asarray(matrix, dtype=float), level_of_measurement=level
        )
    return _finite(value, n, "expected disagreement is 0")


def masi_distance(a, b) -> float:
    """MASI distance (Passonneau 2006) between two sets of labels; 0 for two empty sets."""
    from nltk.metrics.distance import masi_distance as nltk_masi

    a, b = set(a), set(b)
    if not a and not b:
        return 0.0
    if not a or not b:
        return 1.0
    return float(nltk_masi(a, b))


def krippendorff_alpha_sets(data) -> Stat:
    """Krippendorff's alpha with MASI distance, for multi-select answers (sets of labels).

    Rows = coders, columns = units, None = missing."""
    rows = [[None if v is None else frozenset(v) for v in row] for row in data]
    if not rows or not rows[0]:
        return _undefined(0, "no data")
    return krippendorff_alpha_sets_by_unit(
        [[v for v in unit if v is not None] for unit in zip(*rows, strict=True)]
    )


def krippendorff_alpha_sets_by_unit(units) -> Stat:
    """krippendorff_alpha_sets with the data given per unit: the frozensets it received."""
    # Distances between distinct sets are few: cache them.
    cache: dict[tuple[frozenset, frozenset], float] = {}

    def distance(x, y):
        key = (x, y) if hash(x) <= hash(y) else (y, x)
        if key not in cache:
            cache[key] = masi_distance(x, y)
        return cache[key]

    return alpha_by_unit(units, distance)


def alpha_with_distance(rows, distance: Callable[[object, object], float]) -> Stat:
    """Krippendorff's alpha for any distance function: 1 − D_o / D_e.

    Rows = coders, columns = units, None = missing."""
    return alpha_by_unit(
        [[v for v in unit if v is not None] for unit in zip(*rows, strict=True)], distance
    )


def alpha_by_unit(units, distance: Callable[[object, object], float]) -> Stat:
    """alpha_with_distance with the values given per unit (missing values left out).

    Computed through the coincidence matrix of the distinct values (Krippendorff 2011), so
    the cost grows with the number of distinct values squared, not with the number of
    answers squared.
    """
    units = [u for u in units if len(u) >= 2]
    n = len(units)
    if n == 0:
        return _undefined(0, "no unit has two or more values")
    values = sorted({v for u in units for v in u}, key=lambda s: sorted(map(repr, s)))
    index = {v: i for i, v in enumerate(values)}
    k = len(values)
    # Units with the same multiset of values add the same block: count them once each.
    patterns = Counter(tuple(sorted(index[v] for v in unit)) for unit in units)
    coincidence = np.zeros((k, k))
    for pattern, times in patterns.items():
        counts = np.bincount(pattern, minlength=k).astype(float)
        coincidence += times * (np.outer(counts, counts) - np.diag(counts)) / (len(pattern) - 1)
    delta = np.array([[distance(x, y) for y in values] for x in values])
    marginals = coincidence.sum(axis=1)
    total = marginals.sum()
    observed = (coincidence * delta).sum() / total
    expected = (np.outer(marginals, marginals) * delta).sum() / (total * (total - 1))
    if expected == 0:
        return _undefined(n, "a single value is used throughout: expected disagreement is 0")
    return _finite(1 - observed / expected, n, "expected disagreement is 0")


def percent_agreement(a: Sequence, b: Sequence) -> Stat:
    pairs = _pairs(a, b)
    if not pairs:
        return _undefined(0, "no units rated by both")
    return Stat(sum(x == y for x, y in pairs) / len(pairs), len(pairs))


def bootstrap_ci(
    fn: Callable[[list], object],
    data: Sequence,
    *,
    n: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float | None, float | None]:
    """Percentile interval of fn over units resampled with replacement (seeded)."""
    units = list(data)
    if not units:
        return (None, None)
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(n):
        sample = [units[i] for i in rng.integers(0, len(units), len(units))]
        result = fn(sample)
        value = result.value if isinstance(result, Stat) else result
        if value is not None and not math.isnan(value):
            values.append(float(value))
    if len(values) < n / 2:
        return (None, None)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return (float(low), float(high))


def cohen_kappa_bootstrap(
    a: Sequence, b: Sequence, *, labels=None, n: int = 1000, seed: int = 0, confidence: float = 0.95
) -> tuple[float | None, float | None]:
    """bootstrap_ci(cohen_kappa, …) for unweighted kappa, vectorised with NumPy.

    Kappa depends on a resample only through its contingency table, and resampling m units
    with replacement draws that table from a multinomial(m, observed cell shares): drawn
    directly (seeded), the cost does not grow with the number of units. Same distribution
    and percentile interval as `bootstrap_ci` over units.
    """
    pairs = _pairs(a, b)
    if not pairs:
        return (None, None)
    if labels is None:
        labels = sorted({x for p in pairs for x in p}, key=repr)
    index = {label: i for i, label in enumerate(labels)}
    k, m = len(labels), len(pairs)
    table = _contingency([index[x] for x, _ in pairs], [index[y] for _, y in pairs], k)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(m, table.ravel() / m, size=n).reshape(n, k, k) / m
    observed = np.trace(draws, axis1=1, axis2=2)
    expected = (draws.sum(axis=2) * draws.sum(axis=1)).sum(axis=1)
    ok = expected < 1 - 1e-12
    values = (observed[ok] - expected[ok]) / (1 - expected[ok])
    if len(values) < n / 2:
        return (None, None)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return (float(low), float(high))


def pairwise_cohen(
    labels_by_coder: dict[str, dict], *, labels=None, weights=None
) -> dict[tuple[str, str], Stat]:
    """Cohen's kappa for each sorted pair of coders, on the units both labelled."""
    result = {}
    for a, b in combinations(sorted(labels_by_coder), 2):
        shared = sorted(set(labels_by_coder[a]) & set(labels_by_coder[b]), key=repr)
        result[(a, b)] = cohen_kappa(
            [labels_by_coder[a][u] for u in shared],
            [labels_by_coder[b][u] for u in shared],
            labels=labels,
            weights=weights,
        )
    return result
