#!/usr/bin/env python3
"""Plots the table ncclz-collectives-bench prints (rank 0's output) as PNGs.

    python3 benchmarks/plot_collectives.py RESULTS.txt OUTDIR

Writes OUTDIR/collectives_speedup.png (ncclz time over NCCL's, per collective and size: the
default path and compression forced at every size) and OUTDIR/collectives_ratio.png
(compression ratio per size). Needs matplotlib.
"""
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLUMNS = ["collective", "size", "nccl_ms", "ncclz_ms", "forced_ms", "speedup", "forced_x", "ratio", "max_diff", "eb", "path"]


def read_table(path):
    rows, title = [], ""
    with open(path) as f:
        for line in f:
            if line.startswith("# ") and "ranks" in line:
                title = line[2:].strip()
            parts = line.split()
            if len(parts) != len(COLUMNS) or parts[0] == "collective":
                continue
            try:
                row = dict(zip(COLUMNS, parts))
                for k in COLUMNS[1:-1]:
                    row[k] = float(row[k])
            except ValueError:
                continue
            rows.append(row)
    if not rows:
        sys.exit(f"plot_collectives: no table rows in {path}")
    return rows, title


def size_label(b):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return f"{b / scale:g} {unit}"
    return f"{b:g} B"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows, title = read_table(sys.argv[1])
    out = sys.argv[2]
    by_coll = defaultdict(list)
    for r in rows:
        by_coll[r["collective"]].append(r)

    fig, ax = plt.subplots(figsize=(8, 5))
    for coll, rs in by_coll.items():
        rs.sort(key=lambda r: r["size"])
        line, = ax.plot([r["size"] for r in rs], [r["speedup"] for r in rs], marker="o", label=f"{coll}")
        ax.plot([r["size"] for r in rs], [r["forced_x"] for r in rs], marker="x", linestyle=":", color=line.get_color(),
                label=f"{coll} (compression forced)")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    sizes = sorted({r["size"] for r in rows})
    ax.set_xticks(sizes, [size_label(s) for s in sizes], rotation=30)
    ax.set_xlabel("message size")
    ax.set_ylabel("speedup over NCCL (NCCL time / ncclz time)")
    ax.set_title(f"ncclz vs NCCL: {title}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(f"{out}/collectives_speedup.png", dpi=120)

    fig, ax = plt.subplots(figsize=(8, 4))
    for coll, rs in by_coll.items():
        ax.plot([r["size"] for r in rs], [r["ratio"] for r in rs], marker="o", label=coll)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(sizes, [size_label(s) for s in sizes], rotation=30)
    ax.set_xlabel("message size")
    ax.set_ylabel("compression ratio")
    ax.set_title(f"compression ratio: {title}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{out}/collectives_ratio.png", dpi=120)


if __name__ == "__main__":
    main()
