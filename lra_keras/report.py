"""The results of finished runs as a table and plots.

    python -m lra_keras.report RUN_DIR... [--out DIR]

reads every run directory given or found below the arguments (a directory
holding `config.json` or `metrics.json`; see
`training.run_directory`), groups the finished ones (those with
`metrics.json`) by (task, model, technique, augment, preset, overrides),
and writes into `DIR` (default `report/`):

- `results.md` and `results.csv`: one row per group, the test and best
  validation accuracy as mean ± the half-width of the 95% confidence
  interval over the group's seeds, the number of seeds, epochs, mean wall
  time per seed, backend, device, and the accuracy the papers report for
  that (task, model, technique) (`presets.expected_accuracy`);
- `curves_<group>.png`: validation accuracy and loss per epoch, one thin
  line per seed and their mean in bold;
- `accuracy.png`: the table's test accuracies as bars with their
  intervals, the papers' accuracies beside them.

Runs without `metrics.json` (still training, or stopped) are skipped with a
note. The confidence interval is Student's: mean ± t(0.975, n − 1) · s / √n
with s the sample standard deviation (n − 1 in its denominator); one seed
has no interval ("n/a"). Like `lra_keras.hparams`, this module imports no
Keras backend, so it answers in a second.

Runs trained with keys set by hand over the preset (the recipes' `--set`,
kept in `config.json` as `overrides`; older runs: read from the recorded
command line) form their own groups: their preset cell reads `quick, set
A`, and a note under the table says what set A is. A group whose runs
differ in some other hyperparameter (say a preset changed between two
commits) is reported as one row and named in a note, unless `--by KEY`
names that hyperparameter: then each of its recorded values is a row of
its own (`quick, pooling=first` in the preset cell), which compares runs
of two commits in one table; `--by backend` (or `commit`, any key of
config.json itself) splits by the run's record:

    python -m lra_keras.report old_runs/ new_runs/ --by pooling
"""

import argparse
import csv
import io
import json
import math
import re
import sys
from pathlib import Path

from lra_keras._atomic import atomic_open
from lra_keras._atomic import atomic_path
from lra_keras.hparams import run_name
from lra_keras.presets import expected_accuracy

# t(0.975, df) for df = 1..30: NIST/SEMATECH e-Handbook of Statistical
# Methods, section 1.3.6.7.2, "Critical Values of the Student's t
# Distribution" (column 0.975), https://www.itl.nist.gov/div898/handbook/
# eda/section3/eda3672.htm. Beyond 30 the normal quantile 1.96 is used: up
# to 4% narrower than Student's interval (t(0.975, 31) = 2.040).
T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
         2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
         2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
         2.048, 2.045, 2.042)
NORMAL_975 = 1.96

GROUP_KEYS = ("task", "model", "technique", "augment", "preset",
              "overrides", "by")
# The value `--by` shows for a run whose config.json does not record the
# key (a run from before the key existed).
UNRECORDED = "(unrecorded)"

CSV_COLUMNS = (
    "task", "model", "technique", "augment", "preset", "overrides", "by",
    "seeds", "seed_list", "test_accuracy_pct", "test_accuracy_pct_ci95",
    "best_val_accuracy_pct", "best_val_accuracy_pct_ci95", "epochs",
    "wall_seconds", "backend", "device", "paper_accuracy_pct",
    "paper_source",
)


class ReportError(ValueError):
    """An argument or a file the report cannot use."""


def t_quantile(df):
    """t(0.975, df), the two-sided 95% quantile of Student's t."""
    if df < 1:
        raise ValueError(f"df must be >= 1. Received: df={df}")
    return T_975[df - 1] if df <= len(T_975) else NORMAL_975


def mean_ci(values):
    """(mean, half-width of the 95% interval), half-width None for n=1."""
    values = [float(v) for v in values]
    n = len(values)
    if n == 0:
        raise ValueError("mean_ci needs at least one value.")
    mean = math.fsum(values) / n
    if n == 1:
        return mean, None
    s = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, t_quantile(n - 1) * s / math.sqrt(n)


# === Reading run directories ===


def find_runs(paths):
    """The run directories at or below `paths`: (finished, unfinished).

    A run directory holds `config.json` or `metrics.json`; its own
    subdirectories (`backup/`, `pretrain/`, `tensorboard/`) are not
    searched. A path that does not exist, or holds no run directory, is a
    `ReportError` naming it.
    """
    finished, unfinished = [], []
    for path in map(Path, paths):
        if not path.is_dir():
            raise ReportError(f"{path} is not a directory.")
        found = _run_dirs(path)
        if not found:
            raise ReportError(
                f"{path} is not a run directory and holds none (no "
                "config.json or metrics.json below it)."
            )
        for run_dir in found:
            done = (run_dir / "metrics.json").is_file()
            (finished if done else unfinished).append(run_dir)
    return _unique(finished), _unique(unfinished)


