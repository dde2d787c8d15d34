"""`benchmarks/official_generator_accuracy.py`: its helpers and its table.

The statistics (the two-proportion z-test and its interval, the majority
class, the ListOps root-operator rule, token lengths, the exit-status
rule) are checked against closed forms on handmade data, without any
checkout and without a Keras backend (`numpy_only`).

With `LRA_LRA_REPO` pointing to a checkout of
google-research/long-range-arena (its `lra_benchmarks/data/listops.py` is
imported from there), a tiny ListOps run is trained here and the
benchmark's numbers on 50 official trees are compared with a direct
computation; the same for Pathfinder with `LRA_PATHFINDER_REPO` (a
drewlinsley/pathfinder checkout at ab9c130; this one installs
`benchmarks/pathfinder_fidelity.py`'s shims, `numpy.float` and
`scipy.misc.imresize` among them, in the test process). CI has no
checkout, so there those two tests skip.
"""

import importlib.util
import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from lra_keras.data import listops

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / (
    "official_generator_accuracy.py")
LRA_REPO = os.environ.get("LRA_LRA_REPO")
PATHFINDER_REPO = os.environ.get("LRA_PATHFINDER_REPO")

numpy_only = pytest.mark.numpy_only


def _benchmark():
    name = "official_generator_accuracy"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, BENCHMARK)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


# === Helpers (no checkout, no backend) ===


@numpy_only
def test_two_proportion_test_closed_form():
    # 50/100 against 60/100: pooled p = 0.55, s.e. sqrt(0.55 * 0.45 *
    # 0.02) = 0.0703562; z = 0.1 / 0.0703562 = 1.421338, two-sided
    # p = 0.155218. Unpooled s.e. sqrt(0.25/100 + 0.24/100) = 0.07, so the
    # 95% interval is 0.1 ± 1.959964 * 0.07 = [-0.037197, 0.237197].
    test = _benchmark().two_proportion_test(50, 100, 60, 100)
    assert test["difference"] == pytest.approx(0.1)
    assert test["z"] == pytest.approx(1.421338, abs=1e-6)
    assert test["p_value"] == pytest.approx(0.155218, abs=1e-6)
    assert test["ci"] == pytest.approx((-0.037197, 0.237197), abs=1e-6)
    # The direction: second minus first.
    back = _benchmark().two_proportion_test(60, 100, 50, 100)
    assert back["difference"] == pytest.approx(-0.1)
    assert back["p_value"] == pytest.approx(test["p_value"])


@numpy_only
def test_two_proportion_test_is_the_chi_square_test():
    # The pooled z-test is Pearson's chi-square test of the 2x2 table
    # without continuity correction (z^2 = chi^2).
    stats = pytest.importorskip("scipy.stats")
    for k1, n1, k2, n2 in ((730, 2000, 718, 2000), (36, 50, 5, 10),
                           (3, 40, 11, 37)):
        test = _benchmark().two_proportion_test(k1, n1, k2, n2)
        table = [[k1, n1 - k1], [k2, n2 - k2]]
        chi2, p, _, _ = stats.chi2_contingency(table, correction=False)
        assert test["z"] ** 2 == pytest.approx(chi2, rel=1e-9)
        assert test["p_value"] == pytest.approx(p, rel=1e-9)


