"""The public faces of the ltl packages: what other stages may import, pinned by name."""

from __future__ import annotations

import importlib

import pytest

FACES = {
    "sponsio_audit.ltl.columnar": {
        "KIND_NAMES", "RESULT_SCHEMA", "Checker", "Checks", "Col", "ColumnLike",
        "ContractResult", "Evaluator", "KCol", "Segments", "TakenColumns", "View",
        "at_end", "check_formula", "check_traces", "contract_verdicts", "default_checker",
        "evaluate_contracts", "judge_all", "result_table", "results_table", "start_values",
        "view_columns",
    },
    "sponsio_audit.ltl.patterns": {
        "CORE", "INJECTION_MARKERS", "JUDGE_NAMES", "JUDGE_SKIP", "LIST_KINDS",
        "LOOKAROUND_SKIP", "MAX_EVIDENCE", "PII_REGEXES", "TOKEN_KINDS", "G", "Param",
        "PatternArgError", "PatternResult", "PatternSpec", "RegexError", "Sentence", "bind",
        "build", "c", "compile_regex", "conj", "describe", "disj", "le", "lookup", "registry",
        "when_called",
    },
}  # fmt: skip


@pytest.mark.parametrize("module", sorted(FACES))
def test_face_exports_exactly_the_pinned_names(module: str) -> None:
    mod = importlib.import_module(module)
    assert set(mod.__all__) == FACES[module]
    assert all(getattr(mod, name, None) is not None for name in mod.__all__)


def test_result_schema_does_not_reuse_the_verdict_table_name() -> None:
    # the columnar result and the stored verdicts table are different tables
    import sponsio_audit.ltl.columnar as col
    from sponsio_audit import verdicts

    assert not hasattr(col, "VERDICT_SCHEMA")
    assert col.RESULT_SCHEMA is not verdicts.VERDICT_SCHEMA
