#!/usr/bin/python3
"""sass_ops.py: the instructions of one kernel of a cubin as mnemonics, source lines and register
fields, on a machine with no nvdisasm (this one): sm_90 keeps an instruction's opcode in bits 0-11
of its 16 bytes, and tools/sass_opcodes.json maps opcodes to mnemonics, learned from an ncu SASS
page of a kernel of the same cubin.

  learn CUBIN KERNEL_RE CSV        add the opcodes of CSV (`ncu -i R --page source --csv
                                   --print-source sass`, one kernel) to the table
  list CUBIN KERNEL_RE [FROM TO]   address, mnemonic, guard predicate, Rd (bits 16-23), Ra (24-31),
                                   Rb (32-39) and source line of each instruction (byte offsets,
                                   hex); fields an instruction does not use read as noise

What it answers: where a kernel's loads are issued against their first use, where local memory
(LDL/STL: spills, local arrays) and barriers are, by source line, between two builds made here
(session 21 found the staging loads' order with it: docs/results/2026-12-03f/README.md).
Unknown opcodes print as ?xxx: learn them from a profile that executed them."""
import bisect, csv, json, os, re, subprocess, sys
from elftools.elf.elffile import ELFFile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_lines import line_rows

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sass_opcodes.json")


def kernel_section(elf, regex):
    hits = []
    for i, s in enumerate(elf.iter_sections()):
        if s.name.startswith(".text."):
            name = subprocess.run(["c++filt", s.name[6:]], capture_output=True, text=True).stdout.strip()
            if re.search(regex, name): hits.append((i, s))
    if len(hits) != 1: sys.exit("%d kernels match %r" % (len(hits), regex))
    return hits[0]


def opcode(word): return "%03x" % (word & 0xfff)


def learn(cubin, regex, path):
    _, sec = kernel_section(ELFFile(open(cubin, "rb")), regex)
    d = sec.data()
    rows = [r for r in list(csv.reader(open(path)))[2:] if len(r) > 1 and r[0].startswith("0x")]
    base = int(rows[0][0], 16)
    table = json.load(open(TABLE)) if os.path.exists(TABLE) else {}
    conflicts = 0
    for r in rows:
        off = int(r[0], 16) - base
        text = re.sub(r"^@!?U?P\w+\s+", "", r[1].strip())
        mnemonic = text.split()[0].split(".")[0] if text else "?"
        op = opcode(int.from_bytes(d[off:off + 8], "little"))
        if table.get(op, mnemonic) != mnemonic: conflicts += 1
        table.setdefault(op, mnemonic)
    json.dump(table, open(TABLE, "w"), indent=0, sort_keys=True)
    print("%d opcodes in the table; %d conflicts with this csv" % (len(table), conflicts))


def listing(cubin, regex, lo=0, hi=1 << 40):
    elf = ELFFile(open(cubin, "rb"))
    index, sec = kernel_section(elf, regex)
    table = json.load(open(TABLE))
    d = sec.data()
    rows = line_rows(elf).get(index, [])
    addrs = [a for a, _ in rows]
    for k in range(lo // 16, min(len(d) // 16, hi // 16)):
        w = int.from_bytes(d[16 * k:16 * k + 8], "little")
        guard = (w >> 12) & 0xf  # bit 3: negated; 7: none
        pred = "    " if guard & 7 == 7 else "@%sP%d" % ("!" if guard & 8 else "", guard & 7)
        j = bisect.bisect_right(addrs, 16 * k) - 1
        print("%6x %-7s %-5s R%-3d R%-3d R%-3d %s" % (16 * k, table.get(opcode(w), "?" + opcode(w)), pred, (w >> 16) & 0xff,
                                                    (w >> 24) & 0xff, (w >> 32) & 0xff, rows[j][1] if j >= 0 else "?"))


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "learn":
        learn(*sys.argv[2:5])
    elif len(sys.argv) >= 4 and sys.argv[1] == "list":
        listing(sys.argv[2], sys.argv[3], *(int(a, 16) for a in sys.argv[4:6]))
    else:
        sys.exit(__doc__)
