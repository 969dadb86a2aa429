#!/usr/bin/python3
"""sass_lines.py CUBIN KERNEL_A_RE CSV_A KERNEL_B_RE CSV_B: ncu's SASS source pages (`ncu -i R
--page source --csv --print-source sass`) of two kernels of CUBIN, each instruction's executed
count put on its source line by the cubin's SASS line table (.nv_debug_line_sass, from -lineinfo;
a build of the same source with the same flags gives the same code), summed per innermost line;
prints the lines by B - A. No nvdisasm needed: the table is read here (pyelftools for the ELF).
  On the GPU machine: ncu --section SourceCounters -k "regex:..." -o R BENCH ...;
                      ncu -i R.ncu-rep --page source --csv --print-source sass > A.csv
  (scripts/run_gpu.sh --profile writes those csv files.)
  Anywhere: nvcc <meson's flags for the kernels> -cubin -o bench.cubin src/kernels/<group>.cu (the
  group that holds the kernels, src/kernels/codec_kernels.cuh; the commit that was profiled), then
        python3 tools/profiling/sass_lines.py bench.cubin 'encode_kernel<...Huffman> ?>, float,' A.csv \
            'encode_kernel<...Adaptive> ?>, float,' B.csv [LINES]
  After the lines: each kernel's stall samples by reason and the code it executed (instructions
  run at least once, in 128-byte lines: what the instruction cache must hold). The line table is
  read for every kernel of a cubin (relocations say which kernel a sequence belongs to)."""
import bisect, collections, csv, re, subprocess, sys
from elftools.elf.elffile import ELFFile
SECTION = ".debug_line"  # SASS address -> CUDA source line (.nv_debug_line_sass maps to PTX lines)

def uleb(d, p):
    r = s = 0
    while True:
        b = d[p]; p += 1; r |= (b & 0x7F) << s; s += 7
        if b < 0x80: return r, p
def sleb(d, p):
    r = s = 0
    while True:
        b = d[p]; p += 1; r |= (b & 0x7F) << s; s += 7
        if b < 0x80:
            if b & 0x40: r -= 1 << s
            return r, p

