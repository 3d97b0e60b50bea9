"""The streamed CSV writer writes exactly what csv.writer would."""

import csv
import io
import json
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from annotate.services.exporting import BLOCK, csv_lines, jsonl_lines

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(alphabet=st.sampled_from("ab ,\"\r\n\t;é'\\"), max_size=12),
    st.text(max_size=12),
)
values = st.one_of(scalars, st.lists(st.text(max_size=8), max_size=3))
rows = st.integers(min_value=1, max_value=5).flatmap(
    lambda width: st.lists(st.lists(values, min_size=width, max_size=width), max_size=20)
)


def reference(columns: list[str], table: list[list]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    for row in table:
        writer.writerow(
            json.dumps(v, ensure_ascii=False, separators=(",", ":")) if isinstance(v, list) else v
            for v in row
        )
    return buffer.getvalue()


@given(rows)
def test_csv_lines_equal_csv_writer(table):
    width = len(table[0]) if table else 1
    columns = [f"c{i}" for i in range(width)]
    records = [dict(zip(columns, row, strict=True)) for row in table]
    written = "".join(csv_lines(records, columns=columns))
    assert written == reference(columns, table)
    # And it reads back: every text field comes back as it was written.
    back = list(csv.reader(io.StringIO(written)))
    assert back[0] == columns and len(back) == len(table) + 1


texts = st.text(alphabet=st.sampled_from('ab ,"\r\n\x00é'), max_size=6)
list_columns = st.lists(
    st.tuples(st.lists(texts, min_size=1, max_size=3), st.lists(texts, max_size=2), st.booleans()),
    min_size=1,
    max_size=20,
)


@given(list_columns)
def test_csv_columns_of_lists_of_texts_and_of_booleans_equal_csv_writer(table):
    # Columns where every field is a list starting with a text are quoted all at once; the
    # second column has empty lists too, which are not quoted, so it goes field by field.
    columns = ["kinds", "texts", "flag"]
    records = [dict(zip(columns, row, strict=True)) for row in table]
    written = "".join(csv_lines(records, columns=columns))
    assert written == reference(columns, [list(row) for row in table])


def test_blocks_split_on_line_ends_only():
    records = [{"text": "x" * 1000 + ',"\n'} for _ in range(2 * BLOCK + 1)]
    blocks = list(csv_lines(records, columns=["text"]))
    # The header, then BLOCK records at a time: memory stays bounded.
    assert len(blocks) == 4 and all(block.endswith("\r\n") for block in blocks)
    assert len(list(csv.reader(io.StringIO("".join(blocks))))) == 2 * BLOCK + 2
    lines = list(jsonl_lines(iter(records)))
    assert len(lines) == 3 and all(block.endswith("\n") for block in lines)
    assert [json.loads(line) for line in "".join(lines).splitlines()] == records


def test_jsonl_lines_are_compact_utf8_json():
    records = [{"a": [1, "é"], "b": None, "c": True, "d": 1.5}, {}]
    assert "".join(jsonl_lines(records)) == '{"a":[1,"é"],"b":null,"c":true,"d":1.5}\n{}\n'
    assert list(jsonl_lines([])) == []
    # What orjson cannot write itself (a Decimal) is written as its text, in both formats.
    assert "".join(jsonl_lines([{"n": Decimal("1.50")}])) == '{"n":"1.50"}\n'
    written = "".join(csv_lines([{"n": [Decimal("1.50")]}, {"n": []}], columns=["n"]))
    assert written == 'n\r\n"[""1.50""]"\r\n[]\r\n'


def test_a_text_holding_the_column_separator_is_quoted_on_its_own():
    # Columns are joined with NUL to be searched at once; a text holding one is not split.
    records = [{"a": "x\x00y,z", "b": 1}, {"a": "plain", "b": 2}, {"a": "q\x00", "b": 3}]
    written = "".join(csv_lines(records, columns=["a", "b"]))
    assert written == reference(["a", "b"], [list(r.values()) for r in records])


# Halves, values whose float lies just below or above a half (0.15, 2.675), negative zero,
# and the magnitudes where multiplying by 10 stops being safe: each is one that rint(10x)/10
# alone gets wrong, or could.
TENTHS_EDGES = [0.15, 0.25, 0.05, 2.675, 12.25, -12.25, -0.15, -0.0, 0.0, 1e7, 1e7 + 0.05]


@given(st.lists(st.floats(allow_nan=False) | st.sampled_from(TENTHS_EDGES), max_size=50))
def test_tenths_equal_round_to_one_decimal(values):
    from annotate.selectors import tenths

    expected = [round(value, 1) for value in values]
    got = tenths(values)
    assert got == expected
    assert [str(value) for value in got] == [str(value) for value in expected]  # -0.0 too


def test_tenths_of_the_edges_and_of_not_a_number():
    import math

    from annotate.selectors import tenths

    assert tenths(TENTHS_EDGES) == [
        0.1,
        0.2,
        0.1,
        2.7,
        12.2,
        -12.2,
        -0.1,
        -0.0,
        0.0,
        1e7,
        10000000.1,
    ]
    assert math.isnan(tenths([math.nan])[0]) and tenths([]) == []
