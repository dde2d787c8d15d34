"""Tests of the ListOps generator, evaluator, tokenizer, reader and loader."""

import ast
import concurrent.futures
import os
import pathlib

import numpy as np
import pytest

from lra_keras import data
from lra_keras.data import listops
from lra_keras.data.listops import generator

pytestmark = pytest.mark.numpy_only

# A short window keeps most tests fast; the LRA window is tested separately.
SMALL = dict(min_length=20, max_length=200)


# === Reference implementation, independent of the module ===


def parse_official(source):
    """Parses the official text form back into the official nested tuples."""
    tokens = source.split(" ")

    def node(i):
        if tokens[i] == "(":
            left, i = node(i + 1)
            right, i = node(i)
            if tokens[i] != ")":
                raise ValueError(f"expected ')' at token {i}")
            return (left, right), i + 1
        token = tokens[i]
        return (int(token) if token.isdigit() else token), i + 1

    tree, end = node(0)
    if end != len(tokens):
        raise ValueError("trailing tokens")
    return tree


def to_string_official(tree):
    if isinstance(tree, tuple):
        left, right = tree
        return f"( {to_string_official(left)} {to_string_official(right)} )"
    return str(tree)


REFERENCE_OPERATORS = {
    "[MIN": min,
    "[MAX": max,
    "[MED": lambda args: int(np.median(args)),
    "[SM": lambda args: sum(args) % 10,
}


def value_of(tree):
    """Recursive evaluation of the nested tuples: (((op, a1), a2), ']')."""
    if isinstance(tree, int):
        return tree
    spine, end = tree
    assert end == "]"
    args = []
    while isinstance(spine, tuple):
        spine, arg = spine
        args.append(value_of(arg))
    return REFERENCE_OPERATORS[spine](args[::-1])


def root_arguments(tree):
    spine, _ = tree
    args = []
    while isinstance(spine, tuple):
        spine, arg = spine
        args.append(arg)
    return args[::-1]


# === Generator ===


def test_generated_labels_match_independent_evaluator():
    rows = listops.generate(200, seed=1, num_workers=1, **SMALL)
    rows += listops.generate(10, seed=1, num_workers=1)  # the LRA window
    for source, target in rows:
        assert value_of(parse_official(source)) == target
        assert listops.evaluate(source) == target


def test_generated_text_is_official_form_inside_length_window():
    known = set(listops.VOCABULARY[1:16]) | {"(", ")"}
    for window, rows in [
        (SMALL, listops.generate(200, seed=2, num_workers=1, **SMALL)),
        ({"min_length": 500, "max_length": 2000}, listops.generate(10)),
    ]:
        for source, _ in rows:
            tokens = source.split(" ")
            assert set(tokens) <= known
            # Round trip through the official tuples gives the same text.
            assert to_string_official(parse_official(source)) == source
            depth = np.cumsum([(t == "(") - (t == ")") for t in tokens])
            assert depth.min() >= 0 and depth[-1] == 0
            num_operators = sum(t in listops.OPERATORS for t in tokens)
            assert num_operators == tokens.count("]")
            length = sum(t not in ("(", ")") for t in tokens)
            assert window["min_length"] < length < window["max_length"]
            assert np.count_nonzero(listops.tokenize(source)) == length


def test_generate_is_deterministic_unique_and_prefix_stable():
    rows = listops.generate(300, seed=5, num_workers=1, **SMALL)
    assert rows == listops.generate(300, seed=5, num_workers=1, **SMALL)
    assert len({source for source, _ in rows}) == 300
    longer = listops.generate(3000, seed=5, num_workers=1, **SMALL)
    assert longer[:300] == rows
    other = listops.generate(300, seed=6, num_workers=1, **SMALL)
    assert len(set(rows) & set(other)) < 30


