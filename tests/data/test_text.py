"""Tests of the Text (IMDB) byte encoder, aclImdb reader, TFDS path, loader."""

import functools

import numpy as np
import pytest

from lra_keras.data import text
from tests.data.fake_tfds import FakeBuilder

pytestmark = pytest.mark.numpy_only


def reference_ids(raw, length):
    """byte + 1, truncated and 0-padded, one byte at a time."""
    ids = [b + 1 for b in raw[:length]]
    return ids + [0] * (length - len(ids))


# === encode_bytes ===


def test_encode_bytes_is_byte_plus_one_truncated_and_padded():
    texts = ["ab", "é€", b"\x00\xff", "x" * 10, ""]
    x = text.encode_bytes(texts, 6)
    assert x.dtype == np.uint16 and x.shape == (5, 6)
    expected = [
        reference_ids(t.encode() if isinstance(t, str) else t, 6) for t in texts
    ]
    np.testing.assert_array_equal(x, expected)
    # "é€" is 5 UTF-8 bytes; byte 255 becomes 256 without uint8 overflow.
    assert x[1].tolist() == [196, 170, 227, 131, 173, 0]
    assert x[2].tolist() == [1, 256, 0, 0, 0, 0]


def test_encode_bytes_truncation_can_split_a_character_like_lra():
    x = text.encode_bytes(["aé"], 2)  # 'a', first byte of 'é'
    assert x.tolist() == [[98, 196]]


def test_encode_bytes_single_text_and_numpy_object_array():
    np.testing.assert_array_equal(
        text.encode_bytes("hi", 3), text.encode_bytes(["hi"], 3)
    )
    texts = np.array([b"hey", b"a"], dtype=object)
    assert text.encode_bytes(texts, 2).tolist() == [[105, 102], [98, 0]]
    assert text.encode_bytes([], 4).shape == (0, 4)


def test_encode_bytes_rejects_bad_input():
    with pytest.raises(ValueError, match=r"texts\[1\] of type int"):
        text.encode_bytes(["ok", 3], 4)
    with pytest.raises(ValueError, match="max_length"):
        text.encode_bytes(["ok"], 0)


def test_vocabulary_constants():
    assert (text.PAD_ID, text.MASK_ID, text.VOCABULARY_SIZE) == (0, 257, 258)
    assert text.NUM_CLASSES == 2


# === aclImdb directory ===

REVIEWS = {
    ("train", "pos"): {
        "10_9.txt": b"  Great film.<br /><br />Loved it\n",
        "2_7.txt": "Très bien — merci".encode(),
    },
    ("train", "neg"): {
        "0_1.txt": b"Awful.",
        "11_2.txt": b"Bad\tacting\n\n",
        "3_4.txt": b"Meh " * 5,
    },
    ("test", "pos"): {"0_10.txt": b"Superb", "1_8.txt": b"Fine"},
    ("test", "neg"): {"5_3.txt": b"No."},
}


def write_aclimdb(root):
    base = root / "aclImdb"
    for (split, label), files in REVIEWS.items():
        folder = base / split / label
        folder.mkdir(parents=True)
        for name, content in files.items():
            (folder / name).write_bytes(content)
    # Parts of the archive the reader must ignore.
    (base / "train" / "unsup").mkdir()
    (base / "train" / "unsup" / "0_0.txt").write_bytes(b"unlabelled")
    (base / "train" / "labeledBow.feat").write_bytes(b"0 0:1\n")
    (base / "train" / "urls_pos.txt").write_bytes(b"http://x\n")
    (base / "imdb.vocab").write_bytes(b"the\n")
    return base


