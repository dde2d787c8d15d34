"""YCTFS's rotary rotation (`apply_rotary_across_heads`) under PyTorch,
forward and backward, in its real form (the pairs times cos plus the
flipped pairs times (-sin, sin)) and as a product of complex numbers
(what the library now runs in float32), the median of 20 calls after one
untimed (`benchmarks/mixers.py`'s `_timed`), and the largest difference
between the two forms' outputs and gradients.

    R=<checkout> python rotation_alone.py

Shapes: (batch, L, heads, head_dim) = (16, 1024, 4, 32) and (4, 4096, 4,
32), the queries or keys of `benchmarks/reference_speed.py`'s
Transformer (width 128, 16,384 tokens a batch).
"""

import os
import sys

os.environ["KERAS_BACKEND"] = "torch"
R = os.path.abspath(os.environ.get("R", "."))
sys.path.insert(0, os.path.join(R, "benchmarks"))
sys.path.insert(0, R)

import mixers  # noqa: E402 (from the checkout R)
import torch  # noqa: E402

from lra_keras.layers.rotary_attention import _rotary_tables  # noqa: E402
from lra_keras.layers.rotary_attention import _torch_rotate_pairs  # noqa: E402


def real_form(x, cos, sin):
    """The rotation as `apply_rotary_across_heads` computes it under
    TensorFlow and JAX (and did under PyTorch before)."""
    cos, sin = cos[None, ..., None], sin[None, ..., None]
    signed_sin = torch.cat([-sin, sin], -1)
    shape = x.shape
    pairs = x.reshape(*shape[:-1], shape[-1] // 2, 2)
    return (pairs * cos + torch.flip(pairs, [-1]) * signed_sin).reshape(shape)


def main():
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print("| (B, L, heads, hd) | real form (ms) | complex (ms) | "
          "largest difference, output / gradient |")
    print("|---|---|---|---|")
    for batch, length in ((16, 1024), (4, 4096)):
        x = torch.randn(batch, length, 4, 32, requires_grad=True)
        upstream = torch.randn(batch, length, 4, 32)
        cos, sin = _rotary_tables(length, 0, ("model", 4, 32, 10000.0,
                                              False))
        results = []
        for form in (real_form, _torch_rotate_pairs):
            def step():
                x.grad = None
                form(x, cos, sin).backward(upstream)
            results.append((1000 * mixers._timed(step, 20),
                            form(x, cos, sin).detach(), x.grad.clone()))
        (real_ms, real_y, real_g), (complex_ms, complex_y, complex_g) = results
        print(f"| {(batch, length, 4, 32)} | {real_ms:.2f} | "
              f"{complex_ms:.2f} | "
              f"{(real_y - complex_y).abs().max().item():.1e} / "
              f"{(real_g - complex_g).abs().max().item():.1e} |")


if __name__ == "__main__":
    main()
