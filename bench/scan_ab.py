"""The real ``scan`` command alternated between interpreters: wall and CPU medians of each.

``python bench/scan_ab.py OLD_PYTHON NEW_PYTHON [--runs 8] [--spans 200000] [--jobs 2]``

Each interpreter's own ``sponsio_audit`` runs (a venv whose package is another checkout:
the A/B of two versions). The commands alternate, so that a VM whose speed drifts
(15% within an hour here) slows both alike; each run is timed by ``bench/scan.py
--reap`` (wall, and the CPU of every process of the command, its workers included).
The commands run in a fresh temporary folder: ``python -m sponsio_audit`` imports the
package of the current folder first, so a run from a checkout would measure that
checkout, whatever the interpreter. Each side's package is compiled first.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest import generate, machine_speed  # bench/ingest.py
from scan import contracts_yaml  # bench/scan.py

HERE = Path(__file__).resolve().parent


def _compiled(python: str, where: Path) -> None:
    """Compile the package the interpreter imports (as an installed copy is)."""
    code = "import sponsio_audit, os; print(os.path.dirname(sponsio_audit.__file__))"
    pkg = subprocess.run([python, "-c", code], cwd=where, capture_output=True, text=True)
    subprocess.run([python, "-m", "compileall", "-q", pkg.stdout.strip()], check=True)
    print(f"{python}: {pkg.stdout.strip()}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("pythons", nargs="+")
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--spans", type=int, default=200_000)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        corpus = generate(where, a.spans, "jsonl")
        config = contracts_yaml(where / "sponsio.yaml")
        for p in a.pythons:
            _compiled(p, where)
        print(machine_speed())
        got: dict[str, list[tuple[float, float]]] = {p: [] for p in a.pythons}
        for _ in range(a.runs):
            for p in a.pythons:
                figures = where / "figures.json"
                cmd = [p, "-m", "sponsio_audit", "scan", str(corpus), "-c", str(config)]
                cmd += ["-f", "json", "-o", str(where / "r.json"), "--jobs", str(a.jobs), "-q"]
                reap = [sys.executable, str(HERE / "scan.py"), "--reap", str(figures), "--"]
                subprocess.run(reap + cmd, cwd=where, check=True)
                f = json.loads(figures.read_text())
                if f["code"] not in (0, 1):
                    raise SystemExit(f"{p}: scan failed ({f['code']}): {f['stderr']}")
                got[p].append((f["wall"], f["cpu"]))
        print(machine_speed())
    for p, runs in got.items():
        walls = [w for w, _ in runs]
        wall, cpu = statistics.median(walls), statistics.median(c for _, c in runs)
        print(
            f"{p}: wall median {wall:.3f} s ({min(walls):.2f}-{max(walls):.2f}), "
            f"{a.spans / wall:,.0f} spans/s; CPU of all its processes {cpu:.3f} s"
        )


if __name__ == "__main__":
    main()
