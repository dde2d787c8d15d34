"""Runs the test suite once per Keras backend, as CI does.

    python tests/run_all_backends.py [extra pytest args]

The backend is fixed when Keras is imported, so each backend gets its own
pytest process with KERAS_BACKEND set. Tests marked `numpy_only` touch no
backend and run in the first pass only. Tests marked `cross_backend` start a
process per backend themselves: they run once, in their own pytest process.
Each pass is cut by
test paths into pieces (GROUPS), queued longest first (ORDER) for two
workers, one per core; each piece's log is printed when it ends, and the
last lines give every piece's time. Extra arguments go to every pytest
call; when they name test paths, each pass runs whole on those. Any
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

BACKENDS = ("jax", "tensorflow", "torch")
ROOT = Path(__file__).resolve().parents[1]
WORKERS = 2  # CI's cores
# Each backend's pass in two pieces, the layers' tests and the others.
GROUPS = {
    "layers": ["tests/layers"],
    "rest": ["tests", "--ignore=tests/layers"],
}
# Longest first, from the pieces' times in a clean-clone run (printed at
# the end of every run). The cross-backend piece goes first: it starts a
# process per backend, which the other worker's pieces then share the
# cores with.
ORDER = ("cross_backend", "tensorflow_rest", "jax_layers", "jax_rest",
         "torch_rest", "tensorflow_layers", "torch_layers")


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


def _pieces(argv):
    """(title, name, marks, paths, env, required) in the order taken."""
    named = any((ROOT / arg.split("::")[0]).exists()
                for arg in argv if not arg.startswith("-"))
    groups = {"all": []} if named else GROUPS
    pieces = {"cross_backend": ("cross-backend", "cross_backend",
                                "cross_backend and not large", [], {},
                                False)}
    for i, backend in enumerate(BACKENDS):
        marks = "not large and not cross_backend"
        if i > 0:
            marks += " and not numpy_only"
        for group, paths in groups.items():
            name = f"{backend}_{group}"
            pieces[name] = (f"KERAS_BACKEND={backend} ({group})", name,
                            marks, paths, {"KERAS_BACKEND": backend}, True)
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(pieces.values(),
                  key=lambda piece: rank.get(piece[1], len(rank)))


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

    # The work is cut into pieces queued longest first (ORDER); two
    # workers, one per CI core, each take the next piece when theirs ends,
    # so neither core idles while the other has a long queue. Each pass is
    # split by test paths (GROUPS), the same way under every backend, so
    # the `one_backend` sharing (conftest.py) stays a partition. Each
    # piece's log is printed whole when it ends.
    printing = threading.Lock()
    results, times = [], {}

    with tempfile.TemporaryDirectory() as tmp:

        def run_piece(piece):
            title, name, marks, paths, env, required = piece
            junit = Path(tmp) / f"{name}.xml"
            cmd = _pytest(marks, junit, [*paths, *argv])
            with open(Path(tmp) / f"{name}.log", "w+") as log:
                started = time.monotonic()
                code = subprocess.run(
                    cmd, cwd=ROOT, env={**os.environ, **env},
                    stdout=log, stderr=subprocess.STDOUT,
                ).returncode
                log.seek(0)
                times[name] = time.monotonic() - started
                with printing:
                    print(f"\n===== {title}: {' '.join(cmd[1:])} "
                          f"({times[name]:.0f} s)\n"
                          f"{log.read()}", flush=True)
            results.append((name, junit, code, required))

        # The pool's workers take the pieces in order, each the next one
        # when its own ends.
        with ThreadPoolExecutor(WORKERS) as pool:
            list(pool.map(run_piece, _pieces(argv)))
        for name, junit, code, required in results:
            count(name, junit, code, required)
    print("pieces (s): " + ", ".join(
        f"{name} {seconds:.0f}" for name, seconds in times.items()))
    for problem in problems:
        print(f"FAILED: {problem}")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if problems or failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
