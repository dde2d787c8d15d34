"""The attention kernel alone, forward and backward: lra_keras's JAX
path ("auto": the chunked attention, XLA-compiled) against PyTorch's
fused `scaled_dot_product_attention` (the reference Transformer's), in
one process, their calls in turn.

    R=10 python docs/results/attention_limits_epyc/jax_against_torch.py \\
        16,1024,4,32

B,L,H,D as the reference rows (batch 16, 4 heads of 32 at L = 1024);
the loss sum(out ** 2), no mask. Prints both medians and the median of
the rounds' JAX ÷ PyTorch (> 1: JAX is the slower), with its range.
"""

import os
import sys
from pathlib import Path

os.environ["KERAS_BACKEND"] = "jax"
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import paired  # noqa: E402
import torch  # noqa: E402

from lra_keras.layers import attention_kernels as ak  # noqa: E402

ROUNDS = int(os.environ.get("R", "10"))


def main():
    shape = tuple(int(s) for s in sys.argv[1].split(","))
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=shape).astype("float32") for _ in range(3)]
    jax_inputs = [jnp.asarray(a) for a in arrays]
    grads = jax.jit(jax.value_and_grad(
        lambda q, k, v: jnp.sum(ak.attention(q, k, v) ** 2),
        argnums=(0, 1, 2)))
    torch_inputs = [torch.tensor(a).transpose(1, 2).contiguous()
                    .requires_grad_() for a in arrays]  # (B, H, L, D)

    def torch_step():
        out = torch.nn.functional.scaled_dot_product_attention(
            *torch_inputs)
        (out ** 2).sum().backward()

    calls = {"jax": lambda: jax.block_until_ready(grads(*jax_inputs)),
             "torch": torch_step}
    for call in calls.values():
        call()
        call()
    times = paired.in_turn(calls, ROUNDS)
    median = paired.medians(times)
    ratio, low, high = paired.ratios(times, "jax", "torch")
    print(f"B,L,H,D={sys.argv[1]}: JAX {median['jax'] * 1e3:.1f} ms, "
          f"PyTorch {median['torch'] * 1e3:.1f} ms, JAX / PyTorch "
          f"{ratio:.3f} ({low:.3f}-{high:.3f}), {ROUNDS} rounds")


if __name__ == "__main__":
    main()
