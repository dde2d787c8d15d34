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
import statistics
import sys
import time
from pathlib import Path

os.environ["KERAS_BACKEND"] = "jax"
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
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
    times = {name: [] for name in calls}
    ratios = []
    for i in range(ROUNDS):
        now = {}
        for name in (list(calls) if i % 2 == 0 else list(calls)[::-1]):
            start = time.perf_counter()
            calls[name]()
            now[name] = time.perf_counter() - start
            times[name].append(now[name])
        ratios.append(now["jax"] / now["torch"])
    print(f"B,L,H,D={sys.argv[1]}: JAX "
          f"{statistics.median(times['jax']) * 1e3:.1f} ms, PyTorch "
          f"{statistics.median(times['torch']) * 1e3:.1f} ms, JAX / "
          f"PyTorch {statistics.median(ratios):.3f} "
          f"({min(ratios):.3f}-{max(ratios):.3f}), {ROUNDS} rounds")


if __name__ == "__main__":
    main()
