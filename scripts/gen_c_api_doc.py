#!/usr/bin/env python3
"""gen_c_api_doc.py - docs/c-api.md from the public headers, and checks.

The public headers (include/quill/public-headers.txt) are the one place the
C API is written down: each declaration with the comment above it, which
says what it takes, returns and who owns what. This script renders them as
Markdown, topic by topic (the comment sections of public-headers.txt),
header by header (its top comment, then its declarations in order):

  * a function becomes a table row: name, what it takes (the parameters),
    what it returns; the comment above a run of declarations follows the
    table (ownership, failure behaviour);
  * types, enums, structs, macros and data are shown as C code;
  * "/* ---- name ---- */" section comments become headings.

Usage:
  gen_c_api_doc.py [--root DIR] [-o FILE]   write the document (stdout)
  gen_c_api_doc.py --check FILE             exit 1 if FILE differs from
                                            what would be generated
  gen_c_api_doc.py --symbols LIB            exit 1 unless LIB (libquill.so)
                                            exports exactly the functions
                                            the headers declare (no internal
                                            symbol leaks, no declaration
                                            without a definition) and only
                                            data the headers declare

Only the standard library is used. ctest runs --check and --symbols (tests
api.doc and api.symbols), so the document cannot go stale and the export
list cannot drift from the headers.
"""
import argparse
import os
import re
import subprocess
import sys


def read_header_list(root):
    """[(topic, [paths])] from include/quill/public-headers.txt."""
    topics, topic = [], None
    path = os.path.join(root, "include", "quill", "public-headers.txt")
    pending_comment = []
    for line in open(path):
        line = line.rstrip("\n")
        if not line.strip():
            pending_comment = []
            continue
        if line.startswith("#"):
            pending_comment.append(line.lstrip("# ").strip())
            continue
        if pending_comment:
            topic = pending_comment[-1]
            topics.append((topic, []))
            pending_comment = []
        if topic is None:
            topics.append(("headers", []))
            topic = "headers"
        topics[-1][1].append(line.strip())
    return topics


def install_path(path):
    """Where a header is installed, as users include it."""
    if path.startswith("include/"):
        return path[len("include/"):]
    return "quill/" + path


# ---- lexing a header into items ------------------------------------------------

COMMENT_RE = re.compile(r"/\*.*?\*/", re.S)


def comment_text(block):
    """The text of a /* */ comment, one entry per line, prefix stripped."""
    body = block.strip()
    assert body.startswith("/*") and body.endswith("*/")
    body = body[2:-2]
    lines = body.split("\n")
    out = []
    for ln in lines:
        s = ln.rstrip()
        m = re.match(r"^\s*\* ?(.*)$", s)
        if m:
            s = m.group(1)
        elif s.startswith(" "):
            s = s[1:] if s.startswith(" ") else s
        out.append(s)
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def split_items(text):
    """Split the declaration region into items: runs of lines separated by
    blank lines outside comments, braces and parentheses. Each item is a
    list of ("comment", [lines]) and ("code", str) chunks, in order."""
    items, cur = [], []
    i, n = 0, len(text)
    depth = 0
    code = ""
    line_blank_run = 0

    def flush_code():
        nonlocal code
        if code.strip():
            cur.append(("code", code.strip("\n")))
        code = ""

    while i < n:
        if text.startswith("/*", i):
            j = text.index("*/", i) + 2
            block = text[i:j]
            if depth == 0 and not code.strip():
                cur.append(("comment", comment_text(block)))
            elif depth == 0 and not code.rstrip(" ").endswith("\n") and code.strip():
                # a trailing comment on a code line stays with the code
                code += block
            elif depth == 0:
                flush_code()
                cur.append(("comment", comment_text(block)))
            else:
                code += block
            i = j
            continue
        c = text[i]
        if c == "\n":
            # blank line => item boundary (outside braces)
            k = i + 1
            while k < n and text[k] in " \t":
                k += 1
            if depth == 0 and k < n and text[k] == "\n":
                flush_code()
                if cur:
                    items.append(cur)
                cur = []
                i = k
                continue
            code += c if (code or depth) else ""
            i += 1
            continue
        if c in "{(":
            depth += 1
        elif c in "})":
            depth -= 1
        code += c
        i += 1
    flush_code()
    if cur:
        items.append(cur)
    return items


def decl_region(text, path):
    """The text between QUILL_BEGIN_DECLS and QUILL_END_DECLS, or for a
    header without them (types_fwd.h) everything after its guard."""
    b = text.find("\nQUILL_BEGIN_DECLS\n")
    e = text.rfind("\nQUILL_END_DECLS\n")
    if b >= 0 and e > b:
        return text[b + len("\nQUILL_BEGIN_DECLS\n"):e]
    m = re.search(r"#define QUILL_\w+_H\n", text)
    end = text.rfind("#endif")
    if not m:
        return ""
    return text[m.end():end]


