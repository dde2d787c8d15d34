"""Tests of the Image (CIFAR-10) readers, grayscale conversion and loader."""

import io
import os
import pickle
import re

import numpy as np
import pytest

from lra_keras.data import image
from tests.data.fake_tfds import FakeBuilder

pytestmark = pytest.mark.numpy_only

PER_BATCH = 4  # images per training batch file in the fixtures
NUM_TEST = PER_BATCH  # every batch of the release holds as many


def make_cifar(seed=0):
    """Random colour images and labels for 5 train batches + 1 test batch."""
    rng = np.random.default_rng(seed)
    batches = []
    for n in [PER_BATCH] * 5 + [NUM_TEST]:
        rgb = rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
        labels = rng.integers(0, 10, n).astype(np.int32)
        batches.append((rgb, labels))
    return batches


def planes(rgb):
    # (N, 32, 32, 3) -> (N, 3072): the R plane, then G, then B, row-major.
    return rgb.transpose(0, 3, 1, 2).reshape(len(rgb), 3072)


def write_binary(folder, batches):
    folder.mkdir(parents=True)
    names = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]
    for name, (rgb, labels) in zip(names, batches):
        records = np.concatenate(
            [labels.astype(np.uint8)[:, None], planes(rgb)], axis=1
        )
        (folder / name).write_bytes(records.tobytes())
    (folder / "batches.meta.txt").write_text("airplane\nautomobile\n")
    return folder


class Python2Pickler(pickle._Pickler):
    """Writes bytes as Python 2 `str` (BINSTRING), as cPickle did."""

    dispatch = dict(pickle._Pickler.dispatch)

    def save_bytes(self, obj):
        if len(obj) < 256:
            self.write(pickle.SHORT_BINSTRING + bytes([len(obj)]) + obj)
        else:
            self.write(pickle.BINSTRING + len(obj).to_bytes(4, "little") + obj)
        self.memoize(obj)

    def save_str(self, obj):
        self.save_bytes(obj.encode("latin-1"))

    dispatch[bytes] = save_bytes
    dispatch[str] = save_str


def python2_pickle(obj):
    buffer = io.BytesIO()
    Python2Pickler(buffer, protocol=2).dump(obj)
    # numpy 1 (which wrote the official files) names numpy.core.
    return buffer.getvalue().replace(b"numpy._core.", b"numpy.core.")


def write_python(folder, batches):
    folder.mkdir(parents=True)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    for name, (rgb, labels) in zip(names, batches):
        batch = {
            "batch_label": f"{name} of 6",
            "labels": [int(label) for label in labels],
            "data": planes(rgb),
            "filenames": [f"img_{i}.png" for i in range(len(labels))],
        }
        (folder / name).write_bytes(python2_pickle(batch))
    (folder / "batches.meta").write_bytes(
        python2_pickle({"label_names": ["airplane"], "num_vis": 3072})
    )
    return folder


@pytest.fixture
def cifar(tmp_path):
    batches = make_cifar()
    write_binary(tmp_path / "bin" / "cifar-10-batches-bin", batches)
    write_python(tmp_path / "py" / "cifar-10-batches-py", batches)
    return tmp_path, batches


# === Grayscale ===


def test_grayscale_hand_values():
    # floor(255.5 * (0.2989 R + 0.5870 G + 0.1140 B) / 255):
    #   white: 255.5 * 0.9999 = 255.47 -> 255; red: 0.2989 * 255.5 = 76.37;
    #   green: 0.5870 * 255.5 = 149.98; blue: 0.1140 * 255.5 = 29.13;
    #   (10, 20, 30): (2.989 + 11.74 + 3.42) * 255.5 / 255 = 18.18.
    # (0, 122, 186) is 92.99998 exactly; float32, as in TF, rounds to 93.
    rgb = np.array(
        [
            [0, 0, 0],
            [255, 255, 255],
            [255, 0, 0],
            [0, 255, 0],
            [0, 0, 255],
            [10, 20, 30],
            [0, 122, 186],
        ],
        np.uint8,
    )
    gray = image.to_grayscale(rgb)
    assert gray.dtype == np.uint8
    assert gray.tolist() == [0, 255, 76, 149, 29, 18, 93]


