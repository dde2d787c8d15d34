"""PyTorch's fused attention (`scaled_dot_product_attention`, the
reference Transformer's) forward + backward at the shape of
`layouts.py`: (16, 4, 1024, 32), float32. Prints 7 calls after 2
untimed, and their median.

    python docs/results/rounds_zen1/torch_sdpa.py
"""

import statistics
import time

import torch


def main():
    torch.manual_seed(0)
    q, k, v = (torch.randn(16, 4, 1024, 32, requires_grad=True)
               for _ in range(3))

    def call():
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        (out ** 2).sum().backward()

    for _ in range(2):
        call()
    times = []
    for _ in range(7):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    print("ms", [round(t * 1e3) for t in times], "median",
          round(statistics.median(times) * 1e3))


if __name__ == "__main__":
    main()
