"""Runs the test suite once per Keras backend, as CI does.

    python tests/run_all_backends.py [extra pytest args]

The backend is fixed when Keras is imported, so each backend gets its own
pytest process with KERAS_BACKEND set. Tests marked `numpy_only` touch no
backend, and tests marked `cross_backend` start a process per backend
themselves: both run in the first pass only. Any failure, a missing
backend, or a pass that runs no test makes the exit status non-zero. The
last line is the total, "N passed, N failed".
"""

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

BACKENDS = ("jax", "tensorflow", "torch")
ROOT = Path(__file__).resolve().parents[1]


def _counts(junit_path):
    try:
        root = ET.parse(junit_path).getroot()
    except (OSError, ET.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else list(root)
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        for key in total:
            total[key] += int(suite.get(key, 0))
    return total


def main(argv):
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "."],
                          cwd=ROOT)
    passed = failed = skipped = 0
    problems = [] if lint.returncode == 0 else ["ruff check"]
    with tempfile.TemporaryDirectory() as tmp:
        for i, backend in enumerate(BACKENDS):
            marks = ("not large" if i == 0 else
                     "not large and not numpy_only and not cross_backend")
            junit = Path(tmp) / f"{backend}.xml"
            cmd = [sys.executable, "-m", "pytest", "-m", marks,
                   f"--junitxml={junit}", *argv]
            print(f"\n===== KERAS_BACKEND={backend}: {' '.join(cmd[1:])}",
                  flush=True)
            env = {**os.environ, "KERAS_BACKEND": backend}
            code = subprocess.run(cmd, cwd=ROOT, env=env).returncode
            counts = _counts(junit)
            if counts is None or counts["tests"] == 0:
                problems.append(f"{backend}: no test ran (exit {code})")
                continue
            bad = counts["failures"] + counts["errors"]
            passed += counts["tests"] - bad - counts["skipped"]
            failed += bad
            skipped += counts["skipped"]
            if code != 0:
                problems.append(f"{backend}: pytest exit {code}")
    for problem in problems:
        print(f"FAILED: {problem}")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if problems or failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
