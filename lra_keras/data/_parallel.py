"""The worker pool shared by the data generators (ListOps, Pathfinder)."""

import collections
import concurrent.futures
import contextlib
import multiprocessing
import os
import sys
import threading
import time


def run_in_order(function, tasks, on_result, num_workers, remaining,
                 done=lambda: False, pool_min_seconds=2.0):
    """Calls `on_result(function(*task))` for each task, in task order.

    The first task runs in this process: small requests never start a pool,
    and its duration times `remaining()` (the number of tasks still
    expected after it) tells whether the rest is worth one. Otherwise a pool
    of `num_workers` processes keeps a bounded window of tasks in flight
    and results are consumed in task order, so the output does not depend
    on the number of workers. `tasks` may be endless; it stops as soon as
    `done()` is true.
    """
    tasks = iter(tasks)
    first = next(tasks, None)
    if first is None:
        return
    start = time.perf_counter()
    on_result(function(*first))
    if done():
        return
    seconds = (time.perf_counter() - start) * remaining()
    if num_workers == 1 or seconds < pool_min_seconds:
        for task in tasks:
            if done():
                return
            on_result(function(*task))
        return
    # "spawn" starts clean interpreters. "fork" would copy a parent in which
    # JAX or TensorFlow may already run threads, which can deadlock.
    context = multiprocessing.get_context("spawn")
    with _main_not_rerun(), concurrent.futures.ProcessPoolExecutor(
        max_workers=num_workers, mp_context=context,
        initializer=_exit_with_parent, initargs=(os.getpid(),),
    ) as pool:
        futures = collections.deque()
        try:
            for task in tasks:
                if done():
                    return
                futures.append(pool.submit(function, *task))
                if len(futures) >= 2 * num_workers:
                    on_result(futures.popleft().result())
            while futures and not done():
                on_result(futures.popleft().result())
        finally:
            for future in futures:
                future.cancel()


@contextlib.contextmanager
def _main_not_rerun():
    """Spawned workers do not re-run the user's `__main__`.

    A spawned worker imports the parent's main module (found through its
    `__spec__` or `__file__`) before it runs anything, so a script that
    calls a generator at top level, without `if __name__ == "__main__":`
    (or piped through `python -`), would run again in every worker and
    start pools of its own. The workers only run functions of this
    package, so the main module is hidden from them while the pool runs.
    """
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    missing = object()
    saved = {name: getattr(main, name, missing)
             for name in ("__spec__", "__file__")}
    main.__spec__ = None
    if saved["__file__"] is not missing:
        del main.__file__
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is not missing:
                setattr(main, name, value)


def _exit_with_parent(parent, interval=1.0):
    """Worker initializer: exit once `parent` is gone.

    A parent killed with SIGKILL (or by the OOM killer) cannot stop its
    pool; its workers, re-parented, would wait on their task pipe forever.
    A daemon thread of each worker checks every `interval` seconds that it
    is still the parent's child.
    """

    def watch():
        while True:
            if os.getppid() != parent:
                os._exit(1)
            time.sleep(interval)

    threading.Thread(target=watch, daemon=True).start()
