"""A DDP communication hook that averages gradient buckets with ncclz's compressed allreduce.

    state = ncclz_torch.HookState("fixed8")
    model.register_comm_hook(state, ncclz_torch.allreduce_hook)

Each bucket is summed by ncclz and divided by the world size, as DDP's own allreduce averages.

A compressed allreduce waits on the host for its peers' compressed sizes. Run on the autograd
thread, those waits would stall the backward pass and undo DDP's overlap of communication with
it. So by default the hook only records an event on the stream DDP gives it and queues the bucket;
one background thread per state reduces buckets in the order they come (the same order on every
rank: DDP calls the hook bucket by bucket, identically everywhere) on a stream of its own, and
completes each bucket's CUDA-aware torch.futures.Future there, so DDP's wait makes its stream wait
for the result, not the host.
"""
import queue
import threading

from .communicator import Communicator, QUANTIZERS, CODERS, codec_of, default_bound
from ._library import NcclzError, NcclzInvalidArgument


class HookState:
    """What allreduce_hook needs: the quantizer, the bound, and (made on the first bucket, or by
    connect()) an ncclz Communicator over the process group.

    quantizer: 'fixed8' (default), 'fixed4', 'abs', 'rel' or 'lossless' (ncclz_torch.QUANTIZERS).
    bound: the error bound on each element of the *averaged* gradient: absolute ('abs'), or times
    the range max - min of all ranks' gradient values in the bucket ('rel'); None for 'fixed8',
    'fixed4' (their step is per block of 1024 values: within half a step of each rank's value) and
    'lossless' (exact: the sum is taken in rank order 0..n-1, then divided).
    background: reduce buckets on a background thread (default) instead of the autograd thread.
    check_every_step: after each step's last bucket, wait for it and check every rank's decoding
    (collective; a corrupted chunk raises on every rank in that step's backward).
    Other keyword arguments go to ncclz_torch.Communicator (coder, fallback_below_bytes, autotune,
    timeout).
    """

    def __init__(self, quantizer="fixed8", bound=None, process_group=None, *, background=True,
                 check_every_step=True, **communicator_options):
        codec_of(quantizer, communicator_options.get("coder", "adaptive"))  # refuses bad names now
        if quantizer in ("abs", "rel"):
            if bound is None or not (float(bound) > 0):
                raise NcclzInvalidArgument(f"ncclz_torch.HookState: quantizer {quantizer!r} needs a bound > 0, "
                                           f"not {bound!r}")
        elif bound is not None:
            raise NcclzInvalidArgument(f"ncclz_torch.HookState: quantizer {quantizer!r} takes no bound (its step is "
                                       f"{'per block' if quantizer != 'lossless' else 'none: it is exact'}); "
                                       f"got {bound!r}")
        self.quantizer = quantizer
        self.bound = None if bound is None else float(bound)
        self.process_group = process_group
        self.background = bool(background)
        self.check_every_step = bool(check_every_step)
        self.communicator_options = communicator_options
        self.communicator = None
        self.world_size = None
        self.stats = HookStats()
        self._queue = None
        self._thread = None
        self._stream = None
        self._lock = threading.Lock()

    def connect(self):
        """Makes the communicator now (collective over the process group); the first bucket does
        it otherwise."""
        import torch

        with self._lock:
            if self.communicator is not None:
                return self
            self.communicator = Communicator(self.quantizer, self.process_group, **self.communicator_options)
            self.world_size = self.communicator.size
            if self.background:
                self._stream = torch.cuda.Stream(self.communicator.device)
                self._queue = queue.SimpleQueue()
                self._thread = threading.Thread(target=self._serve, name="ncclz-ddp-hook", daemon=True)
                self._thread.start()
            return self

    def sum_bound(self):
        """The bound handed to ncclz's sum: the average's bound times the world size."""
        if self.bound is None:
            return default_bound(self.quantizer)
        return self.bound * self.world_size

    def reduce(self, tensor, stream, last):
        """Averages `tensor` in place on `stream` (the calling thread's CUDA device must be set)."""
        import torch

        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record(stream)
        self.communicator.allreduce(tensor, self.sum_bound(), stream=stream)
        info = self.communicator.last_call()
        with torch.cuda.stream(stream):
            tensor.div_(self.world_size)
        end.record(stream)
        self.stats.add(info, start, end)
        if last and self.check_every_step:
            self.communicator.check(stream)

    def _serve(self):
        import torch

        torch.cuda.set_device(self.communicator.device)
        while True:
            item = self._queue.get()
            if item is None:
                return
            tensor, ready, future, last = item
            try:
                with torch.cuda.stream(self._stream):
                    self._stream.wait_event(ready)
                    self.reduce(tensor, self._stream, last)
                    future.set_result(tensor)  # records the result's event on self._stream
            except BaseException as error:  # noqa: BLE001 (every failure must reach DDP's wait)
                future.set_exception(error)

    def submit(self, tensor, last):
        """A future for `tensor` averaged over the group (allreduce_hook's work)."""
        import torch

        if self.communicator is None:
            self.connect()
        device = self.communicator.device
        future = torch.futures.Future(devices=[device])
        if not self.background:
            try:
                self.reduce(tensor, torch.cuda.current_stream(device), last)
                future.set_result(tensor)
            except BaseException as error:  # noqa: BLE001
                future.set_exception(error)
            return future
        ready = torch.cuda.Event()
        ready.record(torch.cuda.current_stream(device))
        tensor.record_stream(self._stream)
        self._queue.put((tensor, ready, future, last))
        return future

    def close(self):
        """Stops the background thread and frees the communicator."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None
        if self.communicator is not None:
            self.communicator.close()
            self.communicator = None


class HookStats:
    """Per-bucket records of the hook: bytes in, bytes sent, and the CUDA time of each allreduce
    (from the start of its coding to the end of its division, on the hook's stream)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._pending = []
        self.reset()

    def reset(self):
        with self._lock:
            self._pending = []
            self.calls = 0
            self.fallbacks = 0
            self.input_bytes = 0
            self.bytes_sent = 0
            self.max_error_bound = 0.0

    def add(self, info, start, end):
        with self._lock:
            self.calls += 1
            self.fallbacks += int(info["fallback"])
            self.input_bytes += info["input_bytes"]
            self.bytes_sent += info["bytes_sent"]
            self.max_error_bound = max(self.max_error_bound, info["error_bound"])
            self._pending.append((start, end))

    def allreduce_ms(self):
        """The summed CUDA time of the recorded allreduces (waits for them)."""
        with self._lock:
            pending = list(self._pending)
        total = 0.0
        for start, end in pending:
            end.synchronize()
            total += start.elapsed_time(end)
        return total


def allreduce_hook(state, bucket):
    """DDP communication hook: the bucket's gradients averaged over the process group with ncclz.
    Register with model.register_comm_hook(state, allreduce_hook), state a HookState."""
    if not isinstance(state, HookState):
        raise NcclzInvalidArgument(f"ncclz_torch.allreduce_hook: state must be an ncclz_torch.HookState, not "
                                   f"{type(state).__name__}")
    return state.submit(bucket.buffer(), bucket.is_last())


__all__ = ["HookState", "HookStats", "allreduce_hook", "QUANTIZERS", "CODERS", "NcclzError", "NcclzInvalidArgument"]
