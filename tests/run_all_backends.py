"""Runs the test suite once per Keras backend, as CI does.

    python tests/run_all_backends.py [extra pytest args]

The backend is fixed when Keras is imported, so each backend gets its own
pytest process with KERAS_BACKEND set. Tests marked `numpy_only` touch no
backend and run in the first pass only. Tests marked `cross_backend` start a
process per backend themselves: they run once, in a pytest process beside
the per-backend passes, and their output is printed after those. Any
failure, a missing backend, or a pass that runs no test makes the exit
status non-zero. The last line is the total, "N passed, N failed".
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


def _pytest(marks, junit, argv):
    return [sys.executable, "-m", "pytest", "-m", marks,
            f"--junitxml={junit}", "--durations=10", *argv]


def main(argv):
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "."],
                          cwd=ROOT)
    passed = failed = skipped = 0
    problems = [] if lint.returncode == 0 else ["ruff check"]

    def count(name, junit, code, required=True):
        nonlocal passed, failed, skipped
        counts = _counts(junit)
        if counts is None or counts["tests"] == 0:
            # pytest exits 5 when the selection holds no test; only the
            # per-backend passes must run something.
            if required or code != 5:
                problems.append(f"{name}: no test ran (exit {code})")
            return
        bad = counts["failures"] + counts["errors"]
        passed += counts["tests"] - bad - counts["skipped"]
        failed += bad
        skipped += counts["skipped"]
        if code != 0:
            problems.append(f"{name}: pytest exit {code}")

    with tempfile.TemporaryDirectory() as tmp:
        # The cross-backend tests start a process per backend themselves
        # and spend much of their time in single-threaded compilation: they
        # run beside the per-backend passes, and their log follows them.
        cross_junit = Path(tmp) / "cross_backend.xml"
        cross_log = open(Path(tmp) / "cross_backend.log", "w+")
        cross_cmd = _pytest("cross_backend and not large", cross_junit, argv)
        cross = subprocess.Popen(cross_cmd, cwd=ROOT, stdout=cross_log,
                                 stderr=subprocess.STDOUT)
        for i, backend in enumerate(BACKENDS):
            marks = "not large and not cross_backend"
            if i > 0:
                marks += " and not numpy_only"
            junit = Path(tmp) / f"{backend}.xml"
            cmd = _pytest(marks, junit, argv)
            print(f"\n===== KERAS_BACKEND={backend}: {' '.join(cmd[1:])}",
                  flush=True)
            env = {**os.environ, "KERAS_BACKEND": backend}
            code = subprocess.run(cmd, cwd=ROOT, env=env).returncode
            count(backend, junit, code)
        code = cross.wait()
        cross_log.seek(0)
        print(f"\n===== cross-backend (beside the passes above): "
              f"{' '.join(cross_cmd[1:])}\n{cross_log.read()}", flush=True)
        cross_log.close()
        count("cross_backend", cross_junit, code, required=False)
    for problem in problems:
        print(f"FAILED: {problem}")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if problems or failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