def top_comment(text):
    m = COMMENT_RE.search(text)
    return comment_text(m.group(0)) if m else []


# ---- declarations ---------------------------------------------------------------

def strip_attrs(s):
    return re.sub(r"__attribute__\s*\(\(.*?\)\)", "", s, flags=re.S).strip()


def norm_ws(s):
    return re.sub(r"\s+", " ", s).strip()


def split_statements(code):
    """Top-level statements of a code chunk: ';'-terminated, '}'-closed
    function bodies, and preprocessor lines (with continuations)."""
    out, cur, depth, i = [], "", 0, 0
    lines = code.split("\n")
    # preprocessor lines first, kept whole
    buf = []
    k = 0
    while k < len(lines):
        ln = lines[k]
        if depth == 0 and ln.lstrip().startswith("#") and not cur.strip():
            pp = ln
            while pp.endswith("\\") and k + 1 < len(lines):
                k += 1
                pp += "\n" + lines[k]
            out.append(("pp", pp))
            k += 1
            continue
        for ch in ln + "\n":
            cur += ch
            if ch in "{(":
                depth += 1
            elif ch in "})":
                depth -= 1
                if depth == 0 and ch == "}" and re.match(
                        r"\s*static\s+inline", cur):
                    out.append(("stmt", cur.strip()))
                    cur = ""
            elif ch == ";" and depth == 0:
                out.append(("stmt", cur.strip()))
                cur = ""
        k += 1
    del buf
    if cur.strip():
        out.append(("stmt", cur.strip()))
    return out


FUNC_RE = re.compile(r"^(?P<ret>.*?)\b(?P<name>quill_\w+)\s*\((?P<params>.*)\)$",
                     re.S)


def parse_function(stmt):
    """(name, returns, params, inline) or None."""
    s = strip_attrs(COMMENT_RE.sub(" ", stmt))
    inline = False
    if re.match(r"static\s+inline\b", s):
        inline = True
        s = s[:s.index("{")].strip()
        s = re.sub(r"^static\s+inline\s+", "", s)
    else:
        if not s.endswith(";"):
            return None
        s = s[:-1].strip()
    if s.startswith(("typedef", "extern", "enum", "struct", "union")):
        return None
    m = FUNC_RE.match(norm_ws(s))
    if not m or "(" in m.group("ret"):
        return None
    return (m.group("name"), m.group("ret").strip(), m.group("params").strip(),
            inline)


def parse_data(stmt):
    s = norm_ws(strip_attrs(COMMENT_RE.sub(" ", stmt)))
    m = re.match(r"^extern\s+.*?\b(quill_\w+)\s*(\[[^\]]*\])?\s*;$", s)
    return m.group(1) if m else None


# ---- rendering --------------------------------------------------------------------

def md_escape(s):
    return s.replace("*", "\\*").replace("<", "\\<")


def render_comment(lines, out):
    """Comment lines as Markdown: indented runs become code blocks."""
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("  ") and ln.strip():
            block = []
            while i < len(lines) and (lines[i].startswith("  ") or
                                      (not lines[i].strip() and i + 1 < len(lines)
                                       and lines[i + 1].startswith("  "))):
                block.append(lines[i])
                i += 1
            indent = min(len(b) - len(b.lstrip()) for b in block if b.strip())
            out.append("```")
            out.extend(b[indent:] for b in block)
            out.append("```")
            continue
        out.append(md_escape(ln))
        i += 1
    out.append("")


def code_cell(s):
    s = norm_ws(s) if s else "void"
    return "`" + s.replace("|", "\\|") + "`"


def render_header(root, path, out, stats):
    text = open(os.path.join(root, path)).read()
    inc = install_path(path)
    out.append("### `<%s>`" % inc)
    out.append("")
    top = top_comment(text)
    if top:
        render_comment(top, out)
    region = decl_region(text, path)
    for item in split_items(region):
        pending = None  # comment waiting for its code
        for kind, val in item:
            if kind == "comment":
                if len(val) == 1 and re.match(r"^-+ .* -+$", val[0].strip()):
                    title = val[0].strip().strip("-").strip()
                    out.append("#### %s" % md_escape(title))
                    out.append("")
                    continue
                if pending is not None:
                    render_comment(pending, out)
                pending = val
                continue
            funcs, other = [], []
            for skind, stmt in split_statements(val):
                if skind == "pp" and re.match(r'\s*#include\s*[<"].*\.h[>"]',
                                              stmt):
                    continue
                f = parse_function(stmt) if skind == "stmt" else None
                if f:
                    funcs.append(f)
                    continue
                d = parse_data(stmt) if skind == "stmt" else None
                if d:
                    stats["data"].add(d)
                other.append(stmt)
            if funcs:
                out.append("| function | takes | returns |")
                out.append("| --- | --- | --- |")
                for name, ret, params, inline in funcs:
                    stats["functions"].append((name, inline))
                    label = "`%s`%s" % (name, " (inline)" if inline else "")
                    out.append("| %s | %s | %s |" % (label, code_cell(params),
                                                     code_cell(ret)))
                out.append("")
            if other:
                out.append("```c")
                out.extend(o.rstrip() for o in "\n".join(other).split("\n"))
                out.append("```")
                out.append("")
            if pending is not None:
                render_comment(pending, out)
                pending = None
        if pending is not None:
            render_comment(pending, out)


