"""Reader fuzzing: a damaged file reads right or fails naming the file.

Issue "Nothing silently wrong", its reader-fuzzing item: for every reader
of an official format, random mutations of one file at a time (truncation
at a random byte or exactly at a record / line / chunk boundary, 0 bytes
included; one to three bytes set to other values; garbage appended; a
record duplicated or removed; an empty file), and one property per case:
the reader returns what the mutated file legitimately holds, or raises a
ValueError / OSError / UnpicklingError whose message names the mutated
file. A bare IndexError, UnicodeDecodeError, zlib.error, ... or a row
count the file does not hold is a failure.

What "legitimately holds" means is decided per mutation, as far as it is
decidable:

- A line-based file (ListOps and AAN TSV, Pathfinder text metadata) cut at
  a line boundary is a valid shorter file that no reader can tell from a
  real one: the result must be exactly the pristine rows before the cut (a
  prefix, never a garbled row). A cut inside a line may also keep that line
  when only ignored bytes were lost (its newline); for AAN, whose last
  field runs to the end of the line, the kept line's second paper must be a
  prefix of the pristine one. Garbage appended may read as extra rows after
  the pristine ones; a line duplicated or removed must read as exactly that.
- A byte flip can turn a label or a pixel into another valid one: then the
  row count and shapes must be the pristine ones and only the rows that hold
  a flipped byte may differ (for pickles, .npy arrays and PNGs, which have
  no line structure: at most one row per flipped byte).
- Formats with fixed sizes or internal structure (pickles, .npy headers,
  PNG, zip) must fail on any truncation or appended garbage. Fixed-size
  records (CIFAR-10 binary batches) read a cut at a record boundary as fewer
  records; the folder loader must then fail, since every batch of the
  release holds as many images (10,000; the fixtures hold 4). So must the
  generated ListOps cache, whose marker records its row counts.
- A file that holds no record at all (empty, or cut right after a header)
  is always an error, except a 0-byte Pathfinder image: the LRA pipeline
  drops those, so its row must be dropped.

Each case is a pure function of (reader, seed); a failure prints its case
id (reader, seed, mutation kind, file, offset or flipped bytes) and
`LRA_KERAS_FUZZ_SEED=<seed>` reruns that one case. `LRA_KERAS_FUZZ_CASES`
sets the number of cases per reader (default `DEFAULT_CASES`; the `large`
test runs `LARGE_FACTOR` times as many, on other seeds).
"""

import dataclasses
import os
import pathlib
import pickle
import shutil
import struct
import zipfile
import zlib

import numpy as np
import pytest

from lra_keras.data import image
from lra_keras.data import listops
from lra_keras.data import pathfinder
from lra_keras.data import retrieval
from lra_keras.data import text
from tests.data.test_image import make_cifar
from tests.data.test_image import write_binary
from tests.data.test_image import write_python
from tests.data.test_retrieval import literal
from tests.data.test_retrieval import write_tsv as write_aan_tsv
from tests.data.test_text import REVIEWS
from tests.data.test_text import write_aclimdb

DEFAULT_CASES = 1000
LARGE_FACTOR = 20
# Exceptions a reader may raise for a damaged file (with its name).
ALLOWED_ERRORS = (ValueError, OSError, pickle.UnpicklingError)
# Flip values drawn half the time from bytes that mean something in one of
# the formats (separators, digits, quotes, npy header syntax, zip flags).
INTERESTING = b"\x00\x01\x08\t\n\r \"'(),-.0129<>:[]_\x7f\x80\xff"


# === Targets: the files a case may mutate, and the rows they give ===


@dataclasses.dataclass
class Target:
    """One file of a fixture and what it contributes to the result.

    `rows` are the indices of the rows read from it. `spans` are the byte
    spans (terminator included) of its records, one per row, for line and
    fixed-size-record files; None for a file without such structure (a
    pickle, .npy, PNG, zip, a review). `boundaries` are further offsets at
    which a truncation is interesting (PNG chunks, zip members).
    """

    path: pathlib.Path
    rows: range
    spans: list = None
    header: int = 0  # bytes before the first record
    record_size: int = None  # fixed-size records (CIFAR binary)
    boundaries: tuple = ()
    flip_rows: int = 1  # rows one flipped byte may change (blobs)
    empty_drops_row: bool = False  # a 0-byte Pathfinder image


def _line_spans(data, begin=0):
    spans = []
    while begin < len(data):
        end = data.find(b"\n", begin)
        end = len(data) if end < 0 else end + 1
        spans.append((begin, end))
        begin = end
    return spans


