"""The NTFS Transformers' attentions side by side with the NTFS code's.

    git -C <clone of IdoAmos/not-from-scratch> archive 3e4b6d9 \\
        src local_attention | tar -x -C /tmp/ntfs
    pip install hydra-core opt_einsum einops                 # its imports
    for b in jax tensorflow torch; do KERAS_BACKEND=$b \\
        python benchmarks/reference_parity_ntfs_attention.py \\
        --ntfs-repo /tmp/ntfs; done

`--ntfs-repo` is a checkout of IdoAmos/not-from-scratch (3e4b6d9; its
`mha.py` is the same at f919137). Its `src.models.sequence.mha` is
imported from there, never copied: `MultiheadAttentionFlash` (lines
107-164), the attention of every NTFS Transformer file (`_name_: mhfa`,
`causal: false`, `bias: True`, dropout 0), with `rotary=True` as the
rotary runs set it on the command line (`RotaryEmbedding(d_k)` per head,
lines 29-73).

Ours: `lra_keras.layers.RotaryMultiHeadAttention` as the NTFS
Transformer rows build it (`rotary_scope="head"`, `max_wavelength`
10000, `rotary_disable_half=False`, `mask_semantics="longest"`), under
the backend of `KERAS_BACKEND`. The reference's weights go into ours:
its `linears[0:3]` into the query, key and value projections, `linears[3]`
into the output. The reference rotates adjacent channels (2m, 2m + 1) of
a head, ours the halves (m, m + d/2), at the same frequency
10000^(-2m/d): our query and key channel m take its channel 2m and our
m + d/2 its 2m + 1, the same permutation on both sides of every dot
product (`presets.ntfs`, "the same model up to a fixed permutation").

For each seed it prints and gates (max differences over max |y|):
  a. a batch without padding: the two outputs (gate 1e-5).
  b. a padded batch whose padded positions hold arbitrary values: the
     reference's cut at its longest row, without a mask (the S4 loaders'
     batch; `MultiheadAttentionFlash.forward` passes no mask to the
     attention and the blocks' `lengths` never reach it), ours at full
     length with the padding mask and more padding after that row; every
     position before the row's end (gate 1e-5). Printed beside it,
     ungated: how far `mask_semantics="keys"` (padded keys masked) lands
     from the reference on the shorter rows.
  c. the Path-X attention (`mhfla`): `MultiheadLocalAttention` (lines
     171-260; `LocalFlashAttention`, `local_attention/local_attention.py`
     lines 259-398) with windows of `--window` positions and one
     neighbour per side, as `transformer-lra-pathx-small.yaml` sets it
     (4096 there), against ours with `attention_window`, on four windows
     without padding (the pixel tasks; its local attention takes no
     mask) (gate 1e-5); printed beside it, ungated, how far attention to
     every key lands from it.
Exit status 1 when a gate fails.
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np
from gates import print_rows
from gates import verdict

GATE = 1e-5


def import_mha(repo):
    """The checkout's `src.models.sequence.mha` module."""
    path = Path(repo) / "src/models/sequence/mha.py"
    if not path.exists() or not (Path(repo) / "local_attention").is_dir():
        raise SystemExit(
            f"--ntfs-repo: {repo} lacks src/models/sequence/mha.py or "
            "local_attention/; give a checkout of IdoAmos/not-from-scratch "
            "(both folders)")
    sys.path.insert(0, str(Path(repo).resolve()))
    import src.models.sequence.mha as mha

    return mha


def rotary_permutation(head_dim):
    """Our channel j of a head takes the reference's `permutation[j]`."""
    half = head_dim // 2
    return np.concatenate([2 * np.arange(half), 2 * np.arange(half) + 1])


def convert(ref, ours, num_heads):
    """The reference's four Linears into our projections."""
    hidden = ref.d_model
    head_dim = hidden // num_heads
    order = rotary_permutation(head_dim)
    layers = (ours.query_dense, ours.key_dense, ours.value_dense)
    for i, (linear, dense) in enumerate(zip(ref.linears[:3], layers)):
        kernel = linear.weight.detach().numpy().T.reshape(
            hidden, num_heads, head_dim)
        bias = linear.bias.detach().numpy().reshape(num_heads, head_dim)
        if i < 2:  # queries and keys: the rotary pairs' layout
            kernel, bias = kernel[..., order], bias[..., order]
        dense.kernel.assign(kernel)
        dense.bias.assign(bias)
    out = ref.linears[3]
    ours.output_dense.kernel.assign(
        out.weight.detach().numpy().T.reshape(num_heads, head_dim, hidden))
    ours.output_dense.bias.assign(out.bias.detach().numpy())


