#!/usr/bin/env python3
"""Real gradients for the lossless codec: trains small PyTorch models a few steps on a seeded
synthetic task and dumps their gradients as raw little-endian arrays.

    python3 tools/make_gradients.py OUT_DIR [--steps 20] [--seed 0] [--device cuda]

Models (each a few MB of parameters):
  mlp:  4-layer ReLU MLP (512 -> 1024 -> 1024 -> 512 -> 10), classification of Gaussian
        clusters (10 class centres, noisy points), cross-entropy, SGD with momentum.
  cnn:  3 conv layers + linear, 32x32 RGB images of coloured oriented stripes, 10 classes.
  tfm:  a 2-layer transformer encoder (d=256, 4 heads), next-token prediction on sequences from
        a random first-order Markov chain over 512 tokens.

Each model is trained twice, once in float32 and once entirely in bfloat16 (parameters,
activations and gradients), with the same seed. After `--steps` optimizer steps, the gradients
of one more batch are written, all parameters' gradients concatenated in the order of
model.parameters():
  OUT_DIR/<model>_step<N>.f32    float32 gradients (4 bytes each, little-endian)
  OUT_DIR/<model>_step<N>.bf16   bfloat16 gradients (2 bytes each: the top half of a float32)
  OUT_DIR/MANIFEST.tsv           file, dtype, values, model, step, loss, then each parameter's
                                 name:offset:count
  OUT_DIR/tune/, OUT_DIR/heldout/  the same files (hard links, or copies), split by model: tfm is
                                 held out from every tuning decision, mlp and cnn may be tuned on
                                 (docs/data.md); each with its part of the manifest
No header in the arrays: the extension names the type, the size gives the count. The files are
generated data: do not commit them.
"""
import argparse
import os
import shutil
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


def mlp():
    return nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                         nn.Linear(1024, 512), nn.ReLU(), nn.Linear(512, 10))