def test_grayscale_is_the_formula_up_to_float32_boundaries():
    values = np.arange(256, dtype=np.uint8)
    rgb = np.stack(np.meshgrid(values, values, values, indexing="ij"), -1)
    rgb = rgb.reshape(-1, 3)  # all 2^24 colours
    gray = image.to_grayscale(rgb).astype(np.int64)
    # Exact: weights in units of 1e-4, so the value is num / (255 * 1e5).
    c = rgb.astype(np.int64)
    num = (2989 * c[:, 0] + 5870 * c[:, 1] + 1140 * c[:, 2]) * 2555
    exact_floor, remainder = np.divmod(num, 255 * 100000)
    differs = gray != exact_floor
    assert (gray[differs] == exact_floor[differs] + 1).all()
    # Only where the exact value is within float32 rounding of an integer.
    assert (remainder[differs] / (255 * 100000) > 1 - 1e-4).all()
    assert differs.sum() == 237


def test_grayscale_matches_tensorflow_rgb_to_grayscale_on_every_colour():
    tf = pytest.importorskip("tensorflow")
    values = np.arange(256, dtype=np.uint8)
    rgb = np.stack(np.meshgrid(values, values, values, indexing="ij"), -1)
    rgb = rgb.reshape(-1, 1, 1, 3)
    expected = tf.image.rgb_to_grayscale(rgb).numpy()[..., 0]
    np.testing.assert_array_equal(image.to_grayscale(rgb), expected)


def test_grayscale_rejects_non_uint8_rgb():
    with pytest.raises(ValueError, match="uint8"):
        image.to_grayscale(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="3 channels"):
        image.to_grayscale(np.zeros((2, 4), np.uint8))


# === Batch files ===


def test_binary_and_python_batches_give_identical_arrays(cifar):
    root, batches = cifar
    for split, index in (("train", slice(0, 5)), ("test", slice(5, 6))):
        expected_rgb = np.concatenate([b[0] for b in batches[index]])
        expected_y = np.concatenate([b[1] for b in batches[index]])
        from_bin = image.load_cifar10_rgb(split, root / "bin", val_size=1)
        from_py = image.load_cifar10_rgb(split, root / "py", val_size=1)
        for rgb, y in (from_bin, from_py):
            assert rgb.dtype == np.uint8 and y.dtype == np.int32
            if split == "train":
                np.testing.assert_array_equal(rgb, expected_rgb[:-1])
                np.testing.assert_array_equal(y, expected_y[:-1])
            else:
                np.testing.assert_array_equal(rgb, expected_rgb)
                np.testing.assert_array_equal(y, expected_y)


def test_single_batch_readers(cifar):
    root, batches = cifar
    rgb, labels = batches[0]
    for path, reader in (
        (
            root / "bin/cifar-10-batches-bin/data_batch_1.bin",
            image.read_binary_batch,
        ),
        (root / "py/cifar-10-batches-py/data_batch_1", image.read_python_batch),
    ):
        got_rgb, got_labels = reader(path)
        np.testing.assert_array_equal(got_rgb, rgb)
        np.testing.assert_array_equal(got_labels, labels)
    # Channels last: pixel (row 0, col 1) takes byte 1 of each plane.
    data = (root / "bin/cifar-10-batches-bin/data_batch_1.bin").read_bytes()
    assert tuple(got_rgb[0, 0, 1]) == (data[2], data[2 + 1024], data[2 + 2048])


def test_folder_itself_can_be_the_data_dir(cifar):
    root, _ = cifar
    a = image.load_cifar10_rgb("test", root / "bin" / "cifar-10-batches-bin")
    b = image.load_cifar10_rgb("test", root / "py" / "cifar-10-batches-py")
    np.testing.assert_array_equal(a[0], b[0])


class Exploit:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("protocol", ["python2", 3, 4, 5])
def test_restricted_unpickler_refuses_code_without_running_it(
    tmp_path, protocol
):
    marker = tmp_path / "pwned"
    payload = {b"data": Exploit(marker), b"labels": [0]}
    if protocol == "python2":
        data = python2_pickle(payload)
    else:
        data = pickle.dumps(payload, protocol=protocol)
    assert b"system" in data
    path = tmp_path / "data_batch_1"
    path.write_bytes(data)
    with pytest.raises(pickle.UnpicklingError, match=r"\.system"):
        image.read_python_batch(path)
    assert not marker.exists()


def test_restricted_unpickler_refuses_other_globals(tmp_path):
    path = tmp_path / "data_batch_1"
    path.write_bytes(pickle.dumps({b"data": eval, b"labels": []}))
    with pytest.raises(pickle.UnpicklingError,
                       match=rf"{re.escape(str(path))}: .*builtins.eval"):
        image.read_python_batch(path)
    path.write_bytes(pickle.dumps({b"data": 1})[:-4])  # truncated
    with pytest.raises((ValueError, pickle.UnpicklingError),
                       match=re.escape(str(path))):
        image.read_python_batch(path)


