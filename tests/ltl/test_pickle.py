"""Formulas pickled in one process work as dict keys in another (Spark executors, workers).

String hashes differ between processes (``PYTHONHASHSEED``), and atoms and
formula nodes keep their hash from construction. A pickle that carried the
kept hash gives an atom equal to a freshly built one that is not found in a
valuation keyed by it, so its value reads as missing in the other process.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

from hypothesis import given, settings

from sponsio_audit.ltl.ast import Formula
from sponsio_audit.ltl.parse import parse
from tests.ltl.strategies import formulas

TEXTS = (
    'G(called(bash) -> !arg_has(bash, "rm -rf"))',
    "G(called(issue_refund) -> O(called(check_policy)))",
    "G(count(transfer) <= 2) & F[0,5](called(done))",
)

LOADER = """
import pickle, sys
from sponsio_audit.ltl.ast import Atom, atoms
from sponsio_audit.ltl.parse import parse
texts, generated = pickle.loads(sys.stdin.buffer.read())
for text, f in texts:
    fresh = parse(text)
    assert f == fresh and hash(f) == hash(fresh), text
for f in generated:
    keyed = {a: 0 for a in atoms(f)}
    assert all(Atom(a.name, a.args) in keyed for a in atoms(f)), repr(f)
print(len(texts) + len(generated))
"""


@settings(max_examples=5, deadline=None)
@given(formulas(max_nodes=12))
def test_formulas_pickled_here_are_keys_in_another_process(generated: Formula) -> None:
    texts = [(t, parse(t)) for t in TEXTS]
    res = subprocess.run(
        [sys.executable, "-c", LOADER],
        input=pickle.dumps((texts, [generated])),
        capture_output=True,
        env={**os.environ, "PYTHONHASHSEED": str(os.getpid() % 1000 + 1)},
        timeout=120,
    )
    assert res.returncode == 0, res.stderr.decode()[-2000:]
    assert res.stdout.decode().strip() == str(len(TEXTS) + 1)
