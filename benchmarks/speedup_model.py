#!/usr/bin/env python3
"""What ncclz will gain over NCCL on a given network: a time model of each collective, from
measured inputs, and its check against every configuration that was measured.

    benchmarks/speedup_model.py predict --perf PERF.jsonl --codec CODEC.json [--latency-us 10]
        [--ranks 4] [--size 256M] [--gbps 1,10,25,50,100,200,400] [--plot FILE.png] [--json FILE]
    benchmarks/speedup_model.py validate --codec CODEC.json [--codec ...] RUN.jsonl [RUN.jsonl ...]

Inputs, all measured:
  - the ratio on the user's data: the bytes each rank sent in an ncclz-perf --json run on that data
    (the emulated cluster will do: bytes do not depend on the link), per collective and quantizer;
  - the codec's throughput on a whole GPU: ncclz-codec-bench --json (encode with and without the
    range pass, decode) and the copy roofline of the same run;
  - the link: bandwidth per GPU (each direction) and latency per message step. `validate` fits
    both from NCCL's own rows of the same run and nothing else; `predict` takes a latency and
    sweeps the bandwidth.

NCCL's collective of S bytes (nccl-tests' size) over n ranks takes f S / B + k alpha: f is
nccl-tests' bus factor (2(n-1)/n allreduce, (n-1)/n reduce_scatter, allgather and alltoall, 1
broadcast and reduce) and k the ring's steps. ncclz's call is played out on its two streams
(include/ncclz/detail/comm/*_schedule.cuh): the coding stream (range pass, encodes, decodes,
reductions of codes, each at the whole-GPU rate divided by the ranks sharing a GPU) and the
transfer stream (NCCL operations at B and alpha); every compressed size the host must read before
it posts a receive costs a small allgather ((n-1) alpha) and a host turnaround (--host-wait-us).
Pipeline<Auto> cuts a direct reduction into one part per 64 MiB of each rank's input, at most 8:
all parts' encodes for the peers run first, then part i's reduction while part i+1 moves.

Standard library only (CI runs its arithmetic tests); --plot needs matplotlib.
"""
import argparse
import json
import math
import os
import statistics
import sys
from dataclasses import dataclass, replace

COLLECTIVES = ("allreduce", "reduce_scatter", "allgather", "broadcast", "reduce", "alltoall")
REDUCTIONS = ("allreduce", "reduce_scatter", "reduce")
HEADER_BYTES = 112  # the call header every rank gathers (detail/comm/call_agreement.hpp)
PART_BYTES = 64 << 20  # communicator_config::pipeline_part_bytes
MAX_PARTS = 8  # Pipeline<Auto>
CODE_BYTES = 4  # an integer code while it is reduced
SCHEDULES = {  # what each collective can run, Auto's choice first (schedule/schedule.hpp)
    "allreduce": ("direct", "ring"),
    "reduce_scatter": ("direct", "ring"),
    "reduce": ("direct", "ring"),
    "allgather": ("direct",),
    "broadcast": ("ring", "tree"),
    "alltoall": ("direct",),
}


# --- inputs ----------------------------------------------------------------------------------------

HOST_WAIT = 57e-6  # median "host gap" per size wait of every --phases row >= 16 MiB in benchmarks/results


@dataclass(frozen=True)
class Link:
    """One GPU's network: bytes/s each direction, seconds per message step, and the host's
    turnaround after a compressed size arrives (seconds). `by_collective`: where NCCL's own
    collectives were measured, the bandwidth each showed; ncclz's NCCL operations of that kind
    (grouped sends and receives: alltoall) move at it. `loopback`: ranks on one host talking over
    sockets, where a rank that receives from several peers at once is bound by no NIC."""
    bandwidth: float
    latency: float
    host_wait: float = HOST_WAIT
    by_collective: tuple = ()
    loopback: bool = False

    def bw(self, collective):
        return dict(self.by_collective).get(collective, self.bandwidth)


@dataclass(frozen=True)
class Codec:
    """Whole-GPU rates in bytes of uncompressed data per second: the encoder alone (AbsBound),
    the range pass RelBound adds, the decoder, and the copy roofline (bytes read + written).
    `share`: ranks that share the GPU (the emulated cluster: all of them); ranks that code at the
    same time split its rates."""
    encode: float
    range_pass: float
    decode: float
    memory: float
    share: float = 1.0

    def time(self, rate, nbytes, active):
        """Seconds for one rank to process nbytes at `rate` while `active` ranks code."""
        return nbytes / rate * max(1.0, min(self.share, active))


@dataclass(frozen=True)
class Ratios:
    """Uncompressed over compressed bytes. peer: the chunks a rank codes from its own values for
    each peer (reductions); owner: a segment owner's chunk of the reduced values (allreduce,
    reduce); once: a chunk coded once and moved unchanged (allgather, broadcast, alltoall)."""
    peer: float = 1.0
    owner: float = 1.0
    once: float = 1.0


