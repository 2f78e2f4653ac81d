"""The result of a contract over many segments: verdict arrays and their codes.

``ContractResult`` sits between the evaluation (``contracts``) and the
result table (``table``), so neither imports the other's module. Codes
index the vocabularies: ``verdict`` indexes ``vocab.VERDICTS``, ``kind``
``vocab.KINDS`` (−1 for none).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sponsio_audit.ltl.columnar.segments import IntArray
from sponsio_audit.ltl.contract import Contract, Verdict
from sponsio_audit.vocab import (
    ASSUMPTION_UNKNOWN,
    KINDS,
    VERDICTS,
    assumption_skipped,
)

PASS, VIOLATED, UNVERIFIABLE, NOT_APPLICABLE, SKIPPED = range(len(VERDICTS))
"""Codes of ``ContractResult.verdict`` (indices into ``vocab.VERDICTS``)."""
GUARANTEE, LIVENESS, ASSUMPTION = range(len(KINDS))
"""Codes of ``ContractResult.kind`` (indices into ``vocab.KINDS``)."""
Int8Array = npt.NDArray[np.int8]


@dataclass(frozen=True, eq=False)
class ContractResult:
    """Verdicts of one contract: arrays of shape (guarantees, segments).

    ``verdict``/``kind`` index ``vocab.VERDICTS``/``vocab.KINDS``
    (−1 for no kind); ``blame``/``opened`` are view positions, −1 for none;
    ``reason`` indexes ``reasons()`` (−1 for none): 0 "assumption unknown",
    1 + g guarantee g's skip reason, 1 + G "assumption skipped: …".
    Offending positions of (s, g) are
    ``off_pos[off_ptr[s * G + g] : off_ptr[s * G + g + 1]]``.
    """

    contract: Contract
    verdict: Int8Array
    kind: Int8Array
    blame: IntArray
    opened: IntArray
    reason: npt.NDArray[np.int16]
    off_ptr: IntArray
    off_pos: IntArray

    def reasons(self) -> list[str]:
        """Reason texts by code: assumption unknown, each guarantee's skip, assumption skipped."""
        gs = self.contract.guarantees
        skipped_a = self.contract.skipped_assumption()
        return [
            ASSUMPTION_UNKNOWN,
            *(g.skipped or "" for g in gs),
            assumption_skipped(skipped_a),
        ]

    def reason_text(self, code: int) -> str | None:
        return None if code < 0 else self.reasons()[code]

    def verdicts(self, s: int) -> list[Verdict]:
        """Segment s as ``contract.judge`` returns it."""
        gs = self.contract.guarantees
        out = []
        for g in range(len(gs)):
            k = s * len(gs) + g
            out.append(
                Verdict(
                    g,
                    gs[g].text,
                    VERDICTS[self.verdict[g, s]],
                    KINDS[self.kind[g, s]] if self.kind[g, s] >= 0 else None,
                    None if self.blame[g, s] < 0 else int(self.blame[g, s]),
                    tuple(int(x) for x in self.off_pos[self.off_ptr[k] : self.off_ptr[k + 1]]),
                    None if self.opened[g, s] < 0 else int(self.opened[g, s]),
                    self.reason_text(int(self.reason[g, s])),
                )
            )
        return out
