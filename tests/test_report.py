"""`python -m lra_keras.report`: synthetic run directories with known
numbers give a known table; the interval against its closed form."""

import csv
import io
import json
import math
import subprocess
import sys

import pytest
from PIL import Image

from lra_keras import report

pytestmark = pytest.mark.numpy_only

# Half-width of the 95% interval of 0.5, 0.6, 0.7: t(0.975, 2) s / sqrt(3),
# s = 0.1 (the sample standard deviation), in percent.
HALF_WIDTH_3 = 100 * 4.303 * 0.1 / math.sqrt(3)


def _write_run(path, *, task="listops", model="transformer",
               technique="none", augment=False, preset="quick", seed=0,
               test=0.5, best_val=0.55, epochs=2, wall=30.0, backend="jax",
               devices=("cpu:0",), output="", hparams=None, finished=True,
               **config):
    """A run directory as `training.run` leaves it; `output` is the
    prefix Keras gives the classifier's metrics in a multi-output model
    (`"logits_"`); `config` adds entries to config.json (`overrides`,
    `argv`)."""
    path.mkdir(parents=True)
    hparams = dict(task=task, model=model, epochs=epochs, **(hparams or {}))
    (path / "config.json").write_text(json.dumps(
        dict(hparams=hparams, seed=seed, backend=backend,
             devices=list(devices), **config)))
    columns = ["epoch", f"{output}accuracy", "loss",
               f"val_{output}accuracy", "val_loss"]
    if output:
        columns.append(f"val_{output}loss")
    lines = [",".join(columns)]
    for epoch in range(epochs):
        # Validation accuracy rises to best_val; the classifier's loss is
        # 1 / (epoch + 1), the total loss (with a token head) 10 more.
        acc = best_val - 0.1 * (epochs - 1 - epoch)
        loss = 1.0 / (epoch + 1)
        row = [epoch, 0.5, loss, acc, loss + (10 if output else 0)]
        lines.append(",".join(map(str, row + ([loss] if output else []))))
    (path / "metrics.csv").write_text("\n".join(lines) + "\n")
    if finished:
        (path / "metrics.json").write_text(json.dumps(dict(
            task=task, model=model, preset=preset, technique=technique,
            augment=augment, test_accuracy=test, test_loss=1.0,
            best_val_accuracy=best_val, epochs_run=epochs,
            wall_seconds=wall, backend=backend, devices=list(devices))))
    return path


def _three_seeds(root):
    for seed, test, wall in ((0, 0.5, 30.0), (1, 0.6, 40.0),
                             (2, 0.7, 50.0)):
        _write_run(root / "listops" / f"seed{seed}", seed=seed, test=test,
                   best_val=test + 0.05, wall=wall)


def _report(argv, capsys):
    code = report.main([str(a) for a in argv])
    return code, capsys.readouterr()


def _preset_and_test_cells(argv, capsys):
    """The report's results.md, and each table row's preset and test
    accuracy cells."""
    code, _ = _report(argv, capsys)
    assert code == 0
    out = argv[argv.index("--out") + 1]
    markdown = (out / "results.md").read_text()
    rows = [line for line in markdown.splitlines()[2:]
            if line.startswith("| ")]
    return markdown, [line.split(" | ")[4:6] for line in rows]


def _csv_rows(path):
    return list(csv.DictReader(io.StringIO(path.read_text())))


def test_interval_matches_the_closed_form():
    mean, half = report.mean_ci([0.5, 0.6, 0.7])
    assert mean == pytest.approx(0.6, abs=1e-15)
    assert half == pytest.approx(4.303 * 0.1 / math.sqrt(3), rel=1e-12)
    # Two values 1 and 3: s = sqrt(2), t(0.975, 1) = 12.706.
    assert report.mean_ci([1.0, 3.0]) == pytest.approx(
        (2.0, 12.706 * math.sqrt(2) / math.sqrt(2)), rel=1e-12)
    # One value has no interval.
    assert report.mean_ci([0.42]) == (0.42, None)
    # Beyond 30 degrees of freedom, the normal quantile: 0, 1, ..., 39
    # have s^2 = 40 * 41 / 12.
    values = list(range(40))
    assert report.mean_ci(values)[1] == pytest.approx(
        1.96 * math.sqrt(40 * 41 / 12) / math.sqrt(40), rel=1e-12)
    with pytest.raises(ValueError, match="at least one value"):
        report.mean_ci([])


def test_t_table_agrees_with_scipy():
    stats = pytest.importorskip("scipy.stats")
    for df in range(1, 31):
        assert report.t_quantile(df) == pytest.approx(
            stats.t.ppf(0.975, df), abs=5e-4), df
    assert report.t_quantile(31) == 1.96
    with pytest.raises(ValueError, match="df=0"):
        report.t_quantile(0)


