#!/usr/bin/env python3
"""Plots what ncclz-perf --json FILE wrote (one JSON object per line) as PNGs.

    python3 benchmarks/plot_perf.py --out DIR RUN.jsonl [RUN.jsonl ...]

Each file is one run (its configuration line labels its curves; where two runs' labels would be
equal, the settings they differ in, or else the file names, tell them apart). Creates DIR and
writes to it:
  perf_speedup.png  ncclz's speedup over NCCL against message size, one panel per collective
                    (hollow markers: calls that fell back to NCCL)
  perf_busbw.png    bus bandwidth of NCCL (dashed) and ncclz (solid) against message size
  perf_bound.png    compression ratio, and the largest error as a fraction of the promised
                    bound (at most 1), against the requested bound: the largest compressed size
                    of each collective in each run
Needs Python 3 and matplotlib (Debian: apt-get install python3-matplotlib; pip: matplotlib).
"""
import argparse
import json
import math
import os
import sys
from collections import defaultdict

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_perf: needs matplotlib (Debian: apt-get install python3-matplotlib; pip: pip install matplotlib)")


def read_run(path):
    """The configuration and the rows of one --json file."""
    config, rows = None, []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"plot_perf: {path}:{number}: not JSON ({e})")
            if record.get("record") == "config":
                config = record
            elif record.get("record") == "row":
                rows.append(record)
    if config is None or not rows:
        sys.exit(f"plot_perf: {path}: no configuration line or no rows (is it ncclz-perf --json output?)")
    return config, rows


def transport(config):
    """How the ranks were connected, from the run's NCCL_* variables and GPU count."""
    env = config.get("env") or {}
    if env.get("NCCL_NET") == "Socket" and env.get("NCCL_P2P_DISABLE") == "1":
        return "sockets" if config.get("gpus_visible", 1) > 1 else "sockets, one GPU (emulated)"
    return "NCCL transports"


def label(config, bound=True):
    fallback = config["fallback_below"]
    fallback = "default route" if fallback is None else "always compressed" if fallback == 0 else f"fallback < {fallback:g} B"
    mode = config["bound_mode"].upper() + (f' {config["bound"]:g}' if bound else "")
    return f'{config["ranks"]} ranks, {transport(config)}, {config["type"]}, {mode}, {fallback}'


# Settings of a run that change its curves, beyond those label() always names: where runs share a
# label, the ones they differ in are added to it.
DISTINGUISHING = ("coder", "schedule", "chunk", "split_sum_bound", "priority_transfers", "phases", "redop", "root",
                  "input", "gpu", "nccl_version", "iters", "warmup")


def setting(config, key):
    value = config.get(key)
    if key == "chunk" and isinstance(value, int):
        return f"chunk {value >> 20} MiB" if value >= 1 << 20 else f"chunk {value} B"
    return f"{key} {value}"


def labels(configs, paths):
    """One label per run, all different: label() and, for runs that share it, the settings that
    differ between them, or else the file names."""
    out = [label(c) for c in configs]
    for base in set(out):
        same = [i for i, text in enumerate(out) if text == base]
        if len(same) < 2:
            continue
        differ = [k for k in DISTINGUISHING if len({json.dumps(configs[i].get(k)) for i in same}) > 1]
        for i in same:
            out[i] = ", ".join([base] + [setting(configs[i], k) for k in differ])
    counts = defaultdict(int)
    for text in out:
        counts[text] += 1
    return [f"{text} ({os.path.basename(paths[i])})" if counts[text] > 1 else text for i, text in enumerate(out)]


def variants(configs):
    """What tells runs apart other than their bound (runs of one variant at several bounds make
    one curve of perf_bound.png): empty when that is nothing."""
    bases = [label(c, bound=False) for c in configs]
    differ = [k for k in DISTINGUISHING if len({json.dumps(c.get(k)) for c in configs}) > 1]
    if len(set(bases)) == 1 and not differ:
        return [""] * len(configs)
    return [", ".join([base] + [setting(c, k) for k in differ]) for base, c in zip(bases, configs)]


def size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    low, high = int(math.log2(min(sizes))), math.ceil(math.log2(max(sizes)))
    ticks = [2**k for k in range(low, high + 1, 1 if high - low <= 8 else 2)]
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t >> 30}G" if t >= 1 << 30 else f"{t >> 20}M" if t >= 1 << 20 else f"{t >> 10}K" for t in ticks])
    ax.set_xlabel("message size (nccl-tests' size)")
    ax.grid(True, which="both", alpha=0.3)


def panels(collectives):
    columns = min(2, len(collectives))
    rows = math.ceil(len(collectives) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(6.5 * columns, 4.2 * rows), squeeze=False)
    for ax in axes.flat[len(collectives):]:
        ax.set_visible(False)
    return fig, dict(zip(collectives, axes.flat))


