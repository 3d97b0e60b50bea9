"""The streamed CSV writer writes exactly what csv.writer would."""

import csv
import io
import json

from hypothesis import given
from hypothesis import strategies as st

from annotate.services.exporting import csv_lines

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


def test_blocks_split_on_line_ends_only():
    records = [{"text": "x" * 1000 + ',"\n'} for _ in range(200)]
    blocks = list(csv_lines(records, columns=["text"]))
    assert len(blocks) > 2 and all(block.endswith("\r\n") for block in blocks)
    assert len(list(csv.reader(io.StringIO("".join(blocks))))) == 201
