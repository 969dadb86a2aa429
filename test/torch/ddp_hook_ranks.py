#!/usr/bin/env python3
"""One rank of the DDP hook test (run by scripts/emulated_cluster.sh -n N): two training steps of
a small model under DDP with ncclz_torch.allreduce_hook, per quantizer. Each bucket the hook
averages is held against the same bucket averaged by torch's NCCL allreduce: within the bound the
hook reports (fixed8, fixed4, abs, rel), or bit for bit the rank-ordered sum divided by the world
size (lossless). Also checks that libncclz runs on torch's NCCL. Exits 77 without CUDA."""
import os
import sys

try:
    import torch
except ImportError:
    print("skip: torch is not installed")
    sys.exit(77)

if not torch.cuda.is_available():
    print("skip: CUDA is not available")
    sys.exit(77)

import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

import ncclz_torch  # noqa: E402

CASES = [("fixed8", None), ("fixed4", None), ("abs", 1e-4), ("rel", 1e-3), ("lossless", None)]


def main():
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
    dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    device = torch.device("cuda", torch.cuda.current_device())
    failures = 0

    info = ncclz_torch.nccl_info()
    same = len(info["libraries"]) == 1 and tuple(info["version"]) == tuple(info["torch_version"])
    failures += not same
    if rank == 0:
        print(f"{'ok' if same else 'FAIL'}: NCCL {'.'.join(map(str, info['version']))} at {info['path']}; torch's is "
              f"{'.'.join(map(str, info['torch_version']))}; libraries loaded: {len(info['libraries'])}")

    for quantizer, bound in CASES:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 1024),
                                    torch.nn.GELU(), torch.nn.Linear(1024, 64)).to(device)
        ddp = DDP(model, device_ids=[device.index], bucket_cap_mb=1)
        state = ncclz_torch.HookState(quantizer, bound, fallback_below_bytes=0, autotune=False)
        seen, averaged = [], []

        def recording_hook(st, bucket):
            seen.append(bucket.buffer().clone())

            def keep(future):
                value = future.value()
                averaged.append(value.clone())
                return value

            return ncclz_torch.allreduce_hook(st, bucket).then(keep)

        ddp.register_comm_hook(state, recording_hook)
        optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
        for step in range(2):
            g = torch.Generator(device=device).manual_seed(1000 * step + rank)
            x = torch.randn(256, 512, device=device, generator=g)
            y = torch.randn(256, 64, device=device, generator=g)
            seen.clear()
            averaged.clear()
            state.stats.reset()
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(ddp(x), y).backward()
            torch.cuda.synchronize()
            # This rank's buckets before and after the hook, in the order DDP handed them over.
            flat_local = torch.cat(seen)
            by_bucket = torch.cat(averaged)
            if quantizer == "lossless":
                gathered = [torch.empty_like(flat_local) for _ in range(size)]
                dist.all_gather(gathered, flat_local)
                reference = gathered[0].clone()
                for r in range(1, size):
                    reference = reference + gathered[r]
                reference = reference / size
            else:
                reference = flat_local.clone()
                dist.all_reduce(reference)
                reference = reference / size
            if quantizer == "lossless":
                identical = torch.equal(by_bucket.view(torch.int32), reference.view(torch.int32))
                failures += not identical
                if rank == 0:
                    print(f"{'ok' if identical else 'FAIL'}: {size} ranks, lossless, step {step}: averaged gradients "
                          f"{'bit-identical to' if identical else 'differ from'} the rank-ordered sum / {size}")
                continue
            if quantizer == "abs":
                allowed = bound
            elif quantizer == "rel":
                lo, hi = flat_local.min().clone(), flat_local.max().clone()
                dist.all_reduce(lo, op=dist.ReduceOp.MIN)
                dist.all_reduce(hi, op=dist.ReduceOp.MAX)
                allowed = bound * (hi - lo).item()
            else:
                allowed = state.stats.max_error_bound / size
            # NCCL's own sum rounds in a different order: a few ulps of the largest partial sum.
            slack = 8 * torch.finfo(torch.float32).eps * reference.abs().max().item()
            error = (by_bucket - reference).abs().max().item()
            ok = error <= allowed + slack
            failures += not ok
            if rank == 0:
                print(f"{'ok' if ok else 'FAIL'}: {size} ranks, {quantizer}, step {step}: max error {error:.3g}, "
                      f"bound {allowed:.3g} (+ {slack:.2g} NCCL rounding), {state.stats.calls} buckets, "
                      f"{state.stats.bytes_sent / max(1, state.stats.input_bytes):.3f} of the bytes in sent")
            optimizer.step()
        state.close()
        del ddp

    failed = torch.tensor([failures], device=device)
    dist.all_reduce(failed)
    dist.destroy_process_group()
    return 0 if failed.item() == 0 else 1



if __name__ == "__main__":
    sys.exit(main())
