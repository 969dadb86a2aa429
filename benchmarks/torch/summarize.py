#!/usr/bin/env python3
"""Tables and loss curves from train_ddp.py's JSON files.

    summarize.py RESULTS_DIR [--plot docs/img/torch_training.png]

Per model: each run's held-out and final train loss, its difference from NCCL's (same seed) in
units of NCCL's seed-to-seed standard deviation, step time, compute time, the hook's allreduce
time, bytes sent per step and the step's speedup over NCCL; then the allreduce timed alone.
"""
import argparse
import glob
import json
import os
import statistics


def load(directory):
    runs, comm = {}, {}
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        with open(path) as f:
            data = json.load(f)
        if "timing" in data:
            comm.setdefault(data["model"], []).append(data)
        else:
            runs.setdefault(data["model"], []).append(data)
    return runs, comm


def table(model, runs, comm):
    nccl = [r for r in runs if r["allreduce"] == "nccl"]
    lines = []
    spread = statistics.stdev([r["held_out_loss"] for r in nccl]) if len(nccl) >= 2 else float("nan")
    spread_train = statistics.stdev([r["final_train_loss"] for r in nccl]) if len(nccl) >= 2 else float("nan")
    base = {r["seed"]: r for r in nccl}
    first = runs[0]
    lines.append(f"### {model}: {first['parameters'] / 1e6:.1f} M parameters, {first['ranks']} ranks, "
                 f"{first['steps']} steps, {first['gradient_bytes'] / 2**20:.0f} MiB of fp32 gradients a step")
    lines.append("")
    lines.append(f"NCCL's seed-to-seed standard deviation ({len(nccl)} seeds): held-out loss {spread:.4f}, "
                 f"train loss (mean of the last 20 steps) {spread_train:.4f}.")
    lines.append("")
    lines.append("| allreduce | seed | held-out loss | vs NCCL (σ) | train loss | vs NCCL (σ) | step ms | compute ms "
                 "| hook allreduce ms | MB sent / step | step speedup |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in sorted(runs, key=lambda r: (r["allreduce"] != "nccl", r["allreduce"], r["seed"])):
        ref = base.get(r["seed"])
        dz = (r["held_out_loss"] - ref["held_out_loss"]) / spread if ref and r["allreduce"] != "nccl" else None
        dt = (r["final_train_loss"] - ref["final_train_loss"]) / spread_train if ref and r["allreduce"] != "nccl" else None
        sent = r["bytes_sent_per_step"]
        if sent is None:  # NCCL's ring sends 2 (n-1)/n of the gradients a rank holds
            sent = 2 * (r["ranks"] - 1) / r["ranks"] * r["gradient_bytes"]
        speed = ref["step_ms"] / r["step_ms"] if ref else None
        hook = r["hook_allreduce_ms"]
        lines.append(f"| {r['allreduce']} | {r['seed']} | {r['held_out_loss']:.4f} | "
                     f"{'' if dz is None else f'{dz:+.2f}'} | {r['final_train_loss']:.4f} | "
                     f"{'' if dt is None else f'{dt:+.2f}'} | {r['step_ms']:.1f} | {r['compute_ms']:.1f} | "
                     f"{'' if hook is None else f'{hook:.1f}'} | {sent / 1e6:.1f} | "
                     f"{'' if speed is None else f'{speed:.2f}x'} |")
    for c in comm:
        t = c["timing"]
        lines.append("")
        env = ", ".join(f"{k}={v}" for k, v in sorted(c["env"].items())
                        if k in ("NCCL_SOCKET_NTHREADS", "NCCL_NSOCKS_PERTHREAD")) or "NCCL's defaults"
        lines.append(f"The gradient allreduce alone, {len(t)} routes, DDP's 25 MB buckets, slowest rank, median of 5 "
                     f"({c['nccl_setting']}: {env}):")
        lines.append("")
        lines.append("| allreduce | ms | MB sent | speedup over NCCL |")
        lines.append("|---|---|---|---|")
        for kind, v in t.items():
            lines.append(f"| {kind} | {v['ms']:.1f} | {v['bytes_sent'] / 1e6:.1f} | {t['nccl']['ms'] / v['ms']:.2f}x |")
    return "\n".join(lines)


def plot(runs_by_model, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = sorted(runs_by_model)
    fig, axes = plt.subplots(1, len(models), figsize=(6 * len(models), 4), squeeze=False)
    for ax, model in zip(axes[0], models):
        for r in sorted(runs_by_model[model], key=lambda r: (r["allreduce"], r["seed"])):
            window = 10
            losses = r["losses"]
            smooth = [statistics.fmean(losses[max(0, i - window + 1):i + 1]) for i in range(len(losses))]
            style = "-" if r["allreduce"] != "nccl" else ":"
            ax.plot(smooth, style, label=f"{r['allreduce']} (seed {r['seed']})", linewidth=1)
        ax.set_title(f"{model}: training loss (mean of {window} steps)")
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        ax.set_yscale("log")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results")
    parser.add_argument("--plot")
    args = parser.parse_args()
    runs, comm = load(args.results)
    for model in sorted(runs):
        print(table(model, runs[model], comm.get(model, [])))
        print()
    if args.plot:
        plot(runs, args.plot)


if __name__ == "__main__":
    main()