def by_collective(runs):
    """{collective: [(run's label, rows of that collective, sorted by size)]}"""
    out = defaultdict(list)
    for run in runs:
        grouped = defaultdict(list)
        for r in run["rows"]:
            grouped[r["collective"]].append(r)
        for name, group in grouped.items():
            out[name].append((run["label"], sorted(group, key=lambda r: r["size"])))
    return out


def plot_against_size(runs, path, ylabel, draw):
    """One log-log panel per collective; draw(ax, run's label, rows) adds one run's curves."""
    groups = by_collective(runs)
    fig, ax_of = panels(sorted(groups))
    for name, series in groups.items():
        ax = ax_of[name]
        for run_label, rows in series:
            draw(ax, run_label, rows)
        ax.set_yscale("log")
        size_axis(ax, [r["size"] for _, rows in series for r in rows])
        ax.set_ylabel(ylabel)
        ax.set_title(name)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def draw_speedup(ax, run_label, rows):
    line, = ax.plot([r["size"] for r in rows], [r["speedup"] for r in rows], "-", label=run_label)
    for fell_back in (False, True):
        pts = [r for r in rows if r["fallback"] == fell_back]
        ax.plot([r["size"] for r in pts], [r["speedup"] for r in pts], "o", color=line.get_color(),
                markerfacecolor="none" if fell_back else line.get_color())
    ax.axhline(1, color="gray", linewidth=1)


def draw_busbw(ax, run_label, rows):
    sizes = [r["size"] for r in rows]
    line, = ax.plot(sizes, [r["ncclz"]["busbw"] for r in rows], "o-", label="ncclz: " + run_label)
    ax.plot(sizes, [r["nccl"]["busbw"] for r in rows], "x--", color=line.get_color(), label="NCCL: " + run_label)


def plot_speedup(runs, path):
    return plot_against_size(runs, path, "speedup over NCCL (time NCCL / time ncclz)", draw_speedup)


def plot_busbw(runs, path):
    return plot_against_size(runs, path, "bus bandwidth (GB/s)", draw_busbw)


def plot_bound(runs, path):
    points = defaultdict(list)  # (collective, mode, variant) -> [(requested bound, ratio, max_err / bound)]
    for run in runs:
        rows = run["rows"]
        largest = {}
        for r in rows:
            if not r["fallback"] and r["size"] >= largest.get(r["collective"], {"size": -1})["size"]:
                largest[r["collective"]] = r
        for name, r in largest.items():
            err = r["ncclz"]["max_err"]
            fraction = err / r["bound"] if err is not None and r["bound"] > 0 else float("nan")
            points[(name, r["bound_mode"], run["variant"])].append((r["requested_bound"], r["ratio"], fraction))
    if not points:
        print(f"plot_perf: every row fell back to NCCL: nothing for {path}", file=sys.stderr)
        return False
    fig, (ax_ratio, ax_err) = plt.subplots(1, 2, figsize=(13, 4.5))
    for (name, mode, variant), pts in sorted(points.items()):
        pts.sort()
        bounds = [p[0] for p in pts]
        series = f"{name} ({mode.upper()})" + (f", {variant}" if variant else "")
        ax_ratio.plot(bounds, [p[1] for p in pts], "o-", label=series)
        ax_err.plot(bounds, [p[2] for p in pts], "o-", label=series)
    for ax in (ax_ratio, ax_err):
        ax.set_xscale("log")
        ax.set_xlabel("requested bound (--rel or --abs)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    ax_ratio.set_yscale("log")
    ax_ratio.set_ylabel("compression ratio")
    ax_ratio.set_title("compression ratio (largest compressed size per run)")
    ax_err.axhline(1, color="red", linewidth=1)
    ax_err.set_ylim(0, 1.1)
    ax_err.set_ylabel("max error / promised bound")
    ax_err.set_title("largest error, as a fraction of the bound")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for the PNGs")
    parser.add_argument("runs", nargs="+", help="files written by ncclz-perf --json")
    args = parser.parse_args()
    read = [read_run(p) for p in args.runs]
    configs = [config for config, _ in read]
    runs = [{"label": text, "variant": variant, "rows": rows}
            for text, variant, (_, rows) in zip(labels(configs, args.runs), variants(configs), read)]
    os.makedirs(args.out, exist_ok=True)
    for name, plot in (("perf_speedup.png", plot_speedup), ("perf_busbw.png", plot_busbw), ("perf_bound.png", plot_bound)):
        if plot(runs, f"{args.out}/{name}"):
            print(f"plot_perf: wrote {args.out}/{name}")


if __name__ == "__main__":
    main()
