"""The drivers of the speed benchmarks, without timing anything.

`benchmarks/mixers.py` and `benchmarks/reference_speed.py` run their
measurements in child processes; what is tested here is the bookkeeping
around them that a short GPU lease depends on: which child measures what
(`--one-process`), a failing measurement not losing the others, the
ratios and the JSON lines of the table, the deadline, and a SIGTERM (the
session script's budget) printing what was measured so far; and how
`benchmarks/preset_step.py` splits a run's steps into step and
compilation.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import attention  # noqa: E402
import conv_block  # noqa: E402
import mixers  # noqa: E402
import paired  # noqa: E402
import preset_step  # noqa: E402
import reference_speed  # noqa: E402
import step_memory  # noqa: E402


def test_one_process_groups_per_backend():
    args = argparse.Namespace(models=["transformer", "s4d"],
                              lengths=[4096, 1024], one_process=False)
    assert mixers._child_groups(args, "torch") == [
        (["transformer"], [4096]), (["transformer"], [1024]),
        (["s4d"], [4096]), (["s4d"], [1024])]
    args.one_process = True
    # JAX cannot start a new peak: one child per model
    assert mixers._child_groups(args, "jax") == [
        (["transformer"], [1024, 4096]), (["s4d"], [1024, 4096])]
    assert mixers._child_groups(args, "torch") == [
        (["transformer", "s4d"], [1024, 4096])]


@pytest.mark.numpy_only
@pytest.mark.parametrize("length", [1024, 16384])
def test_every_family_resolves_as_a_benchmarked_stack(length):
    # The S5 and LRU ListOps rows pad to 2048 positions: at 4K and 16K
    # their rows were refused until the stack dropped that padding.
    for model in mixers.MODELS:
        hp = mixers.stack_hparams(model, length, 128, 2)
        assert (hp["sequence_length"], hp["hidden_dim"],
                hp["num_layers"], hp["padded_length"]) == (
            length, 128, 2, None), model


def test_child_models_reports_a_failure_and_goes_on(monkeypatch, capsys):
    def fake(model, length, *args):
        if model == "bad" and length == 2:
            raise RuntimeError("out of memory")
        return {"step_s": length / 10}

    monkeypatch.setattr(mixers, "child_model", fake)
    mixers.child_models(["good", "bad", "last"], [1, 2], 0, 0, 0, 0)
    rows = [json.loads(line[7:]) for line in capsys.readouterr().out
            .splitlines() if line.startswith("RESULT ")]
    assert [(r["model"], r["length"]) for r in rows] == [
        ("good", 1), ("good", 2), ("bad", 1), ("bad", 2), ("last", 1),
        ("last", 2)]
    assert rows[3]["error"] == "RuntimeError: out of memory"
    assert [r.get("step_s") for r in rows] == [0.1, 0.2, 0.1, None, 0.1,
                                                0.2]


def test_reference_speed_batch():
    args = argparse.Namespace(batch=16, tokens=None)
    assert reference_speed._batch(args, 4096) == 16
    args.tokens = 65536
    assert [reference_speed._batch(args, n) for n in (1024, 16384,
                                                       131072)] == [64, 4, 1]


def _table_args(tmp_path, **kwargs):
    return argparse.Namespace(**dict(
        dict(models=["s4d", "transformer"], mega_repo=None,
             backends=["jax", "torch"], lengths=[1024, 4096], tokens=8192,
             batch=16, layers=4, hidden=128, dtype_policy="float32",
             jit_compile="auto", unpadded=False, live_memory=False,
             one_process=True, deadline=None, rounds=1,
             json_out=str(tmp_path / "rows.jsonl")), **kwargs))


def _fake_result(side, model, length, backend):
    # tokens/s: the reference 1000 per token of L, ours 2x (jax) or 0.5x
    speed = {"reference": 1.0, "jax": 2.0, "torch": 0.5}[
        backend if side == "ours" else side]
    return {"tokens_per_s": 1000.0 * length * speed, "memory_mib": 100.0
            * (4.0 if backend == "jax" and side == "ours" else 1.0)}


def test_reference_speed_table_ratios_and_json(tmp_path, monkeypatch,
                                               capsys):
    calls = []

    def measure(args, side, model, lengths, backend):
        calls.append((side, model, tuple(lengths), backend))
        if (side, model, backend) == ("ours", "transformer", "torch"):
            return {n: {"error": "killed (out of memory)"} for n in lengths}
        return {n: _fake_result(side, model, n, backend) for n in lengths}

    monkeypatch.setattr(reference_speed, "measure", measure)
    assert reference_speed.table(_table_args(tmp_path)) is None
    # one child per side, model and backend for both lengths
    assert calls == [(side, model, (1024, 4096), backend)
                     for model in ("s4d", "transformer")
                     for side, backend in (("reference", "torch"),
                                           ("ours", "jax"),
                                           ("ours", "torch"))]
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("| s4d") or line.startswith("| transformer")]
    assert rows[0] == ("| s4d | 1024 | 1,024,000 tok/s, 100 MiB | "
                       "2.00, 4.00 | 0.50, 1.00 |")
    assert rows[3] == ("| transformer | 4096 | 4,096,000 tok/s, 100 MiB | "
                       "2.00, 4.00 | killed (out of memory) |")
    lines = [json.loads(line) for line in
             (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert len(lines) == 12
    assert lines[0] == dict(_fake_result("reference", "s4d", 1024, "torch"),
                            side="reference", model="s4d", length=1024,
                            backend="torch", dtype_policy="float32",
                            jit_compile="auto", padded=True)


def test_reference_speed_rounds_alternate_and_take_medians(
        tmp_path, monkeypatch, capsys):
    # Three rounds, the reference and then ours each round. The machine
    # runs 1, 2 and 4 times as fast in turn, and ours under JAX 2, 3 and
    # 1.5 times the reference: the median of the rounds' ratios is 2,
    # where the ratio of the median speeds would be 3.
    calls = []

    def measure(args, side, model, lengths, backend):
        calls.append((side, backend))
        round_index = sum(1 for c in calls if c[0] == "reference") - 1
        if (side, backend) == ("ours", "torch") and round_index == 2:
            return {n: {"error": "killed (out of memory)"} for n in lengths}
        fast = [1.0, 2.0, 4.0][round_index] * (
            [1.0, 1.5, 0.75][round_index] if side == "ours" else 1.0)
        return {n: {key: value * (fast if key == "tokens_per_s" else 1.0)
                    for key, value in _fake_result(
                        side, model, n, backend).items()}
                for n in lengths}

    monkeypatch.setattr(reference_speed, "measure", measure)
    args = _table_args(tmp_path, models=["s4d"], lengths=[1024], rounds=3)
    assert reference_speed.table(args) is None
    assert calls == [("reference", "torch"), ("ours", "jax"),
                     ("ours", "torch")] * 3
    out = capsys.readouterr().out
    assert "Each cell: the median of 3 rounds" in out
    row = next(line for line in out.splitlines() if line.startswith("| s4d"))
    assert row == ("| s4d | 1024 | 2,048,000 tok/s (1,024,000-4,096,000), "
                   "100 MiB | 2.00 (1.50-3.00), 4.00 | "
                   "killed (out of memory) |")
    lines = [json.loads(line) for line in
             (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert [(line["side"], line["backend"], line["round"])
            for line in lines] == [
        (side, backend, index) for index in range(3)
        for side, backend in (("reference", "torch"), ("ours", "jax"),
                              ("ours", "torch"))]


def test_reference_speed_refuses_no_rounds(capsys):
    with pytest.raises(SystemExit):
        reference_speed.main(["--s4-repo", "s4", "--rounds", "0"])
    assert "--rounds must be at least 1" in capsys.readouterr().err


def test_reference_speed_live_memory_table(tmp_path, monkeypatch,
                                           capsys):
    def measure(args, side, model, lengths, backend):
        result = _fake_result(side, model, lengths[0], backend)
        if backend == "torch" and model == "s4d":
            result["live_mib"] = 80.0 if side == "ours" else 100.0
        return {n: dict(result) for n in lengths}

    monkeypatch.setattr(reference_speed, "measure", measure)
    args = _table_args(tmp_path, lengths=[1024], live_memory=True)
    assert reference_speed.table(args) is None
    out = capsys.readouterr().out
    assert "| s4d | 1024 | 100 | 80, 0.80 |" in out
    assert "| transformer | 1024 | no PyTorch figure | |" in out


def test_tables_name_the_machine_and_versions(tmp_path, monkeypatch,
                                              capsys):
    # The header's first line: the CPU's model and the installed versions
    # of Keras and the backends (ratios move between machines).
    from importlib import metadata

    monkeypatch.setattr(reference_speed, "measure", lambda args, side,
                        model, lengths, backend: {
                            n: _fake_result(side, model, n, backend)
                            for n in lengths})
    reference_speed.table(_table_args(tmp_path))
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"Measured on: {mixers.machine_note()}."
    for name in mixers.VERSIONED:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "absent"
        assert f"{name} {version}" in first
    cpuinfo = Path("/proc/cpuinfo")
    model = next((line.split(":", 1)[1].strip() for line in (
        cpuinfo.read_text().splitlines() if cpuinfo.exists() else [])
        if line.startswith("model name")), None)
    if model is not None:
        assert first.startswith(f"Measured on: {model} (")


def test_reference_speed_leaves_out_models_without_their_checkout(
        tmp_path, monkeypatch, capsys):
    calls, extras = [], []
    real_measure = reference_speed.measure

    def measure(args, side, model, lengths, backend):
        calls.append(model)
        return {n: _fake_result(side, model, n, backend) for n in lengths}

    monkeypatch.setattr(reference_speed, "measure", measure)
    args = _table_args(tmp_path, models=["dlr", "s4d", "gmlp", "mega", "rtf"],
                       ntfs_repo=tmp_path / "ntfs", yctfs_repo=None)
    assert reference_speed.table(args) is None
    out = capsys.readouterr().out
    assert calls == ["dlr"] * 3 + ["s4d"] * 3
    assert "gmlp: left out (its reference needs --yctfs-repo)" in out
    assert "mega: left out (its reference needs --mega-repo)" in out
    assert "rtf: left out (its reference needs --rtf-repo)" in out

    # each child is given the checkouts the command line named
    def run_child_results(args, backend, extra, timeout, script=None):
        extras.append(extra)
        return [{"error": "not measured here"}]

    monkeypatch.setattr(mixers, "run_child_results", run_child_results)
    args = _table_args(tmp_path, s4_repo=tmp_path, steps=1, timeout=1,
                       ntfs_repo=tmp_path / "ntfs", yctfs_repo=None)
    real_measure(args, "reference", "dlr", [1024], "torch")
    assert extras[-1][extras[-1].index("--ntfs-repo") + 1] == str(
        tmp_path / "ntfs")
    assert "--yctfs-repo" not in extras[-1]
    assert "--mega-repo" not in extras[-1]


def test_reference_speed_runs_the_s5_reference_under_jax(tmp_path,
                                                         monkeypatch):
    # lindermanlab/S5 is JAX code: its child runs with KERAS_BACKEND=jax
    calls = []

    def measure(args, side, model, lengths, backend):
        calls.append((side, model, backend))
        return {n: _fake_result(side, model, n, backend) for n in lengths}

    monkeypatch.setattr(reference_speed, "measure", measure)
    args = _table_args(tmp_path, models=["s5", "s4d"], backends=["torch"],
                       s5_repo=tmp_path)
    assert reference_speed.table(args) is None
    assert calls == [("reference", "s5", "jax"), ("ours", "s5", "torch"),
                     ("reference", "s4d", "torch"), ("ours", "s4d", "torch")]


@pytest.mark.parametrize("live_memory", [False, True])
def test_reference_speed_ema_stack_trains_with_the_references_weights(
        live_memory):
    # `--models ema`: our MultiHeadEMA alone in the s4d reference's stack,
    # timed by mixers.train_steps, holding as many weights as fairseq's
    # bidirectional MultiHeadEMA in that stack (delta, alpha, beta, gamma
    # per direction and dimension, omega per channel). `--live-memory`
    # adds the live tensors' peak under PyTorch only.
    import keras

    args = argparse.Namespace(model="ema", batch=2, tokens=None, hidden=8,
                              layers=2, steps=1, dtype_policy="float32",
                              jit_compile="auto", unpadded=False,
                              live_memory=live_memory, side="ours")
    result = reference_speed._child_ours(args, 16)
    assert result["batch"] == 2 and result["tokens_per_s"] > 0
    torch = keras.backend.backend() == "torch"
    assert ("live_mib" in result) == (live_memory and torch)
    if "live_mib" in result:
        assert result["live_mib"] > 0
    # a compiled step is not watched: its ops are not the timed step's
    args.jit_compile = "true"
    assert reference_speed._live_mib(args, lambda: None) == {}
    ema = 4 * 2 * 8 * reference_speed.EMA_DIM + 8
    embedding, norm, head = 18 * 8, 2 * 8, 8 * 10 + 10
    assert result["params"] == embedding + 2 * (ema + norm) + head


def test_reference_speed_deadline_and_sigterm(tmp_path, monkeypatch,
                                              capsys):
    def measure(args, side, model, lengths, backend):
        if model == "transformer":  # the session's budget runs out here
            os.kill(os.getpid(), signal.SIGTERM)
        return {n: _fake_result(side, model, n, backend) for n in lengths}

    monkeypatch.setattr(reference_speed, "measure", measure)
    before = signal.getsignal(signal.SIGTERM)
    assert reference_speed.table(_table_args(tmp_path, lengths=[1024])) == 1
    assert signal.getsignal(signal.SIGTERM) is before
    out = capsys.readouterr().out
    assert "| s4d | 1024 | 1,024,000 tok/s, 100 MiB | 2.00, 4.00 | " \
        "0.50, 1.00 |" in out
    assert ("| transformer | 1024 | stopped (SIGTERM) | stopped (SIGTERM) "
            "| stopped (SIGTERM) |") in out

    monkeypatch.setattr(reference_speed, "measure", pytest.fail)
    args = _table_args(tmp_path, lengths=[1024], deadline=-1.0)
    assert reference_speed.table(args) is None
    assert out.count("not run") == 0
    assert capsys.readouterr().out.count("not run (deadline)") == 6


def test_jit_compile_flag_reaches_model_compile():
    assert [mixers.jit_value(f) for f in ("auto", "true", "false")] == [
        "auto", True, False]
    parser = argparse.ArgumentParser()
    mixers.add_session_options(parser, "")
    assert parser.parse_args([]).jit_compile == "auto"
    with pytest.raises(SystemExit):
        parser.parse_args(["--jit-compile", "yes"])


def test_unpadded_reaches_the_children_and_the_model(monkeypatch,
                                                      tmp_path, capsys):
    # `--unpadded` / `--padded`: each child is told either way, and
    # builds the stack with padded=False (its blocks get no mask, as on
    # the pixel tasks) or True. mixers.py pads by default (it compares
    # our families with each other); reference_speed.py does not (the
    # references take no mask).
    extras = []

    def run_child_results(args, backend, extra, timeout, script=None):
        extras.append(extra)
        return [{"error": "not measured here"}]

    monkeypatch.setattr(mixers, "run_child_results", run_child_results)
    for padded in (True, False):
        parser = argparse.ArgumentParser()
        mixers.add_session_options(parser, "", padded=padded)
        assert parser.parse_args([]).unpadded is not padded
        assert parser.parse_args(["--unpadded"]).unpadded is True
        assert parser.parse_args(["--padded"]).unpadded is False
        with pytest.raises(SystemExit):
            parser.parse_args(["--padded", "--unpadded"])
    args = _table_args(tmp_path, unpadded=True, s4_repo=tmp_path,
                       steps=1, timeout=1)
    reference_speed.measure(args, "ours", "transformer", [1024], "jax")
    assert "--unpadded" in extras[-1] and "--padded" not in extras[-1]
    reference_speed.measure(_table_args(tmp_path, s4_repo=tmp_path,
                                        steps=1, timeout=1),
                            "ours", "transformer", [1024], "jax")
    assert "--padded" in extras[-1] and "--unpadded" not in extras[-1]
    # reference_speed.py's own default: no mask
    parsed = []
    monkeypatch.setattr(reference_speed, "table", parsed.append)
    reference_speed.main(["--s4-repo", "s4"])
    reference_speed.main(["--s4-repo", "s4", "--padded"])
    assert [a.unpadded for a in parsed] == [True, False]
    monkeypatch.undo()
    # the table's first line says which
    monkeypatch.setattr(reference_speed, "measure",
                        lambda args, side, model, lengths, backend: {
                            n: _fake_result(side, model, n, backend)
                            for n in lengths})
    for unpadded, note in ((True, "no padding mask on either side"),
                           (False, "all-ones padding mask (--padded)")):
        reference_speed.table(_table_args(tmp_path, unpadded=unpadded,
                                          models=["s4d"], lengths=[1024],
                                          s4_repo=tmp_path))
        assert note in capsys.readouterr().out.splitlines()[1]

    import lra_keras.models

    built = []

    def build_classifier(**kwargs):
        built.append(kwargs["padded"])
        raise RuntimeError("built")

    monkeypatch.setattr(lra_keras.models, "build_classifier",
                        build_classifier)
    for padded in (False, True):
        with pytest.raises(RuntimeError, match="built"):
            mixers.child_model("transformer", 256, 512, 8, 1, 1,
                               padded=padded)
    assert built == [False, True]


def test_preset_step_splits_steps_from_compilation():
    # shapes (batch, length): the first step of each shape compiles
    records = [((32, 256), 3.0), ((32, 256), 0.1), ((32, 512), 4.0),
               ((32, 512), 0.2), ((32, 256), 0.1), ((16, 256), 1.0)]
    got = preset_step.summarize(records)
    # every repeated step runs 81,920 tokens/s; the step's median is 0.1
    assert got["tokens_per_s"] == pytest.approx(81920)
    assert got["step_s"] == pytest.approx(0.1)
    assert got["shapes"] == 3
    # beyond 0.1, 0.2 and 0.05 s of tokens at that rate
    assert got["compile_s"] == pytest.approx(2.9 + 3.8 + 0.95)
    assert got["steps"] == 6
    assert got["total_s"] == pytest.approx(8.4)
    with pytest.raises(ValueError, match="more --steps"):
        preset_step.summarize(records[:1])


def test_preset_step_table_ratios(monkeypatch, capsys):
    rates = dict(jax=50000.0, tensorflow=100000.0)

    def run_child(args, backend, extra, timeout, script=None):
        assert extra[:3] == ["--child", "--task", "listops"]
        if backend == "torch":
            return {"error": "failed"}
        return dict(step_s=1.0, tokens_per_s=rates[backend], shapes=2,
                    compile_s=3.0, steps=10, total_s=12.0, batch_size=32)

    monkeypatch.setattr(preset_step.mixers, "run_child", run_child)
    preset_step.main([])
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("| jax") or line.startswith("| tensorflow")
            or line.startswith("| torch")]
    assert rows == [
        "| jax | 1.000 | 50,000 | 2.00 | 2 | 3.0 | 12.0 |",
        "| tensorflow | 1.000 | 100,000 | 1.00 | 2 | 3.0 | 12.0 |",
        "| torch | failed | | | | | |",
    ]


def test_preset_step_rounds_take_each_backends_median_round(monkeypatch,
                                                            capsys):
    # Three rounds, each starting one backend later; jax's rates 30k, 50k,
    # 40k (median 40k), torch's 20k, 25k, then a failure (median of the
    # two that ended well: the lower, 20k).
    rates = dict(jax=[30000.0, 50000.0, 40000.0],
                 torch=[20000.0, 25000.0, None])
    order = []

    def run_child(args, backend, extra, timeout, script=None):
        order.append(backend)
        rate = rates[backend].pop(0)
        if rate is None:
            return {"error": "failed"}
        return dict(step_s=1000.0 / rate, tokens_per_s=rate, shapes=2,
                    compile_s=3.0, steps=10, total_s=12.0, batch_size=32)

    monkeypatch.setattr(preset_step.mixers, "run_child", run_child)
    preset_step.main(["--backends", "jax", "torch", "--rounds", "3"])
    assert order == ["jax", "torch", "torch", "jax", "jax", "torch"]
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines()
            if line.startswith(("| jax", "| torch"))]
    assert rows == [
        "| jax | 0.025 | 40,000 | 1.00 | 2 | 3.0 | 12.0 |",
        "| torch | 0.050 | 20,000 | 2.00 | 2 | 3.0 | 12.0 |",
    ]
    # each round's own ratio: 30/20, 50/25, and the failure
    assert "- jax: 1.00, 1.00, 1.00" in out
    assert "- torch: 1.50, 2.00, failed" in out


def test_preset_step_times_fit_on_the_same_batches(tmp_path):
    from tests.test_run_guards import _write_listops

    _write_listops(tmp_path)
    got = preset_step.child(
        "listops", "s4d", "quick",
        dict(batch_size=4, min_length=None, max_depth=None),
        steps=8, data_dir=tmp_path, fit=True)
    # fit took the 8 batches in the order train_on_batch did: as many
    # shapes, each batch timed once
    assert got["steps"] == got["fit_steps"] == 8
    assert got["fit_shapes"] == got["shapes"] >= 2
    # ... and trained the model train_on_batch trained
    assert got["fit_weight_difference"] < 1e-5
    assert got["fit_step_s"] > 0 and got["fit_total_s"] > 0


def test_preset_step_table_adds_the_fit_columns(monkeypatch, capsys):
    def run_child(args, backend, extra, timeout, script=None):
        assert "--fit" in extra
        return dict(step_s=0.5, tokens_per_s=1000.0, shapes=2,
                    compile_s=3.0, steps=10, total_s=12.0, batch_size=32,
                    fit_step_s=0.6, fit_weight_difference=2e-7)

    monkeypatch.setattr(preset_step.mixers, "run_child", run_child)
    preset_step.main(["--backends", "jax", "--fit"])
    out = capsys.readouterr().out
    assert "| fit step (s) | fit / step | weights, max diff |" in out
    assert ("| jax | 0.500 | 1,000 | 1.00 | 2 | 3.0 | 12.0 | 0.600 | 1.20 "
            "| 2.0e-07 |") in out


def test_conv_block_child_times_both_implementations():
    args = argparse.Namespace(batch=2, length=16, width=8, intermediate=8,
                              kernel_size=5, groups=4, steps=2)
    got = conv_block.child(args)
    assert sorted(got) == ["direct", "fft"]
    assert all(r["step_s"] > 0 and r["first_s"] > 0 for r in got.values())


def test_conv_block_table_ratios(monkeypatch, capsys):
    def run_child(args, backend, extra, timeout, script=None):
        assert "--kernel-size=61" in extra and "--groups=32" in extra
        if backend == "torch":
            return {"error": "failed"}
        return dict(direct=dict(step_s=3.0, first_s=4.0),
                    fft=dict(step_s=0.5, first_s=1.0))

    monkeypatch.setattr(conv_block.mixers, "run_child", run_child)
    conv_block.main(["--backends", "jax", "torch"])
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("| jax") or line.startswith("| torch")]
    assert rows == ["| jax | 3.000 | 0.500 | 6.00 |",
                    "| torch | failed | | |"]


def test_attention_child_passes_layer_options():
    # `--set` reaches the layer: a strided Sparse Transformer of blocks of
    # 4 (an option the layer refuses with a CLS token, so a typo or a
    # dropped option would not pass silently)
    result = attention.child("sparse_transformer", 32, 1, 16, 2, 1,
                             options=dict(sparse_pattern="strided",
                                          sparse_block_size=4))
    assert result["options"] == dict(sparse_pattern="strided",
                                     sparse_block_size=4)
    assert result["seconds"] > 0
    with pytest.raises(ValueError, match="no class-token variant"):
        attention.child("sparse_transformer", 32, 1, 16, 2, 1,
                        options=dict(sparse_pattern="strided",
                                     sparse_cls_token=True))


@pytest.mark.parametrize("xla", [True, False])
def test_attention_child_reports_the_path_auto_takes_in_its_step(xla):
    # TensorFlow's step with and without XLA takes different paths at
    # L = 32 (chunked, plain); the `resolved` column says which, as
    # decided inside the step. JAX always chunked, PyTorch fused.
    import keras

    result = attention.child("auto", 32, 2, 16, 2, 1, xla=xla)
    backend = keras.backend.backend()
    expected = {"jax": "chunked", "torch": "fused",
                "tensorflow": "chunked" if xla else "reference"}[backend]
    assert result["resolved"] == expected
    assert result["xla"] == (xla if backend == "tensorflow" else None)
    assert result["matmul_gflops"] > 0


def _step_memory(backend, *flags, **env_vars):
    script = Path(__file__).resolve().parents[1] / "benchmarks" / (
        "step_memory.py")
    env = dict(os.environ, KERAS_BACKEND=backend, **env_vars)
    env.pop("XLA_FLAGS", None)
    return subprocess.run(
        [sys.executable, str(script), *flags], env=env, capture_output=True,
        text=True, timeout=600)


def test_step_memory_reports_the_peak_by_operation(tmp_path):
    # A child under JAX (installed beside every backend CI runs): XLA's
    # account of a tiny Transformer's step, and the buffers live at its
    # peak summed by the operation that made them, the blocks' index
    # dropped. Its dump folder is removed afterwards.
    run = _step_memory("jax", "--models", "transformer", "--lengths", "32",
                       "--hidden", "16", "--layers", "2", "--batch", "2",
                       "--top", "40", TMPDIR=str(tmp_path))
    assert run.returncode == 0, run.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []
    out = run.stdout
    assert "transformer, L = 32: temporaries" in out
    rows = [line.split(None, 2) for line in out.splitlines()
            if re.match(r"\s+[\d,.]+\s+\d+\s+\S", line)]
    assert rows and all(int(count) >= 1 for _, count, _ in rows)
    assert not any(re.search(r"_block_\d", op) for _, _, op in rows)
    assert any("transformer_block_N/" in op for _, _, op in rows)


def test_step_memory_refuses_other_backends():
    run = _step_memory("tensorflow", "--lengths", "32")
    assert run.returncode == 2
    assert "KERAS_BACKEND=jax or torch" in run.stderr


def test_torch_live_peak_counts_what_is_alive():
    # PyTorch is installed beside every backend CI runs; it is called
    # directly here. 1 MiB tensors: a, then b (2 MiB alive), b freed, c
    # (2), a view of c (no new storage), then cat([a, c]): 1 + 1 + 2.
    import torch

    mib = 2**18  # float32 elements in 1 MiB
    kept = []

    def step():
        a = torch.ones(mib)
        b = a * 2
        del b
        c = a + 1
        view = c.view(2, -1)
        kept.append(torch.cat([a, view.reshape(-1)]))

    peak, makers = step_memory.torch_live_peak(step, top=5)
    assert peak == 4 * 2**20
    assert [size for size, _ in makers] == [2 * 2**20, 2**20, 2**20]
    here = Path(__file__).name
    assert makers[0][1].startswith(f"aten.cat.default at {here}:")
    assert {name.split(" at ")[0] for _, name in makers[1:]} == {
        "aten.ones.default", "aten.add.Tensor"}
    # a tensor freed later is forgotten: the next peak starts from zero
    kept.clear()
    assert step_memory.torch_live_peak(lambda: torch.ones(mib))[0] == 2**20
    # views of a tensor made before (a weight's transpose), and in-place
    # updates of it, make nothing new
    weight = torch.ones(512, 512)

    def update():
        weight.t().mul_(2)
        weight.view(-1)[:10].add_(1)

    assert step_memory.torch_live_peak(update)[0] == 0


def test_torch_live_peak_names_the_backward_node():
    import torch

    x = torch.ones(2**18, requires_grad=True)

    def step():
        (x.exp() * 3).sum().backward()

    peak, makers = step_memory.torch_live_peak(step, top=10)
    assert peak >= 2 * 2**20  # exp's output, saved, and its gradient
    assert any(name.endswith("in the backward of ExpBackward0")
               for _, name in makers)


def test_step_memory_under_torch_watches_the_step():
    run = _step_memory("torch", "--models", "transformer", "--lengths", "32",
                       "--hidden", "16", "--layers", "2", "--batch", "2",
                       "--top", "40")
    assert run.returncode == 0, run.stderr[-2000:]
    out = run.stdout
    peak = re.search(r"transformer, L = 32: live tensors' peak ([\d,.]+) "
                     "MiB", out)
    assert peak and float(peak.group(1)) > 0
    rows = [line.split(None, 1) for line in out.splitlines()
            if re.match(r"\s+[\d,.]+\s+aten\.", line)]
    assert any("in the backward of" in name for _, name in rows)
    assert any(re.search(r" at \w+\.py:\d+$", name) for _, name in rows)


def test_step_memory_operation_names():
    assert step_memory._operation(
        "jit(step)/jvp(encoder)/transformer_block_3/ffn_norm/mul") == (
        "jvp(encoder)/transformer_block_N/ffn_norm/mul")


def test_paired_rounds_alternate_and_give_each_rounds_ratio():
    # `benchmarks/paired.py`: one call of each variant a round, the order
    # reversed every other round; the ratios are those of each round.
    order = []
    calls = {name: (lambda name=name: order.append(name))
             for name in ("before", "now")}
    times = paired.in_turn(calls, 3)
    assert order == ["before", "now", "now", "before", "before", "now"]
    assert [len(t) for t in times.values()] == [3, 3]
    assert all(s >= 0 for t in times.values() for s in t)
    times = {"before": [2.0, 3.0, 8.0], "now": [1.0, 2.0, 2.0]}
    assert paired.ratios(times, "before", "now") == (2.0, 1.5, 4.0)
    assert paired.medians(times) == {"before": 3.0, "now": 2.0}
    # `swapped` puts the attribute back, even when the block raises.
    with paired.swapped(paired, "in_turn", len):
        assert paired.in_turn is len
    with pytest.raises(KeyError), paired.swapped(paired, "in_turn", len):
        raise KeyError("a failing step")
    assert paired.in_turn is not len and paired.in_turn.__name__ == "in_turn"


def test_paired_variants_of_an_attribute(capsys):
    # `under_values`: the call under each value of the attribute, once
    # untimed, then a call of each a round in turn; the attribute back
    # after. `summary`: the medians in ms and the rounds' ratio.
    seen = []
    times = paired.under_values(
        paired, "ratios", {"a": 1, "b": 2},
        lambda: seen.append(paired.ratios), 2)
    assert seen == [1, 2, 1, 2, 2, 1]
    assert list(times) == ["a", "b"] and [len(t) for t in times.values()] == [
        2, 2]
    assert paired.ratios.__name__ == "ratios"
    line = paired.summary({"x": [0.004, 0.002, 0.006], "y": [0.002] * 3},
                          "x", "y")
    assert line == "x 4.0 ms, y 2.0 ms, x / y 2.000 (1.000-3.000)"
    with paired.swapped(paired, "under_values",
                        lambda *args: {"x": [0.004], "y": [0.002]}):
        paired.print_under_values("step", paired, "ratios", {}, len, 1,
                                  "x", "y")
    assert capsys.readouterr().out == (
        "step: x 4.0 ms, y 2.0 ms, x / y 2.000 (2.000-2.000), 1 rounds\n")


def test_paired_stack_steps_train_the_stacks_and_the_quick_step():
    # `stack_steps`: one `train_on_batch` of each stack, then the quick
    # ListOps S4D's on its first batches of 32 x 32 tokens.
    import numpy as np

    steps = paired.stack_steps(["s4d"], length=16, batch=2,
                               quick_batches=2)
    assert [label for label, _ in steps] == [
        "s4d stack, L = 16, batch 2", "quick step, 2 batches of 32 x 32"]
    stack, quick = (call for _, call in steps)
    assert np.isfinite(np.asarray(stack(), "float64")).all()
    assert len(quick()) == 2