def _lines_target(path, first_row, header=False):
    data = path.read_bytes()
    header_end = data.index(b"\n") + 1 if header else 0
    spans = _line_spans(data, header_end)
    return Target(path, range(first_row, first_row + len(spans)), spans,
                  header=header_end)


def _png_chunks(data):
    # Where each chunk starts, after the 8-byte signature.
    offsets, at = [], 8
    while at < len(data):
        offsets.append(at)
        (length,) = struct.unpack(">I", data[at:at + 4])
        at += 12 + length
    return tuple(offsets)


def _zip_boundaries(path):
    # Where each member, the central directory and its end record start.
    data = path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        starts = [info.header_offset for info in archive.infolist()]
    end = data.rindex(b"PK\x05\x06")
    central = int.from_bytes(data[end + 16:end + 20], "little")
    return (*starts, central, end)


# === Formats: a pristine fixture, its targets and its reader ===


def _xy_rows(x, y):
    # One comparable row per example: x's dtype and row shape, its bytes,
    # and the label.
    x, y = np.asarray(x), np.asarray(y)
    assert len(x) == len(y)
    return [(x.dtype.str, x.shape[1:], x[i].tobytes(), y.dtype.str,
             int(y[i])) for i in range(len(y))]


class Format:
    """A reader under test; subclasses write the fixture and read it."""

    counted = False  # the reader knows its row counts: no shorter file
    fresh_cache = False  # read each case with an empty data cache
    kinds = ("empty", "truncate", "boundary", "flip", "append", "duplicate",
             "remove")

    def build(self, root):
        raise NotImplementedError

    def targets(self, root):
        raise NotImplementedError

    def read(self, root):
        raise NotImplementedError

    def partial_ok(self, got, want):
        """Whether a line cut inside its bytes may read as `got`."""
        return got == want


class ListOpsRelease(Format):
    """`load_listops(data_dir=...)`, i.e. `read_tsv` of a release file."""

    name = "listops"

    def build(self, root):
        rows = listops.generate(12, seed=1, num_workers=1, min_length=5,
                                max_length=40)
        listops.write_tsv(root / "basic_train.tsv", rows)

    def targets(self, root):
        return [_lines_target(root / "basic_train.tsv", 0, header=True)]

    def read(self, root):
        return _xy_rows(*listops.load_listops("train", data_dir=root,
                                              max_length=48))


class ListOpsCache(Format):
    """`load_listops()` of generated files: the marker records the counts."""

    name = "listops-cache"
    counted = True
    sizes = dict(num_train=6, num_val=4, num_test=4, min_length=5,
                 max_length=40)

    def build(self, root):
        listops.load_listops("train", **self.sizes)

    def targets(self, root):
        (directory,) = (root / "cache" / "listops").iterdir()
        targets, first = [], 0
        for split in ("train", "val", "test"):
            target = _lines_target(directory / f"basic_{split}.tsv", first,
                                   header=True)
            targets.append(target)
            first = target.rows.stop
        return targets

    def read(self, root):
        rows = []
        for split in ("train", "val", "test"):
            rows += _xy_rows(*listops.load_listops(split, **self.sizes))
        return rows


class Retrieval(Format):
    """`load_retrieval`, i.e. `retrieval.read_tsv` of an AAN pairs file."""

    name = "retrieval"

    def build(self, root):
        rng = np.random.default_rng(0)
        alphabet = list("abcdefgh ijk.,'\"\\é✓\n")
        rows = []
        for i in range(8):
            papers = [
                "".join(rng.choice(alphabet, rng.integers(1, 40)))
                for _ in range(2)
            ]
            rows.append((str(i % 2) + (".0" if i % 3 == 0 else ""),
                         f"P0{i}-1001", f"W0{i}-2002",
                         literal(papers[0]), literal(papers[1])))
        write_aan_tsv(root / "new_aan_pairs.train.tsv", rows)

    def targets(self, root):
        return [_lines_target(root / "new_aan_pairs.train.tsv", 0)]

    def read(self, root):
        x, y = retrieval.load_retrieval("train", data_dir=root,
                                        max_length=48, progress=False)
        return [(x.dtype.str, y.dtype.str, int(y[i]), x[i, 0].tobytes(),
                 x[i, 1].tobytes()) for i in range(len(y))]

    def partial_ok(self, got, want):
        # The last field runs to the end of the line: a cut inside it keeps
        # a row whose second paper is a prefix of the pristine one.
        if got[:4] != want[:4]:
            return False
        cut = np.frombuffer(got[4], np.uint16)
        full = np.frombuffer(want[4], np.uint16)
        used = np.count_nonzero(cut)
        return (cut[used:] == 0).all() and (cut[:used] == full[:used]).all()