def expected_split(split):
    # neg (0) then pos (1), file names in sorted (string) order, stripped.
    texts, labels = [], []
    for label_name, label in (("neg", 0), ("pos", 1)):
        files = REVIEWS[(split, label_name)]
        for name in sorted(files):
            texts.append(files[name].strip())
            labels.append(label)
    return texts, labels


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LRA_KERAS_DATA", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_read_aclimdb_order_labels_and_strip(tmp_path):
    base = write_aclimdb(tmp_path)
    for split in ("train", "test"):
        texts, labels = text.read_aclimdb(base, split)
        expected_texts, expected_labels = expected_split(split)
        assert texts == expected_texts
        assert labels.dtype == np.int32
        assert labels.tolist() == expected_labels
    # Sorted as strings: "0_1" < "11_2" < "3_4".
    assert text.read_aclimdb(base, "train")[0][1] == b"Bad\tacting"


@pytest.mark.parametrize("content", [b"", b" \n\t\n"])
def test_read_aclimdb_refuses_an_empty_review(tmp_path, content):
    # Reader fuzzing, [aclimdb seed=1 empty 0_1.txt]: it read as a review
    # of no text.
    base = write_aclimdb(tmp_path)
    path = base / "train" / "neg" / "0_1.txt"
    path.write_bytes(content)
    with pytest.raises(ValueError) as error:
        text.read_aclimdb(base, "train")
    assert f"review file {path} is empty" in str(error.value)


@pytest.mark.parametrize("where", ["parent", "aclImdb"])
def test_load_text_from_aclimdb(tmp_path, cache, where):
    base = write_aclimdb(tmp_path / "data")
    data_dir = base.parent if where == "parent" else base
    for split, source in (("train", "train"), ("test", "test")):
        x, y = text.load_text(split, data_dir, max_length=16, progress=False)
        texts, labels = expected_split(source)
        # Rows come in a fixed shuffle of the sorted files.
        order = np.random.default_rng(text._ORDER_SEED).permutation(
            len(texts))
        texts, labels = [texts[i] for i in order], [labels[i] for i in order]
        assert x.dtype == np.uint16 and x.shape == (len(texts), 16)
        np.testing.assert_array_equal(x, [reference_ids(t, 16) for t in texts])
        assert y.dtype == np.int32 and y.tolist() == labels


def test_val_is_test_by_default_like_lra(tmp_path, cache):
    data_dir = write_aclimdb(tmp_path)
    x_val, y_val = text.load_text("val", data_dir, 8, progress=False)
    x_test, y_test = text.load_text("test", data_dir, 8, progress=False)
    np.testing.assert_array_equal(x_val, x_test)
    np.testing.assert_array_equal(y_val, y_test)


def test_val_fraction_holds_out_a_seeded_part_of_train(tmp_path, cache):
    data_dir = write_aclimdb(tmp_path)
    full, labels = text.load_text("train", data_dir, 32, progress=False)
    load = functools.partial(
        text.load_text, data_dir=data_dir, max_length=32, progress=False
    )
    x_train, y_train = load("train", val_fraction=0.4)
    x_val, y_val = load("val", val_fraction=0.4)
    assert len(y_train) == 3 and len(y_val) == 2  # round(0.4 * 5)
    rows = {row.tobytes(): label for row, label in zip(full, labels)}
    train_rows = [row.tobytes() for row in x_train]
    val_rows = [row.tobytes() for row in x_val]
    assert set(train_rows).isdisjoint(val_rows)
    assert set(train_rows) | set(val_rows) == set(rows)
    assert [rows[r] for r in val_rows] == y_val.tolist()
    # Deterministic for a seed; the test split is untouched.
    np.testing.assert_array_equal(load("val", val_fraction=0.4)[0], x_val)
    x_test, _ = load("test", val_fraction=0.4)
    np.testing.assert_array_equal(x_test, load("test")[0])
    draws = {
        load("val", val_fraction=0.4, seed=seed)[0].tobytes()
        for seed in range(8)
    }
    assert len(draws) > 1


def test_val_fraction_and_split_validation(tmp_path, cache):
    data_dir = write_aclimdb(tmp_path)
    for bad in (-0.1, 1.0, "0.1", True):
        with pytest.raises(ValueError, match="val_fraction"):
            text.load_text("train", data_dir, val_fraction=bad)
    with pytest.raises(ValueError, match="at least one review"):
        text.load_text("val", data_dir, val_fraction=0.01, progress=False)
    with pytest.raises(ValueError, match="split"):
        text.load_text("dev", data_dir)