def test_generate_does_not_depend_on_num_workers(monkeypatch):
    # Three LRA chunks; force the pool (normally skipped for short jobs).
    monkeypatch.setattr(generator, "_POOL_MIN_SECONDS", 0.0)
    pools = []

    class SpyPool(concurrent.futures.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            pools.append(kwargs.get("mp_context"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", SpyPool)
    serial = listops.generate(800, seed=7, num_workers=1)
    assert not pools
    parallel = listops.generate(800, seed=7, num_workers=2)
    assert len(pools) == 1 and pools[0].get_start_method() == "spawn"
    assert parallel == serial


def test_operator_probability_is_the_probability_of_an_operator():
    # min_length=3 keeps trees whose root is an operator (length >= 4);
    # with max_depth=3 its arguments (depth 2) are operators with
    # probability operator_probability, leaves otherwise.
    for probability in (0.25, 0.75):
        rows = listops.generate(
            1500,
            seed=8,
            num_workers=1,
            max_depth=3,
            min_length=3,
            max_length=10_000,
            operator_probability=probability,
        )
        args = [
            arg
            for source, _ in rows
            for arg in root_arguments(parse_official(source))
        ]
        fraction = np.mean([isinstance(arg, tuple) for arg in args])
        assert abs(fraction - probability) < 0.05, (probability, fraction)


def test_max_depth_bounds_the_tree():
    # Depth 1 is the root: max_depth=1 allows only single digits.
    digits = listops.generate(
        10, num_workers=1, max_depth=1, min_length=0, max_length=2
    )
    assert sorted(source for source, _ in digits) == list("0123456789")
    # max_depth=2: one operator over 2..max_args digits.
    num_args, operators = set(), set()
    for source, _ in listops.generate(
        100, num_workers=1, max_depth=2, max_args=4, min_length=3
    ):
        args = root_arguments(parse_official(source))
        assert all(isinstance(arg, int) for arg in args)
        num_args.add(len(args))
        operators.add(source.split(" ")[len(args) + 1])
    assert num_args == {2, 3, 4}
    assert operators == set(listops.OPERATORS)


def test_generate_stops_when_the_window_has_too_few_trees():
    with pytest.raises(RuntimeError, match="too few"):
        listops.generate(
            11, num_workers=1, max_depth=1, min_length=0, max_length=2
        )


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(num_samples=-1), "num_samples"),
        (dict(seed=-1), "seed"),
        (dict(min_length=500, max_length=500), "min_length"),
        (dict(min_length=10, max_length=11), "min_length"),
        (dict(max_args=1), "max_args"),
        (dict(max_depth=0), "max_depth"),
        (dict(operator_probability=1.5), "operator_probability"),
        (dict(num_workers=0), "num_workers"),
        (dict(max_depth=2, max_args=2, min_length=10), "max_depth"),
    ],
)
def test_generate_validates_arguments(kwargs, name):
    kwargs = {"num_samples": 1, **kwargs}
    with pytest.raises(ValueError, match=f"Received: .*{name}="):
        listops.generate(**kwargs)


# === Evaluation ===


@pytest.mark.parametrize(
    "source, value",
    [
        ("[MED 1 2 ]", 1),  # median 1.5 truncates to 1
        ("[MED 1 2 3 4 ]", 2),  # median 2.5 truncates to 2
        ("[MED 9 1 5 ]", 5),
        ("( ( ( [MED 1 ) 2 ) ] )", 1),
        ("[SM 9 8 7 ]", 4),  # 24 mod 10
        ("[SM 5 5 ]", 0),
        ("[MIN 3 1 2 ]", 1),
        ("( ( ( [MAX 2 ) 9 ) ] )", 9),
        ("[SM 7 [MED 1 2 3 4 ] 5 ]", 4),
        ("[MAX [MIN 4 7 ] [SM 6 6 ] 3 ]", 4),
        ("7", 7),
    ],
)
def test_evaluate_by_hand(source, value):
    assert listops.evaluate(source) == value


@pytest.mark.parametrize(
    "source, message",
    [
        ("[MAX 1 2", "Incomplete"),
        ("[MAX 1 2 ] ]", "Unmatched"),
        ("[MAX ]", "no arguments"),
        ("[FIRST 1 2 ]", "Unknown ListOps token '\\[FIRST'"),
        ("12", "Unknown ListOps token '12'"),
        ("1 2", "more than one"),
        ("", "Incomplete"),
    ],
)
def test_evaluate_rejects_malformed_sources(source, message):
    with pytest.raises(ValueError, match=message):
        listops.evaluate(source)


# === Tokenization ===


