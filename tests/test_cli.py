"""The recipes' command line: overrides, typed values, one-line errors,
several seeds, TensorBoard logs."""

import json
from pathlib import Path

import pytest

from lra_keras import cli
from lra_keras.schema import RULES
from lra_keras.schema import check
from tests.testing import RELEASE_TREES_SET


def _exit(argv, capsys, task="listops"):
    with pytest.raises(SystemExit) as info:
        cli.main(task, argv)
    return info.value.code, capsys.readouterr().err


def test_repeated_set_keeps_every_override():
    args = cli.parser_for("listops").parse_args(
        ["--set", "epochs=3", "--set", "train_samples=64", "batch_size=8"])
    assert cli.parse_overrides(args.set) == dict(
        epochs=3, train_samples=64, batch_size=8)


def test_a_key_given_twice_is_refused(capsys):
    code, err = _exit(["--set", "epochs=3", "--set", "epochs=4"], capsys)
    assert code == 2
    assert "--set gives epochs twice" in err


@pytest.mark.one_backend
@pytest.mark.parametrize("pair, expected", [
    ("epochs=0", "epochs=0 (from override): expected an int >= 1"),
    ("epochs=-1", "epochs=-1 (from override): expected an int >= 1"),
    ("epochs=1.5", "epochs=1.5 (from override): expected an int >= 1"),
    ("learning_rate=abc", "learning_rate='abc' (from override): expected "
     "a number >= 0"),
    ("learning_rate=-1", "learning_rate=-1"),
    ("batch_size=True", "batch_size=True (from override): expected an int"),
    ("train_samples=0", "train_samples=0 (from override): expected an int "
     ">= 1 or None"),
    ("dropout=1.5", "dropout=1.5"),
    ("schedule=step",
     "expected one of ['constant', 'cosine', 'linear', 'plateau', "
     "'rsqrt']"),
    ("causal=1", "causal=1 (from override): expected True or False"),
])
def test_bad_values_exit_2_with_one_line_naming_key_and_value(
        pair, expected, capsys):
    code, err = _exit(["--set", pair], capsys)
    assert code == 2
    assert expected in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_debug_shows_the_traceback():
    with pytest.raises(ValueError, match="epochs=0"):
        cli.main("listops", ["--set", "epochs=0", "--debug"])


def test_missing_data_exits_1_with_one_line(tmp_path, capsys):
    code, err = _exit(["--data-dir", str(tmp_path / "nowhere"), "--out",
                       str(tmp_path / "run"), "--no-export"], capsys)
    assert code == 1
    assert "basic_train.tsv not found" in err
    assert len(err.strip().splitlines()) == 1


def test_out_that_is_a_file_exits_2(tmp_path, capsys):
    taken = tmp_path / "taken"
    taken.write_text("")
    code, err = _exit(["--out", str(taken)], capsys)
    assert code == 2
    assert f"The run directory {taken} is a file" in err


def test_every_rule_accepts_its_kind_and_refuses_others():
    # Spot checks of the rule semantics the CLI relies on.
    assert RULES["epochs"].accepts(3)
    assert not RULES["epochs"].accepts(True)
    assert not RULES["epochs"].accepts(3.0)
    assert RULES["learning_rate"].accepts(1)  # an int is a number
    assert not RULES["learning_rate"].accepts(float("nan"))
    assert RULES["train_samples"].accepts(None)
    assert not RULES["epochs"].accepts(None)
    with pytest.raises(ValueError, match="made_up: no rule"):
        check({"made_up": 1})
    # Mixed choices match value and type: 1 is not True, nor 0 False.
    count_padding = RULES["batch_norm_count_padding"]
    for value in (False, True, "longest"):
        assert count_padding.accepts(value)
    for value in (0, 1, 1.0, "all", "True", None):
        assert not count_padding.accepts(value)
    assert count_padding.describe() == "one of [False, True, 'longest']"


# === --seeds and --tensorboard ===

# tests/test_run_guards.py's tiny ListOps run, as --set arguments.
TINY_SET = ["sequence_length=64", "epochs=2", "batch_size=10",
            "hidden_dim=8", "num_layers=1", "num_heads=2",
            "intermediate_dim=16", "bucket_step=None", *RELEASE_TREES_SET]


def _record_runs(monkeypatch, accuracies=(0.5, 0.6, 0.7)):
    """Replaces `training.run` by a recorder; seed k scores
    accuracies[k]."""
    import lra_keras.training

    calls = []

    def fake_run(task, hp, **kwargs):
        calls.append(dict(kwargs, task=task, hp=hp))
        return None, dict(test_accuracy=accuracies[kwargs["seed"]])

    monkeypatch.setattr(lra_keras.training, "run", fake_run)
    return calls


def test_seeds_run_one_after_another_into_seed_directories(
        tmp_path, monkeypatch, capsys):
    calls = _record_runs(monkeypatch)
    assert cli.main("listops", ["--preset", "quick", "--seeds", "0", "1",
                                "2", "--out", str(tmp_path / "r")]) == 0
    assert [(c["seed"], c["out_dir"], c["saved_name"]) for c in calls] == [
        (k, tmp_path / "r" / f"seed{k}", f"listops_transformer_quick_seed{k}")
        for k in (0, 1, 2)
    ]
    assert all(c["hp"] == calls[0]["hp"] and c["callbacks"] == []
               for c in calls)
    # 0.5, 0.6, 0.7: mean 0.6, half-width t(0.975, 2) * 0.1 / sqrt(3).
    half = 4.303 * 0.1 / 3 ** 0.5
    assert f"{half:.4f}" == "0.2484"
    assert (f"test accuracy over seeds 0 1 2: 0.6000 ± 0.2484 (95% CI); "
            f"each: 0.5000, 0.6000, 0.7000. Table and plots: python -m "
            f"lra_keras.report {tmp_path / 'r'}") in capsys.readouterr().out


