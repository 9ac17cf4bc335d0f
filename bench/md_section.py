"""md_section.py - write a benchmark script's tables into a Markdown file
between the script's own BEGIN/END markers (docs/benchmarks.md holds one
such section per script), leaving the prose around them alone; a file
without the markers is written whole. Used by bench/run.py and
bench/compile_time.py."""
import os


def write_between(path, text, begin, end):
    old = open(path).read() if os.path.exists(path) else ""
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + begin + "\n" + text + end + tail
    with open(path, "w") as f:
        f.write(text)