def test_vocabulary_constants():
    assert len(listops.VOCABULARY) == listops.VOCABULARY_SIZE == 17
    assert listops.VOCABULARY[listops.PAD_ID] == "<pad>"
    assert listops.VOCABULARY[listops.MASK_ID] == "<mask>"
    assert listops.VOCABULARY[1:11] == [str(d) for d in range(10)]
    assert listops.VOCABULARY[11:16] == ["[MIN", "[MAX", "[MED", "[SM", "]"]
    with pytest.raises(ValueError, match="'<mask>'"):
        listops.tokenize("[MAX <mask> 1 ]")


def test_tokenize_drops_parens_keeps_end_pads_and_truncates():
    source = "( ( ( [MAX 2 ) 9 ) ] )"
    token_ids = listops.tokenize(source, max_length=6)
    assert token_ids.dtype == np.int32
    assert token_ids.tolist() == [12, 3, 10, 15, 0, 0]
    assert listops.tokenize(source, max_length=2).tolist() == [12, 3]
    expected = [14, 1, 11, 2, 15, 15]
    assert listops.tokenize("[SM  0\t[MIN 1 ] ]", 6).tolist() == expected
    with pytest.raises(ValueError, match="Unknown ListOps token '9\\]'"):
        listops.tokenize("[MAX 1 9]")


def test_tokenize_batch_matches_tokenize():
    sources = [s for s, _ in listops.generate(300, num_workers=1, **SMALL)]
    # Rows off the fast path: odd whitespace, an empty source.
    sources += ["[SM  1 2 ]", " ( [MAX 3 ) ", "", "\t7"]
    for max_length in (50, 250):
        expected = np.stack([listops.tokenize(s, max_length) for s in sources])
        np.testing.assert_array_equal(
            listops.tokenize_batch(sources, max_length), expected
        )
        np.testing.assert_array_equal(
            listops.tokenize_batch([s.encode() for s in sources], max_length),
            expected,
        )
    with pytest.raises(ValueError, match="row 2: Unknown ListOps token 'x'"):
        listops.tokenize_batch(["1", "2", "[MAX x 2 ]"])


def test_tokenize_batch_fast_path_accepts_only_what_tokenize_accepts():
    # Random edits with confusable bytes: the batch result must equal
    # tokenize(), including raising for exactly the same rows.
    rng = np.random.default_rng(0)
    alphabet = list("[]() MINAXEDS0123456789\t")
    rows = listops.generate(300, num_workers=1, min_length=3, max_length=30)
    sources = [source for source, _ in rows]
    edited = []
    for source in sources * 5:
        chars = list(source)
        for _ in range(rng.integers(1, 3)):
            i = int(rng.integers(len(chars)))
            action = rng.integers(3)
            if action == 0:
                chars[i] = str(rng.choice(alphabet))
            elif action == 1:
                chars.insert(i, str(rng.choice(alphabet)))
            else:
                del chars[i]
        edited.append("".join(chars))
    num_valid = 0
    for source in edited:
        try:
            expected = listops.tokenize(source, 40)
        except ValueError:
            with pytest.raises(ValueError):
                listops.tokenize_batch([sources[0], source], 40)
            continue
        num_valid += 1
        batch = listops.tokenize_batch([sources[0], source], 40)
        np.testing.assert_array_equal(batch[1], expected)
    assert 100 < num_valid < len(edited) - 100  # both kinds were exercised


# === Files ===


def write_text(path, lines, newline="\n"):
    path.write_bytes(newline.join(lines).encode() + newline.encode())
    return path


def test_read_tsv_lf_and_crlf(tmp_path):
    lines = [
        "Source\tTarget",
        "( ( ( [MAX 2 ) 9 ) ] )\t9",
        "( ( ( ( [SM 4 ) 3 ) 8 ) ] )\t5",
    ]
    expected_x = [[12, 3, 10, 15, 0, 0], [14, 5, 4, 9, 15, 0]]
    for name, newline in [("lf.tsv", "\n"), ("crlf.tsv", "\r\n")]:
        path = write_text(tmp_path / name, lines + ["", ""], newline)
        x, y = listops.read_tsv(path, max_length=6)
        assert x.dtype == np.int32 and y.dtype == np.int32
        assert x.tolist() == expected_x
        assert y.tolist() == [9, 5]
    x, _ = listops.read_tsv(tmp_path / "lf.tsv", max_length=3)
    assert x.tolist() == [[12, 3, 10], [14, 5, 4]]


