"""The recipes' command line: overrides, typed values, one-line errors."""

import pytest

from lra_keras import cli
from lra_keras.schema import RULES
from lra_keras.schema import check


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
    ("schedule=linear", "expected one of ['constant', 'cosine', 'plateau']"),
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
