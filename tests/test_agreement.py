"""annotate.agreement against published worked examples (tolerance 0.001)."""

import math
from collections import Counter

import pytest

from annotate import agreement
from annotate.agreement import Stat

# Wikipedia, "Cohen's kappa", worked example: 50 grant proposals read by A and B.
# Both yes 20, both no 15, A yes / B no 5, A no / B yes 10 → κ = 0.40.
WIKI_A = ["yes"] * 20 + ["no"] * 15 + ["yes"] * 5 + ["no"] * 10
WIKI_B = ["yes"] * 20 + ["no"] * 15 + ["no"] * 5 + ["yes"] * 10

# Fleiss (1971), "Measuring nominal scale agreement among many raters", Table 1: 30 patients,
# 6 psychiatrists, categories 1 depression, 2 personality disorder, 3 schizophrenia,
# 4 neurosis, 5 other (as in R's irr::diagnoses). κ = 0.430.
DIAGNOSES = [
    [4, 4, 4, 4, 4, 4],
    [2, 2, 2, 5, 5, 5],
    [2, 3, 3, 3, 3, 5],
    [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4],
    [1, 1, 3, 3, 3, 3],
    [3, 3, 3, 3, 5, 5],
    [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4],
    [5, 5, 5, 5, 5, 5],
    [1, 4, 4, 4, 4, 4],
    [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3],
    [1, 4, 4, 4, 4, 4],
    [2, 2, 4, 4, 4, 5],
    [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5],
    [1, 1, 1, 1, 1, 2],
    [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5],
    [2, 4, 4, 4, 4, 4],
    [2, 2, 4, 5, 5, 5],
    [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5],
    [2, 2, 2, 2, 2, 4],
    [1, 1, 1, 1, 5, 5],
    [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3],
    [5, 5, 5, 5, 5, 5],
]

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C:
# 4 observers × 12 units, values 1–5, None = missing. Nominal α = 0.743, interval 0.849.
_ = None
KRIPP = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
    [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
]


def counts_of(rows, categories=range(1, 6)):
    return [[Counter(row)[c] for c in categories] for row in rows]


def test_cohen_wikipedia_example():
    stat = agreement.cohen_kappa(WIKI_A, WIKI_B)
    assert stat.value == pytest.approx(0.400, abs=0.001) and stat.n == 50


def test_fleiss_1971_diagnoses():
    stat = agreement.fleiss_kappa(counts_of(DIAGNOSES))
    assert stat.value == pytest.approx(0.430, abs=0.001) and stat.n == 30


def test_krippendorff_2011_nominal_and_interval():
    nominal = agreement.krippendorff_alpha(KRIPP, level="nominal")
    assert nominal.value == pytest.approx(0.743, abs=0.001)
    assert nominal.n == 11  # unit 12 has a single value: not pairable
    interval = agreement.krippendorff_alpha(KRIPP, level="interval")
    assert interval.value == pytest.approx(0.849, abs=0.001)


def test_krippendorff_nominal_accepts_string_labels():
    names = {1: "a", 2: "b", 3: "c", 4: "d", 5: "e"}
    as_text = [[None if v is None else names[v] for v in row] for row in KRIPP]
    assert agreement.krippendorff_alpha(as_text).value == pytest.approx(0.743, abs=0.001)


def test_alpha_over_singleton_sets_equals_nominal_alpha():
    sets = [[None if v is None else {v} for v in row] for row in KRIPP]
    assert agreement.krippendorff_alpha_sets(sets).value == pytest.approx(0.743, abs=0.001)


def test_alpha_over_sets_with_partial_overlap():
    data = [
        [{"a"}, {"a", "b"}, {"c"}, None],
        [{"a"}, {"a"}, {"c", "d"}, {"b"}],
        [{"a", "b"}, {"a", "b"}, {"d"}, {"b"}],
    ]
    stat = agreement.krippendorff_alpha_sets(data)
    assert stat.n == 4 and 0 < stat.value < 1
    # Disjoint sets everywhere disagree more than overlapping ones.
    worse = [
        [{"a"}, {"b"}, {"c"}, None],
        [{"b"}, {"c"}, {"a"}, {"b"}],
        [{"c"}, {"a"}, {"b"}, {"a"}],
    ]
    assert agreement.krippendorff_alpha_sets(worse).value < stat.value


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ({"x"}, {"x"}, 0.0),
        ({"x"}, {"x", "y"}, 1 - 0.5 * 2 / 3),
        ({"x", "y"}, {"y", "z"}, 1 - (1 / 3) * (1 / 3)),
        ({"x"}, {"y"}, 1.0),
        (set(), set(), 0.0),
    ],
)
def test_masi_distance(a, b, distance):
    assert agreement.masi_distance(a, b) == pytest.approx(distance, abs=1e-9)


def test_weighted_kappa_uses_the_full_label_set():
    # Level 3 is never used: without the full label set, 2 and 4 would look adjacent.
    a = [1, 2, 4, 5, 2, 4, 1, 5]
    b = [1, 4, 4, 5, 1, 4, 2, 4]
    without = agreement.cohen_kappa(a, b, weights="quadratic")
    with_five = agreement.cohen_kappa(a, b, labels=[1, 2, 3, 4, 5], weights="quadratic")
    assert without.value != pytest.approx(with_five.value, abs=1e-6)
    # By hand: quadratic weights w_ij = (i − j)² / (k − 1)² over k = 5 levels.
    k = 5
    n = len(a)
    observed = sum((x - y) ** 2 for x, y in zip(a, b, strict=True)) / (k - 1) ** 2 / n
    pa = Counter(a)
    pb = Counter(b)
    expected = sum(pa[i] * pb[j] * (i - j) ** 2 for i in range(1, 6) for j in range(1, 6))
    expected /= (k - 1) ** 2 * n * n
    assert with_five.value == pytest.approx(1 - observed / expected, abs=1e-9)


