"""ncclz for PyTorch: compressed allreduce on torch tensors and a DDP communication hook.

    import torch, ncclz_torch
    state = ncclz_torch.HookState("fixed8")                 # or "fixed4", "abs", "rel", "lossless"
    model.register_comm_hook(state, ncclz_torch.allreduce_hook)

Runs libncclz (ncclz's C interface, include/ncclz/ncclz.h) through ctypes: no extension to compile
against torch's ABI; libncclz.so comes from NCCLZ_LIBRARY, this package's folder, or the linker's
path. It runs on the NCCL torch loaded (nccl_info() says which). Errors are NcclzError (NCCL's
status in .status) or NcclzInvalidArgument (also a ValueError), with ncclz's own message.
"""
from ._library import NcclzError, NcclzInvalidArgument, loaded_nccl_libraries, nccl_info
from .communicator import CODERS, QUANTIZERS, Communicator
from .hook import HookState, HookStats, allreduce_hook


def library_version():
    """NCCLZ_VERSION of the loaded libncclz as (major, minor, patch)."""
    from ._library import library

    v = library().ncclzGetVersion()
    return (v // 10000, (v // 100) % 100, v % 100)


__all__ = ["Communicator", "HookState", "HookStats", "allreduce_hook", "NcclzError", "NcclzInvalidArgument",
           "QUANTIZERS", "CODERS", "nccl_info", "loaded_nccl_libraries", "library_version"]