@numpy_only
def test_two_proportion_test_edges():
    two_proportion_test = _benchmark().two_proportion_test
    # No variance at all: nothing to test.
    for k in (0, 20):
        test = two_proportion_test(k, 20, k // 2, 10)
        assert (test["z"], test["p_value"]) == (0.0, 1.0)
        assert test["ci"] == (0.0, 0.0)
    # All wrong against all right: pooled p = 0.5, z = 1 / sqrt(0.25 *
    # (1/30 + 1/30)) = sqrt(60); each proportion alone has no variance,
    # so the interval has no width.
    test = two_proportion_test(0, 30, 30, 30)
    assert test["difference"] == 1.0
    assert test["z"] == pytest.approx(math.sqrt(60))
    assert test["ci"] == (1.0, 1.0)
    with pytest.raises(ValueError, match="k1=5, n1=4"):
        two_proportion_test(5, 4, 1, 2)
    with pytest.raises(ValueError, match="n2=0"):
        two_proportion_test(1, 4, 0, 0)


def _handmade_listops():
    # Root operators MAX, MIN, MED, SM, MAX, and a lone digit (no root
    # operator: the rule has no prediction). Labels are the values.
    sources = [
        "( ( ( [MAX 2 ) 9 ) ] )",  # 9: the rule is right
        "( ( ( [MIN 3 ) 4 ) ] )",  # 3: the rule says 0
        "( ( ( ( [MED 5 ) 1 ) 9 ) ] )",  # 5: right
        "( ( ( [SM 1 ) 3 ) ] )",  # 4: right
        "( ( ( [MAX 2 ) ( ( ( [MIN 1 ) 7 ) ] ) ) ] )",  # 2: the rule says 9
        "7",  # 7: no operator
    ]
    x = listops.tokenize_batch(sources, max_length=12)
    y = np.array([listops.evaluate(s) for s in sources], np.int32)
    return x, y


@numpy_only
def test_root_rule_on_handmade_trees():
    benchmark = _benchmark()
    x, y = _handmade_listops()
    assert y.tolist() == [9, 3, 5, 4, 2, 7]
    assert benchmark.root_rule_predictions(x).tolist() == [9, 0, 5, 4, 9, -1]
    assert benchmark.root_rule_accuracy(x, y) == pytest.approx(3 / 6)
    roots = benchmark.modal_label_by_root(x, y)
    assert roots["[MIN"] == (pytest.approx(1 / 6), 3, 1.0)
    # Two MAX roots of labels 9 and 2: the tie goes to the smaller label.
    assert roots["[MAX"] == (pytest.approx(2 / 6), 2, 0.5)
    assert set(roots) == {"[MIN", "[MAX", "[MED", "[SM"}


@numpy_only
def test_majority_rate_and_token_lengths():
    benchmark = _benchmark()
    assert benchmark.majority_rate([1, 1, 0, 3, 1, 3]) == pytest.approx(0.5)
    x, _ = _handmade_listops()
    # Tokens without parentheses: [MAX 2 9 ] is 4; the nested one 7.
    assert benchmark.token_lengths(x, 0).tolist() == [4, 4, 5, 4, 7, 1]
    padded = np.array([[3, 0, 4, 0], [0, 0, 0, 0]])
    # Up to the last real token, padding inside counted; an empty row is 0.
    assert benchmark.token_lengths(padded, 0).tolist() == [3, 0]


@numpy_only
def test_exit_status_rule():
    benchmark = _benchmark()

    def result(path, correct, recorded, k, n=100):
        return dict(
            path=path, recorded=recorded,
            recorded_correct=round(recorded * 100),
            ours=dict(correct=correct, n=100, accuracy=correct / 100),
            official=dict(correct=k, n=n, accuracy=k / n),
            test=benchmark.two_proportion_test(correct, 100, k, n),
        )

    # p = 0.0455 for 50/100 against 64/100: below 0.05 alone, not below
    # 0.05 / 2 with a second run.
    same = result("a", 50, 0.5, 50)
    shifted = result("b", 50, 0.5, 64)
    assert shifted["test"]["p_value"] == pytest.approx(0.0455, abs=1e-3)
    assert [p for p, _ in benchmark.failures([shifted], 0.05)] == ["b"]
    assert benchmark.failures([same, shifted], 0.05) == []
    # A recomputed accuracy one prediction off metrics.json fails.
    failed = benchmark.failures([result("c", 49, 0.5, 49)], 0.05)
    assert len(failed) == 1 and "metrics.json" in failed[0][1]


# === With a checkout: a tiny run's table against a direct computation ===


def _direct_check(benchmark, out, run_dir, hp, task):
    """The benchmark's numbers of the one run in `out`, computed again:
    the model called on whole arrays, the statistics by hand."""
    from lra_keras.saving import load_model
    from lra_keras.techniques.base import predicted_classes
    from tests.testing import to_numpy
    from tests.testing import token_inputs

    (result,) = out["runs"]
    model = load_model(run_dir / "model.keras")
    counts = {}
    for side in ("ours", "official"):
        x, y = out["arrays"][result[side]["key"]]
        batched = out["predictions"][(str(result["path"]), side)]
        logits = to_numpy(model(token_inputs(x, hp["padding_id"])))
        direct = predicted_classes(logits)
        # Batched and whole-array logits differ by rounding only: any
        # prediction that differs is a near tie (one logit: near 0).
        if logits.shape[-1] == 1:
            ties = np.abs(logits[:, 0]) < 1e-4
        else:
            top2 = np.sort(logits, axis=-1)[:, -2:]
            ties = np.abs(top2[:, 1] - top2[:, 0]) < 1e-4
        assert np.all((batched == direct) | ties)
        correct = int(np.sum(batched == y))
        assert result[side]["correct"] == correct
        assert result[side]["n"] == len(y)
        assert result[side]["accuracy"] == pytest.approx(correct / len(y))
        counts[side] = (correct, len(y))
        info = out["sets"][result[side]["key"]]
        assert info["n"] == len(y)
        assert info["majority"] == pytest.approx(
            np.bincount(y).max() / len(y))
        if task == "listops":
            first = x[:, 0]
            rule = np.select(
                [first == listops.VOCABULARY.index(op)
                 for op in ("[MIN", "[MAX", "[MED", "[SM")],
                [0, 9, 5, 4], -1)
            assert info["root_rule"] == pytest.approx(np.mean(rule == y))
            assert result[side]["root_agreement"] == pytest.approx(
                np.mean(batched == rule))
            lengths = (x != 0).sum(axis=1)  # no padding inside a row
            assert info["length_mean"] == pytest.approx(lengths.mean())
            assert (info["length_min"], info["length_max"]) == (
                lengths.min(), lengths.max())
    # Our test split is the run's: its accuracy is metrics.json's.
    assert result["ours"]["accuracy"] == pytest.approx(result["recorded"],
                                                       abs=1e-6)
    (k1, n1), (k2, n2) = counts["ours"], counts["official"]
    p1, p2, pooled = k1 / n1, k2 / n2, (k1 + k2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    test = result["test"]
    assert test["difference"] == pytest.approx(p2 - p1)
    if se > 0:
        assert test["p_value"] == pytest.approx(
            math.erfc(abs(p2 - p1) / se / math.sqrt(2)))
    half = 1.959964 * math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)
    assert test["ci"] == pytest.approx((p2 - p1 - half, p2 - p1 + half),
                                       abs=1e-6)
    return result


@pytest.mark.skipif(
    not LRA_REPO
    or not Path(LRA_REPO, "lra_benchmarks/data/listops.py").exists(),
    reason="LRA_LRA_REPO does not point to a google-research/"
    "long-range-arena checkout",
)
def test_listops_table_matches_a_direct_computation(tmp_path, capsys):
    pytest.importorskip("absl")
    from lra_keras.hparams import get_hparams
    from lra_keras.training import run
    from tests.testing import write_listops_release

    data_dir = tmp_path / "data"
    rows = listops.generate(60, seed=3, min_length=10, max_length=60,
                            num_workers=1)
    write_listops_release(data_dir, rows)
    # The official trees (500-2000 tokens) fit the task's 2000; the
    # quick preset's shorter generated trees are unset (release files).
    hp = get_hparams("listops", preset="quick", epochs=1, batch_size=8,
                     hidden_dim=8, num_layers=1, intermediate_dim=16,
                     bucket_step=64, sequence_length=2000, min_length=None,
                     max_depth=None)
    run_dir = tmp_path / "runs" / "tiny" / "seed0"
    run("listops", hp, data_dir=str(data_dir), out_dir=run_dir,
        saved_models_dir=None, verbose=0)
    benchmark = _benchmark()
    out = benchmark.compare_runs("listops", LRA_REPO, [tmp_path / "runs"],
                                 num_samples=50, seed=1, log=lambda _: None)
    result = _direct_check(benchmark, out, run_dir, hp, "listops")
    assert result["official"]["n"] == 50 and result["ours"]["n"] == 10
    official = out["sets"][result["official"]["key"]]
    # The official window: 500 < length < 2000 tokens.
    assert 500 < official["length_min"] <= official["length_max"] < 2000
    # The same official trees for the same seed.
    again, _, _ = benchmark.official_listops(LRA_REPO, 50, 1, 2000)
    x, _ = out["arrays"][result["official"]["key"]]
    assert sorted(map(bytes, again)) == sorted(map(bytes, x))

    status = benchmark.main(["--task", "listops", "--official", LRA_REPO,
                             "--samples", "50", "--seed", "1",
                             str(tmp_path / "runs")])
    printed = capsys.readouterr().out
    line = next(line for line in printed.splitlines()
                if line.strip().startswith("tiny/seed0"))
    assert f"{result['ours']['accuracy']:.4f} (10)" in line
    assert f"{result['official']['accuracy']:.4f} (50)" in line
    assert status == (1 if result["test"]["p_value"] < 0.05 else 0)


@numpy_only
def test_official_generator_flags_draw_the_runs_trees():
    benchmark = _benchmark()
    lra = dict(max_depth=10, max_args=10, max_length=2000, min_length=500)
    assert benchmark.LRA_TREES == lra
    short = dict(sequence_length=128, min_length=10, max_depth=4)
    # Release files hold LRA's trees, whatever the run's keys.
    assert benchmark.official_generator_flags(short, "/data") == lra
    # Generated: the generator's window and depth, the length as the
    # loader passes it (`max_length` = `sequence_length`).
    assert benchmark.official_generator_flags(short, None) == dict(
        lra, max_length=128, min_length=10, max_depth=4)
    unset = dict(sequence_length=2000, min_length=None, max_depth=None)
    assert benchmark.official_generator_flags(unset, None) == lra


@pytest.mark.skipif(
    not LRA_REPO
    or not Path(LRA_REPO, "lra_benchmarks/data/listops.py").exists(),
    reason="LRA_LRA_REPO does not point to a google-research/"
    "long-range-arena checkout",
)
def test_official_trees_take_the_flags_of_each_call():
    pytest.importorskip("absl")
    benchmark = _benchmark()
    short = dict(max_length=128, min_length=10, max_depth=4)
    x, y, _ = benchmark.official_listops(LRA_REPO, 40, 0, 128, short)
    lengths = benchmark.token_lengths(x, listops.PAD_ID)
    assert 10 < lengths.min() and lengths.max() < 128 and len(y) == 40
    # max_depth 4: the official script puts values at depth 4, so at most
    # 3 operators are open at once (lines 68-101).
    opened = np.cumsum(np.where(x == listops.VOCABULARY.index("]"), -1,
                                np.isin(x, [listops.VOCABULARY.index(o)
                                            for o in benchmark.ROOT_RULE])),
                       axis=1)
    assert opened.max() == 3
    # absl keeps a flag's last value: the next call passes them all.
    x, _, _ = benchmark.official_listops(LRA_REPO, 5, 0, 2000)
    assert benchmark.token_lengths(x, listops.PAD_ID).min() > 500


@pytest.mark.skipif(
    not PATHFINDER_REPO or not Path(PATHFINDER_REPO, "snakes2.py").exists(),
    reason="LRA_PATHFINDER_REPO does not point to a drewlinsley/pathfinder "
    "checkout",
)
def test_pathfinder_table_matches_a_direct_computation(tmp_path,
                                                       monkeypatch):
    from lra_keras.hparams import get_hparams
    from lra_keras.training import run

    monkeypatch.setenv("LRA_KERAS_DATA", str(tmp_path / "cache"))
    hp = get_hparams("pathfinder", preset="quick", num_samples=40, epochs=1,
                     batch_size=8, hidden_dim=8, num_layers=1,
                     intermediate_dim=16)
    run_dir = tmp_path / "runs" / "tiny" / "seed0"
    run("pathfinder", hp, out_dir=run_dir, saved_models_dir=None, verbose=0)
    benchmark = _benchmark()
    out = benchmark.compare_runs("pathfinder", PATHFINDER_REPO,
                                 [tmp_path / "runs"], num_samples=20,
                                 seed=1, log=lambda _: None)
    result = _direct_check(benchmark, out, run_dir, hp, "pathfinder")
    assert result["official"]["n"] == 20 and result["ours"]["n"] == 4
    x, y = out["arrays"][result["official"]["key"]]
    assert x.dtype == np.uint8 and x.shape == (20, 1024)
    assert set(np.unique(y)) <= {0, 1}