class AclImdb(Format):
    """`read_aclimdb` of both splits; a review file is one row."""

    name = "aclimdb"
    kinds = ("empty", "truncate", "flip", "append")

    def build(self, root):
        write_aclimdb(root)

    def _files(self, root):
        files = []
        for split in ("train", "test"):
            for label in ("neg", "pos"):
                folder = root / "aclImdb" / split / label
                files += [folder / name
                          for name in sorted(REVIEWS[(split, label)])]
        return files

    def targets(self, root):
        return [Target(path, range(i, i + 1))
                for i, path in enumerate(self._files(root))]

    def read(self, root):
        rows = []
        for split in ("train", "test"):
            texts, labels = text.read_aclimdb(root / "aclImdb", split)
            rows += [(t, labels.dtype.str, int(v))
                     for t, v in zip(texts, labels)]
        return rows

    def expected_row(self, pristine_row, data):
        # The row is exactly the file's bytes, stripped as TFDS does; a
        # review that is empty (after stripping) is an error.
        content = data.strip()
        return (content,) + pristine_row[1:] if content else None


class CifarBinaryBatch(Format):
    """`read_binary_batch` of one file of 3073-byte records."""

    name = "cifar-bin-batch"

    def build(self, root):
        write_binary(root / "cifar-10-batches-bin", make_cifar())

    def _path(self, root):
        return root / "cifar-10-batches-bin" / "data_batch_1.bin"

    def targets(self, root):
        size = 3073
        num = len(self._path(root).read_bytes()) // size
        return [Target(self._path(root), range(num),
                       [(i * size, (i + 1) * size) for i in range(num)],
                       record_size=size)]

    def read(self, root):
        return _xy_rows(*image.read_binary_batch(self._path(root)))


class CifarPythonBatch(Format):
    """`read_python_batch` of one pickled batch."""

    name = "cifar-py-batch"
    kinds = ("empty", "truncate", "flip", "append")

    def build(self, root):
        write_python(root / "cifar-10-batches-py", make_cifar())

    def _path(self, root):
        return root / "cifar-10-batches-py" / "data_batch_1"

    def targets(self, root):
        return [Target(self._path(root), range(len(make_cifar()[0][1])))]

    def read(self, root):
        return _xy_rows(*image.read_python_batch(self._path(root)))


class CifarFolder(Format):
    """`load_cifar10_rgb` of the six batches: all must hold as many."""

    counted = True
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]

    def __init__(self, layout):
        self.layout = layout
        self.name = f"cifar-{layout}-folder"
        self.folder = f"cifar-10-batches-{layout}"
        if layout == "py":
            self.kinds = CifarPythonBatch.kinds

    def build(self, root):
        write = write_binary if self.layout == "bin" else write_python
        write(root / self.folder, make_cifar())

    def targets(self, root):
        targets, first = [], 0
        for (_, labels), name in zip(make_cifar(), self.names):
            num = len(labels)
            rows = range(first, first + num)
            if self.layout == "bin":
                path = root / self.folder / f"{name}.bin"
                spans = [(i * 3073, (i + 1) * 3073) for i in range(num)]
                targets.append(Target(path, rows, spans, record_size=3073))
            else:
                targets.append(Target(root / self.folder / name, rows))
            first += num
        return targets

    def read(self, root):
        train = image.load_cifar10_rgb("train", root, val_size=0)
        return _xy_rows(*train) + _xy_rows(*image.load_cifar10_rgb(
            "test", root))


