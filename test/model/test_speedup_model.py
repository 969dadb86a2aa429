#!/usr/bin/env python3
"""The arithmetic of benchmarks/speedup_model.py: NCCL's time, the link fit, the pipeline rule,
the bytes ncclz moves, the ratios read back from ncclz-perf rows, and validation end to end on
files whose times the model itself made.

    python3 test/model/test_speedup_model.py benchmarks/speedup_model.py
"""
import importlib.util
import json
import math
import os
import sys
import tempfile
import unittest

MODEL_PATH = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks",
                                                                        "speedup_model.py")
spec = importlib.util.spec_from_file_location("speedup_model", MODEL_PATH)
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)

MiB = 1 << 20
FAST = m.Codec(encode=1e18, range_pass=1e18, decode=1e18, memory=1e18)  # coding takes no time


class Nccl(unittest.TestCase):
    def test_shapes(self):
        self.assertEqual(m.nccl_shape("allreduce", 4), (1.5, 6))
        self.assertEqual(m.nccl_shape("reduce_scatter", 4), (0.75, 3))
        self.assertEqual(m.nccl_shape("broadcast", 3), (1.0, 2))
        self.assertEqual(m.nccl_shape("alltoall", 2), (0.5, 1))
        with self.assertRaises(ValueError):
            m.nccl_shape("gather", 4)

    def test_time(self):
        link = m.Link(bandwidth=2e9, latency=50e-6)
        self.assertAlmostEqual(m.nccl_time("allreduce", 256 * MiB, 4, link), 1.5 * 256 * MiB / 2e9 + 6 * 50e-6)

    def test_fit_recovers_bandwidths_and_latency(self):
        truth = m.Link(bandwidth=3e9, latency=80e-6, by_collective=(("allgather", 2e9), ("allreduce", 3e9)))
        rows = [(c, s, m.nccl_time(c, s, 4, truth)) for c in ("allreduce", "allgather") for s in (MiB, 16 * MiB, 256 * MiB)]
        fit = m.fit_link(rows, 4)
        self.assertAlmostEqual(fit.latency / 80e-6, 1.0, places=6)
        self.assertAlmostEqual(fit.bandwidth / 3e9, 1.0, places=6)
        self.assertAlmostEqual(fit.bw("allgather") / 2e9, 1.0, places=6)
        self.assertEqual(fit.bw("broadcast"), fit.bandwidth)  # not measured: the allreduce's

    def test_fit_one_size_gives_bandwidth_alone(self):
        fit = m.fit_link([("allreduce", 256 * MiB, 0.15)], 4)
        self.assertEqual(fit.latency, 0.0)
        self.assertAlmostEqual(fit.bandwidth, 1.5 * 256 * MiB / 0.15)
        given = m.fit_link([("allreduce", 256 * MiB, 0.15)], 4, latency=100e-6)
        self.assertAlmostEqual(given.bandwidth, 1.5 * 256 * MiB / (0.15 - 6 * 100e-6))


class Pipeline(unittest.TestCase):
    def test_parts_rule_of_pipeline_hpp(self):
        self.assertEqual(m.pipeline_parts(256 * MiB), 4)
        self.assertEqual(m.pipeline_parts(127 * MiB), 1)
        self.assertEqual(m.pipeline_parts(64 * MiB), 1)
        self.assertEqual(m.pipeline_parts(1 << 30), 8)
        self.assertEqual(m.pipeline_parts(100), 1)
        self.assertEqual(m.Call("allreduce", 256 * MiB, 4).part_count(), 4)
        self.assertEqual(m.Call("allreduce", 256 * MiB, 4, schedule="ring").part_count(), 1)
        self.assertEqual(m.Call("allgather", 256 * MiB, 4).part_count(), 1)


