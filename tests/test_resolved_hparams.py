"""Every resolved hyperparameter row, compared with a stored snapshot.

`tests/golden/resolved_hparams.json.gz` holds `get_hparams` for every
(task, model, preset, technique, augment), the SPT variants (causal,
compute-tied), the expected accuracy of each, and the paper tables that
only feed documentation. A change of any resolved value fails here with
the keys that moved; a preset change that is meant (a new paper row, a
corrected cell) updates the snapshot in the same commit:

    python tests/test_resolved_hparams.py --update

The snapshot was first written from the code before the restructure of
issue 13 (hparams.py with its derivation loops), with the three renamed
keys (zdim -> key_dim, ndim -> ema_dim, blocks -> num_blocks) mapped.
"""

import gzip
import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.numpy_only

GOLDEN = Path(__file__).parent / "golden" / "resolved_hparams.json.gz"


def _plain(value):
    return json.loads(json.dumps(value, default=str))


def resolve_everything():
    """Every resolved row and paper table, as plain JSON values."""
    from lra_keras import presets
    from lra_keras import techniques
    from lra_keras.hparams import get_hparams
    from lra_keras.models import FAMILIES
    from lra_keras.tasks import TASKS

    rows = {}
    for task in TASKS:
        for model in FAMILIES:
            for preset in presets.PRESETS:
                for technique in techniques.TECHNIQUES:
                    for augment in (False, True):
                        variants = [("", {})]
                        if technique == "spt":
                            variants += [
                                ("causal", dict(pretrain_objective="causal")),
                                ("tied", dict(compute_tied_epochs=30,
                                              pretrain_share=0.2)),
                            ]
                        for tag, overrides in variants:
                            key = (f"{task}|{model}|{preset}|{technique}|"
                                   f"{int(augment)}|{tag}")
                            try:
                                rows[key] = _plain(get_hparams(
                                    task, model, preset, technique,
                                    augment=augment, **overrides))
                            except ValueError:
                                rows[key] = {"error": "ValueError"}
                        rows[f"expected|{task}|{model}|{technique}|"
                             f"{int(augment)}"] = _plain(
                            presets.expected_accuracy(task, model,
                                                      technique, augment))
    tables = dict(
        EXPECTED={"|".join(k): v for k, v in presets.EXPECTED.items()},
        EXPECTED_LRA={"|".join(k): v
                      for k, v in presets.EXPECTED_LRA.items()},
        SPT_LRA_SIZED={"|".join(k): v
                       for k, v in presets.SPT_LRA_SIZED.items()},
        COMPUTE_TIED=presets.COMPUTE_TIED,
        YCTFS_TECHNIQUES=presets.YCTFS_TECHNIQUES,
    )
    return dict(rows=rows, tables=_plain(tables))


def _differences(stored, current):
    out = []
    for key in sorted(set(stored) | set(current)):
        old, new = stored.get(key), current.get(key)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            moved = {k: (old.get(k, "<absent>"), new.get(k, "<absent>"))
                     for k in sorted(set(old) | set(new))
                     if old.get(k, "<absent>") != new.get(k, "<absent>")}
            out.append(f"{key}: {moved}")
        else:
            out.append(f"{key}: {old!r} -> {new!r}")
    return out


def test_every_resolved_row_equals_the_snapshot():
    stored = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    current = resolve_everything()
    assert len(current["rows"]) == len(stored["rows"]) > 1400
    problems = _differences(stored["rows"], current["rows"])
    problems += _differences(stored["tables"], current["tables"])
    assert not problems, (
        f"{len(problems)} resolved rows or tables changed (update the "
        "snapshot with `python tests/test_resolved_hparams.py --update` "
        "if the change is meant):\n" + "\n".join(problems[:20])
    )


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        raise SystemExit(
            "usage: python tests/test_resolved_hparams.py --update")
    sys.path.insert(0, str(Path(__file__).parents[1]))
    payload = json.dumps(resolve_everything(), sort_keys=True, indent=0)
    GOLDEN.write_bytes(gzip.compress(payload.encode(), mtime=0))
    print(f"wrote {GOLDEN}")