def test_seeds_go_below_the_default_run_directory(tmp_path, monkeypatch):
    calls = _record_runs(monkeypatch)
    monkeypatch.chdir(tmp_path)
    cli.main("listops", ["--preset", "quick", "--technique", "multitask",
                         "--seeds", "2"])
    assert [(c["seed"], c["out_dir"]) for c in calls] == [
        (2, Path("runs") / "listops_transformer_multitask_quick" / "seed2")]


def test_one_seed_keeps_the_run_directory_and_saved_name(
        tmp_path, monkeypatch, capsys):
    calls = _record_runs(monkeypatch, accuracies=(0.1, 0.2))
    cli.main("listops", ["--seed", "1", "--out", str(tmp_path / "r")])
    cli.main("listops", ["--out", str(tmp_path / "r")])
    assert [(c["seed"], c["out_dir"], c["saved_name"]) for c in calls] == [
        (1, tmp_path / "r", "listops_transformer"),
        (0, tmp_path / "r", "listops_transformer"),
    ]
    assert "over seeds" not in capsys.readouterr().out


def test_seed_and_seeds_together_exit_2(tmp_path, monkeypatch, capsys):
    calls = _record_runs(monkeypatch)
    code, err = _exit(["--seed", "1", "--seeds", "0", "1"], capsys)
    assert code == 2
    assert "argument --seeds: not allowed with argument --seed" in err
    code, err = _exit(["--seeds", "0", "1", "0", "1", "2"], capsys)
    assert code == 2
    assert ("--seeds gives 0, 1 more than once. Received: --seeds 0 1 0 1 "
            "2") in err
    assert len(err.strip().splitlines()) == 1
    assert calls == []


def test_tensorboard_without_its_package_exits_2_before_training(
        monkeypatch, capsys):
    calls = _record_runs(monkeypatch)
    find_spec = cli.importlib.util.find_spec
    monkeypatch.setattr(
        cli.importlib.util, "find_spec",
        lambda name, *a: None if name == "tensorboard" else find_spec(
            name, *a))
    code, err = _exit(["--tensorboard"], capsys)
    assert code == 2
    assert "--tensorboard needs the tensorboard package" in err
    assert len(err.strip().splitlines()) == 1
    assert calls == []


def test_tensorboard_logs_beside_each_seed_run(tmp_path, monkeypatch):
    import keras

    calls = _record_runs(monkeypatch)
    cli.main("listops", ["--seeds", "0", "1", "--tensorboard", "--out",
                         str(tmp_path / "r")])
    for k, call in enumerate(calls):
        (board,) = call["callbacks"]
        assert isinstance(board, keras.callbacks.TensorBoard)
        assert board.log_dir == str(tmp_path / "r" / f"seed{k}" /
                                    "tensorboard")


@pytest.mark.one_backend
def test_two_seeds_train_resume_log_and_report(tmp_path, capsys):
    from lra_keras import report
    from lra_keras.data import listops
    from tests.testing import write_listops_release

    data = write_listops_release(tmp_path / "data", listops.generate(
        60, seed=2, min_length=10, max_length=60, num_workers=1))
    out, saved = tmp_path / "runs", tmp_path / "saved"
    argv = ["--preset", "quick", "--data-dir", str(data), "--out", str(out),
            "--saved-models", str(saved), "--no-export", "--seeds", "0",
            "1", "--tensorboard", "--set", *TINY_SET]
    assert cli.main("listops", argv) == 0
    printed = capsys.readouterr().out
    assert printed.count("Epoch 2/2 - run ETA ") == 2
    finished = {}
    for k in (0, 1):
        run_dir = out / f"seed{k}"
        assert json.loads((run_dir / "config.json").read_text())[
            "seed"] == k
        finished[k] = (run_dir / "metrics.json").read_bytes()
        for phase in ("train", "validation"):
            (events,) = (run_dir / "tensorboard" / phase).iterdir()
            assert events.name.startswith("events.out.tfevents.")
            assert events.stat().st_size > 0
        assert (saved / f"listops_transformer_quick_seed{k}.keras").exists()
        assert (saved / f"listops_transformer_quick_seed{k}.json").exists()

    # Started again: both seeds are reported, none trained again.
    assert cli.main("listops", argv) == 0
    assert capsys.readouterr().out.count("holds this run, finished") == 2
    assert all((out / f"seed{k}" / "metrics.json").read_bytes() == finished[k]
               for k in (0, 1))

    rows, _ = report.write_report([out], tmp_path / "report")
    # One row, of the runs with the --set keys (set A).
    assert [(r["name"], r["seeds"], r["epochs"]) for r in rows] == [
        ("listops_transformer_quick_setA", [0, 1], [2])]
    assert rows[0]["overrides"] == (
        "batch_size=10 bucket_step=None epochs=2 hidden_dim=8 "
        "intermediate_dim=16 max_depth=None min_length=None num_heads=2 "
        "num_layers=1 sequence_length=64")
    accuracies = [json.loads(finished[k])["test_accuracy"] for k in (0, 1)]
    assert rows[0]["test_accuracy"] == pytest.approx(
        50 * sum(accuracies), abs=1e-9)
