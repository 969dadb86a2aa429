#!/usr/bin/python3
"""sass_ops.py: the instructions of one kernel of a cubin as mnemonics, source lines and register
fields, on a machine with no nvdisasm: sm_90 keeps an instruction's opcode in bits 0-11
of its 16 bytes, and tools/profiling/sass_opcodes.json maps opcodes to mnemonics, learned from an ncu SASS
page of a kernel of the same cubin.

  learn CUBIN KERNEL_RE CSV        add the opcodes of CSV (`ncu -i R --page source --csv
                                   --print-source sass`, one kernel) to the table
  list CUBIN KERNEL_RE [FROM TO]   address, mnemonic, guard predicate, Rd (bits 16-23), Ra (24-31),
                                   Rb (32-39) and source line of each instruction (byte offsets,
                                   hex); fields an instruction does not use read as noise

What it answers: where a kernel's loads are issued against their first use, where local memory
(LDL/STL: spills, local arrays) and barriers are, by source line, between two builds (the order
of the encoder's staging loads against their first use was read this way).
Unknown opcodes print as ?xxx: learn them from a profile that executed them."""
import bisect, json, os, re, sys
from elftools.elf.elffile import ELFFile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_lines import kernel_section, line_rows, read_csv

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sass_opcodes.json")


def opcode(word): return "%03x" % (word & 0xfff)


def learn(cubin, regex, path):
    elf = ELFFile(open(cubin, "rb"))
    d = elf.get_section(kernel_section(elf, regex)).data()
    instructions, _ = read_csv(path)
    table = json.load(open(TABLE)) if os.path.exists(TABLE) else {}
    conflicts = 0
    for off, _, _, sass in instructions:
        text = re.sub(r"^@!?U?P\w+\s+", "", sass)
        mnemonic = text.split()[0].split(".")[0] if text else "?"
        op = opcode(int.from_bytes(d[off:off + 8], "little"))
        if table.get(op, mnemonic) != mnemonic: conflicts += 1
        table.setdefault(op, mnemonic)
    json.dump(table, open(TABLE, "w"), indent=0, sort_keys=True)
    print("%d opcodes in the table; %d conflicts with this csv" % (len(table), conflicts))


def listing(cubin, regex, lo=0, hi=1 << 40):
    elf = ELFFile(open(cubin, "rb"))
    index = kernel_section(elf, regex)
    table = json.load(open(TABLE))
    d = elf.get_section(index).data()
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
