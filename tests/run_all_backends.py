"""Runs the test suite once per Keras backend, as CI does.

    python tests/run_all_backends.py [extra pytest args]

The backend is fixed when Keras is imported, so each backend gets its own
pytest process with KERAS_BACKEND set. Tests marked `numpy_only` touch no
backend and run in the first pass only. Tests marked `cross_backend` start a
process per backend themselves: they run once, in their own pytest process.
The passes run in two lanes, one per core: the JAX pass in one, the
cross-backend, TensorFlow and PyTorch passes in the other; each pass's log
is printed when it ends. Any
failure, a missing backend, or a pass that runs no test makes the exit
status non-zero. The last line is the total, "N passed, N failed".
"""

import os
import subprocess
import sys
import tempfile
import threading
import time
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

    # Two lanes on the CI's two cores: the JAX pass, the longest (its eager
    # first calls compile op by op on one thread), in one; the
    # cross-backend tests (a process per backend, mostly single-threaded
    # compilation), then the TensorFlow and PyTorch passes in the other.
    # Each pass's log is printed whole when it ends.
    passes = []
    for i, backend in enumerate(BACKENDS):
        marks = "not large and not cross_backend"
        if i > 0:
            marks += " and not numpy_only"
        passes.append((f"KERAS_BACKEND={backend}", backend, marks,
                       {"KERAS_BACKEND": backend}, True))
    cross = ("cross-backend", "cross_backend", "cross_backend and not large",
             {}, False)
    lanes = [passes[:1], [cross, *passes[1:]]]
    printing = threading.Lock()
    results = []

    with tempfile.TemporaryDirectory() as tmp:

        def run_lane(lane):
            for title, name, marks, env, required in lane:
                junit = Path(tmp) / f"{name}.xml"
                cmd = _pytest(marks, junit, argv)
                with open(Path(tmp) / f"{name}.log", "w+") as log:
                    started = time.monotonic()
                    code = subprocess.run(
                        cmd, cwd=ROOT, env={**os.environ, **env},
                        stdout=log, stderr=subprocess.STDOUT,
                    ).returncode
                    log.seek(0)
                    with printing:
                        print(f"\n===== {title}: {' '.join(cmd[1:])} "
                              f"({time.monotonic() - started:.0f} s)\n"
                              f"{log.read()}", flush=True)
                results.append((name, junit, code, required))

        threads = [threading.Thread(target=run_lane, args=(lane,))
                   for lane in lanes]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for name, junit, code, required in results:
            count(name, junit, code, required)
    for problem in problems:
        print(f"FAILED: {problem}")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if problems or failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