@pytest.mark.parametrize(
    "lines, line_number, message",
    [
        (["( [MAX 2 ) 9\t9"], 1, "header"),
        (["Source,Target", "[MAX 2 9 ]\t9"], 1, "header"),
        (["Source\tTarget", "[MAX 2 9 ]\t9", "[MAX 2 9 ]\t12"], 3, "Target"),
        (["Source\tTarget", "[MAX 2 9 ]\tnine"], 2, "Target"),
        (["Source\tTarget", "[MAX 2 9 ] 9"], 2, "2 tab-separated"),
        (["Source\tTarget", "[MAX 2 9 ]\t9\t1"], 2, "2 tab-separated"),
        (["Source\tTarget", "\t9"], 2, "empty Source"),
        (["Source\tTarget", "1\t1", "", "2\t2"], 3, "blank line"),
        (["Source\tTarget", "1\t1", "[MAX 2 [FIRST 9 ] ]\t9"], 3, "FIRST"),
    ],
)
def test_read_tsv_rejects_malformed_files(
    tmp_path, lines, line_number, message
):
    path = write_text(tmp_path / "bad_file.tsv", lines)
    with pytest.raises(ValueError) as error:
        listops.read_tsv(path)
    text = str(error.value)
    assert "bad_file.tsv" in text
    assert f"line {line_number}:" in text
    assert message in text


def test_read_tsv_refuses_a_file_cut_right_after_its_header(tmp_path):
    # Reader fuzzing, [listops seed=310 boundary basic_train.tsv offset=14]:
    # it read as a split of 0 rows.
    path = write_text(tmp_path / "basic_train.tsv", ["Source\tTarget"])
    with pytest.raises(ValueError, match=r"basic_train.tsv holds no rows"):
        listops.read_tsv(path)


def test_write_tsv_read_tsv_round_trip(tmp_path):
    rows = listops.generate(100, seed=3, num_workers=1, **SMALL)
    path = tmp_path / "basic_val.tsv"
    listops.write_tsv(path, rows)
    content = path.read_bytes()
    assert content.startswith(b"Source\tTarget\n") and b"\r" not in content
    assert content.decode().splitlines()[1:] == [f"{s}\t{t}" for s, t in rows]
    x, y = listops.read_tsv(path, max_length=200)
    assert x.shape == (100, 200)
    np.testing.assert_array_equal(
        x, listops.tokenize_batch([s for s, _ in rows], 200)
    )
    assert y.tolist() == [t for _, t in rows]
    assert os.listdir(tmp_path) == ["basic_val.tsv"]


def test_write_tsv_is_atomic(tmp_path):
    path = tmp_path / "basic_test.tsv"
    listops.write_tsv(path, [("1", 1)])
    before = path.read_bytes()

    def failing_rows():
        yield "2", 2
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        listops.write_tsv(path, failing_rows())
    with pytest.raises(ValueError, match="target"):
        listops.write_tsv(path, [("1", 10)])
    with pytest.raises(ValueError, match="tabs"):
        listops.write_tsv(path, [("1\t2", 1)])
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["basic_test.tsv"]


# === Loading ===

TINY = dict(
    num_train=50, num_val=10, num_test=10, min_length=20, max_length=100
)


def test_load_generates_once_then_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("LRA_KERAS_DATA", str(tmp_path))
    x, y = data.load("listops", "train", **TINY)
    assert x.shape == (50, 100) and x.dtype == np.int32
    assert y.shape == (50,) and y.dtype == np.int32
    directory = (
        tmp_path
        / "listops"
        / "seed0-max_length100-min_length20-num_test10-num_train50-num_val10"
    )
    files = sorted(p.name for p in directory.iterdir())
    assert files == [
        ".complete",
        "basic_test.tsv",
        "basic_train.tsv",
        "basic_val.tsv",
    ]
    mtimes = {p: p.stat().st_mtime_ns for p in directory.iterdir()}

    # The splits are consecutive slices of one generation.
    rows = listops.generate(70, seed=0, min_length=20, max_length=100)
    x_val, y_val = data.load("listops", "val", **TINY)
    np.testing.assert_array_equal(
        x_val, listops.tokenize_batch([s for s, _ in rows[50:60]], 100)
    )
    assert y_val.tolist() == [t for _, t in rows[50:60]]
    x_train, _ = data.load("listops", "train", **TINY)
    np.testing.assert_array_equal(x_train, x)
    assert {p: p.stat().st_mtime_ns for p in directory.iterdir()} == mtimes

    # Without the marker the files are not trusted and are written again.
    (directory / "basic_test.tsv").unlink()
    (directory / ".complete").unlink()
    x_test, _ = data.load("listops", "test", **TINY)
    np.testing.assert_array_equal(
        x_test, listops.tokenize_batch([s for s, _ in rows[60:]], 100)
    )


