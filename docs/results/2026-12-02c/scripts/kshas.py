# sha1 of each kernel's .text in a cubin (the byte-identity checks of session 9):
#   nvcc -std=c++20 --expt-relaxed-constexpr -I<include> -arch=sm_90 -O3 -DNDEBUG -cubin allenc.cu -o x.cubin && /usr/bin/python3 kshas.py x.cubin
import sys, hashlib
from elftools.elf.elffile import ELFFile
e = ELFFile(open(sys.argv[1], 'rb'))
for s in e.iter_sections():
    if s.name.startswith('.text.'): print(s.name[6:], hashlib.sha1(s.data()).hexdigest()[:12])