def ours_from(ref, num_heads, **options):
    """Our attention as the NTFS rows build it, with `options`, holding
    the reference's weights."""
    from lra_keras.layers import RotaryMultiHeadAttention

    ours = RotaryMultiHeadAttention(
        num_heads=num_heads, key_dim=ref.d_model // num_heads,
        rotary_scope="head", max_wavelength=10000,
        rotary_disable_half=False, **options)
    ours.build((None, None, ref.d_model))
    convert(ref, ours, num_heads)
    return ours


def compare(mha, hidden, num_heads, length, seed):
    """The rows of one seed (see the module docstring)."""
    import keras
    import torch

    torch.manual_seed(seed)
    ref = mha.MultiheadAttentionFlash(hidden, num_heads, dropout=0.0,
                                      bias=True, causal=False, rotary=True)
    ref.eval()
    layers = {semantics: ours_from(ref, num_heads, mask_semantics=semantics)
              for semantics in ("longest", "keys")}
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(3, length, hidden)).astype("float32")

    def reference(inputs):
        with torch.no_grad():
            y, _ = ref(torch.from_numpy(inputs))
        return y.numpy().astype("float64")

    def ours_on(semantics, inputs, mask=None):
        return keras.ops.convert_to_numpy(layers[semantics](
            inputs, padding_mask=mask)).astype("float64")

    full = reference(x)
    scale = float(np.abs(full).max())
    rows = [("a. no padding: max |ours - ref| / max |y|",
             float(np.abs(ours_on("longest", x) - full).max()) / scale,
             GATE)]
    lengths = np.array([length - 9, length // 2, length // 4])
    longest = int(lengths.max())
    mask = np.arange(length) < lengths[:, None]
    cut = reference(x[:, :longest])
    scale = float(np.abs(cut).max())
    padded = ours_on("longest", x, mask)[:, :longest]
    keys = ours_on("keys", x, mask)
    rows += [
        ("b. padded, 'longest' (ref: cut, no mask): max |ours - ref| / "
         "max |y|", float(np.abs(padded - cut).max()) / scale, GATE),
        ("b. padded, 'keys' vs ref on the shorter rows' real positions",
         float(max(np.abs(keys[i, :n] - cut[i, :n]).max()
                   for i, n in enumerate(lengths[1:], 1))) / scale, None),
    ]
    return rows


def compare_windows(mha, hidden, num_heads, window, seed):
    """Part c's rows: the windowed attention of one seed."""
    import keras
    import torch

    torch.manual_seed(seed)
    ref = mha.MultiheadLocalAttention(
        hidden, num_heads, window_size=window, look_backward=1,
        look_forward=1, dropout=0.0, bias=True, causal=False, rotary=True)
    ref.eval()
    layers = {size: ours_from(ref, num_heads, attention_window=size)
              for size in (window, None)}
    x = np.random.default_rng(seed).normal(
        size=(2, 4 * window, hidden)).astype("float32")
    with torch.no_grad():
        y_ref, _ = ref(torch.from_numpy(x))
    y_ref = y_ref.numpy().astype("float64")
    scale = float(np.abs(y_ref).max())
    ours_y = {key: keras.ops.convert_to_numpy(layer(x)).astype("float64")
              for key, layer in layers.items()}
    return [
        (f"c. windows of {window}, one neighbour per side: max |ours - "
         "ref| / max |y|",
         float(np.abs(ours_y[window] - y_ref).max()) / scale, GATE),
        ("c. every key attended instead",
         float(np.abs(ours_y[None] - y_ref).max()) / scale, None),
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ntfs-repo", required=True)
    parser.add_argument("--hidden-dim", type=int, default=32)
    parser.add_argument("--num-heads", type=int, default=4)
    parser.add_argument("--length", type=int, default=40)
    parser.add_argument("--window", type=int, default=16)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)

    import keras

    mha = import_mha(args.ntfs_repo)
    print(f"backend {keras.backend.backend()}; reference mha.py from "
          f"{args.ntfs_repo}")
    failed = []
    for seed in range(args.seeds):
        rows = compare(mha, args.hidden_dim, args.num_heads, args.length,
                       seed)
        rows += compare_windows(mha, args.hidden_dim, args.num_heads,
                                args.window, seed)
        print(f"\nseed {seed}: D={args.hidden_dim}, heads={args.num_heads}, "
              f"L={args.length}")
        print_rows(rows, failed, (seed,))
    return verdict(failed)


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.exit(main())