class Ncclz(unittest.TestCase):
    link = m.Link(bandwidth=1e9, latency=0.0, host_wait=0.0)

    def test_direct_allreduce_moves_its_bytes(self):
        # no coding time, no latency: the time is the bytes over the link, phase by phase
        S, n, r = 256 * MiB, 4, m.Ratios(peer=5.0, owner=20.0)
        for parts in (1, 4):
            t = m.ncclz_time(m.Call("allreduce", S, n, parts=parts), self.link, FAST, r)
            want = ((n - 1) / n * S / 5.0 + (n - 1) * S / n / 20.0) / 1e9
            self.assertAlmostEqual(t / want, 1.0, places=6)

    def test_reduce_scatter_and_copies(self):
        S, n = 64 * MiB, 4
        rs = m.ncclz_time(m.Call("reduce_scatter", S, n), self.link, FAST, m.Ratios(peer=8.0))
        self.assertAlmostEqual(rs, (n - 1) / n * S / 8.0 / 1e9)
        ag = m.ncclz_time(m.Call("allgather", S, n), self.link, FAST, m.Ratios(once=32.0))
        self.assertAlmostEqual(ag, (n - 1) * S / n / 32.0 / 1e9)
        bc = m.ncclz_time(m.Call("broadcast", S, n), self.link, FAST, m.Ratios(once=32.0))
        self.assertAlmostEqual(bc, S / 32.0 / 1e9)
        tree = m.ncclz_time(m.Call("broadcast", S, n, schedule="tree"), self.link, FAST, m.Ratios(once=32.0))
        self.assertAlmostEqual(tree, 2 * S / 32.0 / 1e9)  # the root sends log2(4) times

    def test_fan_in_to_the_root(self):
        S, n, r = 64 * MiB, 4, m.Ratios(peer=1e9, owner=10.0)  # phase 1 moves nothing
        nic = m.ncclz_time(m.Call("reduce", S, n), self.link, FAST, r)
        loop = m.ncclz_time(m.Call("reduce", S, n), m.Link(1e9, 0.0, 0.0, loopback=True), FAST, r)
        self.assertAlmostEqual(nic / loop, n - 1, places=5)

    def test_latency_and_host_waits_count(self):
        S, n = 64 * MiB, 4
        base = m.ncclz_time(m.Call("allgather", S, n), self.link, FAST, m.Ratios(once=32.0))
        slow = m.ncclz_time(m.Call("allgather", S, n), m.Link(1e9, 10e-6, 40e-6), FAST, m.Ratios(once=32.0))
        # header (n-1), sizes (n-1) + one host wait, the allgather (n-1) steps
        self.assertAlmostEqual(slow - base, 9 * 10e-6 + 40e-6)

    def test_parts_hide_coding(self):
        codec = m.Codec(encode=50e9, range_pass=1e18, decode=50e9, memory=1e18)
        S, n, r = 256 * MiB, 4, m.Ratios(peer=5.0, owner=20.0)
        one = m.ncclz_time(m.Call("allreduce", S, n, parts=1), self.link, codec, r)
        four = m.ncclz_time(m.Call("allreduce", S, n, parts=4), self.link, codec, r)
        moved = ((n - 1) / n * S / 5.0 + (n - 1) * S / n / 20.0) / 1e9
        self.assertLess(four, one)
        self.assertGreater(four, moved)

    def test_shared_gpu_divides_the_rates(self):
        codec = m.Codec(encode=1e11, range_pass=1e18, decode=1e11, memory=1e18)
        shared = m.Codec(encode=1e11, range_pass=1e18, decode=1e11, memory=1e18, share=4)
        free = m.Link(1e18, 0.0, 0.0)
        S = 64 * MiB
        c = m.Call("allgather", S, 4)
        self.assertAlmostEqual(m.ncclz_time(c, free, shared, m.Ratios(once=10)) / m.ncclz_time(c, free, codec, m.Ratios(once=10)), 4)
        # broadcast: the root codes alone (the whole GPU), every rank decodes
        b = m.Call("broadcast", S, 4)
        t1 = m.ncclz_time(b, free, codec, m.Ratios(once=10))
        t4 = m.ncclz_time(b, free, shared, m.Ratios(once=10))
        self.assertAlmostEqual(t1, 2 * S / 1e11)
        self.assertAlmostEqual(t4, S / 1e11 + 4 * S / 1e11)

    def test_speedup_falls_as_the_link_gets_faster(self):
        codec = m.Codec(encode=500e9, range_pass=2e12, decode=500e9, memory=3.5e12)
        r = m.Ratios(peer=6.0, owner=20.0)
        last = float("inf")
        for gbps in (1, 10, 25, 50, 100, 200, 400):
            link = m.Link(gbps * 1e9 / 8, 10e-6)
            s = m.nccl_time("allreduce", 256 * MiB, 4, link) / m.ncclz_time(m.Call("allreduce", 256 * MiB, 4), link, codec, r)
            self.assertLess(s, last)
            last = s
        self.assertGreater(last, 0)


def perf_row(collective, size, n, nccl_s, ncclz_s, sent, chunks, parts=1, waits=2):
    return {"record": "row", "collective": collective, "size": size, "schedule": "direct", "fallback": False,
            "nccl": {"time_us": nccl_s * 1e6}, "ncclz": {"time_us": ncclz_s * 1e6, "min_us": ncclz_s * 1e6 / 1.25},
            "ranks": [{"rank": k, "parts": parts, "size_waits": waits, "bytes_sent": sent[k], "chunk_bytes": chunks[k],
                       "fallback": False} for k in range(n)]}


