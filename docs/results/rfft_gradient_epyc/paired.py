"""`backend_utils.rfft` with its written-out gradient (`now`) against the
backend's own (`autodiff`, the library before), in one process:

    KERAS_BACKEND=tensorflow N=21 python paired.py alone 16384 256 65
    KERAS_BACKEND=torch N=11 python paired.py step rtf 16384
    KERAS_BACKEND=tensorflow N=21 python paired.py block 1024

`alone L ROWS TAPS`: forward and backward of `rfft` of (ROWS, TAPS) over
L points (an RTF layer's numerators: 256 rows of 65 taps), a loss of the
spectrum's real and imaginary parts against fixed weights (a
`tf.function` under TensorFlow, eager under PyTorch). `step MODEL L`:
`benchmarks/mixers.py`'s 4-block stack (16,384 tokens a batch, no
padding mask), its training step, each form traced with its own `rfft`.
`block L`: the training step of a model that is a `Dense` layer, one
`ConvBlock` and a mean, the block as `benchmarks/conv_block.py` times
it (YCTFS's Pathfinder layer: 32 groups, K = 61, width 64 to 128
channels, batch 32; its grouped convolution through
`fft_conv.grouped_fft_conv`); the `Dense` layer before it, so that the
block's input has a gradient, as in a stack.
Both: N rounds of each form in turn, the order swapped every round
(`benchmarks/paired.py`); prints both medians and the median of the
rounds' ratios (autodiff / now, > 1: faster now) with their range, and
for `alone` the largest difference of the gradients. JAX is left out:
its gradient of `rfft` is already one inverse transform (the same
values to the bit in a scratch comparison).
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE.parents[2] / "benchmarks"))
sys.path.insert(0, str(HERE.parent / "tensorflow_graph_epyc"))

import keras  # noqa: E402
import numpy as np  # noqa: E402
import paired  # noqa: E402
from paired_step import compiled_stack  # noqa: E402

from lra_keras import backend_utils  # noqa: E402

BACKEND = keras.backend.backend()
NAME = "_torch_rfft" if BACKEND == "torch" else "_tensorflow_rfft"
NOW = getattr(backend_utils, NAME)


def autodiff_rfft(x, fft_length):
    """`rfft` as before: the backend differentiates its transform."""
    if BACKEND == "torch":
        return backend_utils._torch_rfft_forward(x, fft_length)
    import tensorflow as tf

    return tf.signal.rfft(x, fft_length=[fft_length])


FORMS = {"autodiff": autodiff_rfft, "now": NOW}


def use(name):
    """`rfft` differentiated by the `name` form (PyTorch reads it every
    call, TensorFlow when it traces)."""
    setattr(backend_utils, NAME, FORMS[name])


def alone(points, rows, taps):
    """{form: a call of the loss's gradient}."""
    rng = np.random.default_rng(0)
    x, = (rng.normal(size=(rows, taps)).astype("float32"),)
    r, s = rng.normal(size=(2, rows, points // 2 + 1)).astype("float32")
    if BACKEND == "torch":
        import torch

        x, r, s = (torch.tensor(a) for a in (x, r, s))

        def make(name):
            def call():
                use(name)
                leaf = x.clone().requires_grad_()
                y = backend_utils.rfft(leaf, points)
                loss = (y.real * r + y.imag * s).sum()
                return torch.autograd.grad(loss, leaf)[0].numpy()
            return call
    else:
        import tensorflow as tf

        x, r, s = (tf.constant(a) for a in (x, r, s))

        def make(name):
            use(name)

            @tf.function
            def gradient():
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = backend_utils.rfft(x, points)
                    loss = tf.reduce_sum(tf.math.real(y) * r
                                         + tf.math.imag(y) * s)
                return tape.gradient(loss, x)

            gradient()  # traced with this form
            return lambda: gradient().numpy()
    return {name: make(name) for name in FORMS}


def conv_block_model(model, length):
    """A `Dense` layer, one `ConvBlock` (YCTFS's Pathfinder layer) and a
    mean, compiled and trained 3 untimed steps; with its batch."""
    from lra_keras.layers.conv_block import ConvBlock

    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, length, 64)).astype("float32")
    y = np.zeros((32,), "float32")
    keras.utils.set_random_seed(0)
    inputs = keras.Input((length, 64))
    h = keras.layers.Dense(64)(inputs)
    h = ConvBlock(kernel_size=61, intermediate_dim=128, groups=32)(h)
    net = keras.Model(inputs, keras.ops.mean(h, axis=(1, 2)))
    net.compile(optimizer=keras.optimizers.SGD(1e-3), loss="mse")
    for _ in range(3):
        net.train_on_batch(x, y)
    return net, x, y


def main():
    what = sys.argv[1]
    rounds = int(os.environ.get("N", 15))
    if what == "alone":
        points, rows, taps = (int(a) for a in sys.argv[2:5])
        calls = alone(points, rows, taps)
        got = {name: call() for name, call in calls.items()}
        scale = np.abs(got["autodiff"]).max()
        print(f"largest difference of the gradients, relative to the "
              f"largest entry: "
              f"{np.abs(got['autodiff'] - got['now']).max() / scale:.2e}")
        label = f"alone L={points} ({rows}, {taps})"
    else:
        if what == "block":
            model, length = "ConvBlock", int(sys.argv[2])
            build = conv_block_model
            label = f"block L={length}"
        else:
            model, length = sys.argv[2], int(sys.argv[3])
            build = compiled_stack
            label = f"step {model} L={length}"
        nets = {}
        for name in FORMS:
            use(name)
            nets[name], x, y = build(model, length)

        def step(name):
            use(name)
            nets[name].train_on_batch(x, y)

        calls = {name: (lambda name=name: step(name)) for name in FORMS}
    times = paired.in_turn(calls, rounds)
    use("now")
    medians = paired.medians(times)
    ratio, low, high = paired.ratios(times, "autodiff", "now")
    print(f"{BACKEND} {label}: autodiff {medians['autodiff'] * 1e3:.1f} "
          f"ms, now {medians['now'] * 1e3:.1f} ms, autodiff / now "
          f"{ratio:.3f} ({low:.3f}-{high:.3f}), {rounds} rounds")


if __name__ == "__main__":
    main()
