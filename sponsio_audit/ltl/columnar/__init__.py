"""Columnar evaluation: formulas and contracts over many traces at once (SEMANTICS.md §2–§4.2).

One concern a module: ``segments`` (where each trace lies in the rows),
``scans`` (the temporal operators as segmented NumPy scans over Kleene
columns), ``values`` (the evaluator: a formula's row values), ``taken``
(grounded columns sampled at a view's rows), ``sparse`` (``G ψ`` at the
rows where ψ can fail), ``blame``
(the first bad prefix by a "bad time" scan), ``checks`` (``reference.check``
for every trace at once), ``views`` (the rows a contract sees, as
segments), ``result`` (one contract's verdict arrays and their codes),
``contracts`` (``contract.judge`` on every segment) and ``table`` (results
as one Arrow table, ``RESULT_SCHEMA``).
"""

from sponsio_audit.ltl.columnar.checks import (
    KIND_NAMES,
    Checker,
    Checks,
    check_formula,
    check_traces,
    default_checker,
    start_values,
)
from sponsio_audit.ltl.columnar.contracts import contract_verdicts, evaluate_contracts, judge_all
from sponsio_audit.ltl.columnar.result import ContractResult
from sponsio_audit.ltl.columnar.scans import KCol
from sponsio_audit.ltl.columnar.segments import Segments
from sponsio_audit.ltl.columnar.table import RESULT_SCHEMA, result_table, results_table
from sponsio_audit.ltl.columnar.taken import TakenColumns
from sponsio_audit.ltl.columnar.values import Col, ColumnLike, Evaluator, at_end
from sponsio_audit.ltl.columnar.views import View, view_columns

__all__ = [
    "KIND_NAMES",
    "RESULT_SCHEMA",
    "Checker",
    "Checks",
    "Col",
    "ColumnLike",
    "ContractResult",
    "Evaluator",
    "KCol",
    "Segments",
    "TakenColumns",
    "View",
    "at_end",
    "check_formula",
    "check_traces",
    "contract_verdicts",
    "default_checker",
    "evaluate_contracts",
    "judge_all",
    "result_table",
    "results_table",
    "start_values",
    "view_columns",
]