class Pathfinder(Format):
    """`read_official`: metadata files (text, string .npy or pickled
    object .npy) listing PNG images; `mutate` picks which file kind."""

    num_images = 12
    fresh_cache = True
    batch_size = 5  # rows per metadata file: 5, 5, 2

    def __init__(self, metadata, mutate="metadata"):
        self.metadata = metadata
        self.mutate = mutate
        self.name = (f"pathfinder-{metadata}" if mutate == "metadata"
                     else "pathfinder-png")
        if metadata != "text" or mutate == "png":
            self.kinds = ("empty", "truncate", "boundary", "flip", "append")

    def _directory(self, root):
        return root / "data" / "curv_contour_length_14"

    def build(self, root):
        rng = np.random.default_rng(0)
        images = rng.integers(0, 256, (self.num_images, 32, 32), np.uint8)
        labels = rng.integers(0, 2, self.num_images)
        pathfinder.write_official(root / "data", images, labels, "hard",
                                  batch_size=self.batch_size)
        if self.metadata == "text":
            return
        for path in sorted((self._directory(root) / "metadata").iterdir()):
            rows = [line.split() for line in path.read_text().splitlines()]
            if self.metadata == "object":
                rows = np.array([r[:2] + [int(r[2]), int(r[3])] + r[4:]
                                 for r in rows], dtype=object)
            with open(path, "wb") as f:
                np.save(f, np.array(rows), allow_pickle=True)

    def targets(self, root):
        directory = self._directory(root)
        metadata = sorted((directory / "metadata").iterdir(),
                          key=lambda p: int(p.stem))
        targets, first = [], 0
        for path in metadata:
            num = min(self.batch_size, self.num_images - first)
            rows = range(first, first + num)
            if self.mutate == "png":
                for row in rows:
                    png = (directory / "imgs" / path.stem
                           / f"sample_{row - first}.png")
                    targets.append(Target(
                        png, range(row, row + 1),
                        boundaries=_png_chunks(png.read_bytes()),
                        empty_drops_row=True))
            elif self.metadata == "text":
                targets.append(_lines_target(path, first))
            else:
                targets.append(Target(path, rows))
            first += num
        return targets

    def read(self, root):
        return _xy_rows(*pathfinder.read_official(root / "data", "hard", 32))


class KerasFile(Format):
    """`saving.check_keras_file`; when it passes, every member must read
    back as in the pristine archive (a zip whose members carry CRCs)."""

    name = "keras-zip"
    kinds = ("empty", "truncate", "boundary", "flip", "append")

    def build(self, root):
        import keras

        from lra_keras.saving import save_model

        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
        save_model(model, root / "model.keras")

    def targets(self, root):
        path = root / "model.keras"
        with zipfile.ZipFile(path) as archive:
            members = range(len(archive.namelist()))
        return [Target(path, members, boundaries=_zip_boundaries(path),
                       flip_rows=0)]

    def read(self, root):
        from lra_keras.saving import check_keras_file

        path = root / "model.keras"
        check_keras_file(path)
        with zipfile.ZipFile(path) as archive:
            return sorted((name, archive.read(name))
                          for name in archive.namelist())


FORMATS = [
    ListOpsRelease(),
    ListOpsCache(),
    Retrieval(),
    AclImdb(),
    CifarBinaryBatch(),
    CifarPythonBatch(),
    CifarFolder("bin"),
    CifarFolder("py"),
    Pathfinder("text"),
    Pathfinder("npy"),
    Pathfinder("object"),
    Pathfinder("text", mutate="png"),
]


# === Mutations ===


@dataclasses.dataclass
class Case:
    reader: str
    seed: int
    kind: str
    target: Target
    data: bytes  # the mutated content
    offset: int = None  # truncation offset, record index or garbage size
    flips: tuple = ()  # (offset, old, new) per flipped byte

    def __str__(self):
        where = (f"offset={self.offset}" if not self.flips else "flips=" +
                 ",".join(f"{o}:{a:#04x}->{b:#04x}" for o, a, b in self.flips))
        return (f"[{self.reader} seed={self.seed} {self.kind} "
                f"{self.target.path.name} {where}]")


_KIND_WEIGHTS = dict(empty=1, truncate=4, boundary=3, flip=7, append=2,
                     duplicate=1.5, remove=1.5)


