"""The Pathfinder target contours, many attempts side by side.

The official generator draws the two target contours again until an
attempt succeeds (`two_snakes` in `snakes2.py`), and many attempts fail.
`_two_snakes_batch` runs the attempts of many images at once as numpy
arrays, with the tables of `paddles.py`, and keeps the first success of
each image, which has the same distribution (see its docstring).
`_two_snakes_all` feeds it, growing the number of attempts per image until
each has succeeded.

Original files read: `snakes2.py` of drewlinsley/pathfinder
(`two_snakes`, `initialize_two_seeds`, `extend_snake`).
"""

import numpy as np

from lra_keras.data.pathfinder._common import MAX_PADDLE_RETRIAL
from lra_keras.data.pathfinder.paddles import _paste_max
from lra_keras.data.pathfinder.paddles import _tables
from lra_keras.data.pathfinder.snakes import _OVERLAP

# Attempts at the target contours run side by side: first this many per
# image, then twice as many after each batch without a success, up to a
# memory bound per batch. The attempts of all images of a chunk share a
# batch, so small first batches cost little; 4 was the fastest of 4, 8 and
# 16 at 32, 128 and 256 pixels.
_FIRST_ATTEMPTS = 4
_ATTEMPT_BYTES = 64 * 2**20


def _max_attempts(tables):
    return max(_FIRST_ATTEMPTS, _ATTEMPT_BYTES // (4 * tables.width**2))


def _attempt_draws(contour_length):
    # Uniform draws one attempt at the target contours may use: per seed
    # orientation trial, the orientation and the tail (first seed: 2 draws,
    # second seed: 1 angle); per paddle of each contour, 3 placement trials.
    return 3 * 3 + 3 * 2 + 2 * 3 * (contour_length - 1)


def _first_seed_orientations(t, lo, hi):
    """Orientations (table indices) that can seed the first target contour.

    The official `initialize_two_seeds` (`snakes2.py` lines 122-167 at
    ab9c130) draws an orientation uniformly among 360 and gives up the
    whole attempt when its search finds no free tail: when no tail keeps
    the structuring element inside `[lo, hi)` (`lined_mask`, lines
    135-140), and for every tail when the element misses a quadrant around
    its centre (`_no_tail_anywhere`; 330 of the 360 orientations at 32
    pixels, 265 at 64). An orientation that passes yields a tail uniform in
    its box; one whose paddle leaves the image draws again (lines 157-163;
    it cannot happen, the box lies 2 * seed_distance inside the image).

    Only attempts that succeed are kept, and each draw of the loop is
    independent: given that the first seed succeeds, its orientation and
    tail are those of one draw given that this draw succeeds, i.e. an
    orientation uniform among these and a tail uniform in its box. Drawing
    from these only keeps that distribution and spares the attempts that
    would fail at once, over 90% of them at 32 pixels.
    """
    box = t.seed_box
    ok = (
        ~t.seed_refused
        & (lo - box[:, 0] < hi - box[:, 1])
        & (lo - box[:, 2] < hi - box[:, 3])
    )
    if not ok.any():
        raise ValueError("No orientation can seed the first target contour.")
    return np.flatnonzero(ok)


def _two_snakes_batch(t, c, uniforms, blocks):
    """`two_snakes` for many independent attempts at once.

    The official generator retries `two_snakes` until one attempt succeeds.
    Attempts are independent and identically distributed, so the first
    success among a batch of attempts run side by side has the same
    distribution as the first success of attempts run one after the other;
    at contour length 14, with the first seed drawn among the orientations
    that can succeed (`_first_seed_orientations`), about 1 attempt in 27
    succeeds at 32 pixels, about 1 in 1500 at 64 (LRA's 64-pixel block
    grows 14 paddles of 7 pixels from the centre of a 64-pixel image). The
    extensions follow the sequential path step by step, the pivot included
    (`_Tables.jump_sin`); `tests/data/test_pathfinder.py` replays batched
    attempts through it. Attempts of several
    images share a batch; each row of `uniforms` is one attempt's random
    draws (`_attempt_draws` columns) and `blocks` the `(begin, end)` rows
    of each image.

    Returns:
        A list with, per block, None if every attempt failed, else a dict
        with the first successful attempt's `mask` (canvas, both contours
        as the official code leaves them), `paddles` (per contour,
        `(table index, y, x)`; seeds index `seed_mask`, extensions
        `360 + k`), `origins` and `tips`.
    """
    attempts = uniforms.shape[0]
    res, width, pad = t.resolution, t.width, t.pad
    length, margin = t.length, t.margin
    cells = width * width
    contour_length = c["contour_length"]
    masks = np.broadcast_to(t.empty_mask, (attempts, width, width)).copy()
    flat = masks.reshape(-1)

    def paddle_ends(y, x, theta):
        hy = np.ceil(y + length * np.sin(theta))
        hx = np.ceil(x + length * np.cos(theta))
        back = np.where(theta < 0, theta + np.pi, theta - np.pi)
        py = np.ceil(hy + (length + margin) * np.sin(back))
        px = np.ceil(hx + (length + margin) * np.cos(back))
        inside = (
            (hy >= 0)
            & (hy < res)
            & (hx >= 0)
            & (hx < res)
            & (py >= 0)
            & (py < res)
            & (px >= 0)
            & (px < res)
        )
        return inside, py, px

    # --- seeds: up to 3 orientations each (`initialize_two_seeds`) ---
    lo = 2 * c["seed_distance"]
    hi = res - 2 * c["seed_distance"]
    first_orientations = _first_seed_orientations(t, lo, hi)
    index = np.zeros((attempts, 2), np.int64)
    tail = np.zeros((attempts, 2, 2), np.float64)
    pivot = np.zeros((attempts, 2, 2), np.int64)
    alive = np.ones(attempts, bool)
    for s in range(2):
        done = np.zeros(attempts, bool)
        for trial in range(MAX_PADDLE_RETRIAL + 1):
            todo = alive & ~done
            if not todo.any():
                break
            col = 3 * trial if s == 0 else 9 + 2 * trial
            if s == 0:
                # Only orientations that can succeed (see
                # `_first_seed_orientations`).
                pick = (uniforms[:, col] * first_orientations.size).astype(
                    np.int64
                )
                d = first_orientations[pick]
            else:
                d = (uniforms[:, col] * 360).astype(np.int64)
            th = (d - 180) * np.pi / 180
            if s == 0:
                box = t.seed_box[d]
                y0, y1 = lo - box[:, 0], hi - box[:, 1]
                x0, x1 = lo - box[:, 2], hi - box[:, 3]
                ty = y0 + np.floor(uniforms[:, col + 1] * (y1 - y0))
                tx = x0 + np.floor(uniforms[:, col + 2] * (x1 - x0))
            else:
                angle = np.floor(uniforms[:, col + 1] * 360) * np.pi / 180
                distance = c["seed_distance"]
                ty = np.round(tail[:, 0, 0] + distance * np.sin(angle))
                tx = np.round(tail[:, 0, 1] + distance * np.cos(angle))
            inside, py, px = paddle_ends(ty, tx, th)
            ok = todo & inside
            index[ok, s] = d[ok]
            tail[ok, s] = np.stack([ty, tx], axis=1)[ok]
            pivot[ok, s] = np.stack([py, px], axis=1)[ok]
            done |= ok
        alive &= done

    # Pending segment per contour: joins the mask after the next paddle.
    pending = index.copy()
    pending_at = tail.astype(np.int64)
    paddles = np.zeros((attempts, 2, contour_length, 3), np.int64)
    paddles[:, :, 0, 0] = index
    paddles[:, :, 0, 1:] = pending_at
    last = t.ext_theta.size - 1

    # --- extensions, the two contours in turn (`extend_snake`) ---
    for step in range(1, contour_length):
        for s in range(2):
            live = np.flatnonzero(alive)
            if live.size == 0:
                return [None] * len(blocks)
            j = pending[live, s]
            ny = np.ceil(pivot[live, s, 0] + t.jump_sin[j]).astype(np.int64)
            nx = np.ceil(pivot[live, s, 1] + t.jump_cos[j]).astype(np.int64)
            base = live * cells + (pad + ny) * width + pad + nx
            occupied = flat[base[:, None, None] + t.ext_dilated].max(axis=2)
            pmf = (1.0 - occupied) * t.turn_weight[j]
            total = pmf.sum(axis=1)
            can = total >= 1e-4
            cmf = np.cumsum(pmf, axis=1) / np.where(can, total, 1.0)[:, None]
            placed = np.zeros(live.size, bool)
            chosen = np.zeros(live.size, np.int64)
            first_col = 15 + ((step - 1) * 2 + s) * 3
            for trial in range(MAX_PADDLE_RETRIAL + 1):
                todo = can & ~placed
                if not todo.any():
                    break
                u = uniforms[live, first_col + trial]
                k = np.minimum((cmf <= u[:, None]).sum(axis=1), last)
                hy, hx = ny + t.ext_dy[k], nx + t.ext_dx[k]
                head = live * cells + (pad + hy) * width + pad + hx
                window = flat[head[:, None] + t.window_flat]
                fits = (window + t.ext_mask_flat[k]).max(axis=1) < _OVERLAP
                new = todo & fits
                placed |= new
                chosen[new] = k[new]
            alive[live[~placed]] = False
            won = live[placed]
            if won.size == 0:
                continue
            k = chosen[placed]
            ny, nx = ny[placed], nx[placed]
            hy, hx = ny + t.ext_dy[k], nx + t.ext_dx[k]
            # Commit the previous paddle's mask (windows of different
            # attempts never share a cell, so the scatter is exact).
            at = pending_at[won, s]
            cells_at = (
                won * cells + (pad + at[:, 0]) * width + pad + at[:, 1]
            )[:, None] + t.window_flat
            flat[cells_at] = np.maximum(
                flat[cells_at], t.all_mask[pending[won, s]]
            )
            pending[won, s] = 360 + k
            pending_at[won, s, 0], pending_at[won, s, 1] = hy, hx
            pivot[won, s, 0], pivot[won, s, 1] = ny, nx
            paddles[won, s, step] = np.stack([360 + k, hy, hx], axis=1)
    found = []
    for begin, end in blocks:
        live = np.flatnonzero(alive[begin:end])
        if live.size == 0:
            found.append(None)
            continue
        w = begin + int(live[0])
        mask = masks[w].copy()
        # As the official code, only the second contour's last paddle joins
        # the mask; the first contour's last paddle stays unprotected.
        _paste_max(
            mask,
            t.all_mask[pending[w, 1]].reshape(2 * t.half + 1, -1),
            int(pending_at[w, 1, 0]) + pad,
            int(pending_at[w, 1, 1]) + pad,
            t.half,
        )
        found.append(
            dict(
                mask=mask,
                paddles=paddles[w],
                origins=[tuple(int(v) for v in tail[w, s]) for s in (0, 1)],
                tips=[tuple(int(v) for v in pending_at[w, s]) for s in (0, 1)],
            )
        )
    return found


def _two_snakes_all(rngs, resolution, config, margins, targets):
    """Target contours of every image, attempts of many images batched."""
    draws = _attempt_draws(config["contour_length"])
    attempts = {i: _FIRST_ATTEMPTS for i in range(len(rngs))}
    while attempts:
        for margin in sorted(set(margins[i] for i in attempts)):
            tables = _tables(resolution, margin)
            limit = _max_attempts(tables)
            group = [i for i in attempts if margins[i] == margin]
            while group:
                # As many images as fit in one batch (at least one).
                batch, rows = [], 0
                while group and (
                    not batch or rows + attempts[group[0]] <= limit
                ):
                    batch.append(group.pop(0))
                    rows += attempts[batch[-1]]
                uniforms = np.concatenate(
                    [rngs[i].random((attempts[i], draws)) for i in batch]
                )
                bounds = np.cumsum([0] + [attempts[i] for i in batch])
                found = _two_snakes_batch(
                    tables, config, uniforms, list(zip(bounds[:-1], bounds[1:]))
                )
                for i, result in zip(batch, found):
                    if result is None:
                        attempts[i] = min(2 * attempts[i], limit)
                    else:
                        targets[i] = result
                        del attempts[i]
