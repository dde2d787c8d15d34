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

    KERAS_BACKEND=torch python benchmarks/step_memory.py [same options]

Under PyTorch (on a CPU) the same stack's `train_on_batch` runs once to
build the optimiser, then once more while `torch_live_peak` watches every
tensor an operation makes (a `TorchDispatchMode`, the backward's
operations included): printed are the peak of the bytes those tensors
hold while alive, and the tensors alive at that peak summed by the
operation that made them (the ATen operation and the lra_keras line that
called it, or the autograd node whose backward it ran). This is the
allocator's share left out: the growth of the resident set that
`mixers.py` and `reference_speed.py` report also holds what glibc's
malloc keeps of freed blocks (`reference_speed.py --live-memory` sets
the two side by side with the reference's). TensorFlow has neither
account here.
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
    import mixers

    net, x, y = mixers.stack_and_batch(model, length, hidden, layers, batch,
                                       padded)
    optimizer, loss = mixers.optimizer_and_loss()
    optimizer.build(net.trainable_variables)

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


def torch_live_peak(step, top=0):
    """(peak bytes, [(bytes, maker)] of the `top` largest makers at that
    peak) of the tensors the operations of `step()` make under PyTorch,
    while each is alive.

    A tensor's storage counts from the operation that returns it until
    it is freed (a `weakref.finalize` on the storage, whose Python object
    PyTorch keeps as long as the storage lives); views and in-place
    results share their storage and count once, and a view of a tensor
    made before the step (a weight) not at all. What an operation
    allocates and frees inside itself (a fused kernel's scratch) and the
    allocator's own keeping are not counted. A maker is the ATen
    operation and, in the forward pass, the innermost caller outside
    PyTorch, Keras and this file; in the backward pass, the autograd node
    that ran it.
    """
    import traceback
    import weakref

    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    live = {}  # storage address -> (bytes, maker)
    state = {"bytes": 0, "peak": 0, "at_peak": {}}
    skip = ("/torch/", "/keras/", __file__)

    def maker(func):
        node = torch._C._current_autograd_node()
        if node is not None:
            return f"{func} in the backward of {node.name()}"
        for frame in reversed(traceback.extract_stack()):
            if not any(part in frame.filename for part in skip):
                return (f"{func} at {Path(frame.filename).name}:"
                        f"{frame.lineno}")
        return str(func)

    def forget(address):
        state["bytes"] -= live.pop(address)[0]

    class Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            # a view or an in-place result holds one of its inputs'
            # storages: nothing new (the weights' views, say)
            inputs = {x.untyped_storage().data_ptr() for x in
                      torch.utils._pytree.tree_leaves((args, kwargs))
                      if isinstance(x, torch.Tensor)}
            for tensor in torch.utils._pytree.tree_leaves(out):
                if not isinstance(tensor, torch.Tensor):
                    continue
                storage = tensor.untyped_storage()
                address = storage.data_ptr()
                if not address or address in live or address in inputs:
                    continue
                live[address] = (storage.nbytes(),
                                 maker(func) if top else "")
                state["bytes"] += storage.nbytes()
                weakref.finalize(storage, forget, address)
                if state["bytes"] > state["peak"]:
                    state["peak"] = state["bytes"]
                    if top:
                        state["at_peak"] = dict(live)
            return out

    with Watch():
        step()
    sums = collections.Counter()
    for size, name in state["at_peak"].values():
        sums[name] += size
    return state["peak"], [(size, name) for name, size in
                           sums.most_common(top)]


def torch_report(args):
    """`main` under PyTorch: the live tensors' peak of each stack's
    training step (`torch_live_peak`), by what made them."""
    import mixers

    print(f"batch {args.batch}, width {args.hidden}, {args.layers} blocks, "
          f"float32, {'no' if args.unpadded else 'an all-ones'} padding "
          "mask; one training step (`train_on_batch`, AdamW) under "
          "PyTorch, its tensors watched while alive")
    for model in args.models:
        for length in args.lengths:
            net, x, y = mixers.stack_and_batch(
                model, length, args.hidden, args.layers, args.batch,
                padded=not args.unpadded)
            optimizer, loss = mixers.optimizer_and_loss()
            net.compile(optimizer=optimizer, loss=loss)
            net.train_on_batch(x, y)  # builds the optimiser's state
            peak, makers = torch_live_peak(
                lambda: net.train_on_batch(x, y), args.top)
            print(f"\n{model}, L = {length}: live tensors' peak "
                  f"{peak / MiB:,.2f} MiB; the largest by what made them:")
            print(f"{'MiB':>8}  maker")
            for size, name in makers:
                print(f"{size / MiB:8,.1f}  {name}")


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
    if backend == "torch":
        return torch_report(args)
    if backend != "jax":
        parser.error("step_memory reads XLA's account of a compiled JAX "
                     "step or watches PyTorch's tensors: run it with "
                     f"KERAS_BACKEND=jax or torch (got {backend})")
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
