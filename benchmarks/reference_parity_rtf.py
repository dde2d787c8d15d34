"""Our RTF layer side by side with the RTF authors' module.

    python benchmarks/reference_parity_rtf.py --rtf-repo /tmp/rtf
        [--hidden-dim 8] [--state-dim 4] [--length 64] [--seeds 3]

    git clone https://github.com/ruke1ire/RTF /tmp/rtf   # 1d9e1e5
    pip install einops                                   # its import
    for b in jax tensorflow torch; do KERAS_BACKEND=$b \\
        python benchmarks/reference_parity_rtf.py --rtf-repo /tmp/rtf; done

`--rtf-repo` is a checkout of ruke1ire/RTF (1d9e1e5); its `rtf.py` (the
`RTF` module, line 16 on) is imported from there, never copied
(`flashfftconv` is optional there: without it the FFT path runs, the one
compared here). Around it, the two steps its LRA block adds, written here
from their source: the wrapper's activation after the convolution
(`experiments/state-spaces/src/models/sequence/kernels/rtf_wrapper.py`
lines 29-32, GELU in every LRA config) and the S4 block's output
projection (`src/models/sequence/modules/s4block.py` lines 129-137:
`LinearActivation(H, H, activation="glu")`, an `nn.Linear(H, 2H)` and a
GLU over its last axis). Ours: `lra_keras.layers.RTF` under the backend
of `KERAS_BACKEND`, `dense_init="torch"`.

For each seed, bidirectional (every LRA config) and causal, with
`num_denominators` 2 and None (one per channel, Pathfinder's and Path-X's
`num_a: null`), it prints and gates:
  a. the weights: the reference's `ab` and `h_0` hold as many numbers
     as our numerator, denominator and feedthrough, and its
     `nn.Linear` as many as our output projection;
  b. forward: the reference's weights converted into ours (the rows of
     `ab`: the denominators of both directions first, then the
     numerators; `h_0` forward channels first), random coefficients
     (stable denominators), the same input: max |ours - ref| / max |ref|,
     gate 1e-4;
  c. gradients: of the mean squared output, for every weight (through
     the converter), max difference over the weight's max gradient,
     gate 1e-3;
  d. the start (the code's `init="zeros"`): `a = b = 0` on both sides
     and `h_0`'s standard deviation within 10% of 1 on both sides (on
     a second pair of 512 channels).
The reference's bidirectional path at an odd length is printed, ungated:
it transforms 2L points and inverts 2L - 1 (`rtf.py` lines 112-118),
where the causal path uses 2L - 1 for both.
Exit status 1 when a gate fails.
"""

import argparse
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
from gates import print_rows
from gates import verdict

FORWARD_RTOL = 1e-4
GRADIENT_RTOL = 1e-3
STD_RTOL = 0.1