def line_rows(elf):
    """{function section index: sorted [(address, 'file:line')]} from .nv_debug_line_sass."""
    sec = elf.get_section_by_name(SECTION)
    d = sec.data()
    rel = {}  # operand offset -> symbol's section index
    for rs in elf.iter_sections():
        if rs.name in (".rel" + SECTION, ".rela" + SECTION):
            symtab = elf.get_section(rs["sh_link"])
            for r in rs.iter_relocations():
                rel[r["r_offset"]] = symtab.get_symbol(r["r_info_sym"])["st_shndx"]
    out = collections.defaultdict(list)
    p = 0
    while p < len(d):
        unit_len = int.from_bytes(d[p:p + 4], "little"); p0 = p + 4; end = p0 + unit_len
        version = int.from_bytes(d[p0:p0 + 2], "little"); q = p0 + 2
        hlen = int.from_bytes(d[q:q + 4], "little"); q += 4; prog = q + hlen
        min_len = d[q]; q += 1
        if version >= 4: q += 1
        q += 1  # default_is_stmt
        line_base = d[q] - 256 if d[q] > 127 else d[q]; q += 1
        line_range = d[q]; q += 1
        op_base = d[q]; q += 1
        std_len = list(d[q:q + op_base - 1]); q += op_base - 1
        dirs = [""]
        while d[q] != 0:
            e = d.index(0, q); dirs.append(d[q:e].decode(errors="replace")); q = e + 1
        q += 1
        files = [""]
        while d[q] != 0:
            e = d.index(0, q); name = d[q:e].decode(errors="replace"); q = e + 1
            _, q = uleb(d, q); _, q = uleb(d, q); _, q = uleb(d, q)
            files.append(name)
        q = prog
        addr, fil, line, fsec = 0, 1, 1, None
        def emit():
            if fsec is not None:
                name = files[fil] if fil < len(files) else "?%d" % fil
                name = name.split("/include/")[-1].split("ncclz/")[-1]
                out[fsec].append((addr, "%s:%d" % (name, line)))
        while q < end:
            op = d[q]; q += 1
            if op >= op_base:
                a = op - op_base; addr += (a // line_range) * min_len; line += line_base + a % line_range; emit()
            elif op == 0:
                n, q = uleb(d, q); sub = d[q]; body = q + 1; q += n
                if sub == 1: addr, fil, line, fsec = 0, 1, 1, None
                elif sub == 2:
                    addr = int.from_bytes(d[body:q], "little"); fsec = rel.get(body, fsec)
            elif op == 1: emit()
            elif op == 2: n, q = uleb(d, q); addr += n * min_len
            elif op == 3: n, q = sleb(d, q); line += n
            elif op == 4: fil, q = uleb(d, q)
            elif op == 8: addr += ((255 - op_base) // line_range) * min_len
            elif op == 9: addr += int.from_bytes(d[q:q + 2], "little"); q += 2
            else:
                for _ in range(std_len[op - 1]): _, q = uleb(d, q)
        p = end
    return {k: sorted(v) for k, v in out.items()}

def read_csv(path):
    """The kernel's instructions (offset, executed, stall samples, SASS) and its stall samples by
    reason (all samples), from one read of the csv."""
    rows = list(csv.reader(open(path, errors="replace")))
    h = next(r for r in rows if "Instructions Executed" in r)
    ia, ie, iw = h.index("Address"), h.index("Instructions Executed"), h.index("Warp Stall Sampling (All Samples)")
    cols = [i for i, c in enumerate(h) if c.startswith("stall_") and "Not Issued" not in c]
    body = [r for r in rows[rows.index(h) + 1:] if len(r) > ie and r[ie].isdigit()]
    reasons = collections.Counter()
    for r in body:
        for i in cols:
            try: reasons[h[i][len("stall_"):]] += float(r[i])
            except ValueError: pass
    data = [(int(r[ia], 16), int(r[ie]), int(r[iw]) if r[iw].isdigit() else 0, r[1].strip()) for r in body]
    base = min(a for a, *_ in data)
    return [(a - base, n, w, t) for a, n, w, t in data], reasons

def kernel_section(elf, regex):
    """The section index of the one kernel whose demangled name matches `regex` (exits otherwise)."""
    names = {}
    for i, s in enumerate(elf.iter_sections()):
        if s.name.startswith(".text."):
            names[i] = subprocess.run(["c++filt", s.name[6:]], capture_output=True, text=True).stdout.strip()
    hits = [i for i, n in names.items() if re.search(regex, n)]
    if len(hits) != 1: sys.exit("%d kernels match %s: %s" % (len(hits), regex, [names[i][:150] for i in hits]))
    return hits[0]

def by_line(elf, table, regex, path):
    f = kernel_section(elf, regex); rows = table.get(f, []); addrs = [a for a, _ in rows]
    text_size = elf.get_section(f)["sh_size"]
    ins, reasons = read_csv(path)
    by, stall = collections.Counter(), collections.Counter()
    for off, n, w, _ in ins:
        k = bisect.bisect_right(addrs, off) - 1
        loc = rows[k][1] if k >= 0 else "?"
        by[loc] += n; stall[loc] += w
    print("%s: %d instructions (the cubin's function: %d bytes, %d), %d executed, %d line rows" %
          (path, len(ins), text_size, text_size // 16, sum(by.values()), len(rows)))
    ran = [off for off, n, _, _ in ins if n > 0]
    return by, stall, reasons, len(ran), len(set(off // 128 for off in ran))

def main():
    cubin, ra, ca, rb, cb = sys.argv[1:6]
    elf = ELFFile(open(cubin, "rb"))
    table = line_rows(elf)
    A, SA, RA, na, la = by_line(elf, table, ra, ca)
    B, SB, RB, nb, lb = by_line(elf, table, rb, cb)
    ta, tb = sum(A.values()), sum(B.values())
    print("executed A %d B %d (B - A %+d, %+.1f%%)" % (ta, tb, tb - ta, 100.0 * (tb / ta - 1)))
    print("%-40s %11s %11s %10s %7s %7s" % ("line", "A", "B", "B-A", "stallA", "stallB"))
    for l in sorted(set(A) | set(B), key=lambda l: (-abs(B[l] - A[l]), l))[:int(sys.argv[6]) if len(sys.argv) > 6 else 60]:
        print("%-40s %11d %11d %+10d %7d %7d" % (l[-40:], A[l], B[l], B[l] - A[l], SA[l], SB[l]))
    print("\nstall samples by reason       A        B      B-A")
    for k in sorted(set(RA) | set(RB), key=lambda k: -abs(RB[k] - RA[k])):
        if RA[k] or RB[k]: print("  %-20s %8.0f %8.0f %+8.0f" % (k, RA[k], RB[k], RB[k] - RA[k]))
    print("  %-20s %8.0f %8.0f %+8.0f" % ("total", sum(RA.values()), sum(RB.values()), sum(RB.values()) - sum(RA.values())))
    print("code executed: A %d instructions in %d lines of 128 bytes (%d KB), B %d in %d (%d KB)" % (na, la, la // 8, nb, lb, lb // 8))


if __name__ == "__main__":
    main()
