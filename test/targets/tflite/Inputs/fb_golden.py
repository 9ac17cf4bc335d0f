"""Build the objects of fb_golden.c with the official FlatBuffers Python
builder and compare them byte for byte with Quill's (DIR/<name>.bin).

  fb_golden.py DIR

Prints one line per buffer; exits 1 on any difference.
"""
import sys

import flatbuffers


def item(b, name, value):
    n = b.CreateString(name)
    b.StartObject(2)
    b.PrependUOffsetTRelativeSlot(0, n, 0)
    b.PrependInt32Slot(1, value, 7)
    return b.EndObject()


def vector_refs(b, refs):
    b.StartVector(4, len(refs), 4)
    for r in reversed(refs):
        b.PrependUOffsetTRelative(r)
    return b.EndVector()


def build_all(b):
    ints = [1, -2, 3, -4, 0x7fffffff]
    data = bytes((i * 7) & 0xff for i in range(37))
    name = b.CreateString("root")
    b.StartVector(4, len(ints), 4)
    for x in reversed(ints):
        b.PrependInt32(x)
    vints = b.EndVector()
    b.StartVector(1, len(data), 16)
    for x in reversed(data):
        b.PrependUint8(x)
    vdata = b.EndVector()
    s = [b.CreateString(x) for x in ("a", "", "ccc")]
    vnames = vector_refs(b, s)
    it = [item(b, "x", 1), item(b, "y", 7), item(b, "z", 3)]
    vitems = vector_refs(b, it)
    pay = item(b, "payload", 99)
    child = item(b, "child", -5)
    b.StartObject(22)
    b.PrependBoolSlot(0, True, False)
    b.PrependInt8Slot(1, -1, -1)
    b.PrependUint8Slot(2, 200, 0)
    b.PrependInt16Slot(3, -1234, 0)
    b.PrependUint16Slot(4, 60000, 0)
    b.PrependInt32Slot(5, -123456789, 0)
    b.PrependUint32Slot(6, 4000000000, 0)
    b.PrependInt64Slot(7, -1234567890123, 0)
    b.PrependUint64Slot(8, 0xfedcba9876543210, 0)
    b.PrependFloat32Slot(9, -0.0, 0.5)
    b.PrependFloat64Slot(10, 3.25, 0)
    b.PrependUOffsetTRelativeSlot(11, name, 0)
    b.PrependUOffsetTRelativeSlot(12, vints, 0)
    b.PrependUOffsetTRelativeSlot(13, vdata, 0)
    b.PrependUOffsetTRelativeSlot(14, vnames, 0)
    b.PrependUOffsetTRelativeSlot(15, vitems, 0)
    b.Prep(4, 12)
    for x in (3.0, 2.0, 1.0):
        b.PrependFloat32(x)
    b.PrependStructSlot(16, b.Offset(), 0)
    b.PrependUOffsetTRelativeSlot(18, pay, 0)
    b.PrependUint8Slot(17, 1, 0)
    b.PrependUOffsetTRelativeSlot(19, child, 0)
    return b.EndObject()


def build_shared(b):
    refs = []
    for i in range(20):
        b.StartObject(2)
        b.PrependInt32Slot(0, i + 1, 0)
        b.PrependInt16Slot(1, i, -1)
        refs.append(b.EndObject())
    b.StartObject(2)
    b.PrependInt16Slot(1, 5, -1)
    refs.append(b.EndObject())
    v = vector_refs(b, refs)
    b.StartObject(1)
    b.PrependUOffsetTRelativeSlot(0, v, 0)
    return b.EndObject()


def build_empty(b):
    s = b.CreateString("")
    b.StartVector(4, 0, 4)
    v = b.EndVector()
    b.StartObject(2)
    b.PrependUOffsetTRelativeSlot(0, v, 0)
    b.PrependUOffsetTRelativeSlot(1, s, 0)
    return b.EndObject()


def main():
    d = sys.argv[1]
    bad = 0
    for name, fn in (("all", build_all), ("shared", build_shared),
                     ("empty", build_empty)):
        b = flatbuffers.Builder(0)
        root = fn(b)
        b.Finish(root, file_identifier=b"QTST")
        want = bytes(b.Output())
        got = open(f"{d}/{name}.bin", "rb").read()
        if got == want:
            print(f"{name}: identical ({len(got)} bytes)")
            continue
        bad = 1
        at = next((i for i in range(min(len(got), len(want)))
                   if got[i] != want[i]), min(len(got), len(want)))
        print(f"{name}: DIFFERENT: quill {len(got)} bytes, official "
              f"{len(want)} bytes, first difference at byte {at}")
        print("  quill:   ", got[max(0, at - 8):at + 16].hex())
        print("  official:", want[max(0, at - 8):at + 16].hex())
    sys.exit(bad)


main()