def mlp_batch(g, device, n=256):
    if not hasattr(g, "centres"):
        g.centres = torch.randn(10, 512, generator=g.cpu_gen) * 2.0
    y = torch.randint(0, 10, (n,), generator=g.cpu_gen)
    x = g.centres[y] + torch.randn(n, 512, generator=g.cpu_gen)
    return x.to(device), y.to(device)


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 64, 3, padding=1)
        self.c2 = nn.Conv2d(64, 128, 3, padding=1)
        self.c3 = nn.Conv2d(128, 256, 3, padding=1)
        self.fc = nn.Linear(256 * 4 * 4, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        x = F.max_pool2d(F.relu(self.c3(x)), 2)
        return self.fc(x.flatten(1))


def cnn_batch(g, device, n=128):
    """Stripes: class k has orientation k * 18 degrees; colour and phase random; noise added."""
    y = torch.randint(0, 10, (n,), generator=g.cpu_gen)
    angle = y.float() * (3.14159265 / 10)
    yy, xx = torch.meshgrid(torch.arange(32.0), torch.arange(32.0), indexing="ij")
    phase = torch.rand(n, generator=g.cpu_gen) * 6.28
    proj = xx[None] * torch.cos(angle)[:, None, None] + yy[None] * torch.sin(angle)[:, None, None]
    stripes = torch.sin(proj * 0.8 + phase[:, None, None])
    colour = torch.rand(n, 3, generator=g.cpu_gen)
    x = colour[:, :, None, None] * stripes[:, None] + 0.3 * torch.randn(n, 3, 32, 32, generator=g.cpu_gen)
    return x.to(device), y.to(device)


class Tfm(nn.Module):
    def __init__(self, vocab=512, d=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(64, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.out = nn.Linear(d, vocab)

    def forward(self, tokens):
        n = tokens.shape[1]
        mask = torch.triu(torch.full((n, n), float("-inf"), device=tokens.device), 1)
        h = self.enc(self.emb(tokens) + self.pos[:n], mask=mask.to(self.pos.dtype))
        return self.out(h)


def tfm_batch(g, device, n=64, length=64, vocab=512):
    """A random sparse Markov chain: each token has 4 likely successors."""
    if not hasattr(g, "succ"):
        g.succ = torch.randint(0, vocab, (vocab, 4), generator=g.cpu_gen)
    t = torch.empty(n, length + 1, dtype=torch.long)
    t[:, 0] = torch.randint(0, vocab, (n,), generator=g.cpu_gen)
    for i in range(length):
        pick = torch.randint(0, 4, (n,), generator=g.cpu_gen)
        noise = torch.randint(0, vocab, (n,), generator=g.cpu_gen)
        rand = torch.rand(n, generator=g.cpu_gen) < 0.1
        t[:, i + 1] = torch.where(rand, noise, g.succ[t[:, i], pick])
    t = t.to(device)
    return t[:, :-1], t[:, 1:]


class Gen:
    def __init__(self, seed):
        self.cpu_gen = torch.Generator().manual_seed(seed)


def loss_of(name, model, batch):
    x, y = batch
    out = model(x)
    if name == "tfm":
        return F.cross_entropy(out.reshape(-1, out.shape[-1]).float(), y.reshape(-1))
    return F.cross_entropy(out.float(), y)


def run(name, make, batch_fn, dtype, steps, seed, device):
    torch.manual_seed(seed)
    model = make().to(device=device, dtype=dtype)
    opt = torch.optim.SGD(model.parameters(), lr=0.01 if name != "tfm" else 0.05, momentum=0.9)
    g = Gen(seed + 1)  # the same batches for both dtypes
    for _ in range(steps):
        x, y = batch_fn(g, device)
        if name != "tfm":
            x = x.to(dtype)
        opt.zero_grad(set_to_none=True)
        loss_of(name, model, (x, y)).backward()
        opt.step()
    x, y = batch_fn(g, device)
    if name != "tfm":
        x = x.to(dtype)
    opt.zero_grad(set_to_none=True)
    loss = loss_of(name, model, (x, y))
    loss.backward()
    parts, layout, offset = [], [], 0
    for pname, p in model.named_parameters():
        gr = p.grad.detach().reshape(-1)
        parts.append(gr)
        layout.append(f"{pname}:{offset}:{gr.numel()}")
        offset += gr.numel()
    return torch.cat(parts), loss.detach().item(), layout


HELD_OUT = {"tfm"}  # models whose gradients no tuning decision sees (docs/data.md)


def split_of(model):
    return "heldout" if model in HELD_OUT else "tune"


def link_into(part_dir, path):
    """`path` in part_dir under the same name: a hard link where the file system allows it."""
    target = os.path.join(part_dir, os.path.basename(path))
    if os.path.exists(target):
        os.remove(target)
    try:
        os.link(path, target)
    except OSError:
        shutil.copyfile(path, target)


def write(path, grads):
    if grads.dtype == torch.bfloat16:
        data = grads.view(torch.int16).cpu().numpy().astype("<i2")
    else:
        data = grads.float().cpu().numpy().astype("<f4")
    data.tofile(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    models = [("mlp", mlp, mlp_batch), ("cnn", Cnn, cnn_batch), ("tfm", Tfm, tfm_batch)]
    rows = []
    for name, make, batch_fn in models:
        for dtype, ext in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
            grads, loss, layout = run(name, make, batch_fn, dtype, a.steps, a.seed, a.device)
            fname = f"{name}_step{a.steps}.{ext}"
            write(os.path.join(a.out, fname), grads)
            zeros = float((grads == 0).float().mean())
            rows.append("\t".join([fname, ext, str(grads.numel()), name, str(a.steps), f"{loss:.4f}"] + layout))
            print(f"{fname}: {grads.numel()} values, loss {loss:.4f}, {100 * zeros:.1f}% exact zeros, "
                  f"|g| median {float(grads.float().abs().median()):.3g}, max {float(grads.float().abs().max()):.3g}",
                  flush=True)
    header = "# file\tdtype\tvalues\tmodel\tstep\tloss\tparameter:offset:count...\n"
    with open(os.path.join(a.out, "MANIFEST.tsv"), "w") as f:
        f.write(header)
        f.write("\n".join(rows) + "\n")
    for part in ("tune", "heldout"):
        part_dir = os.path.join(a.out, part)
        os.makedirs(part_dir, exist_ok=True)
        mine = [r for r in rows if split_of(r.split("\t")[3]) == part]
        for r in mine:
            link_into(part_dir, os.path.join(a.out, r.split("\t")[0]))
        with open(os.path.join(part_dir, "MANIFEST.tsv"), "w") as f:
            f.write(header + "".join(r + "\n" for r in mine))
    return 0


if __name__ == "__main__":
    sys.exit(main())