def make_case(fmt, targets, seed):
    """The mutation of case `seed`: a pure function of (reader, seed)."""
    rng = np.random.default_rng([zlib.crc32(fmt.name.encode()), seed])
    target = targets[rng.integers(len(targets))]
    data = target.path.read_bytes()
    weights = np.array([_KIND_WEIGHTS[k] for k in fmt.kinds])
    kind = fmt.kinds[rng.choice(len(fmt.kinds), p=weights / weights.sum())]
    case = Case(fmt.name, seed, kind, target, data)
    if kind == "empty":
        case.data = b""
    elif kind in ("truncate", "boundary"):
        if kind == "boundary":
            points = [0, target.header, *target.boundaries]
            points += [begin for begin, _ in target.spans or ()]
            points = sorted({p for p in points if p < len(data)})
            case.offset = int(rng.choice(points))
        else:
            case.offset = int(rng.integers(len(data)))
        case.data = data[:case.offset]
    elif kind == "flip":
        mutated = bytearray(data)
        offsets = rng.choice(len(data), min(len(data), rng.integers(1, 4)),
                             replace=False)
        for offset in sorted(int(o) for o in offsets):
            old = data[offset]
            if rng.random() < 0.5:
                choices = [b for b in INTERESTING if b != old]
                new = choices[rng.integers(len(choices))]
            else:
                new = (old + int(rng.integers(1, 256))) % 256
            mutated[offset] = new
            case.flips += ((offset, old, new),)
        case.data = bytes(mutated)
    elif kind == "append":
        if target.record_size and rng.random() < 0.5:
            # Whole records of garbage: labels 0-9, random pixels.
            records = rng.integers(0, 256, (int(rng.integers(1, 3)),
                                            target.record_size), np.uint8)
            records[:, 0] %= 10
            garbage = records.tobytes()
        elif rng.random() < 0.5:
            garbage = bytes(rng.choice(list(INTERESTING),
                                       rng.integers(1, 40)))
        else:
            garbage = rng.integers(0, 256, rng.integers(1, 40),
                                   np.uint8).tobytes()
        case.offset = len(garbage)
        case.data = data + garbage
    else:  # duplicate or remove a record
        index = int(rng.integers(len(target.spans)))
        begin, end = target.spans[index]
        case.offset = index
        if kind == "duplicate":
            case.data = data[:end] + data[begin:end] + data[end:]
        else:
            case.data = data[:begin] + data[end:]
    return case


# === The property ===


def _own_rows_candidates(fmt, case, pristine):
    """What the mutated file's rows may read as, when the reader returns.

    Returns a list of `(rows, partial)`: the file's rows equal `rows`, or
    (`partial`) all but the last, which `fmt.partial_ok` must accept; or
    the string "flip" / "append" for the rules of those mutations. An empty
    list: the reader must raise.
    """
    target, data = case.target, case.data
    own = pristine[target.rows.start:target.rows.stop]
    if isinstance(fmt, AclImdb):
        row = fmt.expected_row(own[0], data)
        return [([row], False)] if row is not None else []
    if case.kind == "flip":
        return "flip"
    if case.kind == "append":
        if target.spans is None:
            return []  # a pickle, .npy, PNG or zip: garbage is an error
        if target.record_size and case.offset % target.record_size:
            return []  # not a whole number of records
        return "append"
    if case.kind == "duplicate":
        i = case.offset
        return [(own[:i + 1] + own[i:], False)]
    if case.kind == "remove":
        i = case.offset
        return [(own[:i] + own[i + 1:], False)]
    # A truncation (the empty file is a cut at 0).
    cut = len(data)
    if target.spans is None:
        if target.empty_drops_row and cut == 0:
            return [([], False)]
        return []  # a blob cut anywhere is damaged
    if cut < target.header:
        return []
    whole = sum(end <= cut for _, end in target.spans)
    candidates = [(own[:whole], False)]
    if whole < len(own) and cut > target.spans[whole][0] and (
        not target.record_size
    ):
        # A cut inside a line: the line may still read as itself.
        candidates.append((own[:whole + 1], True))
    return candidates


