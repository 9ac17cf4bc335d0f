"""show_gap.py - report-global-avgpool.test: for each `quill report --format
json` file, the input's and the global_avgpool's output scale and the
model output's SQNR."""
import json
import os
import sys

for path in sys.argv[1:]:
    r = json.load(open(path))
    rows = {o["name"]: o for o in r["rows"]}
    print("%s x %.5g gap %.5g output %.2f dB" % (
        os.path.basename(path), rows["x"]["output"]["scale"],
        rows["gap"]["output"]["scale"], r["outputs"][0]["sqnr_db"]))
