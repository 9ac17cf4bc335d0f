"""md_section.py - write a benchmark script's tables into a Markdown file
between the script's own BEGIN/END markers (docs/benchmarks.md holds one
such section per script), leaving the prose around them alone; a page
without the markers gets the section (with them) at its end, a missing
file is written whole. Used by bench/run.py, bench/compile_time.py and
bench/peers.py."""
import os


def write_between(path, text, begin, end):
    old = open(path).read() if os.path.exists(path) else ""
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + begin + "\n" + text + end + tail
    elif old:  # a page without this section yet: the section at its end
        sep = ("" if old.endswith("\n\n") else
               "\n" if old.endswith("\n") else "\n\n")
        text = old + sep + begin + "\n" + text + end + "\n"
    with open(path, "w") as f:
        f.write(text)
