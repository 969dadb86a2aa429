#!/usr/bin/env python3
"""Training fidelity and step time of DDP with ncclz_torch.allreduce_hook against DDP on NCCL.

One process per rank (scripts/emulated_cluster.sh -n 4 -- python3 benchmarks/torch/train_ddp.py
...). Every run trains a fresh model from its seed on real text (the Python standard library's
sources, read as bytes: a held-out 5% is kept for the final loss), with the same data order for
the same seed, and writes one JSON file per run into --out. Runs are "<allreduce>:<seed>", with
<allreduce> one of nccl (DDP's own allreduce, no hook), fixed8, fixed4, abs, rel, lossless.

After the runs, with the gradients of the last one, it times the gradient allreduce alone, bucket
by bucket as DDP cuts it, for NCCL and for each quantizer of the runs (--comm-only skips the
training: the comm-only timing under another NCCL setting, e.g. its tuned socket threads).

--dump-gradients DIR writes, after each run's training, rank 0's gradient of one more batch of
its own (no allreduce), every parameter's flattened in model.parameters() order, as raw
little-endian float32: DIR/<model>_<allreduce>_s<seed>_step<steps>.f32, the layout ncclz-perf
--data and ncclz-codec-bench --data read, with DIR/MANIFEST.tsv (file, values, model, steps, the
batch's loss, then each parameter's name:offset:count). These gradients are held out from every
tuning decision (docs/data.md). E.g. 85 M parameters after 300 steps, on one rank:
  scripts/emulated_cluster.sh -n 1 -- python3 benchmarks/torch/train_ddp.py --model gpt2-base \
      --runs nccl:0 --steps 300 --dump-gradients grads --out grads/run
"""
import argparse
import json
import math
import os
import statistics
import sys
import sysconfig
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import ncclz_torch

BUCKET_CAP_MB = 25  # DDP's default


def corpus(max_bytes):
    """The Python standard library's .py files, in sorted path order, as one byte string."""
    root = sysconfig.get_paths()["stdlib"]
    chunks, total = [], 0
    for directory, subdirs, files in os.walk(root):
        subdirs.sort()
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            with open(os.path.join(directory, name), "rb") as f:
                data = f.read()
            chunks.append(data)
            total += len(data)
            if total >= max_bytes:
                return b"".join(chunks)[:max_bytes]
    return b"".join(chunks)


class ByteMLP(torch.nn.Module):
    """Next-byte prediction from the previous `context` bytes: embeddings, concatenated, into an MLP."""

    def __init__(self, context=64, embed=32, hidden=1536):
        super().__init__()
        self.context = context
        self.embed = torch.nn.Embedding(256, embed)
        self.net = torch.nn.Sequential(torch.nn.Linear(context * embed, hidden), torch.nn.GELU(),
                                       torch.nn.Linear(hidden, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, 256))

    def forward(self, tokens):
        """The mean next-byte cross-entropy of `tokens`."""
        x, y = tokens[:, :self.context], tokens[:, self.context]
        return torch.nn.functional.cross_entropy(self.net(self.embed(x).flatten(1)), y)