def test_linear_weights_by_hand():
    a, b = [1, 2, 3, 3], [1, 3, 3, 1]
    stat = agreement.cohen_kappa(a, b, labels=[1, 2, 3], weights="linear")
    observed = sum(abs(x - y) for x, y in zip(a, b, strict=True)) / 2 / 4
    pa, pb = Counter(a), Counter(b)
    expected = sum(pa[i] * pb[j] * abs(i - j) for i in (1, 2, 3) for j in (1, 2, 3)) / 2 / 16
    assert stat.value == pytest.approx(1 - observed / expected, abs=1e-9)


def test_undefined_cases_are_none_with_a_reason():
    cases = [
        agreement.cohen_kappa(["x"] * 5, ["x"] * 5),
        agreement.cohen_kappa([], []),
        agreement.cohen_kappa([None, "a"], ["a", None]),
        agreement.fleiss_kappa([[2, 0], [1, 2]]),
        agreement.fleiss_kappa([[3, 0], [3, 0]]),
        agreement.krippendorff_alpha([[1, None], [None, 2]]),
        agreement.krippendorff_alpha([[1, 1, 1], [1, 1, 1]]),
        agreement.krippendorff_alpha_sets([[{"a"}, {"a"}], [{"a"}, {"a"}]]),
        agreement.percent_agreement([None], [None]),
    ]
    for stat in cases:
        assert isinstance(stat, Stat) and stat.value is None and stat.reason, stat


def test_missing_values_are_dropped_pairwise():
    stat = agreement.cohen_kappa(WIKI_A + [None, "yes"], WIKI_B + ["no", None])
    assert stat.n == 50 and stat.value == pytest.approx(0.4, abs=0.001)


def test_percent_agreement():
    stat = agreement.percent_agreement(WIKI_A, WIKI_B)
    assert stat.value == pytest.approx(0.7) and stat.n == 50
    sets = agreement.percent_agreement([{"a"}, {"a", "b"}], [{"a"}, {"b", "a"}])
    assert sets.value == 1.0


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    units = list(zip(WIKI_A, WIKI_B, strict=True))

    def kappa(sample):
        return agreement.cohen_kappa([u[0] for u in sample], [u[1] for u in sample])

    first = agreement.bootstrap_ci(kappa, units, n=300, seed=7)
    assert first == agreement.bootstrap_ci(kappa, units, n=300, seed=7)
    assert first[0] < 0.4 < first[1]
    assert agreement.bootstrap_ci(lambda s: None, units, n=50) == (None, None)
    fast = agreement.cohen_kappa_bootstrap(WIKI_A, WIKI_B, n=2000, seed=7)
    slow = agreement.bootstrap_ci(kappa, units, n=2000, seed=7)
    assert fast == pytest.approx(slow, abs=0.03)


def test_no_nan_anywhere():
    stats = [agreement.cohen_kappa([1, 2], [2, 1]), agreement.fleiss_kappa([[1, 1], [1, 1]])]
    for stat in stats:
        assert stat.value is None or not math.isnan(stat.value)


def test_pairwise_cohen():
    result = agreement.pairwise_cohen(
        {
            "b": dict(enumerate(WIKI_B)),
            "a": dict(enumerate(WIKI_A)),
            "c": dict(enumerate(WIKI_A[:10])),
        }
    )
    assert set(result) == {("a", "b"), ("a", "c"), ("b", "c")}
    assert result[("a", "b")].value == pytest.approx(0.4, abs=0.001)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", range(5))
def test_cohen_kappa_equals_scikit_learn(weights, seed):
    from sklearn.metrics import cohen_kappa_score

    rng = __import__("numpy").random.default_rng(seed)
    a = rng.integers(1, 6, 80)
    b = (a + rng.integers(-1, 2, 80)).clip(1, 5)
    b[:10] = 3  # some structure, and level 5 may be unused by one rater
    labels = [1, 2, 3, 4, 5]
    ours = agreement.cohen_kappa(a.tolist(), b.tolist(), labels=labels, weights=weights)
    theirs = cohen_kappa_score(a, b, labels=labels, weights=weights)
    assert ours.value == pytest.approx(theirs, abs=1e-12)


def _alpha_brute_force(rows, distance):
    """Krippendorff's alpha straight from its definition over pairs of values (slow)."""
    units = [[v for v in unit if v is not None] for unit in zip(*rows, strict=True)]
    units = [u for u in units if len(u) >= 2]
    values = [v for u in units for v in u]
    n = len(values)
    observed = (
        sum(
            sum(distance(x, y) for i, x in enumerate(u) for j, y in enumerate(u) if i != j)
            / (len(u) - 1)
            for u in units
        )
        / n
    )
    expected = sum(
        distance(x, y) for i, x in enumerate(values) for j, y in enumerate(values) if i != j
    ) / (n * (n - 1))
    return 1 - observed / expected


def test_alpha_over_sets_matches_the_definition_with_repeated_units():
    # Identical units are grouped and weighed by their count: the result must still be the
    # textbook value, here with many repeated units and some missing values.
    base = [
        [{"a"}, {"a", "b"}, {"b"}, None, {"c"}],
        [{"a"}, {"b"}, {"b"}, {"a", "c"}, {"c"}],
        [None, {"a", "b"}, {"a"}, {"a"}, {"b", "c"}],
    ]
    rows = [[None if v is None else frozenset(v) for v in row * 7] for row in base]
    ours = agreement.krippendorff_alpha_sets(rows).value
    assert ours == pytest.approx(_alpha_brute_force(rows, agreement.masi_distance), abs=1e-9)
