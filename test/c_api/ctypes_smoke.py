#!/usr/bin/env python3
"""libncclz from Python's ctypes, as a caller without a C compiler would use it: the version, and
refusals that need no GPU (ncclInvalidArgument with a message naming the argument).

    ctypes_smoke.py PATH/libncclz.so EXPECTED_VERSION
"""
import ctypes
import sys

NCCL_INVALID_ARGUMENT = 4


class Config(ctypes.Structure):
    _fields_ = [("codec", ctypes.c_int), ("fallbackBelowBytes", ctypes.c_size_t), ("autotune", ctypes.c_int),
                ("timeoutMs", ctypes.c_int64)]


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.ncclzGetVersion.restype = ctypes.c_int
    lib.ncclzGetLastError.restype = ctypes.c_char_p
    lib.ncclzCommCreate.argtypes = [ctypes.c_void_p, ctypes.POINTER(Config), ctypes.POINTER(ctypes.c_void_p)]
    lib.ncclzAllReduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                                   ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p]
    failures = 0

    major, minor, patch = (int(x) for x in sys.argv[2].split("."))
    version = lib.ncclzGetVersion()
    if version != major * 10000 + minor * 100 + patch:
        print(f"FAIL: ncclzGetVersion() is {version}, expected {sys.argv[2]}")
        failures += 1

    def expect_invalid(what, result, part):
        nonlocal failures
        message = lib.ncclzGetLastError().decode()
        if result != NCCL_INVALID_ARGUMENT or part not in message:
            print(f"FAIL: {what} returned {result} with {message!r}; expected {NCCL_INVALID_ARGUMENT} with {part!r}")
            failures += 1
        else:
            print(f"ok: {what} -> ncclInvalidArgument: {message}")

    comm = ctypes.c_void_p()
    config = Config(codec=0, fallbackBelowBytes=ctypes.c_size_t(-1).value, autotune=1, timeoutMs=0)
    expect_invalid("ncclzCommCreate(NCCL communicator NULL)", lib.ncclzCommCreate(None, ctypes.byref(config), ctypes.byref(comm)),
                   "the NCCL communicator is null")
    config.codec = 99
    expect_invalid("ncclzCommCreate(codec 99)", lib.ncclzCommCreate(None, ctypes.byref(config), ctypes.byref(comm)),
                   "config->codec")
    expect_invalid("ncclzAllReduce(comm NULL)", lib.ncclzAllReduce(None, None, 4, 7, 0, 1e-3, None, None), "comm is NULL")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
