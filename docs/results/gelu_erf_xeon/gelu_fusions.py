"""The GELU of a state-space block as XLA fuses it under JAX, with erfc
(`jax.nn.gelu`'s `Phi`) and with erf (PyTorch's), the median of 30 calls
of each jitted function after one untimed.

    python gelu_fusions.py

In a `StateSpaceLayer` step the activation meets the FFT convolution's
transposes, (B, C, 2L) <-> (B, L, C), and XLA fuses it into them:

- forward: the first L samples of the inverse FFT, transposed, then
  the GELU (`multiply_bitcast_fusion` in the step's HLO);
- backward: the GELU's derivative at those samples times the upstream
  gradient, transposed and zero-padded to 2L for the next FFT
  (`copy_pad_fusion`).

Each is timed as the step has it ("transposed") and on the same number
of elements in one layout ("one layout"), at the shapes of the
`benchmarks/mixers.py` stacks: B = 16, L = 1024, C = 128.
"""

import math
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

B, L, C = 16, 1024, 128
SQRT_HALF = math.sqrt(0.5)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def cdf_erfc(x):
    return 0.5 * lax.erfc(-x * SQRT_HALF)


def cdf_erf(x):
    return 0.5 + 0.5 * lax.erf(x * SQRT_HALF)


def derivative(cdf):
    return lambda x: cdf(x) + x * jnp.exp(-0.5 * x * x) * INV_SQRT_2PI


def forward_transposed(cdf):
    def f(spectrum_out, _):
        x = jnp.transpose(spectrum_out[:, :, :L], (0, 2, 1))
        return x * cdf(x)
    return f


def backward_transposed(cdf):
    def f(spectrum_out, upstream):
        x = jnp.transpose(spectrum_out[:, :, :L], (0, 2, 1))
        dx = derivative(cdf)(x) * upstream
        return jnp.pad(jnp.transpose(dx, (0, 2, 1)),
                       ((0, 0), (0, 0), (0, L)))
    return f


def forward_one_layout(cdf):
    return lambda x, _: x * cdf(x)


def backward_one_layout(cdf):
    return lambda x, upstream: derivative(cdf)(x) * upstream


def median_ms(function, *args, calls=30):
    function(*args).block_until_ready()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        function(*args).block_until_ready()
        times.append(time.perf_counter() - start)
    return 1000 * sorted(times)[calls // 2]


def main():
    rng = np.random.default_rng(0)
    irfft_out = jnp.asarray(rng.normal(size=(B, C, 2 * L)), jnp.float32)
    upstream = jnp.asarray(rng.normal(size=(B, L, C)), jnp.float32)
    x = jnp.asarray(rng.normal(size=(B, L, C)), jnp.float32)
    print(f"jax {jax.__version__}, (B, L, C) = {(B, L, C)}, float32")
    print("| pass | layout | erfc (ms) | erf (ms) |")
    print("|---|---|---|---|")
    for name, transposed, one_layout in (
            ("forward", forward_transposed, forward_one_layout),
            ("backward", backward_transposed, backward_one_layout)):
        row = [median_ms(jax.jit(transposed(cdf)), irfft_out, upstream)
               for cdf in (cdf_erfc, cdf_erf)]
        print(f"| {name} | transposed | {row[0]:.2f} | {row[1]:.2f} |")
        row = [median_ms(jax.jit(one_layout(cdf)), x, upstream)
               for cdf in (cdf_erfc, cdf_erf)]
        print(f"| {name} | one layout | {row[0]:.2f} | {row[1]:.2f} |")
    # How far apart the two are in float32, on a grid over [-10, 10].
    grid = jnp.linspace(-10.0, 10.0, 200001, dtype=jnp.float32)
    exact = 0.5 * np.vectorize(math.erfc)(
        -np.asarray(grid, np.float64) * SQRT_HALF)
    for name, cdf in (("erfc", cdf_erfc), ("erf", cdf_erf)):
        error = np.abs(np.asarray(cdf(grid), np.float64) - exact).max()
        print(f"Phi with {name}: largest absolute error {error:.2e} "
              "against float64 on [-10, 10]")


if __name__ == "__main__":
    main()