def test_python_batch_with_bytes_appended_is_refused(tmp_path):
    # Reader fuzzing, [cifar-py-batch seed=8 append data_batch_1
    # offset=280]: the unpickler stopped at the pickle's end and the batch
    # read as complete.
    rgb, labels = make_cifar()[0]
    data = python2_pickle({"labels": [int(v) for v in labels],
                           "data": planes(rgb)})
    path = tmp_path / "data_batch_1"
    path.write_bytes(data + b"\n")
    with pytest.raises(ValueError, match=re.escape(f"{path} has bytes after "
                                                   "its pickle")):
        image.read_python_batch(path)


def test_python_batch_with_a_damaged_dtype_is_an_error_not_a_crash(
    tmp_path,
):
    # One byte of the pixel array's dtype state turned into POP: numpy's
    # dtype.__setstate__ then gets (3, '|', None, -1, -1, 0) and crashes
    # the interpreter (numpy 2.4; found by reader fuzzing as
    # [pathfinder-object seed=2377], where ndarray.__setstate__ also
    # crashed on a shape flipped from (5, 11) to (5, 26), seed=106).
    rgb, labels = make_cifar()[0]
    data = python2_pickle({"labels": [int(v) for v in labels],
                           "data": planes(rgb)})
    state = b"NNNJ\xff\xff\xff\xffJ"  # subarray, names, fields, size
    assert data.count(state) == 1
    path = tmp_path / "data_batch_1"
    path.write_bytes(data.replace(state, b"NN0" + state[3:]))
    with pytest.raises(pickle.UnpicklingError,
                       match=re.escape(f"{path}: not a plain dtype")):
        image.read_python_batch(path)
    # The element count of the shape, off by one.
    shape = b"K\x04M\x00\x0c\x86"  # (4, 3072)
    assert data.count(shape) == 1
    path.write_bytes(data.replace(shape, b"K\x05M\x00\x0c\x86"))
    with pytest.raises(pickle.UnpicklingError,
                       match=re.escape(f"{path}: the data of an array")):
        image.read_python_batch(path)


def test_malformed_batches(tmp_path):
    path = tmp_path / "data_batch_1.bin"
    path.write_bytes(bytes(3073 + 5))
    with pytest.raises(ValueError, match="multiple of 3073"):
        image.read_binary_batch(path)
    path.write_bytes(bytes([10]) + bytes(3072))
    with pytest.raises(ValueError, match=r"labels must be ints in \[0, 9\]"):
        image.read_binary_batch(path)
    path = tmp_path / "data_batch_2"
    bad = {"data": np.zeros((2, 100), np.uint8), "labels": [0, 1]}
    path.write_bytes(python2_pickle(bad))
    with pytest.raises(ValueError, match=r"uint8 \(N, 3072\)"):
        image.read_python_batch(path)
    path.write_bytes(python2_pickle({"labels": [0]}))
    with pytest.raises(ValueError, match="b'data'"):
        image.read_python_batch(path)


# === Loaders ===


def test_split_sizes_and_val_is_the_tail_of_train(cifar):
    root, batches = cifar
    train_rgb = np.concatenate([b[0] for b in batches[:5]])
    sizes = {}
    for split in ("train", "val", "test"):
        rgb, y = image.load_cifar10_rgb(split, root / "bin", val_size=6)
        sizes[split] = len(y)
        if split == "val":
            np.testing.assert_array_equal(rgb, train_rgb[-6:])
    assert sizes == {"train": 14, "val": 6, "test": NUM_TEST}


def test_load_image_is_flattened_grayscale(cifar):
    root, batches = cifar
    x, y = image.load_image("test", root / "py")
    assert x.dtype == np.uint8 and x.shape == (NUM_TEST, 1024)
    np.testing.assert_array_equal(
        x, image.to_grayscale(batches[5][0]).reshape(NUM_TEST, 1024)
    )
    np.testing.assert_array_equal(y, batches[5][1])
    # Row-major: pixel (row 1, col 0) is position 32.
    assert x[0, 32] == image.to_grayscale(batches[5][0][0, 1, 0])
    x_train, _ = image.load_image("train", root / "bin", 1024, val_size=2)
    assert x_train.shape == (5 * PER_BATCH - 2, 1024)


