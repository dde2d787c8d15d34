"""Tests of the label-preserving augmentations (ListOps permutation, D4)."""

import collections

import numpy as np
import pytest

from lra_keras.data import listops
from lra_keras.techniques.operand_permutation import permute_listops
from lra_keras.techniques.pathfinder_augment import D4_ELEMENTS
from lra_keras.techniques.pathfinder_augment import apply_d4
from lra_keras.techniques.pathfinder_augment import d4
from lra_keras.techniques.pathfinder_augment import flips_affine
from lra_keras.techniques.pathfinder_augment import inverse_affine_matrix

pytestmark = pytest.mark.numpy_only


# === Reference ListOps parser, independent of the module ===


def detokenize(row):
    return " ".join(listops.VOCABULARY[i] for i in row.tolist() if i)


def parse(row):
    """Token ids -> nested (operator, [operands]) / int, recursively."""
    tokens = [listops.VOCABULARY[i] for i in row.tolist() if i]

    def node(i):
        if tokens[i] in listops.OPERATORS:
            operator, operands, i = tokens[i], [], i + 1
            while tokens[i] != "]":
                operand, i = node(i)
                operands.append(operand)
            return (operator, operands), i + 1
        return int(tokens[i]), i + 1

    tree, end = node(0)
    assert end == len(tokens)
    return tree


def canonical(tree):
    """The tree with every bracket's operands sorted: order-free form."""
    if isinstance(tree, int):
        return tree
    operator, operands = tree
    return (operator, sorted((canonical(o) for o in operands), key=repr))


@pytest.fixture(scope="module")
def small_trees():
    rows = listops.generate(
        60, seed=3, min_length=20, max_length=300, num_workers=1
    )
    x = listops.tokenize_batch([source for source, _ in rows], 300)
    y = np.array([target for _, target in rows])
    return x, y


def test_permuted_listops_evaluates_to_the_same_label(small_trees):
    x, y = small_trees
    rng = np.random.default_rng(0)
    for _ in range(5):
        z = permute_listops(x, rng)
        for row, label in zip(z, y):
            assert listops.evaluate(detokenize(row)) == label


def test_permutation_only_reorders_operands_inside_brackets(small_trees):
    x, _ = small_trees
    z = permute_listops(x, np.random.default_rng(1))
    assert z.shape == x.shape and z.dtype == x.dtype
    # Same tree up to the order of operands: operators stay first in their
    # bracket, "]" last, and every operand stays in its bracket.
    for before, after in zip(x, z):
        assert canonical(parse(before)) == canonical(parse(after))
    np.testing.assert_array_equal(np.sort(z, axis=1), np.sort(x, axis=1))
    np.testing.assert_array_equal(z == 0, x == 0)  # padding stays at the end
    # The augmentation actually changes the sequences.
    assert np.mean((z != x).any(axis=1)) > 0.9
    assert not np.array_equal(
        z, permute_listops(x, np.random.default_rng(2))
    )


def test_every_order_of_the_operands_is_equally_likely():
    x = np.tile(listops.tokenize("[SM 1 2 3 ]", max_length=6), (6000, 1))
    z = permute_listops(x, np.random.default_rng(3))
    counts = collections.Counter(tuple(row[1:4]) for row in z.tolist())
    assert len(counts) == 6
    p, n = 1 / 6, 6000
    for count in counts.values():
        assert abs(count / n - p) < 5 * np.sqrt(p * (1 - p) / n)
    np.testing.assert_array_equal(z[:, [0, 4, 5]], x[:, [0, 4, 5]])


def test_brackets_at_every_depth_are_permuted():
    source = "[MAX [MIN 1 2 ] 3 [MED 4 5 6 ] ]"
    x = np.tile(listops.tokenize(source, max_length=14), (3000, 1))
    z = permute_listops(x, np.random.default_rng(4))
    # 3! orders at the root, 2! and 3! inside: 72 distinct sequences.
    assert len({tuple(row) for row in z.tolist()}) == 72
    for row in z[:50]:
        assert listops.evaluate(detokenize(row)) == 5