def check_case(fmt, case, pristine, result, error):
    """Returns None when the case holds the property, else why not."""
    target = case.target
    if error is not None:
        message = str(error)
        if not isinstance(error, ALLOWED_ERRORS):
            return f"raised {type(error).__name__}: {message[:300]}"
        if str(target.path) not in message:
            return (f"{type(error).__name__} without the file name: "
                    f"{message[:300]}")
        return None
    candidates = _own_rows_candidates(fmt, case, pristine)
    before = pristine[:target.rows.start]
    after = pristine[target.rows.stop:]
    own = pristine[target.rows.start:target.rows.stop]
    got = result
    if len(got) < len(before) + len(after):
        return f"read {len(got)} rows, fewer than the other files hold"
    if got[:len(before)] != before or (
        after and got[len(got) - len(after):] != after
    ):
        return "rows of other files changed"
    got_own = got[len(before):len(got) - len(after)]
    if fmt.counted and len(got) != len(pristine):
        return (f"read {len(got)} rows where the reader knows the count "
                f"is {len(pristine)}")
    if candidates == "flip":
        if len(got_own) != len(own):
            return (f"a byte flip changed the row count {len(own)} -> "
                    f"{len(got_own)}")
        differ = [i for i, (a, b) in enumerate(zip(got_own, own)) if a != b]
        if target.spans is None:
            allowed = target.flip_rows * len(case.flips)
            if len(differ) > allowed:
                return f"rows {differ} changed by {len(case.flips)} flip(s)"
        else:
            touched = {i for offset, _, _ in case.flips
                       for i, (begin, end) in enumerate(target.spans)
                       if begin <= offset < end}
            if not set(differ) <= touched:
                return (f"rows {differ} changed, flips touch rows "
                        f"{sorted(touched)}")
        return None
    if candidates == "append":
        if got_own[:len(own)] != own:
            return "garbage appended changed the rows before it"
        if target.record_size and (len(got_own) - len(own)
                                   != case.offset // target.record_size):
            return "whole records appended read as another count"
        return None
    for rows, partial in candidates:
        if not rows and not target.empty_drops_row:
            continue  # a file without records must be an error
        if len(got_own) != len(rows):
            continue
        if not partial and got_own == rows:
            return None
        if partial and got_own[:-1] == rows[:-1] and fmt.partial_ok(
            got_own[-1], rows[-1]
        ):
            return None
    expected = [len(rows) for rows, _ in candidates
                if rows or target.empty_drops_row]
    return (f"silently read {len(got_own)} rows from the file (pristine "
            f"{len(own)}; acceptable: "
            + (f"{expected} rows, exactly" if expected else "an error")
            + ")")


def run_cases(fmt, root, seeds, monkeypatch):
    targets = fmt.targets(root)
    pristine = fmt.read(root)
    failures = []
    for seed in seeds:
        case = make_case(fmt, targets, seed)
        original = case.target.path.read_bytes()
        # A fresh cache per case: the Pathfinder decode cache is keyed by
        # sizes and modification times, which two quick rewrites of the
        # same size may share.
        cache = root / "case-cache"
        if fmt.fresh_cache:
            monkeypatch.setenv("LRA_KERAS_DATA", str(cache))
        case.target.path.write_bytes(case.data)
        if os.environ.get("LRA_KERAS_FUZZ_VERBOSE"):
            # With -s: the last case printed is the one that crashed.
            print(case, flush=True)
        result = error = None
        try:
            result = fmt.read(root)
        except Exception as raised:  # the property judges every exception
            error = raised
        finally:
            case.target.path.write_bytes(original)
            shutil.rmtree(cache, ignore_errors=True)
            monkeypatch.setenv("LRA_KERAS_DATA", str(root / "cache"))
        why = check_case(fmt, case, pristine, result, error)
        if why is not None:
            failures.append(f"{case} {why}")
    assert fmt.read(root) == pristine  # every file was restored
    return failures


def _seeds(default, first=0):
    if os.environ.get("LRA_KERAS_FUZZ_SEED"):
        return [int(os.environ["LRA_KERAS_FUZZ_SEED"])]
    count = int(os.environ.get("LRA_KERAS_FUZZ_CASES") or default)
    return range(first, first + count)


def _fuzz(fmt, tmp_path, monkeypatch, seeds):
    monkeypatch.setenv("LRA_KERAS_DATA", str(tmp_path / "cache"))
    fmt.build(tmp_path)
    failures = run_cases(fmt, tmp_path, seeds, monkeypatch)
    assert not failures, (
        f"{len(failures)} of {len(seeds)} cases failed; rerun one with "
        "LRA_KERAS_FUZZ_SEED=<seed> python -m pytest "
        f"tests/data/test_reader_fuzz.py -k 'naming_it[{fmt.name}]':\n"
        + "\n".join(failures[:20])
    )


def _marks(fmt):
    # The .keras check imports lra_keras.saving, which imports keras.
    return () if isinstance(fmt, KerasFile) else (pytest.mark.numpy_only,)


CASES = [pytest.param(fmt, id=fmt.name, marks=_marks(fmt))
         for fmt in FORMATS + [KerasFile()]]


@pytest.mark.parametrize("fmt", CASES)
def test_damaged_file_reads_right_or_fails_naming_it(
    fmt, tmp_path, monkeypatch
):
    _fuzz(fmt, tmp_path, monkeypatch, _seeds(DEFAULT_CASES))


@pytest.mark.large
@pytest.mark.parametrize("fmt", CASES)
def test_damaged_file_reads_right_or_fails_naming_it_large(
    fmt, tmp_path, monkeypatch
):
    # Other seeds than the default run's.
    _fuzz(fmt, tmp_path, monkeypatch,
          _seeds(LARGE_FACTOR * DEFAULT_CASES, first=DEFAULT_CASES))