def import_rtf(repo):
    """The checkout's `rtf.py` as a module."""
    path = Path(repo) / "rtf.py"
    if not path.exists():
        raise SystemExit(f"--rtf-repo: {path} does not exist; give a "
                         "checkout of ruke1ire/RTF")
    spec = importlib.util.spec_from_file_location("rtf_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ReferenceBlock:
    """The RTF module, GELU and `Linear(H, 2H)` + GLU, in PyTorch."""

    def __init__(self, rtf, hidden, state, length, num_a, bidirectional):
        import torch

        self.torch = torch
        self.rtf = rtf.RTF(hidden, state, length, num_a=num_a,
                           bidirectional=bidirectional)
        self.linear = torch.nn.Linear(hidden, 2 * hidden)

    def parameters(self):
        return dict(ab=self.rtf.ab, h_0=self.rtf.h_0,
                    kernel=self.linear.weight, bias=self.linear.bias)

    def __call__(self, u):
        torch = self.torch
        y = torch.nn.functional.gelu(self.rtf(u))  # nn.GELU's exact form
        return torch.nn.functional.glu(self.linear(y), dim=-1)


def to_ours(block, ours, hidden, num_a, directions):
    """The reference's weights as ours: `ab` is (directions x (num_a +
    H), N), the denominators of every direction first (`rtf.py` lines
    56-57, 87-92), `h_0` (directions x H)."""
    ab = block.rtf.ab.detach().numpy()
    a_rows = directions * num_a
    ours.denominator.assign(ab[:a_rows].reshape(directions, num_a, -1))
    ours.numerator.assign(ab[a_rows:].reshape(directions, hidden, -1))
    ours.feedthrough.assign(
        block.rtf.h_0.detach().numpy().reshape(directions, hidden))
    ours.output_dense.kernel.assign(block.linear.weight.detach().numpy().T)
    ours.output_dense.bias.assign(block.linear.bias.detach().numpy())


def gradients_as_reference(ours, grads, hidden, num_a, directions):
    """Our gradients laid out as the reference's weights."""
    g = {w.path.split("/")[-1]: np.asarray(v) for w, v in
         zip(ours.trainable_weights, grads)}
    ab = np.concatenate([
        g["ssm_denominator"].reshape(directions * num_a, -1),
        g["ssm_numerator"].reshape(directions * hidden, -1)])
    return dict(ab=ab, h_0=g["ssm_feedthrough"].reshape(-1),
                kernel=g["kernel"].T, bias=g["bias"])


def our_gradients(ours, u):
    """d mean(y^2) / d w for every trainable weight of `ours`."""
    import keras

    backend = keras.backend.backend()
    weights = ours.trainable_weights
    if backend == "jax":
        import jax

        def loss(values):
            with keras.StatelessScope(state_mapping=list(
                    zip(weights, values))):
                y = ours(u)
            return keras.ops.mean(y * y)

        return [np.asarray(g) for g in
                jax.grad(loss)([w.value for w in weights])]
    if backend == "tensorflow":
        import tensorflow as tf

        with tf.GradientTape() as tape:
            y = ours(u)
            loss = tf.reduce_mean(y * y)
        return [g.numpy() for g in tape.gradient(loss, weights)]
    import torch

    y = ours(torch.as_tensor(u))
    loss = torch.mean(y * y)
    values = [w.value for w in weights]
    return [g.detach().cpu().numpy()
            for g in torch.autograd.grad(loss, values)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtf-repo", required=True)
    parser.add_argument("--hidden-dim", type=int, default=8)
    parser.add_argument("--state-dim", type=int, default=4)
    parser.add_argument("--length", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)

    import keras
    import torch

    from lra_keras.layers import RTF

    rtf = import_rtf(args.rtf_repo)
    print(f"backend {keras.backend.backend()}; reference rtf.py from "
          f"{args.rtf_repo}")
    h, n, length = args.hidden_dim, args.state_dim, args.length
    if length % 2:
        raise SystemExit("--length must be even (see the docstring)")
    failed = []
    for seed in range(args.seeds):
        for bidirectional in (True, False):
            for num_a in (2, None):
                shared = num_a or h
                directions = 2 if bidirectional else 1
                torch.manual_seed(seed)
                block = ReferenceBlock(rtf, h, n, length, num_a,
                                       bidirectional)
                keras.utils.set_random_seed(seed)
                ours = RTF(state_dim=n, num_denominators=num_a,
                           truncation=length, causal=not bidirectional,
                           dense_init="torch")
                ours.build((None, length, h))
                rows = []
                # a. the weights
                ref_count = sum(p.numel() for p in
                                block.parameters().values())
                rows.append(("a. weights: |ours - ref| count",
                             abs(ours.count_params() - ref_count), 0))
                # d. the start
                ab0 = block.rtf.ab.detach().numpy()
                rows.append(("d. a, b at start: max |ref|, |ours|",
                             max(float(np.abs(ab0).max()),
                                 float(np.abs(keras.ops.convert_to_numpy(
                                     ours.numerator)).max()),
                                 float(np.abs(keras.ops.convert_to_numpy(
                                     ours.denominator)).max())), 0.0))
                # h_0's spread on a 512-channel layer each: >= 512 draws,
                # the gate 4.5 standard errors (1 / sqrt(2 x 512) each)
                wide = rtf.RTF(512, n, length, num_a=num_a,
                               bidirectional=bidirectional)
                ours_wide = RTF(state_dim=n, num_denominators=num_a,
                                causal=not bidirectional)
                ours_wide.build((None, length, 512))
                for name, value in (
                        ("ref", wide.h_0.detach().numpy()),
                        ("ours", keras.ops.convert_to_numpy(
                            ours_wide.feedthrough))):
                    rows.append((f"d. h_0 std - 1 (H=512), {name}",
                                 abs(float(np.std(value)) - 1.0),
                                 STD_RTOL))
                # b. forward from the same weights
                rng = np.random.default_rng(seed)
                with torch.no_grad():
                    ab = np.concatenate([
                        rng.uniform(-0.3 / n, 0.3 / n,
                                    size=(directions * shared, n)),
                        rng.normal(size=(directions * h, n)) * 0.5])
                    block.rtf.ab.copy_(torch.as_tensor(ab, dtype=torch.float32))
                to_ours(block, ours, h, shared, directions)
                u = rng.normal(size=(args.batch_size, length, h)).astype(
                    "float32")
                u_ref = torch.as_tensor(u)
                y_ref = block(u_ref)
                y_ours = keras.ops.convert_to_numpy(ours(u))
                y_np = y_ref.detach().numpy()
                rows.append(("b. forward max |ours - ref| / max |ref|",
                             float(np.abs(y_ours - y_np).max()
                                   / np.abs(y_np).max()), FORWARD_RTOL))
                # c. gradients of mean(y^2)
                params = block.parameters()
                loss = torch.mean(y_ref * y_ref)
                grads_ref = dict(zip(params, torch.autograd.grad(
                    loss, list(params.values()))))
                grads_ours = gradients_as_reference(
                    ours, our_gradients(ours, u), h, shared, directions)
                for name, g_ref in grads_ref.items():
                    g_ref = g_ref.numpy()
                    rows.append((
                        f"c. d/d {name}: max |ours - ref| / max |ref|",
                        float(np.abs(grads_ours[name] - g_ref).max()
                              / np.abs(g_ref).max()), GRADIENT_RTOL))
                print(f"\nseed {seed}: "
                      f"{'bidirectional' if bidirectional else 'causal'}, "
                      f"num_a {num_a}, H={h}, N={n}, L={length}")
                print_rows(rows, failed, (seed, bidirectional, num_a))
    # The reference's bidirectional path at an odd length (ungated).
    odd = length - 1
    torch.manual_seed(0)
    block = ReferenceBlock(rtf, h, n, length, 2, True)
    keras.utils.set_random_seed(0)
    ours = RTF(state_dim=n, num_denominators=2, truncation=length,
               causal=False, dense_init="torch")
    ours.build((None, odd, h))
    to_ours(block, ours, h, 2, 2)
    u = np.random.default_rng(0).normal(size=(1, odd, h)).astype("float32")
    y_ref = block(torch.as_tensor(u)).detach().numpy()
    y_ours = keras.ops.convert_to_numpy(ours(u))
    print(f"\nbidirectional at the odd length L={odd} (ungated): max |ours "
          f"- ref| / max |ref| = "
          f"{float(np.abs(y_ours - y_ref).max() / np.abs(y_ref).max()):.2e}")
    return verdict(failed)


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.exit(main())