def test_one_row_dtypes_and_no_padding():
    row = listops.tokenize("[MIN 7 [SM 2 9 ] 4 ]", max_length=8)
    for dtype in (np.uint8, np.uint16, np.int32, np.int64):
        z = permute_listops(row.astype(dtype), np.random.default_rng())
        assert z.dtype == dtype and z.shape == (8,)
        assert listops.evaluate(detokenize(z)) == 1
    z = permute_listops(row, np.random.default_rng(), padding_id=None)
    assert listops.evaluate(detokenize(z)) == 1
    # A lone digit and an all-padding row are left as they are.
    x = np.array([[5, 0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(
        permute_listops(x, np.random.default_rng()), x
    )


def test_truncated_rows_permute_only_closed_brackets():
    # tokenize() cuts a long source at max_length; [SM and [MAX stay open.
    source = "[SM [MIN 1 2 3 ] 4 [MAX 5 6 7 ] ]"
    x = np.tile(listops.tokenize(source, max_length=10), (500, 1))
    z = permute_listops(x, np.random.default_rng(5))
    # The operands of open brackets keep their places...
    fixed = [0, 1, 5, 6, 7, 8, 9]
    np.testing.assert_array_equal(z[:, fixed], x[:, fixed])
    # ...and the closed [MIN bracket is shuffled.
    np.testing.assert_array_equal(np.sort(z[:, 2:5], axis=1), x[:, 2:5])
    assert len({tuple(row) for row in z[:, 2:5].tolist()}) == 6


@pytest.mark.parametrize(
    "source_ids, message",
    [
        ([11, 2, 16, 15, 0], "unknown token id 16"),  # the mask token
        ([11, 2, 15, 15, 0], "closes no operator"),
        ([11, 15, 0, 0, 0], "without operands"),
        ([11, 2, 15, 3, 0], "more than one expression"),
        ([11, 2, 0, 15, 0], "padding inside"),
        ([11, 12, 2, 15, 0], "left open"),
    ],
)
def test_malformed_rows_raise(source_ids, message):
    x = np.array([[11, 2, 3, 15, 0], source_ids])
    with pytest.raises(ValueError, match=message) as error:
        permute_listops(x, np.random.default_rng())
    assert "Row 1" in str(error.value)


def test_bad_arguments_raise():
    x = np.array([[11, 2, 3, 15]])
    with pytest.raises(ValueError, match="np.random.Generator"):
        permute_listops(x, 0)
    with pytest.raises(ValueError, match="padding_id"):
        permute_listops(x, np.random.default_rng(), padding_id=15)
    with pytest.raises(ValueError, match="integer array"):
        permute_listops(x.astype(float), np.random.default_rng())


def test_permute_listops_keeps_labels_on_full_length_lra_rows():
    rows = listops.generate(32, seed=0, num_workers=1)  # LRA: 500-2000
    x = listops.tokenize_batch([source for source, _ in rows])
    z = permute_listops(x, np.random.default_rng(6))
    for row, (_, label) in zip(z, rows):
        assert listops.evaluate(detokenize(row)) == label


# === D4 ===


def test_d4_elements_are_the_eight_symmetries_of_the_square():
    image = np.arange(25).reshape(5, 5)  # generic: no symmetry of its own
    results = [apply_d4(image, k) for k in range(8)]
    assert len({r.tobytes() for r in results}) == 8
    np.testing.assert_array_equal(results[0], image)
    np.testing.assert_array_equal(results[1], np.rot90(image))
    np.testing.assert_array_equal(results[2], image[::-1, ::-1])
    np.testing.assert_array_equal(results[4], image.T)
    np.testing.assert_array_equal(results[6], image[::-1, ::-1].T)
    assert D4_ELEMENTS[5] == (1, True)
    # Flattened input gives the flattened result.
    np.testing.assert_array_equal(
        apply_d4(image.ravel(), 3), results[3].ravel()
    )


def test_d4_is_closed_under_composition_and_has_inverses():
    image = np.arange(16).reshape(4, 4)
    index = {apply_d4(image, k).tobytes(): k for k in range(8)}
    table = np.array(
        [
            [
                index[apply_d4(apply_d4(image, a), b).tobytes()]
                for b in range(8)
            ]
            for a in range(8)
        ]
    )
    # A group table: every element once in each row and column, and the
    # identity (0) in each row, so every element has an inverse.
    everything = np.tile(np.arange(8), (8, 1))
    np.testing.assert_array_equal(np.sort(table, axis=1), everything)
    np.testing.assert_array_equal(np.sort(table, axis=0), everything.T)
    assert (table == 0).sum(axis=1).tolist() == [1] * 8
    # Not commutative: D4 is not abelian.
    assert not np.array_equal(table, table.T)


def test_d4_batch_applies_one_random_element_per_image():
    rng = np.random.default_rng(7)
    images = rng.integers(0, 256, (800, 36)).astype(np.uint8)
    out = d4(images, rng)
    assert out.shape == images.shape and out.dtype == np.uint8
    drawn = []
    for before, after in zip(images, out):
        matches = [
            k
            for k in range(8)
            if np.array_equal(apply_d4(before, k), after)
        ]
        assert len(matches) == 1
        drawn.append(matches[0])
    counts = np.bincount(drawn, minlength=8)
    p, n = 1 / 8, len(drawn)
    assert np.all(np.abs(counts / n - p) < 5 * np.sqrt(p * (1 - p) / n))
    # Square input, an explicit resolution and a subset of elements.
    square = images.reshape(800, 6, 6)
    out = d4(square, rng, elements=[0, 2])
    for before, after in zip(square, out):
        assert np.array_equal(after, before) or np.array_equal(
            after, before[::-1, ::-1]
        )
    assert d4(images, rng, resolution=6).shape == (800, 36)


def test_d4_bad_arguments_raise():
    rng = np.random.default_rng()
    with pytest.raises(ValueError, match="square length"):
        d4(np.zeros((2, 10)), rng)
    with pytest.raises(ValueError, match="resolution"):
        d4(np.zeros((2, 16)), rng, resolution=5)
    with pytest.raises(ValueError, match="elements"):
        d4(np.zeros((2, 16)), rng, elements=[8])
    with pytest.raises(ValueError, match="np.random.Generator"):
        d4(np.zeros((2, 16)), 3)
    with pytest.raises(ValueError, match="k"):
        apply_d4(np.zeros((4, 4)), 8)
    with pytest.raises(ValueError, match="square"):
        apply_d4(np.zeros((4, 5)), 1)


# A Pathfinder-like image drawn by hand: two disjoint curves (value 128)
# and two markers (255) at curve ends. The label is 1 when the markers lie
# on the same curve, as in Pathfinder.
CURVE_A = [
    (2, 2), (2, 3), (2, 4), (3, 5), (4, 6), (5, 6), (6, 6),
    (7, 5), (8, 4), (9, 4), (10, 5), (11, 6), (12, 7),
]  # fmt: skip
CURVE_B = [
    (3, 10), (4, 11), (5, 12), (6, 12), (7, 12), (8, 11),
    (9, 10), (10, 10), (11, 11), (12, 12), (13, 13),
]  # fmt: skip


def pathfinder_image(label):
    image = np.zeros((16, 16), np.uint8)
    for curve in (CURVE_A, CURVE_B):
        for r, c in curve:
            image[r, c] = 128
    second = CURVE_A[-1] if label else CURVE_B[-1]
    for r, c in (CURVE_A[0], second):
        image[r, c] = 255
    return image


def markers_connected(image):
    """8-connected flood fill over lit pixels from one marker to the other."""
    markers = [tuple(p) for p in np.argwhere(image == 255)]
    assert len(markers) == 2
    seen, frontier = {markers[0]}, [markers[0]]
    while frontier:
        r, c = frontier.pop()
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                q = (r + dr, c + dc)
                if (
                    0 <= q[0] < image.shape[0]
                    and 0 <= q[1] < image.shape[1]
                    and image[q]
                    and q not in seen
                ):
                    seen.add(q)
                    frontier.append(q)
    return markers[1] in seen


@pytest.mark.parametrize("label", [0, 1])
def test_d4_keeps_the_pathfinder_label(label):
    image = pathfinder_image(label)
    assert markers_connected(image) == bool(label)
    for k in range(8):
        assert markers_connected(apply_d4(image, k)) == bool(label)
    # The batch path, on flattened images as the loaders return them.
    batch = np.tile(image.ravel(), (64, 1))
    out = d4(batch, np.random.default_rng(8))
    assert len({row.tobytes() for row in out}) == 8
    for row in out:
        assert markers_connected(row.reshape(16, 16)) == bool(label)


def test_permutation_keeps_the_end_token_of_append_eos(small_trees):
    # Rows with the S4 code's end token (`append_eos`): the expression is
    # permuted, the end token stays after it, labels and lengths kept.
    from lra_keras.hparams import get_hparams
    from lra_keras.techniques.operand_permutation import OPERAND_PERMUTATION
    from lra_keras.training.inputs import append_end_token

    x, y = small_trees
    end_id = listops.VOCABULARY_SIZE
    ended = append_end_token(x, end_id)
    hp = get_hparams("listops", "s4", augment=True)
    assert hp["append_eos"] is True
    permute = OPERAND_PERMUTATION.make(hp, seed=0)
    z = permute(ended, np.random.default_rng(5))
    np.testing.assert_array_equal(z == end_id, ended == end_id)
    np.testing.assert_array_equal(z == 0, ended == 0)
    stripped = np.where(z == end_id, 0, z)
    for before, after, label in zip(x, stripped, y):
        assert canonical(parse(before)) == canonical(parse(after))
        assert listops.evaluate(detokenize(after)) == label
    assert np.mean((z != ended).any(axis=1)) > 0.9
    # Without the technique's key, the end token is no ListOps token.
    with pytest.raises(ValueError, match="not a well-formed ListOps"):
        permute_listops(ended, np.random.default_rng(5))


def test_inverse_affine_matrix_closed_forms():
    # torchvision's inverse map (no shear): identity, a pure shift (the
    # output at x reads the input at x - t), a scale about the centre.
    identity = inverse_affine_matrix(0.0, (0, 0), 1.0, (16, 16))
    np.testing.assert_allclose(identity, [[1, 0, 0], [0, 1, 0]], atol=1e-12)
    shift = inverse_affine_matrix(0.0, (2, -1), 1.0, (16, 16))
    np.testing.assert_allclose(shift, [[1, 0, -2], [0, 1, 1]], atol=1e-12)
    zoom = inverse_affine_matrix(0.0, (0, 0), 2.0, (16, 16))
    np.testing.assert_allclose(zoom @ [16, 16, 1], [16, 16], atol=1e-12)
    np.testing.assert_allclose(zoom @ [20, 16, 1], [18, 16], atol=1e-12)
    quarter = inverse_affine_matrix(90.0, (0, 0), 1.0, (16, 16))
    np.testing.assert_allclose(quarter, [[0, 1, 0], [-1, 0, 32]],
                               atol=1e-12)


def test_flips_affine_is_pil_affine_after_the_flips():
    # The same draws, in the order flips_affine makes them, replayed
    # through PIL's Image.transform(AFFINE, NEAREST) as torchvision's
    # RandomAffine calls it on the (flipped) image: equal but at the few
    # pixel centres PIL's fixed-point arithmetic rounds across a border.
    from PIL import Image

    r, n = 32, 64
    images = np.random.default_rng(1).integers(1, 256, (n, r * r))
    images = images.astype(np.uint8)
    out = flips_affine(images, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    flip_x, flip_y = rng.random(n) < 0.5, rng.random(n) < 0.5
    angle = rng.uniform(-10, 10, n)
    shift = np.round(rng.uniform(-3.2, 3.2, (n, 2)))
    scale = rng.uniform(0.9, 1.1, n)
    assert set(np.unique(shift)) <= set(range(-3, 4))
    expected = np.empty_like(images)
    for i in range(n):
        square = images[i].reshape(r, r)
        if flip_x[i]:
            square = square[:, ::-1]
        if flip_y[i]:
            square = square[::-1]
        m = inverse_affine_matrix(angle[i], shift[i], scale[i], (r / 2, r / 2))
        pil = Image.fromarray(np.ascontiguousarray(square), "L").transform(
            (r, r), Image.AFFINE, tuple(m.reshape(-1)),
            resample=Image.NEAREST, fillcolor=0)
        expected[i] = np.asarray(pil).reshape(-1)
    assert out.dtype == images.dtype and out.shape == images.shape
    assert np.mean(out != expected) < 1e-3
    # Black enters where the map leaves the image (inputs were never 0).
    assert (out == 0).any()


def test_flips_affine_batches_and_arguments():
    images = np.random.default_rng(2).integers(0, 256, (3, 16, 16))
    out = flips_affine(images, np.random.default_rng(0))
    assert out.shape == (3, 16, 16)
    # A zero-width map is the flips alone: each image one of four.
    flat = images.reshape(3, 256)
    still = flips_affine(flat, np.random.default_rng(3), degrees=0.0,
                         translate=0.0, scale=(1.0, 1.0))
    for got, image in zip(still, images):
        assert any(np.array_equal(got.reshape(16, 16), flipped) for flipped in
                   (image, image[:, ::-1], image[::-1], image[::-1, ::-1]))
    with pytest.raises(ValueError, match="np.random.Generator"):
        flips_affine(images, 0)
    with pytest.raises(ValueError, match="square"):
        flips_affine(np.zeros((2, 15)), np.random.default_rng(0))
