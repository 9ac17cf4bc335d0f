#!/bin/sh
# The LLVM target end to end, as a user runs it (ctest example.llvm-digits):
# quantize the digits model, compile it to an object file and a header,
# link examples/llvm/main.c with cc (no runtime library), run it on the
# test set, and check that its logits equal `quill run`'s bit for bit -
# single-threaded, and with --threads 2 and the shipped quill_rt.c.
#
#   llvm_example.sh QUILL SOURCE_DIR WORK_DIR
set -eu
quill=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cd "$work"
"$quill" quantize "$src/examples/digits/model.onnx" --backend x86-vnni \
  --calib "$src/examples/digits/calib" --max-samples 32 -o digits_int.qir
/usr/bin/python3 -c "
import numpy as np
x = np.load('$src/examples/digits/test_x.npy')
for i in (0, 7, 359):
    np.save('x%d.npy' % i, x[i:i+1])
"
for threads in 1 2; do
  mkdir -p t$threads && cd t$threads
  "$quill" compile ../digits_int.qir -o digits.o --name digits --threads $threads
  test -f digits.h
  if [ $threads = 1 ]; then
    cc -O2 -I. "$src/examples/llvm/main.c" digits.o -o demo -lm
  else
    test -f quill_rt.c
    cc -O2 -I. "$src/examples/llvm/main.c" digits.o quill_rt.c -o demo -lm -lpthread
  fi
  for i in 0 7 359; do
    ./demo "$src/examples/digits/test_x.npy" "$src/examples/digits/test_y.npy" \
      --dump $i c$i.npy
    "$quill" run ../digits_int.qir --input ../x$i.npy --output r$i.npy
    /usr/bin/python3 -c "
import numpy as np, sys
c, r = np.load('c$i.npy'), np.load('r$i.npy')
if c.dtype != r.dtype or c.shape != r.shape or c.tobytes() != r.tobytes():
    sys.exit('image $i, $threads thread(s): compiled %s != quill run %s' % (c, r))
"
  done
  cd ..
done
echo "example.llvm-digits: compiled model equals quill run bit for bit"
