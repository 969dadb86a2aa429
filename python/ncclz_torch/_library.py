"""libncclz (the C interface, include/ncclz/ncclz.h) through ctypes, and the NCCL it runs on.

libncclz links NCCL by its soname, libnccl.so.2. PyTorch loads its own NCCL (the wheel's
nvidia/nccl/lib/libnccl.so.2) when it is imported; the dynamic loader then resolves libncclz's
NCCL to that already-loaded library, so one NCCL serves both. Loading libncclz first would bring
in the system's NCCL and, later, torch's: two NCCLs in one process, whose communicators must not
meet. load() therefore imports torch first, makes sure torch's NCCL is loaded, and refuses a
process that holds two NCCL libraries.
"""
import ctypes
import ctypes.util
import os
import pathlib
import threading

NCCL_SUCCESS = 0
NCCL_INVALID_ARGUMENT = 4

_NCCL_RESULTS = {
    0: "ncclSuccess",
    1: "ncclUnhandledCudaError",
    2: "ncclSystemError",
    3: "ncclInternalError",
    4: "ncclInvalidArgument",
    5: "ncclInvalidUsage",
    6: "ncclRemoteError",
    7: "ncclInProgress",
}


class NcclzError(RuntimeError):
    """A failed ncclz call; the message is ncclz's own (ncclzGetLastError), `status` NCCL's code."""

    def __init__(self, message, status=3):
        super().__init__(message)
        self.status = status
        self.status_name = _NCCL_RESULTS.get(status, f"ncclResult {status}")


class NcclzInvalidArgument(NcclzError, ValueError):
    """An argument ncclz refused before it queued any work (ncclInvalidArgument)."""

    def __init__(self, message, status=NCCL_INVALID_ARGUMENT):
        super().__init__(message, status)


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


class Config(ctypes.Structure):
    _fields_ = [("codec", ctypes.c_int), ("fallbackBelowBytes", ctypes.c_size_t), ("autotune", ctypes.c_int),
                ("timeoutMs", ctypes.c_int64)]


class CallInfo(ctypes.Structure):
    _fields_ = [("collective", ctypes.c_char_p), ("coder", ctypes.c_char_p), ("schedule", ctypes.c_char_p),
                ("inputBytes", ctypes.c_uint64), ("bytesSent", ctypes.c_uint64), ("chunkBytes", ctypes.c_uint64),
                ("ratio", ctypes.c_double), ("errorBound", ctypes.c_double), ("sizeWaits", ctypes.c_int),
                ("fallback", ctypes.c_int)]


def loaded_nccl_libraries():
    """The distinct NCCL library files mapped into this process (from /proc/self/maps)."""
    found = set()
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.split(maxsplit=5)[-1].strip() if line.count(" ") >= 5 else ""
                if os.path.basename(path).startswith("libnccl.so"):
                    found.add(os.path.realpath(path))
    except OSError:
        pass
    return sorted(found)


def _torch_wheel_nccl(torch):
    """torch's own libnccl.so.2 (pip wheels ship it in site-packages/nvidia/nccl/lib), or None."""
    site = pathlib.Path(torch.__file__).resolve().parent.parent
    for candidate in (site / "nvidia" / "nccl" / "lib" / "libnccl.so.2", site / "nvidia" / "nccl" / "lib" / "libnccl.so"):
        if candidate.exists():
            return str(candidate)
    return None


def _find_libncclz():
    tried = []
    env = os.environ.get("NCCLZ_LIBRARY")
    if env:
        if os.path.exists(env):
            return env
        raise NcclzError(f"NCCLZ_LIBRARY is {env!r}, which does not exist (point it at libncclz.so, built with "
                         "-Dcapi=enabled)", 3)
    here = pathlib.Path(__file__).resolve().parent
    for candidate in sorted(here.glob("libncclz.so*")):
        return str(candidate)
    tried.append(str(here / "libncclz.so"))
    name = ctypes.util.find_library("ncclz")
    if name:
        return name
    tried.append("the linker's search path (ctypes.util.find_library('ncclz'))")
    raise NcclzError("libncclz.so not found; set NCCLZ_LIBRARY to the one your build made (build/src/libncclz.so) "
                     "or install ncclz. Looked in: " + "; ".join(tried), 3)