def test_truncated_generated_cache_is_an_error_not_a_short_split(
        tmp_path, monkeypatch):
    monkeypatch.setenv("LRA_KERAS_DATA", str(tmp_path))
    data.load("listops", "train", **TINY)
    (path,) = tmp_path.glob("listops/*/basic_train.tsv")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:26]))  # cut at a line boundary
    with pytest.raises(ValueError, match=r"basic_train.tsv holds 25 rows; "
                       r"its .complete marker records num_train=50"):
        data.load("listops", "train", **TINY)


def test_generated_split_of_size_0_is_empty(tmp_path, monkeypatch):
    # Its file holds the header only, which read_tsv refuses.
    monkeypatch.setenv("LRA_KERAS_DATA", str(tmp_path))
    x, y = data.load("listops", "test", **{**TINY, "num_test": 0})
    assert x.shape == (0, 100) and y.shape == (0,)
    assert x.dtype == y.dtype == np.int32


def test_cache_dir_default_and_override(monkeypatch, tmp_path):
    monkeypatch.delenv("LRA_KERAS_DATA", raising=False)
    assert data.cache_dir() == pathlib.Path.home() / ".cache" / "lra_keras"
    monkeypatch.setenv("LRA_KERAS_DATA", str(tmp_path))
    assert data.cache_dir() == tmp_path


def test_load_reads_release_files_from_data_dir(tmp_path):
    folder = tmp_path / "lra_release" / "listops-1000"
    folder.mkdir(parents=True)
    write_text(
        folder / "basic_val.tsv",
        ["Source\tTarget", "( ( ( [MAX 2 ) 9 ) ] )\t9"],
        "\r\n",
    )
    for data_dir in (tmp_path, folder, str(folder)):
        x, y = data.load("listops", "val", data_dir=data_dir, max_length=8)
        assert x.tolist() == [[12, 3, 10, 15, 0, 0, 0, 0]]
        assert y.tolist() == [9]


def test_load_without_release_files_says_what_to_download(tmp_path):
    with pytest.raises(FileNotFoundError) as error:
        data.load("listops", "train", data_dir=tmp_path)
    message = str(error.value)
    for part in (
        "basic_train.tsv",
        "lra_release.gz",
        "listops-1000",
        "google-research/long-range-arena",
        "--data-dir",
    ):
        assert part in message


def test_load_rejects_bad_task_split_and_options(tmp_path):
    with pytest.raises(ValueError, match="'listops'.*Received: task='mnist'"):
        data.load("mnist", "train")
    with pytest.raises(ValueError, match="'val'.*Received: split='valid'"):
        data.load("listops", "valid")
    with pytest.raises(ValueError, match="Received: split='dev'"):
        listops.load_listops("dev")
    with pytest.raises(ValueError, match="max_dept"):
        data.load("listops", "train", max_dept=3)
    with pytest.raises(ValueError, match="only to generated data"):
        data.load("listops", "train", data_dir=tmp_path, min_length=3)


def test_data_package_imports_no_backend():
    # Checked on the source: importing lra_keras itself is another module's
    # business, but these files must stay backend-free: every module of the
    # data package, its subpackages (listops, pathfinder) included, the
    # atomic-write helper it uses and the task specs that name its loaders.
    backends = {"keras", "jax", "torch", "tensorflow"}
    folder = pathlib.Path(data.__file__).parent
    paths = sorted(folder.rglob("*.py"))
    assert folder / "pathfinder" / "generator.py" in paths
    assert folder / "listops" / "generator.py" in paths
    extra = [folder.parent / "_atomic.py", folder.parent / "tasks.py"]
    for path in paths + extra:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] not in backends, (path, name)
                # Other lra_keras modules may import Keras.
                if name.split(".")[0] == "lra_keras":
                    assert name.startswith(
                        ("lra_keras.data", "lra_keras._atomic",
                         "lra_keras.tasks")
                    ), (path, name)


