"""Our S4D ListOps model against the S4 authors' code, when a checkout is set.

Runs `benchmarks/reference_parity.py` (parts a and b, small sizes) under
the current `KERAS_BACKEND` against the state-spaces/s4 checkout at
`$LRA_S4_REPO` (commit d27bdf9, see the benchmark's docstring), and checks
its exit status: the parameter groups agree, the converted weights give
the same outputs (inference and training mode, full and padded batches)
and, with the epsilon
matched, the same weights after one AdamW step.

Skipped unless `LRA_S4_REPO` points to such a checkout and torch, einops,
omegaconf and hydra-core are installed: CI has no checkout, so there this
test skips.

The same for the YCTFS gMLP and rotary Transformer:
`benchmarks/reference_parity_yctfs.py` (parts a and b, small sizes) against
the pablomiralles22/long-transformers checkout (branch lra-paper) at
`$LRA_YCTFS_REPO`; skipped unless it is set and torch and omegaconf are
installed.

The DLR kernel and block against the NTFS code's:
`benchmarks/reference_parity_dlr.py` against `$LRA_NTFS_REPO` (see its
test below), and its Transformer's attention:
`benchmarks/reference_parity_ntfs_attention.py`; the RTF layer against the
RTF authors' module: `benchmarks/reference_parity_rtf.py` against
`$LRA_RTF_REPO`.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = os.environ.get("LRA_S4_REPO")
BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / (
    "reference_parity.py")

# One mark per checkout (a module-wide `pytestmark` would skip every test
# of the file without LRA_S4_REPO).
needs_s4_checkout = pytest.mark.skipif(
    not REPO or not Path(
        REPO, "src/models/sequence/backbones/model.py").exists(),
    reason="LRA_S4_REPO does not point to a state-spaces/s4 checkout",
)


def run_benchmark(script, *args):
    """Runs `benchmarks/<script>` with `args`; its stdout, after checking
    that it exited 0 (all its gated checks passed)."""
    result = subprocess.run(
        [sys.executable, str(BENCHMARK.with_name(script)), *args],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[
        -2000:]
    return result.stdout


# S4D, and the full S4 (`--family s4`, the config's NPLR kernel). For S4
# the exit status gates the step twice: against the reference as it is,
# which trains C~ = C (I - dA^L), with ours training C~ as the preset does
# (`C_parameterization="c_tilde"`), and against the reference made to
# train C, with ours training C (see the benchmark's docstring).
# With `num_ssms`, the CIFAR config's `n_ssm: 2`: the channels share 2
# (A, B) sets on both sides, at width 32 (at 16, one of S4's 128 B weights,
# whose summed gradient is below Adam's epsilon (the reference stepped it
# 0.4 of a step, the others 1.0), differs by 0.17 of a step: the
# ill-conditioned first step `close_step` describes).
@needs_s4_checkout
@pytest.mark.parametrize("num_ssms", [None, 2])
@pytest.mark.parametrize("family", ["s4d", "s4"])
def test_s4_family_matches_the_reference_code(family, num_ssms):
    for module in ("torch", "einops", "omegaconf", "hydra"):
        pytest.importorskip(module)
    sets = [] if num_ssms is None else ["--num-ssms", str(num_ssms)]
    stdout = run_benchmark(
        "reference_parity.py", "--s4-repo", REPO, "--family", family,
        "--hidden-dim", "16" if num_ssms is None else "32",
        "--num-layers", "2", "--length", "64",
        "--batch-size", "3", "--parts", "a", "b", "--dt-transforms",
        "softplus", *sets)
    assert "a. parameter groups: PASS" in stdout
    # the padded batch in training mode too: the preset's BatchNorm
    # counts the padding as the reference's (`batch_norm_count_padding`)
    assert "b. dt_transform='softplus': forward: PASS" in stdout
    if family == "s4d":
        # ... and on the batch fed longer than its longest row, against
        # the reference's batch padded to that row alone ("longest")
        assert re.search(r"forward, training, padded, fed longer batch \| "
                         r"\S+ \| ok; running stats \S+ ok", stdout)
    if family == "s4":
        step = "b. dt_transform='softplus': one step, PyTorch's epsilon, the "
        assert (step + "preset, reference training C, ours "
                "C_parameterization='c': PASS") in stdout
        assert (step + "preset, reference as is, training C~, ours "
                "C_parameterization='c_tilde': PASS") in stdout


YCTFS_REPO = os.environ.get("LRA_YCTFS_REPO")


@pytest.mark.skipif(
    not YCTFS_REPO or not Path(
        YCTFS_REPO, "src/models/layers/gmlp.py").exists(),
    reason="LRA_YCTFS_REPO does not point to a long-transformers checkout",
)
def test_yctfs_gmlp_and_transformer_match_the_reference_code():
    for module in ("torch", "omegaconf"):
        pytest.importorskip(module)
    stdout = run_benchmark(
        "reference_parity_yctfs.py", "--yctfs-repo", YCTFS_REPO,
        "--hidden-dim", "16", "--intermediate-dim", "32", "--num-layers", "2",
        "--length", "64", "--batch-size", "3", "--parts", "a", "b")
    for model in ("gmlp", "transformer"):
        assert f"{model}: a. parameter groups: PASS" in stdout
        assert f"{model}: b. perturbed weights: forward: PASS" in stdout


# The MEGA ListOps model against facebookresearch/mega:
# `benchmarks/reference_parity_mega.py` (parts a and b, small sizes, full
# and chunked attention) against the checkout at `$LRA_MEGA_REPO`; its
# exit status covers the preset's settings against the README command, the
# schedule after warmup, the parameter groups, the forward passes and two
# AdamW steps with fairseq's epsilon placement. Skipped unless it is set
# and torch is installed.
MEGA_REPO = os.environ.get("LRA_MEGA_REPO")


@pytest.mark.skipif(
    not MEGA_REPO or not Path(
        MEGA_REPO, "fairseq/models/lra/mega_lra_encoder.py").exists(),
    reason="LRA_MEGA_REPO does not point to a facebookresearch/mega "
    "checkout",
)
def test_mega_matches_the_reference_code():
    pytest.importorskip("torch")
    stdout = run_benchmark(
        "reference_parity_mega.py", "--mega-repo", MEGA_REPO, "--hidden-dim",
        "16", "--num-layers", "2", "--key-dim", "8", "--ema-dim", "4",
        "--length", "64", "--batch-size", "3", "--chunk-sizes", "-1", "16",
        "--parts", "a", "b")
    for chunk in ("no chunks", "chunk 16"):
        assert f"b. {chunk}: forward: PASS" in stdout
    assert "a. parameter groups: PASS" in stdout


# The S5 ListOps model against lindermanlab/S5:
# `benchmarks/reference_parity_s5.py` (parts a and b, small sizes) against
# the checkout at `$LRA_S5_REPO`; its exit status covers the preset row
# against run_lra_listops.sh, the parameter groups (B's included: the
# preset's `B_learning_rate`, `B_weight_decay`), the forward passes on a
# full-length batch and
# one optimiser step with the preset's epsilon, with the preset's groups
# and with the reference's. Skipped unless it is set and flax and optax
# import: the benchmark's docstring installs them into a virtual
# environment, whose python runs this test.
S5_REPO = os.environ.get("LRA_S5_REPO")


@pytest.mark.skipif(
    not S5_REPO or not Path(S5_REPO, "s5/ssm.py").exists(),
    reason="LRA_S5_REPO does not point to a lindermanlab/S5 checkout",
)
def test_s5_matches_the_reference_code():
    for module in ("flax", "optax"):
        pytest.importorskip(module)
    stdout = run_benchmark(
        "reference_parity_s5.py", "--s5-repo", S5_REPO, "--hidden-dim", "16",
        "--num-layers", "2", "--state-dim", "16", "--length", "64",
        "--batch-size", "3", "--parts", "a", "b")
    assert "a. parameter groups (all but the known): PASS" in stdout
    assert "b. forward: PASS" in stdout  # the padded batch too


# The DLR kernel (`init="omega"`) against the NTFS code's `DLRKernel`:
# `benchmarks/reference_parity_dlr.py` against `dss.py` of the
# IdoAmos/not-from-scratch checkout at `$LRA_NTFS_REPO` (commit 3e4b6d9:
# the file does not import at the last commit, see the benchmark); its
# exit status covers the start (imaginary parts, decay range, W's scale)
# and the kernels from the same weights. Skipped unless it is set and
# torch, omegaconf, einops and opt_einsum import.
NTFS_REPO = os.environ.get("LRA_NTFS_REPO")


@pytest.mark.skipif(
    not NTFS_REPO or not Path(
        NTFS_REPO, "src/models/sequence/ss/dss.py").exists(),
    reason="LRA_NTFS_REPO does not point to an IdoAmos/not-from-scratch "
    "checkout",
)
def test_dlr_omega_matches_the_reference_kernel():
    assert_ntfs_benchmark_passes("reference_parity_dlr.py",
                                 ("torch", "omegaconf", "einops",
                                  "opt_einsum"))


def assert_ntfs_benchmark_passes(script, modules):
    """Runs `script` against `$LRA_NTFS_REPO` (2 seeds), skipping unless
    `modules` import; every gate must pass."""
    for module in modules:
        pytest.importorskip(module)
    stdout = run_benchmark(script, "--ntfs-repo", NTFS_REPO, "--seeds", "2")
    assert "all gates passed" in stdout


# The NTFS Transformer's attention (rotary per head, no mask on batches
# padded to their longest row) against the NTFS code's
# `MultiheadAttentionFlash`: `benchmarks/reference_parity_ntfs_attention.py`
# against the same checkout (`src` and `local_attention` of 3e4b6d9);
# skipped unless both are there and torch, hydra, einops and opt_einsum
# import.
@pytest.mark.skipif(
    not NTFS_REPO or not Path(NTFS_REPO, "src/models/sequence/mha.py").exists()
    or not Path(NTFS_REPO, "local_attention").is_dir(),
    reason="LRA_NTFS_REPO does not point to a checkout of "
    "IdoAmos/not-from-scratch with src/ and local_attention/",
)
def test_ntfs_attention_matches_the_reference_module():
    assert_ntfs_benchmark_passes("reference_parity_ntfs_attention.py",
                                 ("torch", "hydra", "einops", "opt_einsum"))


# The RTF layer against the RTF authors' `rtf.py` (ruke1ire/RTF checkout
# at `$LRA_RTF_REPO`): `benchmarks/reference_parity_rtf.py`, whose exit
# status covers the weight counts, the start, and the outputs and
# gradients from the same weights. Skipped unless it is set and torch and
# einops import.
RTF_REPO = os.environ.get("LRA_RTF_REPO")


@pytest.mark.skipif(
    not RTF_REPO or not Path(RTF_REPO, "rtf.py").exists(),
    reason="LRA_RTF_REPO does not point to a ruke1ire/RTF checkout",
)
def test_rtf_matches_the_reference_module():
    for module in ("torch", "einops"):
        pytest.importorskip(module)
    stdout = run_benchmark(
        "reference_parity_rtf.py", "--rtf-repo", RTF_REPO, "--seeds", "1")
    assert "all gates passed" in stdout


def test_step_gate_verdicts():
    """`step_rows`'s verdict per kind of weight, on made-up steps in units
    of the rate (0.1): our weights are the reference's float32 step plus
    a known offset; the reference's float64 step a known offset from its
    float32 one."""
    sys.path.insert(0, str(BENCHMARK.parent))
    import numpy as np
    import reference_parity

    rate, size = 0.1, 128
    before = {"w": np.zeros(size)}
    after = {"w": np.full(size, rate)}  # the reference moved one step

    def verdict(ours_off, reference_off, count=3):
        """Our offset from the float32 step on `count` weights, and the
        float64 step's offset from the float32 one on every weight (both
        in steps)."""
        mine = {"w": after["w"].copy()}
        mine["w"][:count] += ours_off * rate
        after64 = {"w": after["w"] + reference_off * rate}
        rows, ok = reference_parity.step_rows(
            "step", {"w": rate}, before, after, mine, after64=after64)
        return rows[0][2].split(":")[0], ok

    # every weight within 1e-3 of a step: ok
    assert verdict(5e-4, 1e-4) == ("ok", True)
    # one weight off by 2e-2 of a step: the gate's one outlier
    assert verdict(2e-2, 1e-4, count=1) == ("ok", True)
    # three weights 1.2e-3 of a step off, the reference's own float32
    # step 1.6e-4 from its float64 one (MEGA under TensorFlow): rounding
    assert verdict(1.2e-3, 1.6e-4) == ("ok (rounding)", True)
    # 1e-2 of a step off where the reference rounds by 1.6e-4: a defect
    assert verdict(1e-2, 1.6e-4) == ("FAIL", False)
    # over 0.1 of a step fails whatever the reference's rounding
    assert verdict(0.2, 9e-4) == ("FAIL", False)
    # the reference's own float32 step fails the gate against its float64
    # one: ill-conditioned, not gated
    assert verdict(0.5, 0.5) == ("ill-conditioned, not gated", True)
    assert reference_parity.within_rounding(1.2e-3, 1.6e-4)
    assert not reference_parity.within_rounding(1e-2, 1.6e-4)
    # tiny reference rounding: the floor is 10 x 1e-4 of a step
    assert reference_parity.within_rounding(9e-4, 0.0)
    assert not reference_parity.within_rounding(1.1e-3, 0.0)
