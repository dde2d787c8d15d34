"""Our DLR `init="omega"` side by side with the NTFS code's DLR kernel.

    python benchmarks/reference_parity_dlr.py --ntfs-repo /tmp/ntfs
        [--hidden-dim 16] [--state-dim 64] [--length 300] [--seeds 3]

    git -C <clone of IdoAmos/not-from-scratch> archive 3e4b6d9 \\
        src/models/sequence/ss/dss.py | tar -x -C /tmp/ntfs
    pip install opt_einsum                                       # its import
    for b in jax tensorflow torch; do KERAS_BACKEND=$b \\
        python benchmarks/reference_parity_dlr.py --ntfs-repo /tmp/ntfs; done

`--ntfs-repo` is a checkout of IdoAmos/not-from-scratch at commit 3e4b6d9
(its first). At its last commit, f919137, `dss.py` does not import: line
432 ends in a stray `////` (a syntax error), added by 86acc52 ("some small
changes"), the file's one change since 3e4b6d9, so the line numbers below
hold at both. Its `src/models/sequence/ss/dss.py` is imported from there,
never copied: `DLRKernel` (lines 406-537) built as
`configs/model/layer/dlr.yaml` sets it (`Lambda_init: omega`, `W_scale`
1/N, `version: ''`, `kernel_to_real: real`, the DLR LRA files' `lr` of
1e-4 for Lambda and W)
with two channels (the files' `bidirectional: true`). The module imports
`pytorch_lightning` for one logging decorator, `rank_zero_only`; where
PyTorch Lightning is not installed an identity stands in for it (the
benchmark says so). `pykeops` is optional there: without it the kernel
takes its einsum path (`DLRKernel.kernel`, lines 520-525), the one
compared here.

Ours: `lra_keras.layers.DLR(init="omega", causal=False)` under the backend
of `KERAS_BACKEND`.

For each seed it prints and gates:
  a. the start: the imaginary parts equal (2 pi n / N, no randomness);
     Re log Lambda = -x^2 in [-dt_max / 2, -dt_min / 2] on both sides; the
     W parts' standard deviations against 1/N (tolerance 10%, three
     standard errors at these sizes).
  b. the reference's Lambda and W copied into ours, then the kernels of
     both (C = 2, H, L) compared with each other and with the same
     formula in float64: max differences over max |K|. Gate 1e-4 for ours
     (both float32; the reference's own distance to float64 is printed,
     ungated).
  c. the whole block on a padded batch: the reference's `DSS` (lines
     602-748) as the NTFS DLR files build it (`bidirectional: true`,
     GELU, `postact: glu`, `transposed: false`), its kernel, D and
     output Linear copied into ours (`output_activation="glu"`,
     `read_padding="longest"`, the NTFS DLR rows' setting); rows of
     three lengths whose padded positions hold arbitrary values (as the
     layers below make them). The reference gets the batch cut at its
     longest row and no mask (the S4 loaders' batch; `DSS.forward` reads
     no lengths), ours the full-length batch with its padding mask and
     more padding after the longest row. Gate 1e-4 of max |y| on every
     position before that row's end; printed beside it, ungated, how far
     the zeroed padding (`read_padding=False`, the S4 code's `S4Block`)
     lands from the reference.
Exit status 1 when a gate fails.
"""

import argparse
import importlib.util
import os
import sys
import types
from pathlib import Path

import numpy as np
from gates import print_rows
from gates import verdict

# Both sides compute in float32: the phase theta * l (up to 2 pi L) is
# rounded there, each side ~2e-5 of max |K| from the float64 formula at
# L = 300 (measured; the reference's complex64 einsum likewise).
KERNEL_RTOL = 1e-4
STD_RTOL = 0.1