def test_known_runs_give_the_known_table(tmp_path, capsys):
    _three_seeds(tmp_path / "runs")
    # A second group, one seed, trained with a token head (multitask).
    _write_run(tmp_path / "runs" / "text", task="text", model="s4",
               technique="multitask", preset="paper", test=0.91,
               best_val=0.9, epochs=3, wall=7300.0, backend="torch",
               devices=("gpu:0",), output="logits_")
    code, out = _report([tmp_path / "runs", "--out", tmp_path / "report"],
                        capsys)
    assert code == 0

    markdown = (tmp_path / "report" / "results.md").read_text()
    lines = markdown.splitlines()
    assert lines[0] == report.MARKDOWN_HEADER
    assert lines[2] == (
        "| listops | transformer | none | no | quick | 60.00 ± 24.84 "
        "| 65.00 ± 24.84 | 3 | 2 | 40 s | jax | cpu:0 | 43.90 |"
    )
    assert f"{HALF_WIDTH_3:.2f}" == "24.84"
    assert lines[3] == (
        "| text | s4 | multitask | no | paper | 91.00 ± n/a | 90.00 ± n/a "
        "| 1 | 3 | 2.0 h | torch | gpu:0 | 91.01 |"
    )
    assert ("- text_s4_multitask: You Can Train from Scratch, Table 3 (S4 "
            "with the training techniques)") in lines
    assert "Note:" not in markdown
    assert out.out.startswith(markdown.split("\n![")[0])

    rows = _csv_rows(tmp_path / "report" / "results.csv")
    assert rows == [
        dict(task="listops", model="transformer", technique="none",
             augment="false", preset="quick", overrides="", by="",
             seeds="3",
             seed_list="0 1 2",
             test_accuracy_pct="60.0000",
             test_accuracy_pct_ci95=f"{HALF_WIDTH_3:.4f}",
             best_val_accuracy_pct="65.0000",
             best_val_accuracy_pct_ci95=f"{HALF_WIDTH_3:.4f}",
             epochs="2", wall_seconds="40.0", backend="jax",
             device="cpu:0", paper_accuracy_pct="43.9000",
             paper_source="You Can Train from Scratch, Table 4 (Rotary, "
             "no training techniques)"),
        dict(task="text", model="s4", technique="multitask",
             augment="false", preset="paper", overrides="", by="",
             seeds="1",
             seed_list="0",
             test_accuracy_pct="91.0000", test_accuracy_pct_ci95="",
             best_val_accuracy_pct="90.0000",
             best_val_accuracy_pct_ci95="", epochs="3",
             wall_seconds="7300.0", backend="torch", device="gpu:0",
             paper_accuracy_pct="91.0100",
             paper_source="You Can Train from Scratch, Table 3 (S4 with "
             "the training techniques)"),
    ]
    assert rows[0]["test_accuracy_pct_ci95"] == "24.8434"


def test_plots_are_written(tmp_path, capsys):
    _three_seeds(tmp_path / "runs")
    _report([tmp_path / "runs", "--out", tmp_path / "report"], capsys)
    for name in ("accuracy.png", "curves_listops_transformer_quick.png"):
        path = tmp_path / "report" / name
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        with Image.open(path) as image:
            width, height = image.size
        assert width > 300 and height > 300, (name, image.size)
        assert f"![{name[:-4]}]({name})" in (
            tmp_path / "report" / "results.md").read_text()


def test_curves_read_the_classifier_output_of_a_multi_output_run(tmp_path):
    run_dir = _write_run(tmp_path / "run", epochs=3, best_val=0.8,
                         output="logits_")
    curves = report.read_curves(run_dir / "metrics.csv")
    assert curves["epoch"] == [1, 2, 3]
    assert curves["accuracy"] == pytest.approx([0.6, 0.7, 0.8])
    # val_logits_loss (1 / epoch), not the total val_loss (10 more).
    assert curves["loss"] == pytest.approx([1.0, 1 / 2, 1 / 3])
    run_dir = _write_run(tmp_path / "plain", epochs=2, best_val=0.8)
    curves = report.read_curves(run_dir / "metrics.csv")
    assert curves["accuracy"] == pytest.approx([0.7, 0.8])
    assert curves["loss"] == pytest.approx([1.0, 0.5])