def generate(root):
    out, stats = [], {"functions": [], "data": set()}
    body = []
    topics = read_header_list(root)
    for topic, paths in topics:
        body.append("## %s" % topic[0].upper() + topic[1:] if topic else "")
        body.append("")
        for p in paths:
            if p.endswith(".h"):
                render_header(root, p, body, stats)
            else:
                body.append("### `<%s>`" % install_path(p))
                body.append("")
                body.append("An X-macro table included by the headers above "
                            "(one row per entry); see the file itself.")
                body.append("")
    funcs = stats["functions"]
    out.append("# The Quill C API")
    out.append("")
    out.append("<!-- Generated by scripts/gen_c_api_doc.py from the public "
               "headers (include/quill/public-headers.txt); do not edit. "
               "ctest api.doc fails when this file is out of date: "
               "regenerate with `python3 scripts/gen_c_api_doc.py -o "
               "docs/c-api.md`. -->")
    out.append("")
    out.append("%d functions (%d of them static inline) in %d headers. Build "
               "against the installed package with `pkg-config --cflags "
               "--libs quill` or CMake's `find_package(Quill)` and the "
               "target `Quill::quill`; include `<quill/quill.h>` (or a topic "
               "header). Each function's row says what it takes and returns; "
               "the text under a table is the header's comment for those "
               "functions: ownership (who frees what, with which call) and "
               "failure behaviour (status codes, diagnostics)."
               % (len(funcs), sum(1 for f in funcs if f[1]),
                  sum(1 for t in topics for p in t[1] if p.endswith(".h"))))
    out.append("")
    out.append("Contents:")
    out.append("")
    for topic, paths in topics:
        out.append("- %s: %s" % (topic, ", ".join(
            "`<%s>`" % install_path(p) for p in paths)))
    out.append("")
    out.extend(body)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n", stats


# ---- the symbol check ----------------------------------------------------------------

def pass_ids(root):
    ids = []
    for line in open(os.path.join(root, "passes", "passes.def")):
        m = re.match(r"QUILL_PASS\((\w+),", line)
        if m:
            ids.append("quill_pass_" + m.group(1))
    return ids


def check_symbols(root, lib, stats):
    res = subprocess.run(["nm", "-D", "--defined-only", lib],
                         capture_output=True, text=True, check=True)
    funcs, data = set(), set()
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        _, kind, name = parts
        if name.startswith("__odr_asan"):
            continue  # AddressSanitizer's ODR indicators (sanitizer builds)
        if name in ("__bss_start", "_edata", "_end"):
            continue  # defined by the linker in some link configurations
        if kind in "Tt":
            funcs.add(name)
        elif kind in "RDBVrdbGgSs":
            data.add(name)
    declared = {n for n, inline in stats["functions"] if not inline}
    declared_data = set(stats["data"]) | set(pass_ids(root))
    ok = True
    for n in sorted(funcs - declared):
        print("exported but not declared in a public header: %s" % n)
        ok = False
    for n in sorted(declared - funcs):
        print("declared in a public header but not exported: %s" % n)
        ok = False
    for n in sorted(data - declared_data):
        print("exported data not declared in a public header: %s" % n)
        ok = False
    print("%s: %d functions and %d data symbols exported, %d functions "
          "declared" % (lib, len(funcs), len(data), len(declared)))
    return ok


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(here))
    ap.add_argument("-o", "--output")
    ap.add_argument("--check", metavar="FILE")
    ap.add_argument("--symbols", metavar="LIB")
    a = ap.parse_args()
    doc, stats = generate(a.root)
    if a.symbols:
        return 0 if check_symbols(a.root, a.symbols, stats) else 1
    if a.check:
        try:
            have = open(a.check).read()
        except OSError as e:
            print("cannot read %s: %s" % (a.check, e))
            return 1
        if have != doc:
            print("%s is out of date: regenerate it with\n  python3 "
                  "scripts/gen_c_api_doc.py -o %s" % (a.check, a.check))
            a_lines, b_lines = have.splitlines(), doc.splitlines()
            for i, (x, y) in enumerate(zip(a_lines, b_lines)):
                if x != y:
                    print("first difference at line %d:\n  have: %s\n  want: %s"
                          % (i + 1, x, y))
                    break
            else:
                print("lengths differ: %d vs %d lines" % (len(a_lines),
                                                          len(b_lines)))
            return 1
        print("%s is up to date (%d functions)" % (a.check,
                                                   len(stats["functions"])))
        return 0
    if a.output:
        with open(a.output, "w") as f:
            f.write(doc)
    else:
        sys.stdout.write(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
