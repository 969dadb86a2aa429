#!/usr/bin/env python3
"""ncclz_torch without a GPU: argument checks, ncclz errors as Python exceptions with ncclz's own
message, one NCCL in the process, and a DDP hook that registers and reports a failure through
backward. Exits 77 (skipped) where torch is not installed.

    NCCLZ_LIBRARY=build/src/libncclz.so PYTHONPATH=python test_ncclz_torch.py
"""
import ctypes
import os
import sys
import tempfile

try:
    import torch
except ImportError:
    print("skip: torch is not installed")
    sys.exit(77)

import torch.distributed as dist  # noqa: E402

import ncclz_torch  # noqa: E402
from ncclz_torch import _library  # noqa: E402

failures = 0


def expect(what, condition, detail=""):
    global failures
    print(f"{'ok' if condition else 'FAIL'}: {what}{': ' + detail if detail else ''}")
    failures += not condition


def expect_raises(what, exception, part, fn):
    try:
        fn()
    except exception as error:
        expect(what, part in str(error), f"{type(error).__name__}: {error}")
        return error
    except Exception as error:  # noqa: BLE001
        expect(what, False, f"raised {type(error).__name__}: {error}, expected {exception.__name__}")
        return None
    expect(what, False, f"nothing raised, expected {exception.__name__}")
    return None


def main():
    lib = _library.library()
    version = ncclz_torch.library_version()
    expect("libncclz loads after torch", lib is not None, f"version {'.'.join(map(str, version))}")
    libraries = ncclz_torch.loaded_nccl_libraries()
    expect("at most one NCCL library in the process", len(libraries) <= 1, ", ".join(libraries) or "none mapped")

    # ncclz's refusals surface with ncclz's message and NCCL's status.
    comm = ctypes.c_void_p()
    config = _library.Config(codec=99, fallbackBelowBytes=ctypes.c_size_t(-1).value, autotune=1, timeoutMs=0)
    error = expect_raises("a codec out of the menu is an NcclzInvalidArgument", ncclz_torch.NcclzInvalidArgument,
                          "config->codec", lambda: _library.check(lib.ncclzCommCreate(None, ctypes.byref(config),
                                                                                      ctypes.byref(comm))))
    expect("NcclzInvalidArgument is a ValueError with NCCL's status",
           isinstance(error, ValueError) and error.status == 4 and error.status_name == "ncclInvalidArgument")
    expect_raises("a NULL communicator is named", ncclz_torch.NcclzInvalidArgument, "comm is NULL",
                  lambda: _library.check(lib.ncclzAllReduce(None, None, 4, 7, 0, 1e-3, None, None)))

    # Arguments refused before anything collective happens.
    expect_raises("an unknown quantizer", ncclz_torch.NcclzInvalidArgument, "quantizer 'int2'",
                  lambda: ncclz_torch.HookState("int2"))
    expect_raises("an unknown coder", ncclz_torch.NcclzInvalidArgument, "coder 'zip'",
                  lambda: ncclz_torch.HookState("abs", 1e-3, coder="zip"))
    expect_raises("abs without a bound", ncclz_torch.NcclzInvalidArgument, "needs a bound",
                  lambda: ncclz_torch.HookState("abs"))
    expect_raises("rel with a negative bound", ncclz_torch.NcclzInvalidArgument, "needs a bound",
                  lambda: ncclz_torch.HookState("rel", -1.0))
    expect_raises("fixed8 with a bound", ncclz_torch.NcclzInvalidArgument, "takes no bound",
                  lambda: ncclz_torch.HookState("fixed8", 1e-3))
    expect_raises("a Communicator before init_process_group", ncclz_torch.NcclzInvalidArgument, "not initialized",
                  lambda: ncclz_torch.Communicator("fixed8"))
    expect_raises("the hook with another state", ncclz_torch.NcclzInvalidArgument, "HookState",
                  lambda: ncclz_torch.allreduce_hook(object(), None))

    # A DDP model (gloo, one rank, CPU) takes the hook; the first bucket connects, and without CUDA
    # that fails with ncclz_torch's message through backward.
    with tempfile.TemporaryDirectory() as tmp:
        dist.init_process_group("gloo", init_method="file://" + os.path.join(tmp, "store"), rank=0, world_size=1)
        model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 4))
        state = ncclz_torch.HookState("fixed8")
        model.register_comm_hook(state, ncclz_torch.allreduce_hook)
        expect("a DDP model registers the hook", True)
        if not torch.cuda.is_available():
            expect_raises("backward reports the hook's failure", RuntimeError, "CUDA is not available",
                          lambda: model(torch.randn(2, 8)).sum().backward())
        dist.destroy_process_group()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
