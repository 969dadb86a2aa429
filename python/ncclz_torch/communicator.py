"""ncclz_torch.Communicator: ncclz's compressed allreduce on torch tensors, over an NCCL
communicator of its own made from a torch.distributed process group."""
import ctypes

from . import _library
from ._library import NcclzError, NcclzInvalidArgument

# ncclzCodec_t (include/ncclz/ncclz.h), by quantizer and coder.
_CODECS = {
    ("rel", "fixed_length"): 0,
    ("abs", "fixed_length"): 1,
    ("rel", "adaptive"): 2,
    ("abs", "adaptive"): 3,
    ("fixed8", None): 4,
    ("fixed4", None): 5,
    ("lossless", None): 6,
}
QUANTIZERS = ("fixed8", "fixed4", "abs", "rel", "lossless")
CODERS = ("adaptive", "fixed_length")
_OPS = {"sum": 0, "prod": 1, "max": 2, "min": 3}


def _nccl_dtype(dtype):
    import torch

    codes = {torch.float16: 6, torch.float32: 7, torch.float64: 8, torch.bfloat16: 9}
    if dtype not in codes:
        raise NcclzInvalidArgument(f"ncclz_torch: dtype {dtype} is not one ncclz codes: torch.float32, torch.float16, "
                                   "torch.bfloat16 or torch.float64")
    return codes[dtype]


def codec_of(quantizer, coder="adaptive"):
    """The ncclzCodec_t of a quantizer name (QUANTIZERS) and, for abs/rel, a coder (CODERS)."""
    if quantizer not in QUANTIZERS:
        raise NcclzInvalidArgument(f"ncclz_torch: quantizer {quantizer!r} is not one of {', '.join(QUANTIZERS)}")
    if quantizer in ("abs", "rel"):
        if coder not in CODERS:
            raise NcclzInvalidArgument(f"ncclz_torch: coder {coder!r} is not one of {', '.join(CODERS)}")
        return _CODECS[(quantizer, coder)]
    return _CODECS[(quantizer, None)]


def default_bound(quantizer):
    """The bound argument a quantizer takes when none is given: its bits (FixedRate), 0 (lossless);
    abs and rel have none and need one."""
    return {"fixed8": 8.0, "fixed4": 4.0, "lossless": 0.0}.get(quantizer)