def test_decoded_reviews_are_cached_and_invalidated(
    tmp_path, cache, monkeypatch
):
    data_dir = write_aclimdb(tmp_path)
    first = text.load_text("train", data_dir, 16, progress=False)
    assert list(cache.glob("text/aclimdb-*/train.npz"))
    assert not list(cache.rglob("*.tmp"))

    def no_reading(*args, **kwargs):
        raise AssertionError("files were read again despite the cache")

    with monkeypatch.context() as patch:
        patch.setattr(text, "read_aclimdb", no_reading)
        second = text.load_text("train", data_dir, 16, progress=False)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    # A changed file (new size) changes the fingerprint: read again.
    (data_dir / "train" / "neg" / "0_1.txt").write_bytes(b"Truly awful.")
    x, _ = text.load_text("train", data_dir, 16, progress=False)
    assert x[0].tolist() == reference_ids(b"Truly awful.", 16)


def test_empty_label_folder_is_an_error(tmp_path, cache):
    data_dir = write_aclimdb(tmp_path)
    for path in (data_dir / "test" / "neg").iterdir():
        path.unlink()
    with pytest.raises(FileNotFoundError, match="aclImdb_v1.tar.gz"):
        text.load_text("test", data_dir, progress=False)


# === TFDS ===


TFDS_SPLITS = {
    "train": {
        "text": np.array([b"one", b"two words", "é".encode()], object),
        "label": np.array([1, 0, 1], np.int64),
    },
    "test": {
        "text": np.array([b"t"], object),
        "label": np.array([0], np.int64),
    },
}


def test_tfds_imdb_reviews_when_prepared(tmp_path, monkeypatch):
    tfds = pytest.importorskip("tensorflow_datasets")
    calls = []

    def builder(name, data_dir=None):
        calls.append((name, data_dir))
        return FakeBuilder(TFDS_SPLITS, data_dir)

    monkeypatch.setattr(tfds, "builder", builder)
    x, y = text.load_text("train", max_length=4, progress=False)
    assert x.dtype == np.uint16
    assert x.tolist() == [
        reference_ids(b"one", 4),
        reference_ids(b"two words", 4),
        reference_ids("é".encode(), 4),
    ]
    assert y.dtype == np.int32 and y.tolist() == [1, 0, 1]
    assert calls == [("imdb_reviews", None)]
    # A TFDS data directory given as data_dir is passed to the builder.
    (tmp_path / "imdb_reviews").mkdir()
    x_val, y_val = text.load_text("val", tmp_path, 4, progress=False)
    assert calls[-1] == ("imdb_reviews", str(tmp_path))
    assert x_val.tolist() == [reference_ids(b"t", 4)] and y_val.tolist() == [0]


def test_tfds_not_prepared_is_an_error_that_says_what_to_download(
    tmp_path, monkeypatch
):
    tfds = pytest.importorskip("tensorflow_datasets")
    empty = tmp_path / "tfds"
    empty.mkdir()
    real_builder = tfds.builder

    def builder(name, data_dir=None):
        # The real builder, looking in an empty TFDS directory.
        return real_builder(name, data_dir=str(empty))

    monkeypatch.setattr(tfds, "builder", builder)
    with pytest.raises(FileNotFoundError) as error:
        text.load_text("train")
    message = str(error.value)
    assert "not prepared" in message
    assert "https://ai.stanford.edu/~amaas/data/sentiment/" in message
    assert "--data-dir" in message and "aclImdb/" in message
    assert not any(empty.iterdir())  # nothing was downloaded


def test_missing_data_dir_says_what_to_download_and_where(tmp_path):
    with pytest.raises(FileNotFoundError) as error:
        text.load_text("train", tmp_path / "nothing-here")
    message = str(error.value)
    assert "aclImdb_v1.tar.gz" in message and "--data-dir" in message
    assert str(tmp_path / "nothing-here") in message
    assert "imdb_reviews" in message  # the TFDS alternative
