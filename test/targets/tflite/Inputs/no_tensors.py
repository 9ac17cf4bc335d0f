"""Write a TFLite FlatBuffer whose subgraph has no `tensors` vector but an
operator and graph inputs/outputs that name tensor 0: the input that made
`quill-translate --dump-tflite` read an uninitialised vector.

Usage: /usr/bin/python3 no_tensors.py OUT.tflite

Laid out forwards by hand (every offset points to a later byte), little
endian, as the FlatBuffers format allows:
  root offset, "TFL3", then per table: vtable, table, its vectors.
"""
import struct
import sys

buf = bytearray()


def here():
    return len(buf)


def u32(v):
    buf.extend(struct.pack("<I", v))


def patch_offset(at, target):
    # a uoffset_t: the distance from the field to its target
    struct.pack_into("<I", buf, at, target - at)


def table(fields):
    """fields: list (by field id) of None (absent) or 'u32:<v>' / 'off'.
    Writes the vtable then the table; returns {field id: position} of the
    'off' fields, to patch once their targets are written."""
    n = len(fields)
    vt = here()
    size = 4 + 4 * sum(f is not None for f in fields)
    slots, pos = [], 4
    for f in fields:
        slots.append(pos if f is not None else 0)
        pos += 4 if f is not None else 0
    buf.extend(struct.pack("<HH", 4 + 2 * n, size))
    buf.extend(struct.pack("<%dH" % n, *slots))
    while len(buf) % 4:
        buf.append(0)
    t = here()
    buf.extend(struct.pack("<i", t - vt))
    offs = {}
    for i, f in enumerate(fields):
        if f is None:
            continue
        if f == "off":
            offs[i] = here()
            u32(0)
        else:
            u32(int(f.split(":")[1]))
    return t, offs


def int_vector(values):
    p = here()
    u32(len(values))
    for v in values:
        buf.extend(struct.pack("<i", v))
    return p


def table_vector(n):
    p = here()
    u32(n)
    slots = []
    for _ in range(n):
        slots.append(here())
        u32(0)
    return p, slots


u32(0)              # root offset, patched below
buf.extend(b"TFL3")
# Model: version 3, no operator_codes, subgraphs.
model, moffs = table(["u32:3", None, "off"])
struct.pack_into("<I", buf, 0, model)
subgraphs, sg_slots = table_vector(1)
patch_offset(moffs[2], subgraphs)
# SubGraph: no tensors (field 0), inputs [0], outputs [0], operators [op].
sg, soffs = table([None, "off", "off", "off"])
patch_offset(sg_slots[0], sg)
patch_offset(soffs[1], int_vector([0]))
patch_offset(soffs[2], int_vector([0]))
ops, op_slots = table_vector(1)
patch_offset(soffs[3], ops)
# Operator: opcode_index 0, inputs [0, -1], outputs [0].
op, ooffs = table(["u32:0", "off", "off"])
patch_offset(op_slots[0], op)
patch_offset(ooffs[1], int_vector([0, -1]))
patch_offset(ooffs[2], int_vector([0]))

with open(sys.argv[1], "wb") as f:
    f.write(bytes(buf))
