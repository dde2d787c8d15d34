"""Loop fusions in which XLA evaluates an exponential, sine, cosine (or
another transcendental function) of a tensor more than 8 times smaller
than the fusion's output: XLA's loop fusions compute every element of
their output from their inputs, so a function of a small tensor that
the fusion then broadcasts is evaluated again for each output element,
as in `power_kernel`'s outer product before 27346f0 (4 sines and
cosines per element of (2N, L)).

    XLA_FLAGS="--xla_dump_to=/tmp/hlo_dlr --xla_dump_hlo_as_text \
        --xla_dump_hlo_module_re=.*train_step.*" \
        KERAS_BACKEND=jax python repeated_transcendentals.py dump dlr 1024
    python repeated_transcendentals.py scan /tmp/hlo_dlr [more dirs]

`dump` compiles and runs one training step of a `benchmarks/mixers.py`
stack (4 blocks of width 128, 16,384 tokens, no padding mask) under the
XLA_FLAGS given, from the checkout R (default: this one); `scan` reads
the optimised train step of each dump and prints, per fusion found, its
output's elements, how many such functions it evaluates per element,
and their names and shapes.
"""

import glob
import os
import re
import sys
from pathlib import Path

FUNCTIONS = ("cosine|sine|exponential|exponential-minus-one|log|"
             "log-plus-one|tanh|logistic|rsqrt|sqrt|power|erf|atan2")


def elements(shape):
    dims = re.findall(r"\[([\d,]*)\]", shape)
    count = 1
    for dim in (dims[0].split(",") if dims and dims[0] else []):
        count *= int(dim)
    return count


def scan(directory):
    path = glob.glob(f"{directory}/*jit_train_step.cpu_after_"
                     "optimizations.txt")[0]
    text = Path(path).read_text()
    found = []
    for name, output, body in re.findall(
            r"^(%fused_computation[.\d]*) \(.*?\) -> (\S+) \{\n(.*?)^\}",
            text, re.S | re.M):
        size = max((elements(s) for s in re.findall(
            r"[a-z]+\d*\[[\d,]*\]", output)), default=0)
        small = [(match.group(2), match.group(1).split("{")[0])
                 for match in re.finditer(rf"= (\S+) ({FUNCTIONS})\(", body)
                 if 8 * elements(match.group(1)) < size]
        if small and size >= 65536:
            found.append((size * len(small), size, name, small))
    print(f"== {directory}: {len(found)} fusions")
    for work, size, name, small in sorted(found)[::-1][:8]:
        print(f"  {work:>12,} evaluations: {size:,} elements x "
              f"{len(small)} in {name}: "
              + ", ".join(f"{f} {s}" for f, s in small[:4]))


def dump(model, length):
    root = Path(os.environ.get("R", Path(__file__).resolve().parents[3]))
    sys.path.insert(0, str(root / "benchmarks"))
    sys.path.insert(0, str(root))
    os.environ["KERAS_BACKEND"] = "jax"
    import mixers

    net, x, y = mixers.stack_and_batch(model, length, 128, 4,
                                       16384 // length, padded=False)
    optimizer, loss = mixers.optimizer_and_loss()
    net.compile(optimizer=optimizer, loss=loss)
    net.train_on_batch(x, y)


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        dump(sys.argv[2], int(sys.argv[3]))
    else:
        for directory in sys.argv[2:]:
            scan(directory)