class MeasuredInputs(unittest.TestCase):
    def test_ratios_from_bytes(self):
        n, S = 4, 256 * MiB
        over = m.HEADER_BYTES + 8 * (n + 1) * 8
        owner = S // n // 20
        peer = int((n - 1) / n * S / 6)
        row = perf_row("allreduce", S, n, 0.1, 0.01, [peer + (n - 1) * owner + over] * n, [owner] * n, parts=4, waits=8)
        r = m.row_ratios({"ranks": n, "type": "float"}, row)
        self.assertAlmostEqual(r.peer, (n - 1) / n * S / peer)
        self.assertAlmostEqual(r.owner, (S / n) / owner)
        ag = perf_row("allgather", S, n, 0.1, 0.01, [3 * 1000 + 200] * n, [1000] * n, waits=1)
        self.assertAlmostEqual(m.row_ratios({"ranks": n}, ag).once, S / n / 1000)

    def test_codec_rates(self):
        rows = [{"kind": "roofline", "tbps_median": 4.0},
                {"kind": "codec", "input": "concat(6 fields)", "dtype": "f32", "coder": "adaptive", "bound": 1e-3,
                 "bytes": 1 << 28, "comp_gbps_median": 400.0, "comp_abs_gbps_median": 500.0, "decomp_gbps_median": 450.0}]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "codec.json")
            with open(path, "w") as f:
                json.dump(rows, f)
            c, _ = m.codec_rates([path], "adaptive", share=4)
        self.assertAlmostEqual(c.encode, 500e9)
        self.assertAlmostEqual(c.range_pass, 1 / (1 / 400e9 - 1 / 500e9))  # what RelBound adds
        self.assertAlmostEqual(c.memory, 4e12)
        self.assertEqual(c.share, 4)

    def round_trip(self, config_coder, row_coders):
        """Files whose NCCL times come from a known link and whose ncclz times the model made,
        each row with the rates of `row_coders[size]` (None: the row names no coder): the fit
        finds the link and every error is 0; a 10% slower ncclz row reads -9.1%."""
        n = 4
        link = m.Link(2.5e9, 90e-6, m.HOST_WAIT, loopback=True)
        rates = {"fixed_length": (1000.0, 1500.0, 2200.0), "adaptive": (300.0, 350.0, 500.0)}
        codec_rows = [{"kind": "roofline", "tbps_median": 4.0}] + [
            {"kind": "codec", "input": "concat", "dtype": "f32", "coder": c, "bound": 1e-3, "bytes": 1 << 28,
             "comp_gbps_median": comp, "comp_abs_gbps_median": comp_abs, "decomp_gbps_median": dec}
            for c, (comp, comp_abs, dec) in rates.items()]
        with tempfile.TemporaryDirectory() as d:
            cpath = os.path.join(d, "codec.json")
            with open(cpath, "w") as f:
                json.dump(codec_rows, f)
            lines = [{"record": "config", "ranks": n, "gpus_visible": 1, "type": "float", "bound_mode": "rel", "bound": 1e-3,
                      "coder": config_coder, "env": {"NCCL_NET": "Socket"}}]
            for size, coder in row_coders.items():
                codec, _ = m.codec_rates([cpath], coder or config_coder, share=n)
                parts = m.pipeline_parts(size)
                owner = size // n // 15
                peer = int((n - 1) / n * size / 5)
                waits = 2 * parts
                over = m.HEADER_BYTES + 8 * (n + 1) * waits
                call = m.Call("allreduce", size, n, parts=parts)
                r = m.Ratios(peer=(n - 1) / n * size / peer, owner=size / n / owner)
                t = m.ncclz_time(call, link, codec, r)
                slow = 1.1 if size == 64 * MiB else 1.0
                row = perf_row("allreduce", size, n, m.nccl_time("allreduce", size, n, link), t * slow,
                               [peer + (n - 1) * owner + over] * n, [owner] * n, parts=parts, waits=waits)
                if coder:
                    row["coder"] = coder
                lines.append(row)
            lines.append({"record": "row", "collective": "allreduce", "size": MiB, "fallback": True, "ranks": [],
                          "coder": "none", "nccl": {"time_us": m.nccl_time("allreduce", MiB, n, link) * 1e6},
                          "ncclz": {"time_us": m.nccl_time("allreduce", MiB, n, link) * 1e6}})
            ppath = os.path.join(d, "run.jsonl")
            with open(ppath, "w") as f:
                f.write("\n".join(json.dumps(x) for x in lines) + "\n")
            out = m.validate([ppath], [cpath], min_size=16 * MiB)
        self.assertEqual(len(out), len(row_coders))
        for row in out:
            self.assertEqual(row["coder"], row_coders[row["size"]] or config_coder)
            self.assertAlmostEqual(row["latency_us"], 90.0, places=3)
            self.assertAlmostEqual(row["bandwidth_GBps"], 2.5, places=6)
            want = -1 + 1 / 1.1 if row["size"] == 64 * MiB else 0.0
            self.assertAlmostEqual(row["error"], want, places=6)
            self.assertAlmostEqual(row["spread"], 1.25, places=9)  # the run's median over its fastest iteration

    def test_validation_round_trip(self):
        self.round_trip("fixed_length", {16 * MiB: None, 64 * MiB: None, 256 * MiB: None})

    def test_validation_takes_the_coder_each_call_ran(self):
        # The default coder is chosen per call: a run's rows name what each ran, at its own rates.
        self.round_trip("auto", {16 * MiB: "fixed_length", 64 * MiB: "adaptive", 256 * MiB: "adaptive"})


if __name__ == "__main__":
    unittest.main(verbosity=1)
