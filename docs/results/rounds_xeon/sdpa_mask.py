"""What a padding mask costs PyTorch's fused attention on a CPU: forward
+ backward of `scaled_dot_product_attention` on (B, 4, L, 32) float32
without a mask, with an all-true (B, 1, 1, L) mask, and one row at a
time cut to its real keys (a "varlen" loop, no mask). Three rounds.

    python sdpa_mask.py 1024 16
    python sdpa_mask.py 4096 4
"""

import sys
import time

import torch
from torch.nn import functional as F

LENGTH, BATCH = int(sys.argv[1]), int(sys.argv[2])
HEADS, DEPTH = 4, 32


def main():
    torch.manual_seed(0)
    q, k, v = (torch.randn(BATCH, HEADS, LENGTH, DEPTH, requires_grad=True)
               for _ in range(3))
    mask = torch.ones(BATCH, 1, 1, LENGTH, dtype=torch.bool)

    def run(kind):
        if kind == "no mask":
            out = F.scaled_dot_product_attention(q, k, v)
        elif kind == "all-true mask":
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        else:
            real = mask.sum((1, 2, 3)).tolist()
            out = torch.cat([F.scaled_dot_product_attention(
                q[b:b + 1], k[b:b + 1, :, :real[b]], v[b:b + 1, :, :real[b]])
                for b in range(BATCH)])
        out.sum().backward()

    for _ in range(3):
        for kind in ("no mask", "all-true mask", "row loop"):
            run(kind)
            start = time.perf_counter()
            for _ in range(3):
                run(kind)
            ms = (time.perf_counter() - start) / 3 * 1e3
            print(f"{kind}, L = {LENGTH}, batch {BATCH}: {ms:.1f} ms")


if __name__ == "__main__":
    main()
