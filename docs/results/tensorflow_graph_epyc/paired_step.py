"""A stack's TensorFlow step with one of this folder's changes undone and
as it is, paired in one process:

    cd docs/results/tensorflow_graph_epyc
    N=20 python paired_step.py slices dlr 1024
    N=20 python paired_step.py rotation transformer 1024

Two `benchmarks/mixers.py` stacks of the family (4 blocks of width 128,
16,384 tokens, no padding mask, the same seed), the first traced with
the change undone (`before`), the second with the library as it is
(`now`); after 3 untimed steps each, N steps of each in turn (the order
swapped every round), so that the machine's drift meets both alike.
Prints both medians and the median of the rounds' ratios with their
range. The changes:

- `slices`: the state-space kernels as before, indexed per direction,
  the skip added at a slice of lag 0 and every kernel sliced to its
  length even where nothing is cut (`ssm_kernels.first_taps`);
- `rotation`: the rotary rotation's real form (a flip of the pairs and
  products) rather than `_tensorflow_rotate_pairs`' complex one;
- `glu`: the state-space blocks' GLU as the (rows, 2H) product split in
  two rather than `projections.dense_glu`'s two products.
"""

import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import keras  # noqa: E402
import mixers  # noqa: E402
from keras import ops  # noqa: E402

from lra_keras.layers import lean_backward  # noqa: E402
from lra_keras.layers import rotary_attention  # noqa: E402
from lra_keras.layers import rtf  # noqa: E402
from lra_keras.layers import s4  # noqa: E402
from lra_keras.layers import ssm_kernels  # noqa: E402
from lra_keras.layers import state_space  # noqa: E402


def sliced(x, length):
    """The slice as before: taken whatever the shapes."""
    return x[..., :length]


def indexed_convolve(self, u, skip=None):
    """`StateSpaceLayer.ssm_convolve` as before: indexed, the skip at a
    slice."""
    k = self.ssm_kernel(ops.shape(u)[1])  # (directions, H, L)
    causal = k[0]
    if skip is not None:
        causal = ops.concatenate(
            [causal[:, :1] + ops.cast(skip, causal.dtype)[:, None],
             causal[:, 1:]], axis=-1)
    return state_space.fft_conv(u, causal, None if self.causal else k[1])


def slices(undone):
    """Puts the kernels' slicing as before (`undone`) or as it is."""
    taps, convolve = ((sliced, indexed_convolve) if undone
                      else SLICES_NOW)
    for module in (ssm_kernels, rtf, s4):
        module.first_taps = taps
    state_space.StateSpaceLayer.ssm_convolve = convolve


def split_glu(dense, inputs):
    """The GLU as before: the (rows, 2H) product, then split."""
    return lean_backward.glu(dense(inputs), axis=-1)


def glu(undone):
    """Puts the split GLU (`undone`) or `projections.dense_glu`."""
    state_space.dense_glu = split_glu if undone else GLU_NOW


def rotation(undone):
    """Puts the real rotation (`undone`) or the complex one."""
    rotary_attention._tensorflow_graph_float32 = (
        (lambda x: False) if undone else ROTATION_NOW)


SLICES_NOW = (ssm_kernels.first_taps,
              state_space.StateSpaceLayer.ssm_convolve)
ROTATION_NOW = rotary_attention._tensorflow_graph_float32
GLU_NOW = state_space.dense_glu
CHANGES = {"slices": slices, "rotation": rotation, "glu": glu}


def compiled_stack(model, length):
    """The family's stack at `length` (the same seed), compiled and
    trained 3 untimed steps, so traced with the code in place now; with
    its batch."""
    keras.utils.set_random_seed(0)
    net, x, y = mixers.stack_and_batch(model, length, 128, 4,
                                       16384 // length, padded=False)
    optimizer, loss = mixers.optimizer_and_loss()
    net.compile(optimizer=optimizer, loss=loss)
    for _ in range(3):
        net.train_on_batch(x, y)
    return net, x, y


def paired_times(nets, x, y, rounds):
    """The two stacks' steps in turn, `rounds` times, the order swapped
    every round: their times, {name: [s]}, and the first's ÷ the
    second's a round."""
    first, second = nets
    times = {name: [] for name in nets}
    for i in range(rounds):
        for name in ((first, second) if i % 2 == 0 else (second, first)):
            start = time.perf_counter()
            nets[name].train_on_batch(x, y)
            times[name].append(time.perf_counter() - start)
    return times, [a / b for a, b in zip(times[first], times[second])]


def summary(times, ratios):
    """Both medians and the median of the rounds' ratios, with their
    range, as a line."""
    first, second = times
    medians = {name: statistics.median(t) for name, t in times.items()}
    return (f"{first} {medians[first]:.4f} s, {second} {medians[second]:.4f}"
            f" s; {first} / {second} a round: median "
            f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-"
            f"{max(ratios):.3f})")


def paired_stacks(change, model, length, names=("before", "now")):
    """The two stacks, {name: stack}, the first traced with `change`
    undone and the second as the library is, and their batch."""
    nets = {}
    for name in names:
        change(undone=name == names[0])
        nets[name], x, y = compiled_stack(model, length)
    change(undone=False)
    return nets, x, y


def with_all(each):
    """{name: change} of the changes `each`, and "all": every one."""

    def every(undone):
        for change in each:
            change(undone)

    return {**{change.__name__: change for change in each}, "all": every}


def padded_if_asked():
    """With `PADDED=1` in the environment, the stacks get a padding mask
    (every position real) from here on."""
    if os.environ.get("PADDED") == "1":
        build = mixers.stack_and_batch
        mixers.stack_and_batch = (
            lambda *args, padded=False: build(*args, padded=True))


def main(changes=None):
    """`python SCRIPT CHANGE MODEL L`: the paired steps of one of
    `changes` (this file's by default), as a line."""
    name, model, length = sys.argv[1], sys.argv[2], int(sys.argv[3])
    nets, x, y = paired_stacks((changes or CHANGES)[name], model, length)
    times, ratios = paired_times(nets, x, y, int(os.environ.get("N", 15)))
    print(f"{keras.backend.backend()} {name} {model} L={length}: "
          f"{summary(times, ratios)}")


if __name__ == "__main__":
    main()