class ByteGPT(torch.nn.Module):
    """A GPT-2 decoder (transformers' GPT2LMHeadModel) with a byte vocabulary."""

    def __init__(self, context, width, layers, heads):
        super().__init__()
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(vocab_size=256, n_positions=context, n_embd=width, n_layer=layers, n_head=heads,
                            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
        self.model = GPT2LMHeadModel(config)

    def forward(self, tokens):
        """The mean next-byte cross-entropy of `tokens`."""
        return self.model(input_ids=tokens, labels=tokens).loss


MODELS = {
    # name: (constructor, sequence length the model reads, sequences per rank, learning rate)
    "gpt2": (lambda: ByteGPT(256, 640, 10, 10), 256, 8, 6e-4),
    "gpt2-base": (lambda: ByteGPT(256, 768, 12, 12), 256, 8, 6e-4),  # GPT-2 small's shape: 85 M parameters
    "mlp": (lambda: ByteMLP(), 65, 256, 1e-3),
}


def batch(data, length, count, generator, device):
    starts = torch.randint(0, len(data) - length, (count,), generator=generator)
    index = starts[:, None] + torch.arange(length)[None, :]
    return data[index].to(device, non_blocking=True)


def make_state(kind, abs_bound):
    if kind == "nccl":
        return None
    bound = {"abs": abs_bound, "rel": 1e-3}.get(kind)
    return ncclz_torch.HookState(kind, bound)


def train(args, kind, seed, train_data, held_out, device, rank, size, abs_bound):
    make, length, per_rank, lr = MODELS[args.model]
    torch.manual_seed(seed)
    model = make().to(device)
    ddp = DDP(model, device_ids=[device.index], bucket_cap_mb=BUCKET_CAP_MB)
    state = make_state(kind, abs_bound)
    if state is not None:
        state.connect()
        ddp.register_comm_hook(state, ncclz_torch.allreduce_hook)
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
    warmup = max(1, args.steps // 15)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, s / args.steps)))))
    generator = torch.Generator().manual_seed(seed * 1000 + rank)  # same seed, same data order
    losses, step_ms, allreduce_ms, sent = [], [], [], []
    for step in range(args.steps):
        tokens = batch(train_data, length, per_rank, generator, device)
        torch.cuda.synchronize()
        begin = time.perf_counter()
        if state is not None:
            state.stats.reset()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = ddp(tokens)  # through DDP: its forward prepares the backward's buckets
        loss.backward()
        torch.nn.utils.clip_grad_norm_(ddp.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        step_ms.append((time.perf_counter() - begin) * 1e3)
        reduced = loss.detach().clone()
        dist.all_reduce(reduced)
        losses.append(reduced.item() / size)
        if state is not None:
            allreduce_ms.append(state.stats.allreduce_ms())
            sent.append(state.stats.bytes_sent)
        if rank == 0 and (step % 50 == 0 or step == args.steps - 1):
            print(f"{args.model} {kind}:{seed} step {step}: loss {losses[-1]:.4f}, {step_ms[-1]:.1f} ms", flush=True)

    # Held-out loss: the same windows on every rank (the models are identical), averaged.
    eval_generator = torch.Generator().manual_seed(12345)
    model.eval()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        held = [model(batch(held_out, length, per_rank, eval_generator, device)).item() for _ in range(16)]
    model.train()

    # Compute alone: forward and backward without communication (no_sync), same batches' shape.
    compute_ms = []
    for _ in range(8):
        tokens = batch(train_data, length, per_rank, generator, device)
        torch.cuda.synchronize()
        begin = time.perf_counter()
        with ddp.no_sync():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = ddp(tokens)
            loss.backward()
        torch.cuda.synchronize()
        compute_ms.append((time.perf_counter() - begin) * 1e3)
    gradients = torch.cat([p.grad.reshape(-1) for p in model.parameters() if p.grad is not None]).float()
    if args.dump_gradients:
        dump_gradients(args, ddp, model, kind, seed, batch(train_data, length, per_rank, generator, device), rank)
    if state is not None:
        state.close()
    result = {
        "model": args.model, "allreduce": kind, "seed": seed, "ranks": size, "steps": args.steps,
        "parameters": sum(p.numel() for p in model.parameters()), "losses": losses,
        "final_train_loss": statistics.fmean(losses[-20:]), "held_out_loss": statistics.fmean(held),
        "step_ms": statistics.median(step_ms[5:]), "compute_ms": statistics.median(compute_ms[2:]),
        "hook_allreduce_ms": statistics.median(allreduce_ms[5:]) if allreduce_ms else None,
        "bytes_sent_per_step": statistics.median(sent[5:]) if sent else None,
        "gradient_bytes": gradients.numel() * 4, "abs_bound": abs_bound if kind == "abs" else None,
    }
    del ddp, optimizer
    return result, gradients


def dump_gradients(args, ddp, model, kind, seed, tokens, rank):
    """Rank 0's gradient of `tokens` (no allreduce: no_sync), raw float32, into --dump-gradients."""
    model.zero_grad(set_to_none=True)
    with ddp.no_sync():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = ddp(tokens)
        loss.backward()
    if rank != 0:
        return
    os.makedirs(args.dump_gradients, exist_ok=True)
    name = f"{args.model}_{kind}_s{seed}_step{args.steps}.f32"
    layout, parts, offset = [], [], 0
    for pname, p in model.named_parameters():
        g = p.grad.detach().reshape(-1).float() if p.grad is not None else torch.zeros(p.numel(), device=p.device)
        parts.append(g)
        layout.append(f"{pname}:{offset}:{g.numel()}")
        offset += g.numel()
    flat = torch.cat(parts)
    flat.cpu().numpy().astype("<f4").tofile(os.path.join(args.dump_gradients, name))
    manifest = os.path.join(args.dump_gradients, "MANIFEST.tsv")
    rows = []
    if os.path.exists(manifest):
        with open(manifest) as f:
            rows = [line for line in f.read().splitlines()[1:] if line and not line.startswith(name + "\t")]
    rows.append("\t".join([name, str(flat.numel()), args.model, str(args.steps), f"{loss.item():.4f}"] + layout))
    with open(manifest, "w") as f:
        f.write("file\tvalues\tmodel\tsteps\tloss\tparameter:offset:count...\n" + "\n".join(rows) + "\n")
    zeros = (flat == 0).float().mean().item()
    print(f"{name}: {flat.numel()} values, loss {loss.item():.4f}, {100 * zeros:.1f}% exact zeros, |g| median "
          f"{flat.abs().median().item():.3g}, max {flat.abs().max().item():.3g}", flush=True)


def comm_only(gradients, kinds, abs_bound, device, rank, size, repeats=5):
    """The gradient allreduce alone, in DDP's 25 MB buckets: NCCL and each quantizer, median of
    `repeats` (every rank runs the same sequence)."""
    cap = BUCKET_CAP_MB * 1024 * 1024 // 4
    buckets = [gradients[i:i + cap].clone() for i in range(0, gradients.numel(), cap)]
    out = {}
    for kind in ["nccl"] + [k for k in kinds if k != "nccl"]:
        state = make_state(kind, abs_bound)
        if state is not None:
            state.background = False
            state.connect()
        times, sent = [], 0
        for rep in range(repeats + 1):
            work = [b.clone() for b in buckets]
            torch.cuda.synchronize()
            dist.barrier()
            begin = time.perf_counter()
            if state is None:
                for w in work:
                    dist.all_reduce(w)
            else:
                state.stats.reset()
                for i, w in enumerate(work):
                    state.reduce(w, torch.cuda.current_stream(device), i == len(work) - 1)
                sent = state.stats.bytes_sent
            torch.cuda.synchronize()
            if rep > 0:
                times.append((time.perf_counter() - begin) * 1e3)
        if state is not None:
            state.close()
        ms = torch.tensor([statistics.median(times)], device=device)
        dist.all_reduce(ms, op=dist.ReduceOp.MAX)  # the slowest rank's
        out[kind] = {"ms": ms.item(), "bytes_sent": sent if state is not None else
                     int(2 * (size - 1) / size * gradients.numel() * 4)}
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(MODELS), default="gpt2")
    parser.add_argument("--runs", default="nccl:0,nccl:1,nccl:2,fixed8:0,fixed4:0,abs:0,lossless:0")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--corpus-mb", type=int, default=24)
    parser.add_argument("--abs-fraction", type=float, default=0.01,
                        help="abs bound = this fraction of the RMS of the first averaged gradient of the NCCL run "
                             "of the first seed (measured, printed and stored)")
    parser.add_argument("--comm-only", metavar="TAG", help="skip training; time the allreduce alone, labelled TAG")
    parser.add_argument("--dump-gradients", metavar="DIR",
                        help="after each run, write rank 0's gradient of one more batch into DIR (raw float32)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
    device = torch.device("cuda", torch.cuda.current_device())
    dist.init_process_group("nccl", device_id=device)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    os.makedirs(args.out, exist_ok=True)

    data = torch.frombuffer(bytearray(corpus(args.corpus_mb << 20)), dtype=torch.uint8).long()
    split = int(len(data) * 0.95)
    train_data, held_out = data[:split], data[split:]
    runs = [(r.split(":")[0], int(r.split(":")[1])) for r in args.runs.split(",") if r]
    kinds = sorted({k for k, _ in runs}, key=[k for k, _ in runs].index)

    abs_bound = _abs_bound(args, train_data, device, rank, size)
    if rank == 0 and any(k != "nccl" for k in kinds):  # which NCCL libncclz runs on (it loads libncclz)
        info = ncclz_torch.nccl_info()
        print(f"NCCL {'.'.join(map(str, info['version']))} at {info['path']} (torch's: "
              f"{'.'.join(map(str, info['torch_version']))}; {len(info['libraries'])} loaded); abs bound {abs_bound:.3g}",
              flush=True)
    gradients = None
    if not args.comm_only:
        for kind, seed in runs:
            result, gradients = train(args, kind, seed, train_data, held_out, device, rank, size, abs_bound)
            if rank == 0:
                with open(os.path.join(args.out, f"{args.model}_{kind}_s{seed}.json"), "w") as f:
                    json.dump(result, f)
                print(f"{args.model} {kind}:{seed}: held-out loss {result['held_out_loss']:.4f}, step "
                      f"{result['step_ms']:.1f} ms, compute {result['compute_ms']:.1f} ms, hook allreduce "
                      f"{result['hook_allreduce_ms']} ms", flush=True)
    else:
        _, gradients = _first_gradients(args, train_data, device, rank)
    timing = comm_only(gradients, kinds, abs_bound, device, rank, size)
    if rank == 0:
        tag = args.comm_only or "default"
        with open(os.path.join(args.out, f"{args.model}_comm_{tag}.json"), "w") as f:
            json.dump({"model": args.model, "nccl_setting": tag, "gradient_bytes": gradients.numel() * 4,
                       "ranks": size, "abs_bound": abs_bound, "env": {k: v for k, v in os.environ.items()
                                                                     if k.startswith("NCCL_")}, "timing": timing}, f)
        for kind, t in timing.items():
            print(f"{args.model} allreduce alone ({tag}): {kind} {t['ms']:.1f} ms, {t['bytes_sent'] / 1e6:.1f} MB sent",
                  flush=True)
    dist.destroy_process_group()
    return 0


def _first_gradients(args, train_data, device, rank):
    make, length, per_rank, _ = MODELS[args.model]
    torch.manual_seed(0)
    model = make().to(device)
    generator = torch.Generator().manual_seed(rank)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(batch(train_data, length, per_rank, generator, device))
    loss.backward()
    return model, torch.cat([p.grad.reshape(-1) for p in model.parameters() if p.grad is not None]).float()


def _abs_bound(args, train_data, device, rank, size):
    """--abs-fraction of the RMS of the first step's averaged gradient (seed 0): a bound scaled to
    the gradients of this model, chosen before any ncclz run."""
    _, gradients = _first_gradients(args, train_data, device, rank)
    dist.all_reduce(gradients)
    gradients /= size
    return args.abs_fraction * gradients.pow(2).mean().sqrt().item()


if __name__ == "__main__":
    sys.exit(main())