class Communicator:
    """ncclz collectives for the ranks of `group` (torch.distributed; the default group if None).

    Collective to construct: rank 0 of the group makes an ncclUniqueId, the group broadcasts it
    (torch.distributed.broadcast_object_list) and every rank joins a new NCCL communicator on
    `device` (the current CUDA device if None). The NCCL library is the one torch loaded (see
    ncclz_torch.nccl_info()).

    quantizer: 'fixed8' | 'fixed4' (FixedRate<8>/<4>: 8 or 4 bits a value, a step per block of 1024
    values, the bound argument is the bits), 'abs' | 'rel' (AbsBound / RelBound, with coder
    'adaptive' or 'fixed_length'), 'lossless' (exact; sums in rank order).
    fallback_below_bytes: calls smaller than this go to NCCL's own collective, uncompressed (None:
    the library's default). autotune: time ncclz against NCCL per size class and keep the faster.
    timeout: seconds a host wait for a peer may last before the call fails (None: the default).
    """

    def __init__(self, quantizer="fixed8", group=None, *, coder="adaptive", device=None, fallback_below_bytes=None,
                 autotune=True, timeout=None):
        import torch
        import torch.distributed as dist

        self.quantizer = quantizer
        self.coder = coder if quantizer in ("abs", "rel") else None
        codec = codec_of(quantizer, coder)
        if fallback_below_bytes is not None and (not isinstance(fallback_below_bytes, int) or fallback_below_bytes < 0):
            raise NcclzInvalidArgument(f"ncclz_torch: fallback_below_bytes is {fallback_below_bytes!r}: None or an int >= 0")
        if timeout is not None and not (timeout > 0):
            raise NcclzInvalidArgument(f"ncclz_torch: timeout is {timeout!r}: None or seconds > 0")
        if not dist.is_available() or not dist.is_initialized():
            raise NcclzInvalidArgument("ncclz_torch.Communicator: torch.distributed is not initialized "
                                       "(call torch.distributed.init_process_group first)")
        if not torch.cuda.is_available():
            raise NcclzError("ncclz_torch.Communicator: CUDA is not available; ncclz runs on CUDA devices", 1)
        self.group = group
        self.rank = dist.get_rank(group)
        self.size = dist.get_world_size(group)
        self.device = torch.device("cuda", torch.cuda.current_device()) if device is None else torch.device(device)
        if self.device.type != "cuda":
            raise NcclzInvalidArgument(f"ncclz_torch.Communicator: device {self.device} is not a CUDA device")
        self._lib = _library.library()
        nccl = _library.nccl()
        self._nccl_comm = ctypes.c_void_p()
        self._comm = ctypes.c_void_p()

        uid = _library.UniqueId()
        if self.rank == 0:
            _library.check_nccl(nccl.ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
        box = [bytes(uid) if self.rank == 0 else None]  # all 128 bytes (.internal stops at a NUL)
        src = dist.get_global_rank(group, 0) if group is not None else 0
        dist.broadcast_object_list(box, src=src, group=group, device=self.device)
        uid = _library.UniqueId()
        ctypes.memmove(ctypes.byref(uid), box[0], len(box[0]))
        with torch.cuda.device(self.device):
            _library.check_nccl(nccl.ncclCommInitRank(ctypes.byref(self._nccl_comm), self.size, uid, self.rank),
                                "ncclCommInitRank")
        config = _library.Config(codec=codec,
                                 fallbackBelowBytes=ctypes.c_size_t(-1).value if fallback_below_bytes is None
                                 else fallback_below_bytes,
                                 autotune=1 if autotune else 0,
                                 timeoutMs=0 if timeout is None else max(1, int(timeout * 1000)))
        result = self._lib.ncclzCommCreate(self._nccl_comm, ctypes.byref(config), ctypes.byref(self._comm))
        if result != 0:
            nccl.ncclCommDestroy(self._nccl_comm)
            self._nccl_comm = ctypes.c_void_p()
        _library.check(result)

    def allreduce(self, tensor, bound=None, *, op="sum", out=None, stream=None):
        """Reduces `tensor` over the group into `out` (in place if None), as ncclAllReduce, on
        `stream` (torch's current stream if None); returns `out`. Every element of a sum is within
        `bound` of the exact sum (abs; rel: bound x the range of all ranks' values; docs/collectives.md),
        FixedRate within the step it reports. Queued work only: call check() to wait and learn of a
        corrupted chunk. Sizes are exchanged with a host wait, so the call returns once the peers
        have coded theirs."""
        import torch

        if self._comm.value is None:
            raise NcclzInvalidArgument("ncclz_torch.Communicator: this communicator is closed")
        if not isinstance(tensor, torch.Tensor):
            raise NcclzInvalidArgument(f"ncclz_torch: allreduce takes a torch.Tensor, not {type(tensor).__name__}")
        out = tensor if out is None else out
        for name, t in (("tensor", tensor), ("out", out)):
            if t.device != self.device:
                raise NcclzInvalidArgument(f"ncclz_torch: {name} is on {t.device}; this communicator is on {self.device}")
            if not t.is_contiguous():
                raise NcclzInvalidArgument(f"ncclz_torch: {name} is not contiguous (call .contiguous())")
        if out.dtype != tensor.dtype or out.numel() != tensor.numel():
            raise NcclzInvalidArgument(f"ncclz_torch: out ({out.dtype}, {out.numel()} elements) does not match tensor "
                                       f"({tensor.dtype}, {tensor.numel()} elements)")
        if op not in _OPS:
            raise NcclzInvalidArgument(f"ncclz_torch: op {op!r} is not one of {', '.join(_OPS)}")
        if bound is None:
            bound = default_bound(self.quantizer)
            if bound is None:
                raise NcclzInvalidArgument(f"ncclz_torch: quantizer {self.quantizer!r} needs a bound")
        stream = torch.cuda.current_stream(self.device) if stream is None else stream
        result = self._lib.ncclzAllReduce(ctypes.c_void_p(tensor.data_ptr()), ctypes.c_void_p(out.data_ptr()),
                                          tensor.numel(), _nccl_dtype(tensor.dtype), _OPS[op], float(bound), self._comm,
                                          ctypes.c_void_p(stream.cuda_stream))
        _library.check(result)
        return out

    def check(self, stream=None):
        """Waits for `stream`; raises NcclzError on every rank if any rank received a corrupted chunk
        since the last check. Collective: every rank of the group must call it."""
        import torch

        stream = torch.cuda.current_stream(self.device) if stream is None else stream
        _library.check(self._lib.ncclzCheck(self._comm, ctypes.c_void_p(stream.cuda_stream)))

    def last_call(self):
        """What the last call did (ncclz::call_info) as a dict."""
        info = _library.CallInfo()
        _library.check(self._lib.ncclzGetLastCallInfo(self._comm, ctypes.byref(info)))
        return {"collective": info.collective.decode(), "coder": info.coder.decode(),
                "schedule": info.schedule.decode(), "input_bytes": info.inputBytes, "bytes_sent": info.bytesSent,
                "chunk_bytes": info.chunkBytes, "ratio": info.ratio, "error_bound": info.errorBound,
                "size_waits": info.sizeWaits, "fallback": bool(info.fallback)}

    def close(self):
        """Frees the ncclz communicator and its NCCL communicator (after the device finished with them)."""
        if self._comm.value is not None:
            _library.check(self._lib.ncclzCommDestroy(self._comm))
            self._comm = ctypes.c_void_p()
        if self._nccl_comm.value is not None:
            _library.check_nccl(_library.nccl().ncclCommDestroy(self._nccl_comm), "ncclCommDestroy")
            self._nccl_comm = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