@dataclass(frozen=True)
class Call:
    collective: str
    size: int  # nccl-tests' size: the larger buffer of one rank
    nranks: int
    schedule: str = ""  # "" = Auto's choice
    parts: int = 0  # 0 = Pipeline<Auto>'s rule
    element_bytes: int = 4
    quantizer: str = "rel"  # rel, abs, fixed8, fixed4

    def algorithm(self):
        return self.schedule or SCHEDULES[self.collective][0]

    def part_count(self):
        if self.parts:
            return self.parts
        if self.collective in REDUCTIONS and self.algorithm() == "direct":
            return pipeline_parts(self.input_bytes())
        return 1

    def input_bytes(self):
        """Bytes of each rank's input (the count argument times the element size)."""
        n = self.nranks
        if self.collective == "allgather":
            return self.size // n
        return self.size


def pipeline_parts(input_bytes, part_bytes=PART_BYTES, max_parts=MAX_PARTS):
    """Pipeline<Auto>: one part per part_bytes of each rank's input, at least 1, at most max_parts
    (include/ncclz/pipeline.hpp, pipeline_parts)."""
    return int(min(max(input_bytes // max(part_bytes, 1), 1), max_parts))


# --- NCCL ------------------------------------------------------------------------------------------

def nccl_shape(collective, n):
    """(bus factor, latency steps) of NCCL's ring collective over n ranks."""
    if n < 2:
        return 0.0, 0
    if collective == "allreduce":
        return 2 * (n - 1) / n, 2 * (n - 1)
    if collective in ("reduce_scatter", "allgather"):
        return (n - 1) / n, n - 1
    if collective in ("broadcast", "reduce"):
        return 1.0, n - 1
    if collective == "alltoall":
        return (n - 1) / n, 1  # one group of sends and receives
    raise ValueError(f"unknown collective {collective!r}")


def nccl_time(collective, size, n, link):
    f, k = nccl_shape(collective, n)
    return f * size / link.bw(collective) + k * link.latency


def _least_squares(rows, unknowns):
    """x minimising sum (a . x - 1)^2 over rows a (each a dict unknown -> coefficient)."""
    m = len(unknowns)
    ata = [[0.0] * m for _ in range(m)]
    atb = [0.0] * m
    for a in rows:
        v = [a.get(u, 0.0) for u in unknowns]
        for i in range(m):
            atb[i] += v[i]
            for j in range(m):
                ata[i][j] += v[i] * v[j]
    for col in range(m):  # Gauss-Jordan with partial pivoting
        piv = max(range(col, m), key=lambda r: abs(ata[r][col]))
        if abs(ata[piv][col]) < 1e-300:
            raise ValueError("singular")
        ata[col], ata[piv] = ata[piv], ata[col]
        atb[col], atb[piv] = atb[piv], atb[col]
        for r in range(m):
            if r != col and ata[r][col]:
                k = ata[r][col] / ata[col][col]
                ata[r] = [x - k * y for x, y in zip(ata[r], ata[col])]
                atb[r] -= k * atb[col]
    return {u: atb[i] / ata[i][i] for i, u in enumerate(unknowns)}


def fit_link(rows, n, latency=None, host_wait=HOST_WAIT):
    """The link that best explains NCCL's own times: rows of (collective, size, seconds), each
    t = f S / B_collective + k alpha. Least squares of the relative error; one bandwidth per
    collective in the rows (the link's `bandwidth` is allreduce's, else the mean of their
    inverses) and one latency (>= 0), unless `latency` is given. The latency is fitted only where
    some collective was measured at two sizes or more; otherwise it is 0."""
    rows = [(c, s, t) for c, s, t in rows if t > 0 and nccl_shape(c, n)[0] > 0]
    if not rows:
        raise ValueError("fit_link: no NCCL rows to fit")
    names = sorted({c for c, _, _ in rows})
    sizes = {c: {s for cc, s, _ in rows if cc == c} for c in names}
    if latency is None and not any(len(v) > 1 for v in sizes.values()):
        latency = 0.0

    def solve(alpha):
        eqs = []
        for c, s, t in rows:
            f, k = nccl_shape(c, n)
            eq = {c: f * s / t}
            if alpha is None:
                eq["alpha"] = k / t
                eqs.append(eq)
            else:  # move the known latency term to the right: scale the row instead
                rest = 1.0 - k * alpha / t
                if rest > 0:
                    eqs.append({c: f * s / t / rest})
        unknowns = names + (["alpha"] if alpha is None else [])
        return _least_squares(eqs, [u for u in unknowns if any(u in e for e in eqs)])

    x = solve(latency)
    alpha = x.pop("alpha", latency)
    if alpha is not None and alpha < 0:
        alpha = 0.0
        x = solve(0.0)
    x = {c: v for c, v in x.items() if v > 0}
    if not x:
        raise ValueError("fit_link: no positive bandwidth fits the rows")
    by = tuple(sorted((c, 1.0 / v) for c, v in x.items()))
    main = 1.0 / x["allreduce"] if "allreduce" in x else len(x) / sum(x.values())
    return Link(main, alpha or 0.0, host_wait, by)


# --- ncclz -----------------------------------------------------------------------------------------

class Streams:
    """ncclz's coding stream and transfer stream, each a clock: an operation starts when its
    stream is free and what it waits for is done."""

    def __init__(self):
        self.code = 0.0
        self.move = 0.0
        self.host = 0.0  # when the host is free to post the next operation after reading sizes

    def on_code(self, seconds, after=0.0):
        self.code = max(self.code, after) + seconds
        return self.code

    def on_move(self, seconds, after=0.0):
        self.move = max(self.move, after) + seconds
        return self.move

    def join_code(self):  # the coding stream waits for the transfer stream
        self.code = max(self.code, self.move)

    def end(self):
        return max(self.code, self.move)


class _Costs:
    """Seconds of one rank's operations in one call."""

    def __init__(self, call, link, codec):
        self.n, self.eb, self.link, self.codec = call.nranks, call.element_bytes, link, codec

    def encode(self, nbytes, active=None):
        return self.codec.time(self.codec.encode, nbytes, active or self.n)

    def decode(self, nbytes, active=None):
        return self.codec.time(self.codec.decode, nbytes, active or self.n)

    def scan(self, nbytes, active=None):  # the range pass, or the block maxima
        return self.codec.time(self.codec.range_pass, nbytes, active or self.n)

    def codes(self, nbytes, per_value, active=None):
        """A memory-bound pass over the codes of nbytes of values: per_value bytes read and
        written a value (quantize, dequantize: element + code; adding codes: three codes)."""
        return self.codec.time(self.codec.memory, nbytes / self.eb * per_value, active or self.n)

    def sizes(self):
        """An allgather of the compressed sizes and the host's turnaround before it posts receives."""
        return (self.n - 1) * self.link.latency + self.link.host_wait

    def fan_in(self, chunk):
        """n-1 peers each send one chunk to one rank: its NIC receives them one after another; on
        loopback (no NIC) each pair has its own sockets and the senders run at once."""
        k = 1 if self.link.loopback else self.n - 1
        return self.link.latency + k * chunk / self.link.bw("alltoall")

    def sendrecv(self, nbytes):
        """One group of sends to (and receives from) peers, nbytes out of this rank in all."""
        return self.link.latency + nbytes / self.link.bw("alltoall")

    def allgather(self, chunk):
        return (self.n - 1) * (self.link.latency + chunk / self.link.bw("allgather"))


def _start(call, s, cost, count_bytes, active=None):
    """The range pass (RelBound) or the block maxima (FixedRate reductions), and the call header,
    on the transfer stream; the coding stream starts after them."""
    n = call.nranks
    if call.quantizer == "rel":
        s.on_move(cost.scan(count_bytes, active))
    s.on_move((n - 1) * cost.link.latency)  # header allgather
    if call.quantizer in ("fixed8", "fixed4") and call.collective in REDUCTIONS:
        # block maxima of every rank (a pass over the input), merged by one ncclAllReduce of
        # 8 bytes per 1024 values
        s.on_move(cost.scan(count_bytes))
        s.on_move(nccl_time("allreduce", 8 * count_bytes / call.element_bytes / 1024, n, cost.link))
    s.join_code()


def _direct_reduction(call, cost, ratios):
    n, P = call.nranks, call.part_count()
    S = call.size
    seg = S / n / P  # one rank's sub-segment of one part
    el = cost.eb + CODE_BYTES
    s = Streams()
    _start(call, s, cost, S)
    if P > 1:
        s.on_move(cost.link.host_wait)  # the header is settled before the size communicator is used
        s.join_code()
    # every part's chunks for the n-1 peers, coded while quantized from the input
    coded = [s.on_code(cost.encode((n - 1) * seg)) for _ in range(P)]
    owner_coded = []

    def sizes_known(coded_at):
        # The host reads each part's sizes in turn; with parts they travel beside the payloads,
        # in one part on the transfer stream behind them.
        s.host = max(s.host, coded_at if P > 1 else max(s.move, coded_at)) + cost.sizes()
        return s.host

    for i in range(P):
        moved = s.on_move(cost.sendrecv((n - 1) * seg / ratios.peer), after=sizes_known(coded[i]))
        s.on_code(cost.codes(seg, el))  # this rank's own sub-segment quantized into the sum
        s.on_code(cost.decode((n - 1) * seg) + cost.codes((n - 1) * seg, 3 * CODE_BYTES), after=moved)
        if call.collective == "reduce_scatter":
            s.on_code(cost.codes(seg, el))  # dequantized into the result
            continue
        owner_coded.append(s.on_code(cost.encode(seg)))
        s.on_code(cost.codes(seg, el))  # the owner's own values
    for done in owner_coded:
        ready = sizes_known(done)
        if call.collective == "allreduce":  # ncclAllGather of the owners' chunks
            moved = s.on_move(cost.allgather(seg / ratios.owner), after=ready)
            s.on_code(cost.decode((n - 1) * seg), after=moved)
        else:  # reduce: every owner's chunk to the root, which alone decodes them
            moved = s.on_move(cost.fan_in(seg / ratios.owner), after=ready)
            s.on_code(cost.decode((n - 1) * seg, active=1), after=moved)
    return s.end()


def _ring_reduction(call, cost, ratios):
    """One part: n-1 steps, each coding the partial sum received the step before; its size goes
    ahead of the payload. A partial sum of j+1 ranks' codes takes log2(j+1) bits a value more
    than one rank's codes."""
    n, eb = call.nranks, call.element_bytes
    S = call.size
    seg = S / n
    el = eb + CODE_BYTES
    s = Streams()
    _start(call, s, cost, S)
    s.on_code(cost.codes(S, el))  # the whole input quantized once
    s.on_move(cost.sizes(), after=s.code)
    bits = 8 * eb / ratios.peer
    for step in range(n - 1):
        s.on_code(cost.encode(seg), after=s.move)
        chunk = seg / eb * (bits + math.log2(step + 1)) / 8
        s.on_move(cost.link.latency + cost.link.host_wait, after=s.code)  # the size first
        s.on_move(cost.sendrecv(chunk))
        s.on_code(cost.decode(seg) + cost.codes(seg, 3 * CODE_BYTES), after=s.move)
    if call.collective == "reduce_scatter":
        return s.on_code(cost.codes(seg, el))
    s.on_code(cost.encode(seg))
    s.on_move(cost.sizes(), after=s.code)
    if call.collective == "allreduce":
        s.on_move(cost.allgather(seg / ratios.owner))
        s.on_code(cost.decode((n - 1) * seg), after=s.move)
    else:
        s.on_move(cost.fan_in(seg / ratios.owner))
        s.on_code(cost.decode((n - 1) * seg, active=1), after=s.move)
    return s.end()


def _copies(call, cost, ratios):
    """allgather, broadcast, alltoall: coded once, moved unchanged, decoded."""
    n, S = call.nranks, call.size
    s = Streams()
    if call.collective == "allgather":
        mine = S / n
        _start(call, s, cost, mine)
        s.on_code(cost.encode(mine))
        s.on_move(cost.sizes(), after=s.code)
        s.on_move(cost.allgather(mine / ratios.once))
        s.on_code(cost.decode(S), after=s.move)
    elif call.collective == "broadcast":  # the root alone codes
        _start(call, s, cost, S, active=1)
        s.on_code(cost.encode(S, active=1))
        s.on_move(cost.sizes(), after=s.code)
        chunk = S / ratios.once
        if call.algorithm() == "tree":  # the root sends to ceil(log2 n) children, one after another
            s.on_move(math.ceil(math.log2(n)) * (cost.link.latency + chunk / cost.link.bw("alltoall")))
        else:  # NCCL's pipelined broadcast of the chunk
            s.on_move((n - 1) * cost.link.latency + chunk / cost.link.bw("broadcast"))
        s.on_code(cost.decode(S), after=s.move)
    else:  # alltoall
        _start(call, s, cost, S)
        block = S / n
        s.on_code(cost.encode((n - 1) * block))
        s.on_move(cost.sizes(), after=s.code)
        s.on_move(cost.sendrecv((n - 1) * block / ratios.once))
        s.on_code(cost.codes(block, 2 * cost.eb) + cost.decode((n - 1) * block), after=s.move)
    return s.end()


def ncclz_time(call, link, codec, ratios):
    """Predicted seconds of one compressed call (warm: buffers and communicators already made)."""
    if call.nranks < 2:
        raise ValueError("ncclz_time: needs 2 ranks or more")
    cost = _Costs(call, link, codec)
    if call.collective in REDUCTIONS:
        if call.algorithm() == "ring":
            return _ring_reduction(call, cost, ratios)
        return _direct_reduction(call, cost, ratios)
    return _copies(call, cost, ratios)



# --- measured inputs -------------------------------------------------------------------------------

def read_perf(path):
    """(config, rows) of an ncclz-perf --json file."""
    config, rows = None, []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("record") == "config":
                config = r
            elif r.get("record") == "row":
                rows.append(r)
    if config is None:
        raise ValueError(f"{path}: no configuration record (is it ncclz-perf --json output?)")
    return config, rows


ELEMENT_BYTES = {"float": 4, "double": 8, "half": 2, "bfloat16": 2}
CODEC_DTYPE = {"float": "f32", "double": "f64", "half": "f16", "bfloat16": "bf16"}


def row_call(config, row):
    """The Call an ncclz-perf row measured."""
    ranks = row.get("ranks") or []
    parts = max((r.get("parts") or 0 for r in ranks), default=0)
    return Call(collective=row["collective"], size=int(row["size"]), nranks=int(config["ranks"]),
                schedule=row.get("schedule") if row.get("schedule") in ("direct", "ring", "tree") else "",
                parts=parts, element_bytes=ELEMENT_BYTES[config.get("type", "float")],
                quantizer=config.get("bound_mode", "rel"))


def compressed(row):
    ranks = row.get("ranks") or []
    return bool(ranks) and not row.get("fallback") and all(not r.get("fallback") for r in ranks)


def row_ratios(config, row):
    """The ratios a row's bytes show (see Ratios), from each rank's bytes_sent and chunk_bytes:
    what the model needs of the user's data."""
    n = int(config["ranks"])
    call = row_call(config, row)
    ranks = row["ranks"]
    overhead = lambda r: HEADER_BYTES + 8 * (n + 1) * (r.get("size_waits") or 0)
    S = call.size
    c = call.collective
    if c in ("allgather", "broadcast", "alltoall"):
        if c == "allgather":
            chunk = max(r["chunk_bytes"] for r in ranks)
            return Ratios(once=(S / n) / chunk)
        if c == "broadcast":
            chunk = max(r["chunk_bytes"] for r in ranks)
            return Ratios(once=S / chunk)
        sent = max(r["bytes_sent"] - overhead(r) for r in ranks)
        return Ratios(once=(n - 1) / n * S / sent)
    root = int(config.get("root", 0))
    owner = max(r["chunk_bytes"] for r in ranks)
    peer_sent = []
    for r in ranks:
        b = r["bytes_sent"] - overhead(r)
        if c == "allreduce":
            b -= (n - 1) * owner
        elif c == "reduce" and r.get("rank") != root:
            b -= r["chunk_bytes"]
        peer_sent.append(b)
    peer = (n - 1) / n * S / max(peer_sent)
    return Ratios(peer=peer, owner=(S / n) / owner if c != "reduce_scatter" else 1.0)


def read_codec(path):
    """Rows of an ncclz-codec-bench --json file, and its copy roofline (bytes/s)."""
    with open(path) as f:
        rows = json.load(f)
    roofline = next((r["tbps_median"] * 1e12 for r in rows if r.get("kind") == "roofline"), None)
    return [r for r in rows if r.get("kind") == "codec"], roofline


def codec_rates(codec_files, coder, dtype="f32", bound=1e-3, input_name="concat", share=1.0):
    """A Codec from codec-bench rows of `coder` (FixedRate quantizers use fixed_length's encoder):
    the input whose name starts with `input_name` (the largest one otherwise) at the bound
    nearest `bound`."""
    best = None
    for path in codec_files:
        rows, roofline = read_codec(path)
        for r in rows:
            if r.get("coder") != coder or r.get("dtype") != dtype or r.get("failure") or r.get("small_input"):
                continue
            named = r["input"].startswith(input_name)
            key = (not named, abs(math.log10(r["bound"]) - math.log10(bound)), -r["bytes"])
            if best is None or key < best[0]:
                best = (key, r, roofline)
    if best is None:
        raise ValueError(f"no {coder} {dtype} rows in {', '.join(codec_files)}")
    _, r, roofline = best
    comp, comp_abs, dec = (r[k] * 1e9 for k in ("comp_gbps_median", "comp_abs_gbps_median", "decomp_gbps_median"))
    range_pass = 1.0 / max(1.0 / comp - 1.0 / comp_abs, 1e-15)
    return Codec(encode=comp_abs, range_pass=range_pass, decode=dec, memory=roofline or 3.5e12, share=share), r


# --- validation ------------------------------------------------------------------------------------

def nccl_rows(rows, collective=None):
    """(collective, size, seconds) of NCCL's own times in rows, and of the ncclz column where the
    call went to NCCL (small calls): both are NCCL measured."""
    out = []
    for r in rows:
        if collective and r["collective"] != collective:
            continue
        out.append((r["collective"], int(r["size"]), r["nccl"]["time_us"] * 1e-6))
        if not compressed(r) and r.get("ranks"):
            out.append((r["collective"], int(r["size"]), r["ncclz"]["time_us"] * 1e-6))
    return out


def nccl_setting(config):
    env = config.get("env") or {}
    t, s = env.get("NCCL_SOCKET_NTHREADS"), env.get("NCCL_NSOCKS_PERTHREAD")
    return "defaults" if t is None and s is None else f"{t or '-'}x{s or '-'}"


def transport(config):
    env = config.get("env") or {}
    sockets = env.get("NCCL_NET") == "Socket"
    if config.get("gpus_visible", 1) == 1 and config["ranks"] > 1:
        return "emulated (one GPU, sockets)"
    return "sockets" if sockets else "NCCL's transports (NVLink)"


def validate(paths, codec_files, host_wait=HOST_WAIT, min_size=16 << 20, codec_inputs=None):
    """Predicted against measured ncclz time for every compressed row of `paths` at `min_size` or
    more. The link of each file is fitted from NCCL's rows of that file; the latency from every
    file of the same rank count, transport and NCCL setting where one file alone has a single
    size. Returns one dict per row; its `spread` is the measured median over the fastest timed
    iteration (None where the run has no minimum): an error no wider than the run's own spread
    says as much about the run as about the model."""
    runs = []
    for p in paths:
        config, rows = read_perf(p)
        runs.append((p, config, rows))
    # latency per (ranks, transport, setting), from every such file's NCCL rows together
    groups = {}
    for p, config, rows in runs:
        key = (config["ranks"], transport(config), nccl_setting(config))
        groups.setdefault(key, []).extend(nccl_rows(rows))
    latency = {key: fit_link(nrows, key[0]).latency for key, nrows in groups.items()}
    out = []
    for p, config, rows in runs:
        n = config["ranks"]
        key = (n, transport(config), nccl_setting(config))
        own = nccl_rows(rows)
        multi = any(len({s for c, s, _ in own if c == cc}) > 1 for cc, _, _ in own)
        alpha = None if multi else latency[key]
        link = replace(fit_link(own, n, latency=alpha, host_wait=host_wait),
                       loopback=(config.get("env") or {}).get("NCCL_NET") == "Socket")
        share = n / max(config.get("gpus_visible", 1), 1) if n > config.get("gpus_visible", 1) else 1.0
        dtype = CODEC_DTYPE[config.get("type", "float")]
        name = (codec_inputs or {}).get(p, "concat")
        rates, unrated = {}, set()  # coder -> (Codec, codec-bench row); coders no codec file has
        for r in rows:
            if not compressed(r) or int(r["size"]) < min_size:
                continue
            coder = row_coder(config, r)
            if coder not in rates and coder not in unrated:
                try:
                    rates[coder] = codec_rates(codec_files, coder, dtype, config.get("bound") or 1e-3, name, share)
                except ValueError as e:
                    unrated.add(coder)
                    print(f"# {p}: {coder} rows skipped ({e})", file=sys.stderr)
            if coder in unrated:
                continue
            codec, codec_row = rates[coder]
            call = row_call(config, r)
            ratios = row_ratios(config, r)
            pred = ncclz_time(call, link, codec, ratios)
            meas = r["ncclz"]["time_us"] * 1e-6
            fastest = (r["ncclz"].get("min_us") or 0) * 1e-6
            nccl_meas = r["nccl"]["time_us"] * 1e-6
            nccl_pred = nccl_time(call.collective, call.size, n, link)
            out.append({
                "file": p, "ranks": n, "transport": transport(config), "nccl_setting": nccl_setting(config),
                "coder": coder, "quantizer": config.get("bound_mode"), "type": config.get("type"),
                "collective": call.collective, "size": call.size, "parts": call.part_count(),
                "bandwidth_GBps": link.bandwidth / 1e9, "latency_us": link.latency * 1e6,
                "codec_input": codec_row["input"], "peer_ratio": ratios.peer, "owner_ratio": ratios.owner,
                "once_ratio": ratios.once, "nccl_ms": nccl_meas * 1e3, "nccl_fit_ms": nccl_pred * 1e3,
                "ncclz_ms": meas * 1e3, "ncclz_pred_ms": pred * 1e3, "error": pred / meas - 1,
                "spread": meas / fastest if fastest > 0 else None,
                "speedup": nccl_meas / meas, "speedup_pred": nccl_meas / pred,
            })
    return out


# --- command line ----------------------------------------------------------------------------------

def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper()
    return int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)


def summarize(rows):
    """Rows grouped by configuration: transport, ranks, NCCL setting, collective and whether the
    call is 256 MiB or larger, in first-seen order."""
    groups = {}
    for r in rows:
        size = ">= 256 MiB" if r["size"] >= 256 << 20 else "< 256 MiB"
        key = f"{r['transport']}, {r['ranks']} ranks, NCCL {r['nccl_setting']}, {r['collective']} {size}"
        groups.setdefault(key, []).append(r)
    return list(groups.items())


def cmd_validate(a):
    rows = validate(a.runs, a.codec, host_wait=a.host_wait_us * 1e-6, min_size=parse_size(a.min_size),
                    codec_inputs=codec_inputs(a.codec_input))
    if not rows:
        sys.exit("speedup_model: no compressed rows to check")
    print(f"{'file':<44} {'n':>2} {'NCCL':>8} {'quant':>6} {'coder':>12} {'collective':>14} {'MiB':>5} {'P':>2} "
          f"{'B GB/s':>7} {'a us':>6} | {'NCCL ms':>8} {'ncclz ms':>9} {'spread':>6} {'model ms':>9} {'error':>7} | "
          f"{'speedup':>7} {'model':>6}")
    for r in rows:
        print(f"{os.path.relpath(r['file'])[-44:]:<44} {r['ranks']:>2} {r['nccl_setting']:>8} {r['quantizer']:>6} "
              f"{r['coder']:>12} {r['collective']:>14} {r['size'] >> 20:>5} {r['parts']:>2} {r['bandwidth_GBps']:>7.2f} "
              f"{r['latency_us']:>6.1f} | {r['nccl_ms']:>8.2f} {r['ncclz_ms']:>9.2f} {spread_text(r['spread']):>6} {r['ncclz_pred_ms']:>9.2f} "
              f"{100 * r['error']:>+6.1f}% | {r['speedup']:>6.2f}x {r['speedup_pred']:>5.2f}x")
    print(f"\n{'configuration':<60} {'rows':>4} {'median error':>13} {'largest |error|':>16} {'within 20%':>11} "
          f"{'largest spread':>15}")
    for key, group in summarize(rows):
        errs = [r["error"] for r in group]
        spreads = [r["spread"] for r in group if r["spread"]]
        print(f"{key:<60} {len(group):>4} {100 * statistics.median(errs):>+12.1f}% "
              f"{100 * max(abs(e) for e in errs):>15.1f}% {sum(abs(e) <= 0.2 for e in errs):>6}/{len(errs)} "
              f"{spread_text(max(spreads, default=None)):>15}")
    errs = [abs(r["error"]) for r in rows]
    print(f"# {len(rows)} rows: |error| median {100 * statistics.median(errs):.1f}%, largest {100 * max(errs):.1f}%, "
          f"within 20%: {sum(e <= 0.2 for e in errs)}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


def spread_text(spread):
    return f"{spread:.2f}x" if spread else "-"


def row_coder(config, row):
    """The coder a row's call ran: the row's own, which the autotuner chose where the run's coder
    is auto (the default); the run's where the row names none."""
    return row["coder"] if row.get("coder") not in (None, "none") else config.get("coder", "fixed_length")


def prediction_table(perf_files, codec_files, nranks, size, latency, host_wait, gbps_list, codec_inputs=None, labels=None):
    """Predicted speedup per (label, collective, schedule) and link bandwidth, from the ratios of
    each perf file's rows at the size nearest `size` and that coder's whole-GPU rates (on the
    codec-bench input codec_inputs[file], by default the first concat)."""
    out = []
    for p in perf_files:
        config, rows = read_perf(p)
        label = config.get("bound_mode", "rel")
        label = f"{label} {config.get('bound')}" if label in ("rel", "abs") else label
        prefix = (labels or {}).get(p) or os.path.splitext(os.path.basename(p))[0]
        dtype = CODEC_DTYPE[config.get("type", "float")]
        by_collective = {}
        for r in rows:
            if compressed(r) and (r["collective"] not in by_collective or
                                  abs(int(r["size"]) - size) < abs(by_collective[r["collective"]][1] - size)):
                by_collective[r["collective"]] = (r, int(r["size"]))
        for collective, (r, _) in sorted(by_collective.items(), key=lambda x: COLLECTIVES.index(x[0])):
            coder = row_coder(config, r)
            codec, _ = codec_rates(codec_files, coder, dtype, config.get("bound") or 1e-3, (codec_inputs or {}).get(p, "concat"))
            ratios = row_ratios(config, r)
            measured_n = int(config["ranks"])
            for schedule in SCHEDULES[collective]:
                call = Call(collective, size, nranks, schedule=schedule, element_bytes=ELEMENT_BYTES[config.get("type", "float")],
                            quantizer=config.get("bound_mode", "rel"))
                speedups = []
                for g in gbps_list:
                    link = Link(g * 1e9 / 8, latency, host_wait)
                    speedups.append(nccl_time(collective, size, nranks, link) / ncclz_time(call, link, codec, ratios))
                out.append({"label": f"{prefix}: {label}, {coder}", "file": p, "collective": collective, "schedule": schedule,
                            "ratios_from_ranks": measured_n, "peer_ratio": ratios.peer, "owner_ratio": ratios.owner,
                            "once_ratio": ratios.once, "gbps": list(gbps_list), "speedup": speedups})
    return out


def codec_inputs(specs):
    """RUN=NAME options as a dict."""
    out = {}
    for spec in specs or []:
        path, name = spec.rsplit("=", 1)
        out[path] = name
    return out


def cmd_predict(a):
    gbps = [float(x) for x in a.gbps.split(",")]
    table = prediction_table(a.perf, a.codec, a.ranks, parse_size(a.size), a.latency_us * 1e-6, a.host_wait_us * 1e-6, gbps,
                             codec_inputs(a.codec_input), codec_inputs(a.label))
    print(f"# predicted speedup over NCCL, {a.ranks} ranks, {a.size} per call, one GPU a rank, latency "
          f"{a.latency_us:g} us a message step, host turnaround {a.host_wait_us:g} us")
    print(f"{'data, quantizer, coder':<44} {'collective':<14} {'schedule':<8} {'ratios':<14}" +
          "".join(f"{g:>8g}" for g in gbps) + "  Gb/s")
    for t in table:
        ratios = (f"{t['peer_ratio']:.1f}/{t['owner_ratio']:.1f}" if t["collective"] in ("allreduce", "reduce")
                  else f"{t['peer_ratio']:.1f}" if t["collective"] == "reduce_scatter" else f"{t['once_ratio']:.1f}")
        label = t["label"]
        print(f"{label[:44]:<44} {t['collective']:<14} {t['schedule']:<8} {ratios:<14}" +
              "".join(f"{s:>7.2f}x" for s in t["speedup"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(table, f, indent=1)
    if a.plot:
        plot(table, a.plot, a.ranks, a.size, a.latency_us)


def plot(table, path, nranks, size, latency_us):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("speedup_model: --plot needs matplotlib")
    collectives = [c for c in COLLECTIVES if any(t["collective"] == c for t in table)]
    cols = min(3, len(collectives))
    rows = math.ceil(len(collectives) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.9 * rows), squeeze=False)
    for ax, c in zip(axes.flat, collectives):
        for t in table:
            if t["collective"] != c:
                continue
            style = "-" if t["schedule"] == SCHEDULES[c][0] else "--"
            ax.plot(t["gbps"], t["speedup"], style, marker="o", ms=3,
                    label=f"{t['label']}" + ("" if style == "-" else f" ({t['schedule']})"))
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(c)
        ax.set_xlabel("link bandwidth per GPU (Gb/s)")
        ax.set_ylabel("predicted speedup over NCCL")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(collectives):]:
        ax.set_visible(False)
    fig.suptitle(f"ncclz over NCCL, predicted: {nranks} ranks, {size} a call, one GPU a rank, "
                 f"{latency_us:g} us a message step")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validate", help="predicted against measured ncclz time, link fitted from NCCL's rows")
    v.add_argument("runs", nargs="+", help="ncclz-perf --json files")
    v.add_argument("--codec", action="append", required=True, help="ncclz-codec-bench --json file (repeatable)")
    v.add_argument("--codec-input", action="append", metavar="RUN=NAME",
                   help="the codec-bench input whose rates RUN's rows use (default: concat)")
    v.add_argument("--host-wait-us", type=float, default=HOST_WAIT * 1e6)
    v.add_argument("--min-size", default="16M", help="rows of at least this size (default 16M)")
    v.add_argument("--json", help="write the rows here")
    v.set_defaults(func=cmd_validate)
    q = sub.add_parser("predict", help="predicted speedup against link bandwidth")
    q.add_argument("--perf", action="append", required=True, help="ncclz-perf --json file on the user's data (repeatable)")
    q.add_argument("--codec", action="append", required=True, help="ncclz-codec-bench --json file (repeatable)")
    q.add_argument("--codec-input", action="append", metavar="RUN=NAME",
                   help="the codec-bench input whose rates RUN's coder runs at (default: the first concat)")
    q.add_argument("--label", action="append", metavar="RUN=TEXT", help="what RUN's data is called (default: its file name)")
    q.add_argument("--ranks", type=int, default=4)
    q.add_argument("--size", default="256M")
    q.add_argument("--latency-us", type=float, default=10.0, help="seconds per message step, in us (default 10)")
    q.add_argument("--host-wait-us", type=float, default=HOST_WAIT * 1e6)
    q.add_argument("--gbps", default="1,10,25,50,100,200,400", help="link bandwidths per GPU, Gb/s")
    q.add_argument("--plot", help="PNG of the speedups (needs matplotlib)")
    q.add_argument("--json", help="write the table here")
    q.set_defaults(func=cmd_predict)
    a = p.parse_args(argv)
    a.func(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
