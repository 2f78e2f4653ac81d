"""``evaluation.evaluations`` builds each table's verdicts and violations on a thread of its
own while the next table is judged: the tables are those of one table at a time, in
order, for any size of table, and an error comes as it would one table at a time (the
error of the table before first).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from sponsio_audit import evaluation
from sponsio_audit.evaluation import evaluate, evaluations
from tests.engine.test_evaluate import DEMO, _batches, _same, _stored


@pytest.fixture(scope="module")
def demo() -> tuple[Any, pa.Table, pa.Table, pa.Table]:
    return _stored(DEMO)


@pytest.mark.parametrize("rows", [1, 5, 40])
def test_tables_of_any_size_give_the_stored_tables(demo: Any, rows: int) -> None:
    cfg, events, verdicts, violations = demo
    _same(evaluate(_batches(events, 3), cfg, rows=rows), verdicts, violations)


def test_the_error_of_the_table_before_comes_first(demo: Any, monkeypatch: Any) -> None:
    """The first table's build fails and so does the reading of the second: the first
    table's error is raised, as when each table was built before the next was read."""
    cfg, events, _, _ = demo
    built = evaluation._built
    calls = []

    def failing(raw: pa.Table, table: pa.Table, contracts: tuple) -> Any:
        calls.append(table.num_rows)
        if len(calls) == 1:
            raise KeyError("build of the first table")
        return built(raw, table, contracts)

    def batches() -> Any:
        yield from events.slice(0, 10).to_batches()
        raise LookupError("reading the second table")

    monkeypatch.setattr(evaluation, "_built", failing)
    stream = pa.RecordBatchReader.from_batches(events.schema, batches())
    with pytest.raises(KeyError, match="build of the first table"):
        list(evaluations(stream, cfg, rows=5))
