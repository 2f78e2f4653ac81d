"""The garbage collector is off only while a command starts (imports, configuration).

``main`` turns it off to spare start-up's collections (``common.started``); a scan must
have it on again before it reads traces, or the reference cycles a long ingest makes
would never be collected, and every other command must run with it on.
"""

from __future__ import annotations

import subprocess
import sys

from .conftest import CONFIG, REPO, TRACES

SCRIPT = """
import gc, sys
import sponsio_audit.api as api
seen = []
ingest = api.ingest
def watched(*a, **k):
    seen.append(("called", gc.isenabled(), gc.get_freeze_count() > 0))
    return ingest(*a, **k)
api.ingest = watched
from sponsio_audit.cli import main
sys.argv = ["sponsio-audit", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print(seen, gc.isenabled())
"""


def test_the_collector_is_on_while_a_scan_reads_traces() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, "scan", str(TRACES), "-c", str(CONFIG), "-q", "-f",
         "json", "-o", "/dev/null", "--jobs", "1"],
        capture_output=True, text=True, cwd=REPO, timeout=120, check=False,
    )  # fmt: skip
    assert done.stdout.strip() == "[('called', True, True)] True", done.stderr[-2000:]


def test_other_commands_run_with_the_collector_on() -> None:
    probe = SCRIPT.replace("import sponsio_audit.api as api", "import sponsio_audit.config as api")
    probe = probe.replace("ingest = api.ingest", "ingest = api.load_config")
    probe = probe.replace("api.ingest = watched", "api.load_config = watched")
    done = subprocess.run(
        [sys.executable, "-c", probe, "validate", str(CONFIG)],
        capture_output=True, text=True, cwd=REPO, timeout=120, check=False,
    )  # fmt: skip
    assert done.stdout.strip().endswith("[('called', True, True)] True"), done.stderr[-2000:]
