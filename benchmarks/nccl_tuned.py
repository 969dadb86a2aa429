#!/usr/bin/env python3
"""NCCL at its best on this transport, as the baseline of ncclz-perf.

NCCL reads its tuning variables when a communicator is made, so each setting is one launch of
ncclz-perf (NCCL and ncclz measured side by side in the same processes, as always). This runs the
same ncclz-perf command once per setting, then prints, per collective and size: NCCL at its
defaults and at the best setting found (and which), ncclz under NCCL's defaults, under NCCL's best
setting (the same processes: what a job tuned for NCCL gets) and under its own best setting, and
the speedups: ncclz over NCCL with both at defaults, with both under NCCL's best setting, and with
each at its own best. Only Python's standard library is needed.

  benchmarks/nccl_tuned.py --out DIR [--settings socket|full] -- LAUNCHER... PERF [PERF ARGS...]
  e.g. benchmarks/nccl_tuned.py --out tuned -- scripts/emulated_cluster.sh -n 4 --timeout 120 -- \\
           build/benchmarks/ncclz-perf --data data -C allreduce -b 256M -e 256M --coder adaptive

Settings: 'socket' (default) sweeps NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD, what moves
NCCL's time most over sockets; 'full' adds NCCL_ALGO, NCCL_PROTO and NCCL_BUFFSIZE one at a time.
The settings speed NCCL's own rings up and can slow ncclz's small transfers down, hence the three
ncclz columns.
"""
import argparse
import json
import os
import subprocess
import sys

SOCKET = [{}] + [{"NCCL_SOCKET_NTHREADS": str(t), "NCCL_NSOCKS_PERTHREAD": str(s)}
                 for t in (1, 2, 4) for s in (1, 2) if (t, s) != (1, 1)]
FULL = SOCKET + [{"NCCL_ALGO": "Ring"}, {"NCCL_ALGO": "Tree"}, {"NCCL_PROTO": "Simple"},
                 {"NCCL_PROTO": "LL128"}, {"NCCL_BUFFSIZE": str(16 << 20)}]


def label(setting):
    return " ".join(f"{k}={v}" for k, v in sorted(setting.items())) or "defaults"


def run(setting, command, out_dir, index):
    path = os.path.join(out_dir, f"setting{index}.jsonl")
    log = os.path.join(out_dir, f"setting{index}.log")
    env = dict(os.environ, **setting)
    with open(log, "w") as f:
        rc = subprocess.call(command + ["--json", path], env=env, stdout=f, stderr=subprocess.STDOUT)
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            rows = [r for r in map(json.loads, f) if r.get("record") == "row"]
    return rc, rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="folder for each setting's JSON and log (created)")
    p.add_argument("--settings", choices=("socket", "full"), default="socket")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- then the launcher and ncclz-perf with its arguments")
    a = p.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        p.error("give the launch command after --")
    os.makedirs(a.out, exist_ok=True)
    settings = SOCKET if a.settings == "socket" else FULL
    results = []  # (setting, rows)
    for i, s in enumerate(settings):
        rc, rows = run(s, command, a.out, i)
        print(f"# {label(s)}: exit {rc}, {len(rows)} rows", flush=True)
        if rc != 0 and not rows:
            continue
        results.append((s, rows))
    if not results or results[0][0] != {}:
        sys.exit("nccl_tuned: the launch with NCCL's defaults gave no rows")
    key = lambda r: (r["collective"], r["size"])
    default_rows = {key(r): r for r in results[0][1]}
    summary = []
    print(f"{'collective':<15} {'bytes':>11} | {'NCCL def':>9} {'NCCL best':>9} | {'ncclz def':>9} {'same':>9} "
          f"{'own best':>9} | {'vs def':>7} {'vs best':>7} {'each best':>9} | NCCL's best setting; ncclz's (us)")
    for k, d in sorted(default_rows.items()):
        at = [(label(s), {key(r): r for r in rows}.get(k)) for s, rows in results]
        at = [(name, r) for name, r in at if r is not None]
        nccl_name, nccl_row = min(at, key=lambda x: x[1]["nccl"]["time_us"])
        ncclz_name, ncclz_row = min(at, key=lambda x: x[1]["ncclz"]["time_us"])
        nccl_def, z_def = d["nccl"]["time_us"], d["ncclz"]["time_us"]
        nccl_best, z_same, z_best = nccl_row["nccl"]["time_us"], nccl_row["ncclz"]["time_us"], ncclz_row["ncclz"]["time_us"]
        row = {"collective": k[0], "size": k[1], "nccl_default_us": nccl_def, "nccl_best_us": nccl_best,
               "nccl_best_setting": nccl_name, "ncclz_default_us": z_def, "ncclz_same_setting_us": z_same,
               "ncclz_best_us": z_best, "ncclz_best_setting": ncclz_name, "speedup_defaults": nccl_def / z_def,
               "speedup_nccl_best_setting": nccl_best / z_same, "speedup_each_best": nccl_best / z_best}
        summary.append(row)
        print(f"{k[0]:<15} {k[1]:>11} | {nccl_def:>9.0f} {nccl_best:>9.0f} | {z_def:>9.0f} {z_same:>9.0f} {z_best:>9.0f} | "
              f"{row['speedup_defaults']:>6.2f}x {row['speedup_nccl_best_setting']:>6.2f}x {row['speedup_each_best']:>8.2f}x | "
              f"{nccl_name}; {ncclz_name}")
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump({"settings": [label(s) for s, _ in results], "rows": summary}, f, indent=1)


if __name__ == "__main__":
    main()