def _small_generated_splits(tmp_path, monkeypatch):
    """`inputs.data.load` generating 40 / 10 / 10 trees into `tmp_path`;
    returns (the options of every call, that loader)."""
    from lra_keras.training import inputs

    monkeypatch.setenv("LRA_KERAS_DATA", str(tmp_path))
    calls, load = [], data.load

    def small_load(task, split, **options):
        calls.append(options)
        return load(task, split, num_train=40, num_val=10, num_test=10,
                    **options)

    monkeypatch.setattr(inputs.data, "load", small_load)
    return calls, small_load


def test_hyperparameters_min_length_and_max_depth_make_a_variant(
        tmp_path, monkeypatch):
    # `min_length` and `max_depth` of a run's row reach the generator
    # (`Task.loader_options`): shorter, shallower trees.
    from lra_keras.hparams import get_hparams
    from lra_keras.training import inputs

    calls, small_load = _small_generated_splits(tmp_path, monkeypatch)
    hp = get_hparams("listops", "s4d", "quick", sequence_length=64,
                     min_length=10, max_depth=3)
    splits = inputs.load_splits("listops", hp)
    assert calls[0] == dict(data_dir=None, max_length=64, min_length=10,
                            max_depth=3)
    x, _ = splits["train"]
    assert x.shape == (40, 64)
    # The S4 rows end every tree with the end token (`append_eos`).
    assert hp["append_eos"] is True
    lengths = (x != listops.PAD_ID).sum(1)
    end_id = listops.VOCABULARY_SIZE
    np.testing.assert_array_equal(x[np.arange(40), lengths - 1], end_id)
    assert (x == end_id).sum() == 40
    lengths -= 1  # tokens without parentheses, before the end token
    assert lengths.min() > 10 and lengths.max() < 64
    x = np.where(x == end_id, listops.PAD_ID, x)
    # Operators open a level, "]" closes it; an operator is drawn only
    # above max_depth, so operators nest at most max_depth - 1 deep.
    operators = np.isin(x, [listops.VOCABULARY.index(t) for t in
                            ("[MIN", "[MAX", "[MED", "[SM")])
    closes = x == listops.VOCABULARY.index("]")
    nesting = np.cumsum(operators.astype(int) - closes, axis=1)
    assert nesting.max() == 2
    # The LRA release's files are read as they are: the options are refused.
    with pytest.raises(ValueError, match="Generator options apply only to "
                       r"generated data .*'max_depth', 'min_length'"):
        inputs.load_splits("listops", hp, data_dir=tmp_path)


def test_padded_length_pads_the_trees_after_generating_them(
        tmp_path, monkeypatch):
    # The S5 code's ListOps (`padded_length`): trees generated under the
    # task's length, then every sequence padded to the loader's l_max and
    # ended by `<eos>`: the S4 loaders' `tokens[:l_max - 1] + [<eos>]`
    # padded to l_max (src/dataloaders/lra.py 320-343).
    from lra_keras.hparams import get_hparams
    from lra_keras.training import inputs

    calls, small_load = _small_generated_splits(tmp_path, monkeypatch)
    cells = dict(sequence_length=64, min_length=10, max_depth=3)
    padded = inputs.load_splits(
        "listops", get_hparams("listops", "s5", "quick", padded_length=80,
                               **cells))
    assert calls[0]["max_length"] == 64  # the generator's window
    raw = small_load("listops", "train", max_length=64, min_length=10,
                     max_depth=3)[0]
    end_id = listops.VOCABULARY_SIZE
    expected = []
    for row in raw:
        tokens = [int(t) for t in row if t != listops.PAD_ID][:79]
        expected.append(tokens + [end_id] + [0] * (79 - len(tokens)))
    x, y = padded["train"]
    np.testing.assert_array_equal(x, expected)
    assert x.shape == (40, 80)
    # the same trees and labels as the row without padding
    plain = inputs.load_splits(
        "listops", get_hparams("listops", "s5", "quick", **cells))
    for split in ("train", "val", "test"):
        np.testing.assert_array_equal(padded[split][1], plain[split][1])
        np.testing.assert_array_equal(padded[split][0][:, :64],
                                      plain[split][0])
        np.testing.assert_array_equal(padded[split][0][:, 64:], 0)
