"""One `rfft` and `irfft` pair (with a product between) of (B, 64, L)
float32 rows zero-padded to each of several transform lengths, under
one backend's own FFT, the median of 15 calls after 2:

    python docs/results/fft_lengths_epyc/transforms.py torch 1184 \\
        2368,2400
    python docs/results/fft_lengths_epyc/transforms.py tensorflow 16385 \\
        32770,32805,32768 2

(backends: jax, tensorflow, torch; B = 32 unless given). Imports the
backend alone, not Keras.
"""

import statistics
import sys
import time

import numpy as np


def median_ms(call, calls=15):
    call()
    call()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main():
    backend, length = sys.argv[1], int(sys.argv[2])
    points = [int(s) for s in sys.argv[3].split(",")]
    batch = int(sys.argv[4]) if len(sys.argv) > 4 else 32
    x = np.random.default_rng(0).normal(size=(batch, 64, length))
    x = x.astype("float32")
    for n in points:
        if backend == "jax":
            import jax
            import jax.numpy as jnp

            xj = jnp.asarray(x)
            pair = jax.jit(lambda a, n=n: jnp.fft.irfft(
                jnp.fft.rfft(a, n=n) * 1.5, n=n))
            ms = median_ms(lambda: jax.block_until_ready(pair(xj)))
        elif backend == "tensorflow":
            import tensorflow as tf

            xt = tf.constant(x)
            pair = tf.function(lambda a, n=n: tf.signal.irfft(
                tf.signal.rfft(a, [n]) * 1.5, [n]))
            ms = median_ms(lambda: pair(xt).numpy())
        else:
            import torch

            xt = torch.tensor(x)
            ms = median_ms(lambda: torch.fft.irfft(
                torch.fft.rfft(xt, n=n) * 1.5, n=n))
        print(f"{backend} ({batch}, 64, {length}) in {n} points: "
              f"{ms:.2f} ms", flush=True)


if __name__ == "__main__":
    main()