_lock = threading.Lock()
_lib = None
_nccl = None


def _declare(lib):
    p, c = ctypes.c_void_p, ctypes
    lib.ncclzGetVersion.restype = c.c_int
    lib.ncclzGetLastError.restype = c.c_char_p
    lib.ncclzCommCreate.argtypes = [p, c.POINTER(Config), c.POINTER(p)]
    lib.ncclzCommDestroy.argtypes = [p]
    lib.ncclzAllReduce.argtypes = [p, p, c.c_size_t, c.c_int, c.c_int, c.c_double, p, p]
    lib.ncclzCheck.argtypes = [p, p]
    lib.ncclzGetLastCallInfo.argtypes = [p, c.POINTER(CallInfo)]
    for fn in (lib.ncclzCommCreate, lib.ncclzCommDestroy, lib.ncclzAllReduce, lib.ncclzCheck,
               lib.ncclzGetLastCallInfo):
        fn.restype = c.c_int


def library():
    """libncclz, loaded once, after torch and its NCCL."""
    global _lib, _nccl
    with _lock:
        if _lib is not None:
            return _lib
        import torch  # noqa: F401  (loads torch's NCCL before libncclz can bring another)

        if not loaded_nccl_libraries():
            wheel = _torch_wheel_nccl(torch)
            if wheel is not None:
                ctypes.CDLL(wheel, mode=ctypes.RTLD_GLOBAL)
        lib = ctypes.CDLL(_find_libncclz())
        _declare(lib)
        libraries = loaded_nccl_libraries()
        if len(libraries) > 1:
            raise NcclzError("two NCCL libraries are loaded in this process: " + ", ".join(libraries) +
                             ". libncclz must use the NCCL torch loaded: import torch before ncclz_torch, and make "
                             "sure LD_LIBRARY_PATH / LD_PRELOAD do not bring in another libnccl.so.2", 5)
        _lib = lib
        return _lib


def nccl():
    """The NCCL library libncclz runs on (the one mapped into this process), through ctypes."""
    global _nccl
    library()
    with _lock:
        if _nccl is None:
            libraries = loaded_nccl_libraries()
            if not libraries:
                raise NcclzError("no NCCL library is loaded in this process", 3)
            lib = ctypes.CDLL(libraries[0])
            lib.ncclGetVersion.argtypes = [ctypes.POINTER(ctypes.c_int)]
            lib.ncclGetUniqueId.argtypes = [ctypes.POINTER(UniqueId)]
            lib.ncclCommInitRank.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, UniqueId, ctypes.c_int]
            lib.ncclCommDestroy.argtypes = [ctypes.c_void_p]
            lib.ncclGetErrorString.restype = ctypes.c_char_p
            lib.ncclGetErrorString.argtypes = [ctypes.c_int]
            _nccl = lib
        return _nccl


def nccl_info():
    """Which NCCL this process uses: {'path', 'version', 'torch_version', 'libraries'}."""
    import torch

    lib = nccl()
    version = ctypes.c_int()
    check_nccl(lib.ncclGetVersion(ctypes.byref(version)), "ncclGetVersion")
    v = version.value
    # NCCL >= 2.9 encodes major * 10000 + minor * 100 + patch.
    parsed = (v // 10000, (v % 10000) // 100, v % 100)
    torch_version = tuple(torch.cuda.nccl.version()) if torch.cuda.is_available() else None
    return {"path": loaded_nccl_libraries()[0], "version": parsed, "torch_version": torch_version,
            "libraries": loaded_nccl_libraries()}


def check(result):
    """Raises the ncclz error of a failed call (its message is the calling thread's last error)."""
    if result == NCCL_SUCCESS:
        return
    message = _lib.ncclzGetLastError().decode(errors="replace") if _lib is not None else ""
    message = message or _NCCL_RESULTS.get(result, f"ncclResult {result}")
    if result == NCCL_INVALID_ARGUMENT:
        raise NcclzInvalidArgument(message)
    raise NcclzError(message, result)


def check_nccl(result, what):
    if result != NCCL_SUCCESS:
        text = nccl().ncclGetErrorString(result).decode(errors="replace")
        raise NcclzError(f"{what} failed: {text} ({_NCCL_RESULTS.get(result, result)})", result)
