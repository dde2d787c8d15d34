"""The rotary Transformer's training step with its attention and without
it, ours or the PyTorch reference's, paired in one process:

    cd docs/results/flat_products_epyc
    KERAS_BACKEND=jax N=6 python rest_of_step.py ours
    N=6 python rest_of_step.py reference

`benchmarks/reference_speed.py`'s Transformer row at L = 1024 (4 blocks
of width 128, batch 16; ours without a padding mask, as that benchmark
runs it): the step as it is (`full`), and with every block's attention
replaced by q + k + v, the rotated queries and keys and the values
summed (`rest`), so that the projections, the rotation and their
gradients all still run. Ours: `lra_keras.layers.rotary_attention.
attention`, traced that way in a second stack under JAX and TensorFlow;
the reference: `torch.nn.functional.scaled_dot_product_attention`, its
fused kernel. Ours is `../tensorflow_graph_epyc/paired_step.py`'s
`compiled_stack` (16,384 tokens, the same seed, 3 steps while tracing).
The two steps in turn, N times, the order swapped every
round (replaced around each step: PyTorch runs eagerly). Prints both
medians, their difference (the attention's share of the step, forward
and backward, all blocks) and the median of the rounds' ratios.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent
                       / "tensorflow_graph_epyc"))

LENGTH = 1024
ORIGINAL = {}


def _summed(q, k, v, *args, **kwargs):
    return q + k + v


def attention_off(off=True):
    """Replaces (`off`) or puts back our attention and PyTorch's fused
    one."""
    from lra_keras.layers import rotary_attention

    targets = [(rotary_attention, "attention")]
    if "torch" in sys.modules:
        from torch.nn import functional

        targets.append((functional, "scaled_dot_product_attention"))
    for module, name in targets:
        ORIGINAL.setdefault((module, name), getattr(module, name))
        setattr(module, name, _summed if off else ORIGINAL[(module, name)])


def _ours():
    import keras
    from paired_step import compiled_stack

    steps = {}
    for name in ("full", "rest"):
        attention_off(name == "rest")
        net, x, y = compiled_stack("transformer", LENGTH)  # traced here
        steps[name] = lambda net=net, x=x, y=y: net.train_on_batch(x, y)
    return steps, f"ours ({keras.backend.backend()})"


def _reference():
    import reference_speed

    args = argparse.Namespace(model="transformer", hidden=128, layers=4,
                              batch=16, tokens=None, dtype_policy="float32")
    step, _, _ = reference_speed.reference_training_step(args, LENGTH)
    return {"full": step, "rest": step}, "reference (PyTorch)"


def main():
    side = sys.argv[1]
    steps, label = _ours() if side == "ours" else _reference()
    times = {name: [] for name in steps}
    for name in steps:  # untimed
        for _ in range(2):
            attention_off(name == "rest")
            steps[name]()
    for i in range(int(os.environ.get("N", 6))):
        for name in (("full", "rest") if i % 2 == 0 else ("rest", "full")):
            attention_off(name == "rest")
            start = time.perf_counter()
            steps[name]()
            times[name].append(time.perf_counter() - start)
    attention_off(False)
    full, rest = (statistics.median(times[n]) for n in ("full", "rest"))
    ratios = [a / b for a, b in zip(times["full"], times["rest"])]
    print(f"{label} L={LENGTH}: full {full:.3f} s, rest {rest:.3f} s, "
          f"attention {full - rest:.3f} s; full / rest a round: median "
          f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-"
          f"{max(ratios):.2f})", flush=True)


if __name__ == "__main__":
    main()