def test_groups_split_by_technique_augment_and_preset(tmp_path, capsys):
    for i, kwargs in enumerate([
            dict(), dict(seed=1, test=0.7), dict(technique="spt"),
            dict(augment=True), dict(preset="paper"), dict(model="s4")]):
        _write_run(tmp_path / "runs" / f"r{i}", **kwargs)
    rows, _ = report.write_report([tmp_path / "runs"], tmp_path / "out")
    assert [(r["name"], r["seeds"]) for r in rows] == [
        ("listops_s4_quick", [0]),
        ("listops_transformer", [0]),
        ("listops_transformer_quick", [0, 1]),
        ("listops_transformer_augment_quick", [0]),
        ("listops_transformer_spt_quick", [0]),
    ]
    assert rows[2]["test_accuracy"] == pytest.approx(60.0)
    # The YCTFS row for ListOps is its augmented run; SPT is NTFS's row.
    assert [r["paper_accuracy"] for r in rows] == [59.6, 43.9, 43.9, 62.9,
                                                   61.49]


def test_runs_with_overrides_are_a_group_of_their_own(tmp_path, capsys):
    # The preset's runs, two seeds with the same --set (one recorded as
    # `overrides`, one only on its command line, as runs made before
    # `overrides` was recorded), and one with another --set.
    short = dict(sequence_length=128, pooling="mean", learning_rate=0.004)
    _write_run(tmp_path / "runs" / "preset", test=0.2, overrides={})
    _write_run(tmp_path / "runs" / "short0", test=0.4, overrides=short)
    _write_run(tmp_path / "runs" / "short1", seed=1, test=0.5,
               argv=["recipes/listops.py", "--preset", "quick", "--set",
                     "sequence_length=128", "pooling=mean", "--seeds", "1",
                     "--set", "learning_rate=0.004"])
    _write_run(tmp_path / "runs" / "long", test=0.3,
               overrides=dict(epochs=5))
    markdown, cells = _preset_and_test_cells(
        [tmp_path / "runs", "--out", tmp_path / "report"], capsys)
    lines = markdown.splitlines()
    assert cells == [
        ["quick", "20.00 ± n/a"],
        ["quick, set A", "30.00 ± n/a"],
        ["quick, set B", "45.00 ± 63.53"],
    ]
    assert "Set A: the preset with `--set epochs=5`." in lines
    assert ("Set B: the preset with `--set learning_rate=0.004 pooling=mean "
            "sequence_length=128`.") in lines
    assert "Note:" not in markdown  # each group's runs agree
    rows = _csv_rows(tmp_path / "report" / "results.csv")
    assert [(r["overrides"], r["seed_list"]) for r in rows] == [
        ("", "0"),
        ("epochs=5", "0"),
        ("learning_rate=0.004 pooling=mean sequence_length=128", "0 1"),
    ]
    for name in ("quick", "quick_setA", "quick_setB"):
        assert (tmp_path / "report"
                / f"curves_listops_transformer_{name}.png").is_file()


def test_unfinished_runs_are_skipped_with_a_note(tmp_path, capsys):
    _three_seeds(tmp_path / "runs")
    _write_run(tmp_path / "runs" / "listops" / "seed3", seed=3, test=0.0,
               finished=False)
    code, out = _report([tmp_path / "runs", "--out", tmp_path / "report"],
                        capsys)
    assert code == 0
    assert (f"skipped {tmp_path / 'runs' / 'listops' / 'seed3'}: unfinished "
            "(no metrics.json)") in out.out
    rows = _csv_rows(tmp_path / "report" / "results.csv")
    assert [(r["seeds"], r["test_accuracy_pct"]) for r in rows] == [
        ("3", "60.0000")]


def test_a_run_directory_is_not_searched_below(tmp_path):
    # pretrain/ holds the SPT phase's own metrics.json: not a run.
    run_dir = _write_run(tmp_path / "runs" / "a")
    (run_dir / "pretrain").mkdir()
    (run_dir / "pretrain" / "metrics.json").write_text("{}")
    finished, unfinished = report.find_runs([tmp_path / "runs", run_dir])
    assert (finished, unfinished) == ([run_dir], [])


def test_mixed_hyperparameters_are_named(tmp_path, capsys):
    _write_run(tmp_path / "a", hparams=dict(learning_rate=1e-3))
    _write_run(tmp_path / "b", seed=1, epochs=3,
               hparams=dict(learning_rate=1e-4))
    _report([tmp_path / "a", tmp_path / "b", "--out", tmp_path / "r"],
            capsys)
    markdown = (tmp_path / "r" / "results.md").read_text()
    assert ("Note: listops_transformer_quick mixes runs with different "
            "hyperparameters (epochs, learning_rate).") in markdown
    assert "| 2 | 2–3 |" in markdown
    # Beyond eight keys, a count.
    assert report._first(list("abcdefghij")) == (
        "a, b, c, d, e, f, g, h and 2 more")