def test_constants():
    assert (image.MASK_ID, image.VOCABULARY_SIZE) == (256, 257)
    assert image.NUM_CLASSES == 10


def test_argument_validation(cifar):
    root, _ = cifar
    with pytest.raises(ValueError, match="max_length must be None or 1024"):
        image.load_image("train", root / "bin", max_length=512)
    with pytest.raises(ValueError, match="split"):
        image.load_image("valid", root / "bin")
    with pytest.raises(ValueError, match="smaller than the 20"):
        image.load_image("train", root / "bin", val_size=5000)
    # The default holds out the last 10%, as LRA's train[90%:] (5000 of
    # CIFAR-10's 50,000 training images): 2 of the fixture's 20.
    x, _ = image.load_image("val", root / "bin")
    assert len(x) == 2
    with pytest.raises(ValueError, match="no validation split"):
        image.load_image("val", root / "bin", val_size=0)
    with pytest.raises(ValueError, match="val_size"):
        image.load_image("train", root / "bin", val_size=-1)
    x, _ = image.load_image("train", root / "bin", val_size=0)
    assert len(x) == 20


def test_missing_data_says_what_to_download_and_where(tmp_path):
    with pytest.raises(FileNotFoundError) as error:
        image.load_image("train", tmp_path)
    message = str(error.value)
    assert "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz" in message
    assert "cifar-10-batches-bin/" in message and "--data-dir" in message
    assert str(tmp_path) in message and "cifar10" in message  # TFDS


def test_incomplete_folder_names_the_missing_files(cifar):
    root, _ = cifar
    os.remove(root / "bin" / "cifar-10-batches-bin" / "data_batch_3.bin")
    with pytest.raises(FileNotFoundError, match="data_batch_3.bin"):
        image.load_image("test", root / "bin")


# === TFDS ===


@pytest.mark.parametrize("layout", ["bin", "py"])
def test_batch_cut_at_a_record_boundary_is_refused(cifar, layout):
    root, batches = cifar
    if layout == "bin":
        folder = root / "bin" / "cifar-10-batches-bin"
        path = folder / "test_batch.bin"
        path.write_bytes(path.read_bytes()[: 2 * 3073])  # 2 of 4 records
    else:
        folder = root / "py" / "cifar-10-batches-py"
        rgb, labels = batches[5]
        path = folder / "test_batch"
        path.write_bytes(python2_pickle(
            {"labels": [int(v) for v in labels[:2]], "data": planes(rgb[:2])}))
    for split in ("test", "train"):
        with pytest.raises(ValueError, match=rf"unequal size: \{{'{path}': "
                           rf"2\}} where the other batches hold 4"):
            image.load_image(split, data_dir=folder)


def test_tfds_cifar10_when_prepared_splits_like_lra(tmp_path, monkeypatch):
    tfds = pytest.importorskip("tensorflow_datasets")
    batches = make_cifar(seed=1)
    train_rgb = np.concatenate([b[0] for b in batches[:5]])
    train_y = np.concatenate([b[1] for b in batches[:5]]).astype(np.int64)
    splits = {
        "train": {"image": train_rgb, "label": train_y},
        "test": {"image": batches[5][0], "label": batches[5][1]},
    }
    calls = []

    def builder(name, data_dir=None):
        calls.append((name, data_dir))
        return FakeBuilder(splits, data_dir)

    monkeypatch.setattr(tfds, "builder", builder)
    x, y = image.load_image("val", val_size=2)  # LRA: train[90%:]
    np.testing.assert_array_equal(
        x, image.to_grayscale(train_rgb[-2:]).reshape(2, 1024)
    )
    assert y.dtype == np.int32 and y.tolist() == train_y[-2:].tolist()
    assert calls == [("cifar10", None)]
    (tmp_path / "cifar10").mkdir()
    rgb, _ = image.load_cifar10_rgb("test", tmp_path)
    np.testing.assert_array_equal(rgb, batches[5][0])
    assert calls[-1] == ("cifar10", str(tmp_path))


def test_tfds_not_prepared_is_an_error(tmp_path, monkeypatch):
    tfds = pytest.importorskip("tensorflow_datasets")
    real_builder = tfds.builder

    def builder(name, data_dir=None):
        return real_builder(name, data_dir=str(tmp_path))

    monkeypatch.setattr(tfds, "builder", builder)
    with pytest.raises(FileNotFoundError) as error:
        image.load_image("test")
    message = str(error.value)
    assert "not prepared" in message and "cifar-10-binary.tar.gz" in message