def _run_dirs(path):
    if (path / "config.json").is_file() or (path / "metrics.json").is_file():
        return [path]
    found = []
    for child in sorted(p for p in path.iterdir() if p.is_dir()):
        found += _run_dirs(child)
    return found


def _unique(paths):
    seen, unique = set(), []
    for path in paths:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


def _read_json(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ReportError(f"{path} is not readable JSON: {error}") from None


def read_run(run_dir, by=()):
    """A finished run: its metrics, config and validation curves.

    Returns a dict with `path`, `metrics` (metrics.json), `config`
    (config.json, or {} without one), `seed`, `group` (the values of
    `GROUP_KEYS`; `by`: the run's values of the hyperparameters named in
    `by`, `by_text`) and `curves` (`{"epoch", "accuracy", "loss"}` lists
    from metrics.csv, or None without one).
    """
    run_dir = Path(run_dir)
    metrics = _read_json(run_dir / "metrics.json")
    missing = [k for k in ("task", "model", "test_accuracy")
               if k not in metrics]
    if missing:
        raise ReportError(
            f"{run_dir / 'metrics.json'} lacks {', '.join(missing)}."
        )
    config_path = run_dir / "config.json"
    config = _read_json(config_path) if config_path.is_file() else {}
    group = dict(
        task=metrics["task"],
        model=metrics["model"],
        technique=metrics.get("technique", "none"),
        augment=bool(metrics.get("augment", False)),
        preset=metrics.get("preset", "paper"),
        overrides=overrides_text(config),
        by=by_text(config, by),
    )
    return dict(path=run_dir, metrics=metrics, config=config,
                seed=config.get("seed"), group=group,
                curves=read_curves(run_dir / "metrics.csv"))


def by_text(config, keys):
    """`"key=value ..."`: the run's recorded values of `keys`, in the
    order given: a hyperparameter (config.json's `hparams`), else a key
    of config.json itself (`backend`, `commit`, `keras_version`);
    `UNRECORDED` as the value of a key its config.json lacks."""
    return " ".join(f"{key}={_recorded(config, key)}" for key in keys)


def _recorded(config, key):
    hparams = config.get("hparams") or {}
    if key in hparams:
        return _literal(hparams[key])
    if key in config and key != "hparams":
        return _literal(config[key])
    return UNRECORDED


def _literal(value):
    # As a value is typed after --set: strings bare, the rest as literals.
    return value if isinstance(value, str) else repr(value)


def overrides_text(config):
    """The keys a run set over its preset, as `"key=value ..."` sorted by
    key ("" for none): `config["overrides"]`, or for a run from before that
    record the `--set` arguments of its recorded command line."""
    if "overrides" in config:
        overrides = config["overrides"] or {}
    else:
        from lra_keras.cli import parse_overrides

        argv, pairs, taking = config.get("argv") or [], [], False
        for token in argv:
            if token.startswith("--"):
                taking = token == "--set"
                if token.startswith("--set="):
                    pairs.append(token[len("--set="):])
            elif taking:
                pairs.append(token)
        try:
            overrides = parse_overrides(pairs)
        except ValueError:
            overrides = {"--set": " ".join(pairs)}
    return " ".join(f"{key}={_literal(value)}"
                    for key, value in sorted(overrides.items()))


def read_curves(path):
    """Validation accuracy and loss per epoch from a run's metrics.csv.

    The accuracy column is `val_accuracy`, or `val_<output>_accuracy` when
    the trained model has several outputs (a technique's token head); the
    loss is that output's (`val_<output>_loss`), else `val_loss`. Returns
    None if the file is missing or has no such column.
    """
    path = Path(path)
    if not path.is_file():
        return None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return None
    columns = rows[0].keys()
    accuracy = "val_accuracy" if "val_accuracy" in columns else next(
        (c for c in sorted(columns)
         if c.startswith("val_") and c.endswith("_accuracy")), None)
    if accuracy is None:
        return None
    loss = accuracy[: -len("accuracy")] + "loss"
    loss = loss if loss in columns else "val_loss"
    try:
        return dict(
            epoch=[int(row["epoch"]) + 1 for row in rows],
            accuracy=[float(row[accuracy]) for row in rows],
            loss=[float(row[loss]) if row.get(loss) not in (None, "")
                  else math.nan for row in rows],
        )
    except (KeyError, TypeError, ValueError) as error:
        raise ReportError(f"{path} has a malformed row: {error}") from None


# === The table ===


def group_runs(runs):
    """{group key tuple: [runs]}, sorted by key, runs sorted by seed."""
    groups = {}
    for run in runs:
        key = tuple(run["group"][k] for k in GROUP_KEYS)
        groups.setdefault(key, []).append(run)
    return {
        key: sorted(groups[key], key=lambda r: (r["seed"] is None,
                                                r["seed"] or 0,
                                                str(r["path"])))
        for key in sorted(groups)
    }


def group_name(key, label=None):
    """The group's runs' default name (`hparams.run_name`), `_set<label>`
    appended for runs with overrides, then `_<key>-<value>` for each value
    of `--by` (characters other than letters, digits, `.` and `-` as
    `_`)."""
    group = dict(zip(GROUP_KEYS, key))
    name = run_name(group)
    if label:
        name += f"_set{label}"
    for pair in group["by"].split():
        name += "_" + re.sub(r"[^A-Za-z0-9.-]", "_",
                             pair.replace("=", "-", 1))
    return name


def override_labels(keys):
    """{overrides text: "A", "B", ...} in order of first appearance."""
    labels = {}
    for key in keys:
        text = dict(zip(GROUP_KEYS, key))["overrides"]
        if text and text not in labels:
            labels[text] = _label(len(labels))
    return labels


def _label(i):
    letters = ""
    while True:
        letters = chr(ord("A") + i % 26) + letters
        i = i // 26 - 1
        if i < 0:
            return letters


def summarize(groups):
    """One row (a dict) per group: the table's numbers, unformatted.

    Accuracies are in percent, as the papers give them.
    """
    rows = []
    labels = override_labels(groups)
    for key, runs in groups.items():
        metrics = [run["metrics"] for run in runs]
        test = mean_ci([100.0 * m["test_accuracy"] for m in metrics])
        best_val = [m.get("best_val_accuracy") for m in metrics]
        best_val = (mean_ci([100.0 * v for v in best_val])
                    if None not in best_val else (None, None))
        epochs = sorted({m.get("epochs_run") for m in metrics} - {None})
        walls = [m["wall_seconds"] for m in metrics if "wall_seconds" in m]
        paper = expected_accuracy(key[0], key[1], key[2], key[3])
        label = labels.get(dict(zip(GROUP_KEYS, key))["overrides"])
        rows.append(dict(
            zip(GROUP_KEYS, key),
            set_label=label,
            name=group_name(key, label),
            seeds=[run["seed"] for run in runs],
            test_accuracy=test[0],
            test_accuracy_ci95=test[1],
            best_val_accuracy=best_val[0],
            best_val_accuracy_ci95=best_val[1],
            epochs=epochs,
            wall_seconds=math.fsum(walls) / len(walls) if walls else None,
            backend=_distinct(m.get("backend") for m in metrics),
            device=_distinct("+".join(m.get("devices") or [])
                             for m in metrics),
            paper_accuracy=paper["accuracy"] if paper else None,
            paper_source=paper["source"] if paper else None,
            differing=_differing_hparams(runs),
        ))
    return rows


def _distinct(values):
    return ", ".join(sorted({v for v in values if v}))


def _differing_hparams(runs):
    rows = [run["config"].get("hparams") or {} for run in runs]
    keys = set().union(*rows)
    return sorted(k for k in keys
                  if len({json.dumps(r.get(k), sort_keys=True)
                          for r in rows}) > 1)


def _epochs_text(epochs):
    if not epochs:
        return ""
    if len(epochs) == 1:
        return str(epochs[0])
    return f"{epochs[0]}–{epochs[-1]}"


def _duration(seconds):
    if seconds is None:
        return ""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _with_ci(mean, half_width):
    if mean is None:
        return ""
    if half_width is None:
        return f"{mean:.2f} ± n/a"
    return f"{mean:.2f} ± {half_width:.2f}"


MARKDOWN_HEADER = (
    "| task | model | technique | augment | preset | test acc. (%) "
    "| best val acc. (%) | seeds | epochs | wall / seed | backend "
    "| device | paper (%) |"
)


def markdown_table(rows):
    """The results table in Markdown, with the notes it needs."""
    lines = [MARKDOWN_HEADER, "|" + "---|" * 13]
    for row in rows:
        cells = [
            row["task"], row["model"], row["technique"],
            "yes" if row["augment"] else "no", _preset_text(row),
            _with_ci(row["test_accuracy"], row["test_accuracy_ci95"]),
            _with_ci(row["best_val_accuracy"],
                     row["best_val_accuracy_ci95"]),
            str(len(row["seeds"])), _epochs_text(row["epochs"]),
            _duration(row["wall_seconds"]), row["backend"], row["device"],
            "" if row["paper_accuracy"] is None
            else f"{row['paper_accuracy']:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Accuracies: mean ± half-width of the 95% confidence interval over "
        "seeds (Student's t, n − 1 degrees of freedom; n/a for one seed). "
        "Wall: mean per seed. Paper: the test accuracy the paper reports "
        "for the (task, model, technique) with its full-size preset "
        "(`presets.EXPECTED`, else LRA Table 1, `presets.EXPECTED_LRA`):",
        "",
    ]
    sources = [row for row in rows if row["paper_source"]]
    lines += [f"- {row['name']}: {row['paper_source']}" for row in sources]
    if not sources:
        lines.append("- none of these rows has one.")
    # Labels were given in row order (`override_labels`): A, B, ... here.
    sets = {row["set_label"]: row["overrides"] for row in rows
            if row["set_label"]}
    if sets:
        lines.append("")
        lines += [f"Set {label}: the preset with `--set {text}`."
                  for label, text in sets.items()]
    mixed = [row for row in rows if row["differing"]]
    if mixed:
        lines.append("")
        lines += [
            f"Note: {row['name']} mixes runs with different "
            f"hyperparameters ({_first(row['differing'])})."
            for row in mixed
        ]
    return "\n".join(lines) + "\n"


def _preset_text(row):
    parts = [row["preset"]]
    if row["set_label"]:
        parts.append(f"set {row['set_label']}")
    if row["by"]:
        parts.append(row["by"])
    return ", ".join(parts)


def _first(names, count=8):
    more = len(names) - count
    return ", ".join(names[:count]) + (f" and {more} more" if more > 0
                                       else "")


def csv_text(rows):
    """The results table as CSV: full precision, accuracies in percent."""
    def number(value):
        return "" if value is None else f"{value:.4f}"

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        writer.writerow([
            row["task"], row["model"], row["technique"],
            str(row["augment"]).lower(), row["preset"], row["overrides"],
            row["by"], len(row["seeds"]),
            " ".join("?" if s is None else str(s) for s in row["seeds"]),
            number(row["test_accuracy"]), number(row["test_accuracy_ci95"]),
            number(row["best_val_accuracy"]),
            number(row["best_val_accuracy_ci95"]),
            _epochs_text(row["epochs"]),
            "" if row["wall_seconds"] is None
            else f"{row['wall_seconds']:.1f}",
            row["backend"], row["device"],
            number(row["paper_accuracy"]), row["paper_source"] or "",
        ])
    return out.getvalue()


# === Plots ===


def _figure(width, height):
    # A Figure without pyplot: no global state, no GUI backend.
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _save(figure, path):
    with atomic_path(path, suffix=".png") as temporary:
        figure.savefig(temporary, format="png", dpi=110)


def plot_curves(row, runs, path):
    """Validation accuracy and loss per epoch: a thin line per seed, the
    mean over the seeds in bold (over the epochs every seed reached)."""
    from matplotlib.ticker import MaxNLocator

    figure = _figure(9, 3.6)
    ax_acc, ax_loss = figure.subplots(1, 2)
    curves = [(run["seed"], run["curves"]) for run in runs
              if run["curves"] is not None]
    for ax, key, scale, label in (
            (ax_acc, "accuracy", 100.0, "validation accuracy (%)"),
            (ax_loss, "loss", 1.0, "validation loss")):
        for seed, curve in curves:
            ax.plot(curve["epoch"], [scale * v for v in curve[key]],
                    linewidth=1, alpha=0.6,
                    marker="." if len(curve["epoch"]) < 30 else None,
                    label=f"seed {seed}")
        common = min(len(curve["epoch"]) for _, curve in curves)
        if len(curves) > 1 and common:
            mean = [scale * math.fsum(c[key][i] for _, c in curves)
                    / len(curves) for i in range(common)]
            ax.plot(curves[0][1]["epoch"][:common], mean, color="black",
                    linewidth=2.5, label="mean")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("epoch")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    if row["paper_accuracy"] is not None:
        ax_acc.axhline(row["paper_accuracy"], color="gray",
                       linestyle="--", linewidth=1, label="paper (test)")
    ax_acc.legend(fontsize="small")
    figure.suptitle(
        f"{row['name']}: {len(runs)} seed{'s' * (len(runs) != 1)}, "
        f"{row['backend']}"
    )
    _save(figure, path)


def plot_accuracy(rows, path):
    """The table's test accuracies as bars with their 95% intervals, the
    papers' accuracies as markers beside them."""
    figure = _figure(max(4.0, 1.1 * len(rows) + 2), 4.2)
    ax = figure.subplots()
    x = list(range(len(rows)))
    means = [row["test_accuracy"] for row in rows]
    ax.bar(x, means, color="tab:blue", label="ours (mean ± 95% CI)")
    # One seed has no interval: no error bar rather than one of zero.
    ci = [i for i, row in enumerate(rows)
          if row["test_accuracy_ci95"] is not None]
    if ci:
        ax.errorbar(ci, [means[i] for i in ci],
                    yerr=[rows[i]["test_accuracy_ci95"] for i in ci],
                    fmt="none", ecolor="black", capsize=4)
    papers = [(i, row["paper_accuracy"]) for i, row in enumerate(rows)
              if row["paper_accuracy"] is not None]
    if papers:
        ax.scatter([i for i, _ in papers], [a for _, a in papers],
                   marker="_", s=600, linewidths=2.5, color="tab:red",
                   zorder=3, label="paper")
    ax.set_xticks(x, [row["name"].replace("_", "\n") for row in rows],
                  fontsize="small")
    ax.set_ylabel("test accuracy (%)")
    ax.set_ylim(0, 100)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    _save(figure, path)


# === Command line ===


def write_report(paths, out_dir, log=print, by=()):
    """Reads the runs at or below `paths`; writes the report to `out_dir`.

    `by`: hyperparameter names (keys of config.json's `hparams`), or
    keys of config.json itself (`backend`, `commit`), whose values split
    the groups. A name no run records is a `ReportError` (a misspelt key
    would otherwise split nothing).

    Returns the table's rows (`summarize`) and the files written.
    """
    finished, unfinished = find_runs(paths)
    for run_dir in unfinished:
        log(f"skipped {run_dir}: unfinished (no metrics.json)")
    if not finished:
        raise ReportError(
            f"No finished run (with metrics.json) in {', '.join(paths)}."
        )
    runs = [read_run(run_dir, by) for run_dir in finished]
    for key in by:
        if all(_recorded(run["config"], key) == UNRECORDED for run in runs):
            raise ReportError(
                f"--by {key}: no run's config.json records {key!r} (a "
                "hyperparameter, or a key such as backend or commit)."
            )
    for run in runs:
        if run["curves"] is None:
            log(f"note: {run['path']} has no validation log "
                "(metrics.csv); it is in the table, not in the curves")
    groups = group_runs(runs)
    rows = summarize(groups)
    out_dir = Path(out_dir)
    written = []

    def write(name, text):
        with atomic_open(out_dir / name) as f:
            f.write(text)
        written.append(out_dir / name)

    plots = ["accuracy.png"]
    for row, group in zip(rows, groups.values()):
        if any(run["curves"] is not None for run in group):
            plot_curves(row, group, out_dir / f"curves_{row['name']}.png")
            plots.append(f"curves_{row['name']}.png")
    plot_accuracy(rows, out_dir / "accuracy.png")
    images = "\n".join(f"![{name[:-4]}]({name})" for name in plots)
    write("results.md", markdown_table(rows) + "\n" + images + "\n")
    write("results.csv", csv_text(rows))
    return rows, written + [out_dir / name for name in plots]


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m lra_keras.report",
        description="Tabulate and plot finished runs: mean ± 95% CI over "
        "seeds per (task, model, technique, augment, preset, --set "
        "overrides), beside the "
        "papers' accuracies.",
    )
    parser.add_argument(
        "run_dirs", nargs="+", metavar="RUN_DIR",
        help="run directories, or directories holding them (searched "
        "recursively, e.g. runs/ or a --seeds run's directory)",
    )
    parser.add_argument("--out", default="report",
                        help="where results.md, results.csv and the PNG "
                        "plots go (default: report/)")
    parser.add_argument(
        "--by", nargs="+", default=[], metavar="KEY",
        help="hyperparameters (as config.json records them), or keys of "
        "config.json such as backend or commit, whose values split the "
        "groups into rows of their own, e.g. --by pooling to compare runs "
        "of two commits whose presets differ in it, --by backend")
    args = parser.parse_args(argv)
    try:
        rows, written = write_report(args.run_dirs, args.out, by=args.by)
    except ReportError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    print(markdown_table(rows), end="")
    print(f"wrote {', '.join(str(p) for p in written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
