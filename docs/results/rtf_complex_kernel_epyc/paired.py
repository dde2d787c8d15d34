"""RTF's kernel on real and imaginary parts (`before`), on the
backend's complex tensors as a quotient (`quotient`, 2e257d0) and as a
product with the denominator's reciprocal (`now`, the library's), each
earlier form paired with `now` in one process:

    KERAS_BACKEND=tensorflow N=21 python paired.py kernel 16384
    KERAS_BACKEND=tensorflow N=21 python paired.py kernel 16384 quotient
    KERAS_BACKEND=tensorflow N=11 python paired.py step 16384

`kernel`: the kernel of one RTF layer of `benchmarks/mixers.py`'s size
(width 128, two directions, N = 64, one denominator) forward and
backward, a loss of the kernel's taps against fixed weights (compiled
by `jax.jit` under JAX, a `tf.function` under TensorFlow, eager under
PyTorch). `step`: `benchmarks/mixers.py`'s 4-block RTF stack (16,384
tokens a batch, no padding mask), its training step, as
`../tensorflow_graph_epyc/paired_step.py` pairs them. Both: N rounds of
each form in turn, the order swapped every round; prints both medians
and the median of the rounds' ratios (before / now) with their range,
and for `kernel` the largest difference of the loss and gradients.
"""

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE.parents[2] / "benchmarks"))
sys.path.insert(0, str(HERE.parent / "tensorflow_graph_epyc"))

import keras  # noqa: E402
import numpy as np  # noqa: E402
from keras import ops  # noqa: E402
from paired_step import compiled_stack  # noqa: E402
from paired_step import summary  # noqa: E402

from lra_keras.backend_utils import broadcast_to  # noqa: E402
from lra_keras.backend_utils import irfft  # noqa: E402
from lra_keras.backend_utils import rfft  # noqa: E402
from lra_keras.layers import rtf  # noqa: E402
from lra_keras.layers.ssm_kernels import first_taps  # noqa: E402

NOW = rtf.transfer_function_kernel


def pairs_kernel(numerator, denominator, feedthrough, length, points):
    """`rtf.transfer_function_kernel` before: Keras's `rfft` and
    `irfft` on real and imaginary parts, the quotient written out."""
    b = ops.cast(numerator, "float32")
    a = ops.cast(denominator, "float32")
    b = ops.concatenate([ops.zeros_like(b[..., :1]), b], axis=-1)
    a = ops.concatenate([ops.ones_like(a[..., :1]), a], axis=-1)
    b_real, b_imag = ops.rfft(b, fft_length=points)
    a_real, a_imag = ops.rfft(a, fft_length=points)
    if tuple(a_real.shape) != tuple(b_real.shape):
        a_real = broadcast_to(a_real, ops.shape(b_real))
        a_imag = broadcast_to(a_imag, ops.shape(b_real))
    denom = a_real * a_real + a_imag * a_imag
    h_real = (b_real * a_real + b_imag * a_imag) / denom
    h_imag = (b_imag * a_real - b_real * a_imag) / denom
    h_real = h_real + ops.cast(feedthrough, "float32")[..., None]
    kernel = ops.irfft((h_real, h_imag), fft_length=points)
    return first_taps(kernel, length)


def quotient_kernel(numerator, denominator, feedthrough, length, points):
    """`rtf.transfer_function_kernel` at 2e257d0: the complex spectra's
    quotient."""
    b = ops.cast(numerator, "float32")
    a = ops.cast(denominator, "float32")
    b = ops.concatenate([ops.zeros_like(b[..., :1]), b], axis=-1)
    a = ops.concatenate([ops.ones_like(a[..., :1]), a], axis=-1)
    spectrum = rfft(b, points) / rfft(a, points)
    spectrum = spectrum + ops.cast(
        ops.cast(feedthrough, "float32")[..., None], spectrum.dtype)
    return first_taps(irfft(spectrum, points), length)


FORMS = {"before": pairs_kernel, "quotient": quotient_kernel, "now": NOW}


def use(name):
    """Puts the `name` form in the layer (PyTorch reads it every call;
    JAX and TensorFlow when they trace)."""
    rtf.transfer_function_kernel = FORMS[name]


def kernel_steps(length, names):
    """{name: a call of the kernel's loss and gradients}, and the
    inputs."""
    dirs, width, n = 2, 128, 64
    rng = np.random.default_rng(0)
    args = [ops.convert_to_tensor(rng.normal(size=s).astype("float32")
                                  * 0.1)
            for s in [(dirs, 1, width, n), (dirs, 1, 1, n),
                      (dirs, 1, width)]]
    weights = ops.convert_to_tensor(
        rng.normal(size=(dirs, 1, width, length)).astype("float32"))

    def loss(form):
        return lambda *a: ops.sum(form(*a, length, length) * weights)

    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        def make(form):
            step = jax.jit(jax.value_and_grad(loss(form), (0, 1, 2)))
            return lambda: jax.block_until_ready(step(*args))
    elif backend == "tensorflow":
        import tensorflow as tf

        def make(form):
            @tf.function
            def step(*a):
                with tf.GradientTape() as tape:
                    tape.watch(a)
                    value = loss(form)(*a)
                return value, tape.gradient(value, a)
            return lambda: step(*args)
    else:
        import torch

        def make(form):
            def step():
                a = [x.detach().requires_grad_() for x in args]
                value = loss(form)(*a)
                return value, torch.autograd.grad(value, a)
            return step
    return {name: make(FORMS[name]) for name in names}


def flat(result):
    value, grads = result
    return [np.asarray(ops.convert_to_numpy(x)) for x in (value, *grads)]


def main():
    what, length = sys.argv[1], int(sys.argv[2])
    first = sys.argv[3] if len(sys.argv) > 3 else "before"
    names = (first, "now")
    rounds = int(os.environ.get("N", 15))
    if what == "kernel":
        calls = kernel_steps(length, names)
        results = {name: flat(call()) for name, call in calls.items()}
        difference = max(float(np.abs(a - b).max() / np.abs(a).max())
                         for a, b in zip(*results.values()))
        print(f"largest difference, relative to the largest entry: "
              f"{difference:.2e}")
    else:
        nets = {}
        for name in names:
            use(name)
            nets[name], x, y = compiled_stack("rtf", length)
        calls = {name: (lambda net=net: net.train_on_batch(x, y))
                 for name, net in nets.items()}
    times = {name: [] for name in names}
    for i in range(rounds):
        for name in (names if i % 2 == 0 else names[::-1]):
            use(name)
            start = time.perf_counter()
            calls[name]()
            times[name].append(time.perf_counter() - start)
    use("now")
    ratios = [a / b for a, b in zip(times[first], times["now"])]
    print(f"{keras.backend.backend()} {what} L={length}: "
          f"{summary(times, ratios)}")


if __name__ == "__main__":
    main()