def import_dss(repo):
    """The checkout's `dss.py` as a module (and whether a stand-in for
    PyTorch Lightning's `rank_zero_only` was needed)."""
    path = Path(repo) / "src/models/sequence/ss/dss.py"
    if not path.exists():
        raise SystemExit(f"--ntfs-repo: {path} does not exist; give a "
                         "checkout of IdoAmos/not-from-scratch")
    stand_in = importlib.util.find_spec("pytorch_lightning") is None
    if stand_in:
        utilities = types.ModuleType("pytorch_lightning.utilities")
        utilities.rank_zero_only = lambda fn: fn
        package = types.ModuleType("pytorch_lightning")
        package.utilities = utilities
        sys.modules.update({"pytorch_lightning": package,
                            "pytorch_lightning.utilities": utilities})
    spec = importlib.util.spec_from_file_location("ntfs_dss", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, stand_in


def reference_kernel(dss, hidden, state, seed, dt_min, dt_max):
    import torch
    from omegaconf import DictConfig

    torch.manual_seed(seed)
    kernel = dss.DLRKernel(
        hidden, N=state, channels=2, dt_min=dt_min, dt_max=dt_max,
        lr=DictConfig({"Lambda": 1e-4, "Lambda_re": None, "W": 1e-4}),
        Lambda_init="omega", W_scale=None, wd=0, pykeops=False,
        kernel_to_real="real", version="")
    return kernel


def block_rows(dss, hidden, state, length, seed, dt_min, dt_max):
    """Part c: the rows comparing our DLR block with the reference's
    `DSS` on a padded batch (see the module docstring)."""
    import keras
    import torch
    from omegaconf import DictConfig

    from lra_keras.layers import DLR

    torch.manual_seed(seed)
    ref = dss.DSS(
        hidden, d_state=state, bidirectional=True, activation="gelu",
        postact="glu", transposed=False, kernel_type="dlr", dt_min=dt_min,
        dt_max=dt_max,
        lr=DictConfig({"Lambda": 1e-4, "Lambda_re": None, "W": 1e-4}),
        Lambda_init="omega", W_scale=None, wd=0, pykeops=False,
        kernel_to_real="real", version="")
    kernel = ref.kernel
    linear = ref.output_linear[0]  # Linear(H, 2H), then nn.GLU
    outputs = {}
    for read_padding in ("longest", False):
        ours = DLR(state_dim=state, init="omega", dt_min=dt_min,
                   dt_max=dt_max, causal=False, output_activation="glu",
                   read_padding=read_padding)
        ours.build((None, None, hidden))
        w = kernel.W.detach().numpy()  # (C, H, N, 2)
        ours.Lambda_x.assign(kernel.Lambda_log_neg_re.detach().numpy())
        ours.theta.assign(kernel.Lambda_im.detach().numpy())
        ours.C_real.assign(w[..., 0])
        ours.C_imag.assign(w[..., 1])
        ours.D.assign(ref.D.detach().numpy()[0])
        ours.output_dense.kernel.assign(linear.weight.detach().numpy().T)
        ours.output_dense.bias.assign(linear.bias.detach().numpy())
        outputs[read_padding] = ours
    rng = np.random.default_rng(seed)
    lengths = np.array([length - 20, length // 2, length // 5])
    longest = int(lengths.max())
    u = rng.normal(size=(3, length, hidden)).astype("float32")
    mask = np.arange(length) < lengths[:, None]
    with torch.no_grad():
        y_ref, _ = ref(torch.from_numpy(u[:, :longest]))
    y_ref = y_ref.numpy().astype("float64")
    scale = float(np.abs(y_ref).max())
    ours_y = {
        key: keras.ops.convert_to_numpy(
            layer(u, padding_mask=mask))[:, :longest].astype("float64")
        for key, layer in outputs.items()}
    return [
        ("block, read_padding='longest': max |ours - ref| / max |y|",
         float(np.abs(ours_y["longest"] - y_ref).max()) / scale,
         KERNEL_RTOL),
        ("block, zeroed padding (S4Block's) vs ref, shorter rows' real "
         "positions", float(max(
             np.abs(ours_y[False][i, :n] - y_ref[i, :n]).max()
             for i, n in enumerate(lengths))) / scale, None),
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ntfs-repo", required=True)
    parser.add_argument("--hidden-dim", type=int, default=16)
    parser.add_argument("--state-dim", type=int, default=64)
    parser.add_argument("--length", type=int, default=300)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)

    import keras
    import torch

    from lra_keras.layers import DLR

    dss, stand_in = import_dss(args.ntfs_repo)
    print(f"backend {keras.backend.backend()}; reference dss.py from "
          f"{args.ntfs_repo}"
          + ("; rank_zero_only: identity (no pytorch_lightning)"
             if stand_in else ""))
    dt_min, dt_max = 1e-4, 0.1  # configs/model/layer/dlr.yaml lines 8-9
    n, h, length = args.state_dim, args.hidden_dim, args.length
    failed = []
    for seed in range(args.seeds):
        ref = reference_kernel(dss, h, n, seed, dt_min, dt_max)
        keras.utils.set_random_seed(seed)
        ours = DLR(state_dim=n, init="omega", dt_min=dt_min, dt_max=dt_max,
                   causal=False)
        ours.build((None, None, h))
        x_ref = ref.Lambda_log_neg_re.detach().numpy().astype("float64")
        theta_ref = ref.Lambda_im.detach().numpy().astype("float64")
        w_ref = ref.W.detach().numpy().astype("float64")  # (C, H, N, 2)
        x_ours = keras.ops.convert_to_numpy(ours.Lambda_x).astype("float64")
        theta_ours = keras.ops.convert_to_numpy(ours.theta)
        rows = [
            ("imag. part 2 pi n / N, max |ours - ref|",
             float(np.abs(theta_ours - theta_ref).max()), 1e-6),
        ]
        for name, x in (("reference", x_ref), ("ours", x_ours)):
            inside = np.all((x**2 >= dt_min / 2 * (1 - 1e-5))
                            & (x**2 <= dt_max / 2 * (1 + 1e-5)))
            rows.append((f"{name}: -x^2 in [-dt_max/2, -dt_min/2]",
                         0.0 if inside else 1.0, 0.5))
        for name, w in (("reference", w_ref[..., 0]),
                        ("reference imag", w_ref[..., 1]),
                        ("ours", keras.ops.convert_to_numpy(ours.C_real)),
                        ("ours imag",
                         keras.ops.convert_to_numpy(ours.C_imag))):
            rows.append((f"{name} W std x N - 1",
                         abs(float(np.std(w)) * n - 1.0), STD_RTOL))
        # b. the reference's weights in ours, kernels compared
        ours.Lambda_x.assign(x_ref.astype("float32"))
        ours.theta.assign(theta_ref.astype("float32"))
        ours.C_real.assign(w_ref[..., 0].astype("float32"))
        ours.C_imag.assign(w_ref[..., 1].astype("float32"))
        with torch.no_grad():
            k_ref, _ = ref(L=length)
        k_ref = k_ref.numpy().astype("float64")  # (C, H, L)
        k_ours = keras.ops.convert_to_numpy(
            ours.ssm_kernel(length)).astype("float64")
        # the same formula in float64 from the reference's weights:
        # K_l = Re(sum_n W_n exp((-x_n^2 + i theta_n) l))
        log_lam = -x_ref**2 + 1j * theta_ref  # (N,)
        w = w_ref[..., 0] + 1j * w_ref[..., 1]  # (C, H, N)
        exact = np.real(np.einsum(
            "chn,nl->chl", w, np.exp(log_lam[:, None] * np.arange(length))))
        scale = float(np.abs(exact).max())
        err_ref = float(np.abs(k_ref - exact).max()) / scale
        err_ours = float(np.abs(k_ours - exact).max()) / scale
        rows.append(("kernel max |ours - ref| / max |K|",
                     float(np.abs(k_ours - k_ref).max()) / scale,
                     KERNEL_RTOL))
        rows.append(("reference (float32) vs float64 formula",
                     err_ref, None))
        rows.append(("ours (float32) vs float64 formula",
                     err_ours, KERNEL_RTOL))
        rows += block_rows(dss, h, n, length, seed, dt_min, dt_max)
        print(f"\nseed {seed}: C=2, H={h}, N={n}, L={length}")
        print_rows(rows, failed, (seed,))
    return verdict(failed)


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.exit(main())
