"""One XLA CPU op timed alone and inside a larger jitted program, beside
PyTorch's on one and on all threads.

    R=<checkout> python op_alone_and_in_a_program.py

For each op of a state-space or attention step (the FFT convolution's
transforms at (16, 128, 2048), the GLU dense layer's product, one
attention block's score product):

- "alone": a jitted function of that one op, the median wall time of 30
  calls. A program of one op runs in the calling thread, and the op may
  use XLA's intra-op pool;
- "in a program": the same op eight times over in one jitted function,
  each use depending on the last (a little elementwise work between),
  the median of the op's own durations in a `jax.profiler` trace of 3
  calls. A program of many ops runs on the pool's workers;
- PyTorch's op (`torch.fft`, `torch.mm`, `torch.bmm`) on one thread and
  on all, the median of 30 calls.

Run on a CPU with nothing else running.
"""

import collections
import glob
import gzip
import json
import os
import sys
import tempfile

R = os.path.abspath(os.environ.get("R", "."))
sys.path.insert(0, os.path.join(R, "benchmarks"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import mixers  # noqa: E402 (`_timed`, from the checkout R)
import numpy as np  # noqa: E402
import torch  # noqa: E402

CHAIN = 8


def traced_op_ms(function, args, kinds):
    """Median duration (ms) of the HLO ops whose name starts with one of
    `kinds` in a trace of 3 calls of `function(*args)`."""
    jax.block_until_ready(function(*args))
    folder = tempfile.mkdtemp(prefix="op_trace_")
    with jax.profiler.trace(folder):
        for _ in range(3):
            jax.block_until_ready(function(*args))
    path = glob.glob(f"{folder}/**/*.trace.json.gz", recursive=True)[0]
    events = json.load(gzip.open(path))["traceEvents"]
    durations = collections.defaultdict(list)
    for event in events:
        if event.get("ph") == "X" and "hlo_op" in event.get("args", {}):
            durations[event["name"].split(".")[0]].append(event["dur"] / 1e3)
    found = [d for name, d in durations.items() if name.startswith(kinds)]
    if not found:
        raise RuntimeError(f"no {kinds} op in the trace: {sorted(durations)}")
    values = sorted(v for d in found for v in d)
    return values[len(values) // 2]


def cases(rng):
    u = rng.normal(size=(16, 128, 2048)).astype("float32")
    spectrum = np.fft.rfft(u).astype("complex64")
    y = rng.normal(size=(16384, 256)).astype("float32")
    w = (rng.normal(size=(256, 128)) / 16).astype("float32")
    q = rng.normal(size=(4, 512, 32)).astype("float32")
    k = (rng.normal(size=(4, 32, 1024)) / 6).astype("float32")
    products = ("ynn_fusion", "dot")
    return [
        ("rfft (16, 128, 2048)", ("fft",), (u,),
         lambda a: jnp.fft.rfft(a),
         lambda a: jnp.fft.irfft(a, n=2048),
         lambda a: torch.fft.rfft(a)),
        ("irfft (16, 128, 1025) -> 2048", ("fft",), (spectrum,),
         lambda s: jnp.fft.irfft(s, n=2048),
         lambda x: jnp.fft.rfft(x),
         lambda s: torch.fft.irfft(s, n=2048)),
        ("(16384, 256) @ (256, 128)", products, (y, w),
         lambda a, b: a @ b,
         lambda out: jnp.concatenate([out, out], axis=-1),
         lambda a, b: a @ b),
        ("(4, 512, 32) @ (4, 32, 1024)", products, (q, k),
         lambda a, b: a @ b,
         lambda out: out[..., :32],
         lambda a, b: torch.bmm(a, b)),
    ]


def chained(op, back, args):
    """A jitted program of `op` CHAIN times, each use depending on the
    last: `back` maps an output to the op's first input's shape."""
    def program(*xs):
        first, rest = xs[0], xs[1:]
        total = 0.0
        for i in range(CHAIN):
            out = op(first, *rest)
            total = total + jnp.sum(jnp.abs(out[..., :1]))
            first = back(out) * (1.0 + 1e-3 * i)
        return total
    return jax.jit(program)


def main():
    rng = np.random.default_rng(0)
    threads = torch.get_num_threads()
    print(f"jax {jax.__version__}, torch {torch.__version__}, "
          f"{os.cpu_count()} CPUs, torch threads {threads}")
    print("| op | JAX alone (ms) | JAX in a program (ms) | "
          f"PyTorch, 1 thread (ms) | PyTorch, {threads} threads (ms) |")
    print("|---|---|---|---|---|")
    for name, kinds, args, op, back, torch_op in cases(rng):
        jax_args = [jnp.asarray(a) for a in args]
        alone = jax.jit(op)
        alone_ms = 1000 * mixers._timed(
            lambda: jax.block_until_ready(alone(*jax_args)), 30)
        in_program_ms = traced_op_ms(chained(op, back, jax_args), jax_args,
                                     kinds)
        torch_args = [torch.from_numpy(np.asarray(a)) for a in args]
        torch.set_num_threads(1)
        one = 1000 * mixers._timed(lambda: torch_op(*torch_args), 30)
        torch.set_num_threads(threads)
        every = 1000 * mixers._timed(lambda: torch_op(*torch_args), 30)
        print(f"| {name} | {alone_ms:.2f} | {in_program_ms:.2f} | "
              f"{one:.2f} | {every:.2f} |")


if __name__ == "__main__":
    main()
