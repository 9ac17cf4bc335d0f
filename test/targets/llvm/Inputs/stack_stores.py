"""stack_stores.py FILE.s - per dot-kernel stage function of an assembly
file (quill compile --emit=asm --noinline-stages), whether it has
vpdpbusd and whether it stores few (at most 8) or many zmm vectors to the
stack (any vmov form): a register-blocked kernel that spills in its inner
loop stores dozens (for vnni-narrow.test)."""
import re
import sys

text = open(sys.argv[1]).read()
for f in re.split(r"\n(?=q\.\d+\.\w+:)", text):
    if not re.match(r"q\.\d+\.dot:", f):
        continue
    n = len(re.findall(r"vmov\w+\s+%zmm\d+, -?\d*\(%rsp\)", f))
    print(f.split(":")[0], "vpdpbusd", "yes" if "vpdpbusd" in f else "no",
          "stack stores", "few" if n <= 8 else "many (%d)" % n)
