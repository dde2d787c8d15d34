"""S4D's kernel under PyTorch with its exponentials from real parts
(`s4d._torch_exp_of`) against PyTorch's `exp` of complex tensors (the
kernel as at fbd3111), paired in one process: the variants in turn, the
order reversed every other round (`benchmarks/paired.py`).

    python docs/results/s4d_exp_torch_epyc/paired.py [ROUNDS] [L,B ...]

"before" swaps `_torch_exp_of` for `torch.exp(torch.complex(re, im))`,
the one complex exponential the kernel took before. Four comparisons,
each the median of the rounds' before ÷ now (> 1: now is the faster),
with its range and both medians:

1. the exponential alone, at the shapes of the kernel's blocks (the
   quick preset's layer, 64 channels and 16 modes, at L = 128 and 1024;
   the 1K stack's, 128 channels and 32 modes, at L = 1024), 20 calls a
   round;
2. the kernel alone, forward and backward of its sum: the quick layer
   at L = 32, 128 and 1024, the 1K stack's layer at L = 1024, 20 calls
   a round;
3. the quick ListOps S4D's `train_on_batch` (`benchmarks/preset_step.py`'s
   `recipe_run`) on 10 of its first training batches of 32 x 32 tokens
   and on its batches of 32 x 128 (as many as its first 300 hold), a
   round each;
4. `benchmarks/mixers.py`'s 4-block S4D stack at L = 1024, batch 16
   (width 128), one `train_on_batch` a round.

Given stacks as L,B (`16384,1 4096,4`), it times only those stacks'
steps (4).
"""

import os
import sys
from pathlib import Path

os.environ["KERAS_BACKEND"] = "torch"
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import keras  # noqa: E402
import mixers  # noqa: E402
import paired  # noqa: E402
import torch  # noqa: E402
from preset_step import _batch_shape  # noqa: E402
from preset_step import recipe_run  # noqa: E402

from lra_keras.layers import s4d  # noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 15
STACKS = [tuple(int(n) for n in shape.split(",")) for shape in sys.argv[2:]]


def complex_exp(real, imag):
    return torch.exp(torch.complex(real, imag))


VARIANTS = {"now": s4d._torch_exp_of, "before": complex_exp}


def report(label, call):
    """Times `call` under both variants in turn and prints the row."""
    times = paired.under_values(s4d, "_torch_exp_of", VARIANTS, call,
                                ROUNDS)
    print(f"{label}: {paired.summary(times, 'before', 'now')}", flush=True)


def repeated(call, times):
    def run():
        for _ in range(times):
            call()
    return run


def s4d_layer(net):
    return next(layer for layer in net._flatten_layers()
                if isinstance(layer, s4d.S4D))


def stack_step(length, batch):
    """Pairs one step of the 4-block S4D stack at `length`, `batch`."""
    keras.utils.set_random_seed(0)
    stack, x, y = mixers.stack_and_batch("s4d", length, 128, 4, batch)
    stack.compile(*mixers.optimizer_and_loss())
    report(f"4-block S4D stack step, L = {length}, batch {batch}",
           lambda: stack.train_on_batch(x, y))
    return stack


def main():
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{ROUNDS} rounds")
    if STACKS:
        for length, batch in STACKS:
            stack_step(length, batch)
        return
    for shape in ((64, 16, 12), (64, 16, 32), (128, 32, 32)):
        generator = torch.Generator().manual_seed(0)
        real = -torch.rand(shape, generator=generator)
        imag = 10 * torch.randn(shape, generator=generator)
        report(f"exponential {shape}, 20 calls", repeated(
            lambda: s4d._torch_exp_of(real, imag), 20))

    _, _, train, _, net = recipe_run("listops", "s4d", "quick")
    quick = s4d_layer(net)
    stack = stack_step(1024, 16)
    for name, layer, length in (("quick layer", quick, 32),
                                ("quick layer", quick, 128),
                                ("quick layer", quick, 1024),
                                ("1K stack's layer", s4d_layer(stack), 1024)):
        report(f"kernel forward + backward, {name}, L = {length}, 20 calls",
               repeated(lambda: layer.ssm_kernel(length).sum().backward(),
                        20))

    batches = [train[i] for i in range(300)]
    for length, count in ((32, 10), (128, 10)):
        same = [b for b in batches if _batch_shape(b) == (32, length)]
        same = same[:count]
        report(f"quick step, {len(same)} batches of 32 x {length}",
               lambda same=same: [net.train_on_batch(*b) for b in same])


if __name__ == "__main__":
    main()
