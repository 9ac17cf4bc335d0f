#!/bin/sh
# install_test.sh STEP SOURCE_DIR BUILD_DIR C_COMPILER - the install tests
# of ctest (test/CMakeLists.txt), all under BUILD_DIR/install-test/:
#
#   install      cmake --install BUILD_DIR --prefix prefix/ (from scratch),
#                then check the layout (headers, libquill.so + SONAME,
#                tools, quill.pc, QuillConfig.cmake)
#   headers      every installed header compiles alone (-I prefix/include)
#   cmake        configure + build test/install/ with find_package(Quill),
#                run the consumer on examples/digits
#   pkgconfig    cc consumer.c $(pkg-config --cflags --libs quill), run it;
#                check `pkg-config --static --libs` names protobuf-c,
#                jansson and m
#   plugins      build examples/plugins/ against the package into plugins/
#                (the lit tests in test/tools/plugins/ load them)
#   backend      build the example vendor backend's plugin
#                (examples/backends/acme-npu/) against the package into
#                backends/acme-npu/ (examples.acme-npu and the lit tests in
#                test/examples/backends/ load it)
set -eu
step=$1 src=$2 build=$3 cc=$4
work="$build/install-test"
prefix="$work/prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"

case "$step" in
install)
  rm -rf "$prefix"
  cmake --install "$build" --prefix "$prefix" >/dev/null
  for f in bin/quill bin/quill-opt bin/quill-translate \
           include/quill/quill.h include/quill/ir/graph.h \
           include/quill/passes/plugin.h lib/pkgconfig/quill.pc \
           lib/cmake/Quill/QuillConfig.cmake \
           lib/cmake/Quill/QuillConfigVersion.cmake; do
    test -e "$prefix/$f" || { echo "missing: $f"; exit 1; }
  done
  soname=$(readelf -d "$prefix"/lib/libquill.so | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
  test "$soname" = libquill.so.0 || { echo "SONAME is '$soname'"; exit 1; }
  # The installed tools find the installed library (RUNPATH $ORIGIN/../lib).
  ldd "$prefix/bin/quill-opt" | grep -q "$prefix/bin/../lib/libquill.so.0" ||
    { echo "quill-opt does not load the installed libquill"; ldd "$prefix/bin/quill-opt"; exit 1; }
  "$prefix/bin/quill" --help >/dev/null
  echo "installed into $prefix"
  ;;
headers)
  n=0
  for h in $(cd "$prefix/include" && find quill -name '*.h' | sort); do
    echo "#include <$h>" | "$cc" -std=c11 -Wall -Wextra -Werror -fsyntax-only \
      -I"$prefix/include" -x c - || { echo "header $h does not compile alone"; exit 1; }
    n=$((n + 1))
  done
  echo "$n headers compile alone"
  ;;
cmake)
  rm -rf "$work/consumer-cmake"
  cmake -S "$src/test/install" -B "$work/consumer-cmake" -G Ninja \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$work/consumer-cmake" >/dev/null
  "$work/consumer-cmake/consumer" "$src/examples/digits"
  ;;
pkgconfig)
  libs=$(pkg-config --static --libs quill)
  for l in -lquill -lprotobuf-c -ljansson -lm; do
    case " $libs " in *" $l "*) ;; *) echo "pkg-config --static --libs quill lacks $l: $libs"; exit 1;; esac
  done
  # shellcheck disable=SC2046
  "$cc" -std=c11 -Wall -Wextra -Werror "$src/test/install/consumer.c" \
    -o "$work/consumer-pc" $(pkg-config --cflags --libs quill) \
    -Wl,-rpath,"$(pkg-config --variable=libdir quill)"
  "$work/consumer-pc" "$src/examples/digits"
  ;;
plugins)
  rm -rf "$work/plugins"
  cmake -S "$src/examples/plugins" -B "$work/plugins" -G Ninja \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$work/plugins" >/dev/null
  ls "$work/plugins"/*.so
  ;;
backend)
  rm -rf "$work/backends/acme-npu"
  cmake -S "$src/examples/backends/acme-npu" -B "$work/backends/acme-npu" \
    -G Ninja -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$work/backends/acme-npu" >/dev/null
  ls "$work/backends/acme-npu"/libacme_npu.so
  ;;
*)
  echo "unknown step '$step'"; exit 2 ;;
esac
