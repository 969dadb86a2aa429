# Local stand-in for nvdisasm (the CPU machine has none): where a cubin's kernel spills (STL/LDL) and
# the source lines of its instructions, from opcodes (the low 12 bits of each 128-bit instruction)
# learned from one `nvdisasm -g -c` dump made on the GPU machine, and the cubin's .debug_line
# (compile with -lineinfo -cubin). Needs python3-pyelftools (/usr/bin/python3).
#   sasslite.py learn DUMP CUBIN   (writes /tmp/opcodes.json)
#   sasslite.py lines CUBIN [MNEMONICS]   STL/LDL (and MNEMONICS, comma-separated) with their lines
#   sasslite.py hist CUBIN          instructions per source line (static)
import re, sys, struct, json, collections
from elftools.elf.elffile import ELFFile
def text(cubin):
    f = ELFFile(open(cubin, 'rb'))
    for s in f.iter_sections():
        if s.name.startswith('.text.'): return s.data()
def ops(data):
    for a in range(0, len(data), 16):
        lo, hi = struct.unpack_from('<QQ', data, a)
        yield a, lo & 0xfff
if sys.argv[1] == 'learn':
    data = text(sys.argv[3]); table = collections.defaultdict(collections.Counter)
    for line in open(sys.argv[2]):
        m = re.search(r'/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_]+)', line)
        if not m: continue
        a = int(m.group(1), 16); lo = struct.unpack_from('<Q', data, a)[0]
        table[lo & 0xfff][m.group(2)] += 1
    json.dump({k: v.most_common(1)[0][0] for k, v in table.items()}, open('/tmp/opcodes.json', 'w'))  # low 12 bits -> mnemonic
    amb = {k: v for k, v in table.items() if len(v) > 1}
    print(len(table), 'opcodes;', len(amb), 'ambiguous', list(amb.items())[:5])
elif sys.argv[1] == 'scan':
    names = {int(k): v for k, v in json.load(open('/tmp/opcodes.json')).items()}
    spills = [(a, names.get(op)) for a, op in ops(text(sys.argv[2])) if names.get(op) in ('STL', 'LDL')]
    print(len(spills))

def uleb(b, i):
    r = s = 0
    while True:
        x = b[i]; i += 1; r |= (x & 0x7f) << s; s += 7
        if x < 0x80: return r, i
def sleb(b, i):
    r = s = 0
    while True:
        x = b[i]; i += 1; r |= (x & 0x7f) << s; s += 7
        if x < 0x80:
            if x & 0x40: r -= 1 << s
            return r, i
SECTION = '.debug_line'
def line_rows(cubin):
    """(address, file, line) rows of .nv_debug_line_sass (a DWARF 2 line program)."""
    f = ELFFile(open(cubin, 'rb'))
    b = f.get_section_by_name(SECTION).data(); rows = []; off = 0
    while off < len(b):
        ulen, ver, hlen = struct.unpack_from('<IHI', b, off); end = off + 4 + ulen; i = off + 10
        min_inst, def_stmt, lbase, lrange, obase = struct.unpack_from('<BBbBB', b, i); i += 5
        oplens = list(b[i:i + obase - 1]); i += obase - 1
        while b[i] != 0: i = b.index(0, i) + 1
        i += 1; files = []
        while b[i] != 0:
            j = b.index(0, i); name = b[i:j].decode(); i = j + 1
            _, i = uleb(b, i); _, i = uleb(b, i); _, i = uleb(b, i); files.append(name)
        i += 1
        addr, file, line = 0, 1, 1
        while i < end:
            op = b[i]; i += 1
            if op >= obase:
                adj = op - obase; addr += (adj // lrange) * min_inst; line += lbase + adj % lrange
                rows.append((addr, files[file - 1] if 0 < file <= len(files) else '?', line))
            elif op == 0:
                n, i = uleb(b, i); sub = b[i]
                if sub == 1: addr, file, line = 0, 1, 1
                elif sub == 2: addr = int.from_bytes(b[i + 1:i + n], 'little')
                i += n
            elif op == 1: rows.append((addr, files[file - 1] if 0 < file <= len(files) else '?', line))
            elif op == 2: v, i = uleb(b, i); addr += v * min_inst
            elif op == 3: v, i = sleb(b, i); line += v
            elif op == 4: file, i = uleb(b, i)
            elif op in (5,): _, i = uleb(b, i)
            elif op in (6, 7): pass
            elif op == 8: addr += ((255 - obase) // lrange) * min_inst
            elif op == 9: addr += struct.unpack_from('<H', b, i)[0]; i += 2
            else:
                for _ in range(oplens[op - 1]): _, i = uleb(b, i)
        off = end
    return sorted(rows)
if sys.argv[1] == 'lines':
    import bisect
    names = {int(k): v for k, v in json.load(open('/tmp/opcodes.json')).items()}
    rows = line_rows(sys.argv[2]); addrs = [r[0] for r in rows]
    for a, op in ops(text(sys.argv[2])):
        n = names.get(op)
        if n in ('STL', 'LDL') or (len(sys.argv) > 3 and n in sys.argv[3].split(',')):
            k = bisect.bisect_right(addrs, a) - 1
            r = rows[k] if k >= 0 else (0, '?', 0)
            print('%6x %-4s %s:%d' % (a, n, r[1].split('/')[-1], r[2]))

def ptx_source(cubin):
    """PTX line number -> (source file, line) from the embedded PTX's .loc directives."""
    f = ELFFile(open(cubin, 'rb'))
    txt = f.get_section_by_name('.nv_debug_ptx_txt').data().decode(errors='replace').split('\n')
    files, cur, out = {}, ('?', 0), {}
    for n, l in enumerate(txt, 1):
        l = l.strip()
        m = re.match(r'\.file\s+(\d+)\s+"([^"]+)"', l)
        if m: files[int(m.group(1))] = m.group(2).split('/')[-1]
        m = re.match(r'\.loc\s+(\d+)\s+(\d+)', l)
        if m: cur = (files.get(int(m.group(1)), '?'), int(m.group(2)))
        out[n] = cur
    return out
if sys.argv[1] == 'src':
    import bisect
    names = {int(k): v for k, v in json.load(open('/tmp/opcodes.json')).items()}
    rows = line_rows(sys.argv[2]); addrs = [r[0] for r in rows]; src = ptx_source(sys.argv[2])
    for a, op in ops(text(sys.argv[2])):
        n = names.get(op)
        if n in ('STL', 'LDL') or (len(sys.argv) > 3 and n in sys.argv[3].split(',')):
            k = bisect.bisect_right(addrs, a) - 1
            p = rows[k][2] if k >= 0 else 0
            print('%6x %-4s %s:%d' % (a, n, *src.get(p, ('?', 0))))
if sys.argv[1] == 'hist':
    import bisect
    rows = line_rows(sys.argv[2]); addrs = [r[0] for r in rows]; c = collections.Counter()
    for a, op in ops(text(sys.argv[2])):
        k = bisect.bisect_right(addrs, a) - 1
        r = rows[k] if k >= 0 else (0, '?', 0)
        c['%s:%d' % (r[1].split('/')[-1], r[2])] += 1
    for k, v in c.items(): print(k, v)
