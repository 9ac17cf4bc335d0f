#!/bin/sh
# ctest bench.accuracy-tables: the table code of the accuracy scripts
# (bench/ocr_accuracy.py --tables, bench/zoo_variants.py --table) on rows
# made by hand, with the paired differences worked out below, and a syntax
# check of bench/accuracy_all.sh, so the scripts behind docs/accuracy.md's
# tables cannot rot between their runs. Skipped (77) when the onnxruntime
# venv cannot be made (both scripts import onnxruntime).
#   accuracy_tables.sh
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
py="$("$root/scripts/pyenv.sh")" || {
  echo "SKIP: onnxruntime unavailable (scripts/pyenv.sh failed)"
  exit 77
}
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
bash -n "$root/bench/accuracy_all.sh"

# OCR: four lines of 10 characters. Float has [0, 1, 0, 2] errors, engine E
# [1, 1, 0, 3]: d = float - E = [-1, 0, 0, -1], the difference -2 / 40 =
# -5.00 points, var(d) = 1/3, its error sqrt(4 / 3) / 40 = 2.89 points.
# The float row is read from the first file only.
F='{"engine": "float (onnxruntime)", "char_acc": 0.925, "line_errs": [0, 1, 0, 2], "line_lens": [10, 10, 10, 10], "lines_exact": 0.5, "argmax_agree": 1.0, "prepare_s": 0.0, "lines": 4, "calib": 2}'
echo "[$F]" > "$t/a.json"
echo "[$F, {\"engine\": \"E\", \"char_acc\": 0.9, \"line_errs\": [1, 1, 0, 3], \"line_lens\": [10, 10, 10, 10], \"lines_exact\": 0.25, \"argmax_agree\": 0.9, \"prepare_s\": 1.5, \"lines\": 4, \"calib\": 2}, {\"engine\": \"X\", \"error\": \"boom\"}]" > "$t/b.json"
"$py" "$root/bench/ocr_accuracy.py" --tables "$t/a.json,$t/b.json" > "$t/ocr.txt"
grep -qF '| float (onnxruntime) | 0.9250 | - | 0.500 | 1.0000 | - |' "$t/ocr.txt"
grep -qF '| E | 0.9000 | -5.00 +- 2.89 | 0.250 | 0.9000 | 1.5 |' "$t/ocr.txt"
grep -qF '| X | fails: `boom` | | | | |' "$t/ocr.txt"
[ "$(grep -c 'float (onnxruntime)' "$t/ocr.txt")" = 1 ]

# Zoo: variant v against baseline b on three samples: per-sample
# differences [1, 2, 3] dB, mean +2.00, error std([1, 2, 3]) / sqrt(3) =
# 1 / sqrt(3) = 0.58; CPU seconds summed per column.
cat > "$t/z.jsonl" <<'ROWS'
{"model": "m", "variant": "b", "samples": 3, "sqnr": 20.0, "per_sample": [19.0, 20.0, 21.0], "quantize_cpu_s": 1.5, "commit": "c0", "date": "d0"}
{"model": "m", "variant": "v", "samples": 3, "sqnr": 22.0, "per_sample": [20.0, 22.0, 24.0], "quantize_cpu_s": 2.5, "commit": "c0", "date": "d0"}
ROWS
"$py" "$root/bench/zoo_variants.py" --table "$t/z.jsonl" --group "G=b,v" > "$t/zoo.txt"
grep -qF '| m | 3 | 20.00 | 22.00 (+2.00 +- 0.58) |' "$t/zoo.txt"
grep -qF '| quantize CPU s (models) | | 1.5 (1) | 2.5 (1) |' "$t/zoo.txt"
grep -qF 'Rows: 2 (model, variant) pairs; commit c0, d0: 2.' "$t/zoo.txt"
echo "accuracy tables: ok"
