"""What a compiled JAX training step keeps in memory, and what made it.

    KERAS_BACKEND=jax python benchmarks/step_memory.py
        [--models transformer mega] [--lengths 1024] [--hidden 128]
        [--layers 4] [--batch 16] [--top 12] [--unpadded]

For each family and length: `benchmarks/mixers.py`'s stack (the sizes of
`benchmarks/reference_speed.py`), one training step (forward, backward
and the AdamW update, the weights donated, as `model.fit` runs it)
compiled by XLA through `stateless_call` and `stateless_apply`. Printed:
XLA's own account of the step (`memory_analysis()`: temporaries,
arguments, outputs), then the buffers live at the temporaries' peak,
summed by the operation that made them (its JAX name with the block
index dropped, from the optimised HLO's metadata), largest first: the
profile that found what the leaner backward removes
(docs/results/lean_backward_cpu).

It reads XLA's dump (`--xla_dump_to`, set here into a temporary folder
before JAX starts; the buffer assignment's live ranges at the peak) and
compiles without running, so it needs no more memory than compiling.
JAX only: the other backends have no such account.
"""

import argparse
import collections
import glob
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MiB = 2**20


def compile_step(model, length, hidden, layers, batch, padded=True):
    """The compiled training step of the family's stack (a jax
    `Compiled`)."""
    import jax
    import keras
    import mixers

    net, x, y = mixers.stack_and_batch(model, length, hidden, layers, batch,
                                       padded)
    optimizer = keras.optimizers.AdamW(1e-4)
    optimizer.build(net.trainable_variables)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(trainable, non_trainable, optimizer_state, x, y):
        def loss_fn(trainable):
            logits, updated = net.stateless_call(
                trainable, non_trainable, x, training=True)
            return loss(y, logits), updated

        (value, non_trainable), grads = jax.value_and_grad(
            loss_fn, has_aux=True)(trainable)
        trainable, optimizer_state = optimizer.stateless_apply(
            optimizer_state, grads, trainable)
        return value, trainable, non_trainable, optimizer_state

    state = ([v.value for v in net.trainable_variables],
             [v.value for v in net.non_trainable_variables],
             [v.value for v in optimizer.variables])
    return jax.jit(step, donate_argnums=(0, 1, 2)).lower(
        *state, x, y).compile()


def peak_buffers(dump_dir, text):
    """[(bytes, operation)] of the buffers live at the temporaries' peak,
    from XLA's dump of the module whose optimised HLO is `text`."""
    name = re.search(r"^HloModule (\S+?),", text, re.M).group(1)
    ranges = sorted(glob.glob(os.path.join(
        dump_dir, f"*{name}*-live-range.txt")), key=os.path.getmtime)
    if not ranges:
        raise RuntimeError(f"XLA wrote no live ranges for {name} in "
                           f"{dump_dir}")
    # instruction -> its JAX op name, for the instructions that have one
    op_names = dict(re.findall(
        r'^\s+(?:ROOT )?%?(\S+) = .*?op_name="([^"]*)"', text, re.M))
    lines = Path(ranges[-1]).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "(peak)" in line)
    found = []
    for line in lines[start + 1:]:
        match = re.match(r"\s+(\S+)\{\S*\}: (\d+) bytes", line)
        if not match:
            break
        value, size = match.group(1), int(match.group(2))
        # Without metadata (a copy XLA inserted): its kind, in brackets.
        found.append((size, _operation(op_names[value]) if value in op_names
                      else "(" + re.sub(r"[.]\d+$", "", value) + ")"))
    return found


def _operation(op_name):
    """A JAX op name without the step's prefix and the blocks' indices:
    the same operation of every block sums into one row."""
    op_name = re.sub(r"^jit\([^)]*\)/", "", op_name)
    return re.sub(r"_block_\d+/", "_block_N/", op_name)


def report(model, length, compiled, dump_dir, top):
    analysis = compiled.memory_analysis()
    print(f"\n{model}, L = {length}: temporaries "
          f"{analysis.temp_size_in_bytes / MiB:,.0f} MiB, arguments "
          f"{analysis.argument_size_in_bytes / MiB:,.1f} MiB, outputs "
          f"{analysis.output_size_in_bytes / MiB:,.1f} MiB")
    sums = collections.Counter()
    counts = collections.Counter()
    for size, op in peak_buffers(dump_dir, compiled.as_text()):
        sums[op] += size
        counts[op] += 1
    print(f"live at the peak: {sum(sums.values()) / MiB:,.0f} MiB in "
          f"{sum(counts.values())} buffers; the largest by operation:")
    print(f"{'MiB':>8} {'buffers':>7}  operation")
    for op, size in sums.most_common(top):
        print(f"{size / MiB:8,.0f} {counts[op]:7d}  {op}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["transformer"])
    parser.add_argument("--lengths", nargs="+", type=int, default=[1024])
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--unpadded", action="store_true",
                        help="build the stack without a padding mask")
    args = parser.parse_args(argv)
    backend = os.environ.get("KERAS_BACKEND", "jax")
    if backend != "jax":
        parser.error("step_memory reads XLA's account of a compiled JAX "
                     f"step: run it with KERAS_BACKEND=jax (got {backend})")
    if "jax" in sys.modules:
        import jax

        if jax._src.xla_bridge.backends_are_initialized():
            parser.error("JAX started before the dump folder was set")
    dump_dir = tempfile.mkdtemp(prefix="step_memory_")
    os.environ["XLA_FLAGS"] = " ".join(filter(None, (
        os.environ.get("XLA_FLAGS"), f"--xla_dump_to={dump_dir}",
        "--xla_dump_hlo_pass_re=NONE")))
    print(f"batch {args.batch}, width {args.hidden}, {args.layers} blocks, "
          f"float32, {'no' if args.unpadded else 'an all-ones'} padding "
          "mask; one compiled training step under JAX")
    try:
        for model in args.models:
            for length in args.lengths:
                compiled = compile_step(model, length, args.hidden,
                                        args.layers, args.batch,
                                        padded=not args.unpadded)
                report(model, length, compiled, dump_dir, args.top)
    finally:  # the dump is read as it is written; nothing of it is kept
        shutil.rmtree(dump_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