def test_by_splits_a_group_by_the_recorded_values(tmp_path, capsys):
    # Two commits' runs of one preset that changed its pooling, and a run
    # from before the key was recorded.
    for name, seed, test, hparams in (
            ("old0", 0, 0.4, dict(pooling="mean", learning_rate=1e-3)),
            ("old1", 1, 0.5, dict(pooling="mean", learning_rate=1e-3)),
            ("new0", 0, 0.3, dict(pooling="first", learning_rate=1e-3)),
            ("older", 0, 0.2, dict(learning_rate=1e-3))):
        _write_run(tmp_path / "runs" / name, seed=seed, test=test,
                   hparams=hparams)
    markdown, cells = _preset_and_test_cells(
        [tmp_path / "runs", "--out", tmp_path / "r", "--by", "pooling"],
        capsys)
    assert cells == [
        ["quick, pooling=(unrecorded)", "20.00 ± n/a"],
        ["quick, pooling=first", "30.00 ± n/a"],
        ["quick, pooling=mean", "45.00 ± 63.53"],
    ]
    assert "Note:" not in markdown  # learning_rate agrees in each group
    rows = _csv_rows(tmp_path / "r" / "results.csv")
    assert [(r["by"], r["seed_list"]) for r in rows] == [
        ("pooling=(unrecorded)", "0"), ("pooling=first", "0"),
        ("pooling=mean", "0 1")]
    for name in ("pooling-_unrecorded_", "pooling-first", "pooling-mean"):
        assert (tmp_path / "r"
                / f"curves_listops_transformer_quick_{name}.png").is_file()
    # Without --by the three values are one row, and the note names them.
    rows, _ = report.write_report([tmp_path / "runs"], tmp_path / "one")
    assert [(r["name"], r["differing"]) for r in rows] == [
        ("listops_transformer_quick", ["pooling"])]
    # A key of config.json itself: the backend.
    _write_run(tmp_path / "torch", backend="torch", test=0.6,
               hparams=dict(pooling="mean", learning_rate=1e-3))
    rows, _ = report.write_report([tmp_path / "runs", tmp_path / "torch"],
                                  tmp_path / "backends", by=["backend"])
    assert [(r["by"], r["seeds"], r["backend"]) for r in rows] == [
        ("backend=jax", [0, 0, 0, 1], "jax"),
        ("backend=torch", [0], "torch")]
    # Overrides and --by together; two keys keep the order given.
    assert report.by_text(dict(hparams=dict(pooling="first", epochs=2)),
                          ["epochs", "pooling"]) == "epochs=2 pooling=first"
    assert report._preset_text(dict(preset="quick", set_label="A",
                                    by="epochs=2")) == "quick, set A, epochs=2"


def test_by_a_key_no_run_records_exits_2(tmp_path, capsys):
    _write_run(tmp_path / "a", hparams=dict(pooling="mean"))
    with pytest.raises(SystemExit) as info:
        report.main([str(tmp_path / "a"), "--out", str(tmp_path / "r"),
                     "--by", "poolin"])
    assert info.value.code == 2
    assert ("--by poolin: no run's config.json records 'poolin' (a "
            "hyperparameter, or a key such as backend or commit).") in (
                capsys.readouterr().err)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("setup, message", [
    (lambda root: None, "{root}/missing is not a directory."),
    (lambda root: (root / "missing").mkdir(),
     "{root}/missing is not a run directory and holds none"),
    (lambda root: _write_run(root / "missing", finished=False),
     "No finished run (with metrics.json) in {root}/missing."),
    (lambda root: (_write_run(root / "missing"),
                   (root / "missing" / "metrics.json").write_text("{")),
     "{root}/missing/metrics.json is not readable JSON"),
])
def test_errors_exit_2_naming_the_path(tmp_path, capsys, setup, message):
    setup(tmp_path)
    with pytest.raises(SystemExit) as info:
        report.main([str(tmp_path / "missing"), "--out",
                     str(tmp_path / "report")])
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert message.format(root=tmp_path) in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "report").exists()


def test_the_report_loads_no_keras_backend(tmp_path):
    _three_seeds(tmp_path / "runs")
    code = (
        "import sys\n"
        "from lra_keras import report\n"
        f"report.main([{str(tmp_path / 'runs')!r}, '--out', "
        f"{str(tmp_path / 'report')!r}])\n"
        "loaded = {'keras', 'tensorflow', 'jax', 'torch'} & set(sys.modules)"
        "\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run([sys.executable, "-c", code],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "report" / "results.csv").exists()
