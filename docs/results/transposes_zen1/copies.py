"""PyTorch's copy of a (B, C, L) slice into (B, L, C) order on a CPU,
directly (`x.transpose(1, 2).contiguous()`) and through a buffer whose
rows are 16 elements longer than L (`backend_utils.channels_last`'s
path), for rows of the source a given number of floats apart; then the
addition of such a slice, seen transposed, into a (B, L, C) tensor in
place (a convolution's input gradient into the activations' gradient),
directly and through the padded rows: the median of 60 calls each, in
ms.

    python docs/results/transposes_zen1/copies.py
"""

import statistics
import time

import torch

SHAPES = [  # (B, C, L, floats between rows)
    (32, 64, 32, 64), (32, 64, 128, 256),
    (64, 128, 256, 256), (64, 128, 256, 512), (32, 128, 512, 512),
    (32, 128, 512, 1024), (16, 128, 1024, 1024), (16, 128, 1024, 2048),
    (4, 128, 4096, 8192), (1, 128, 16384, 32768), (16, 128, 1000, 2000),
    (16, 128, 1024, 1056), (16, 128, 1024, 1280), (16, 128, 1024, 1536),
    (16, 32, 1024, 2048), (16, 256, 1024, 2048),
]

ADDED = [(16, 128, 1024, 2048), (4, 128, 4096, 8192), (16, 128, 1000, 2000)]


def timed(fn, calls=60):
    fn()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def through_padded_rows(x):
    batch, channels, length = x.shape
    rows = x.new_empty((batch, channels, length + 16))[..., :length]
    rows.copy_(x)
    return rows.transpose(1, 2).contiguous()


def main():
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print("(B, C, L), bytes between rows: direct, padded rows (ms)")
    for batch, channels, length, spacing in SHAPES:
        x = torch.randn(batch, channels, spacing)[..., :length]
        assert torch.equal(through_padded_rows(x),
                           x.transpose(1, 2).contiguous())
        direct = timed(lambda: x.transpose(1, 2).contiguous())
        padded = timed(lambda: through_padded_rows(x))
        print(f"({batch}, {channels}, {length}), {4 * spacing}: "
              f"{direct:.3f}, {padded:.3f}", flush=True)
    print("addition into (B, L, C), (B, C, L), bytes between rows: "
          "direct, padded rows (ms)")
    for batch, channels, length, spacing in ADDED:
        x = torch.randn(batch, channels, spacing)[..., :length]
        total = torch.randn(batch, length, channels)
        direct = timed(lambda: total.add_(x.transpose(1, 2)))
        padded = timed(lambda: total.add_(through_padded_rows(x)))
        print(f"({batch}, {channels}, {length}), {4 * spacing}: "
              f"{direct:.3f}, {padded:.3f}", flush=True)


if __name__ == "__main__":
    main()
