"""Repository paths that comments and documents name, and whether they exist.

A comment that says "see passes/liveness.c" is a promise to the reader;
check_named_paths() keeps it: every path under one of the tree's top
folders that a comment (C, CUDA, Python, shell, meson) or a document
(README.md, docs/*.md) names must be a file or a folder of the tree.

A path is a word that begins with a top folder and a slash and goes on
with letters, digits and `_ . / -` (`src/ir/ops.def`, `runtime/cpu/`).
Words with a pattern in them (`*`, `<`, `{`, `$`, `X.c`-style
placeholders written as `NAME`) are not paths. The history of the
benchmarks (docs/benchmarks-history.md) names the tree of its dates and
is not checked; nor are build folders, or paths under build*/ and /tmp/.
"""
import os
import re

TOP = ("src", "passes", "runtime", "tools", "tests", "bench", "docs",
       "include", "scripts", "examples", "python")
UNCHECKED = {"docs/benchmarks-history.md"}
_PATH = re.compile(r'(?<![\w./$~-])((?:' + "|".join(TOP) +
                   r')/[A-Za-z0-9_./-]*[A-Za-z0-9_/])')
_C_COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
_HASH_COMMENT = re.compile(r'(?:^|(?<=\s))#[^\n]*', re.M)
_C_SUFFIXES = (".c", ".h", ".cu", ".cuh", ".def")
_HASH_SUFFIXES = (".py", ".sh")
_HASH_NAMES = ("meson.build", "meson_options.txt")


def _texts(root, path, text):
    """The parts of the file at path that are prose: its comments, or all
    of a document. Yields (line number, text)."""
    if path.endswith(".md"):
        parts = [(0, text)]
    elif path.endswith(_C_SUFFIXES):
        parts = [(m.start(), m.group(0)) for m in _C_COMMENT.finditer(text)]
    elif path.endswith(_HASH_SUFFIXES) or \
            os.path.basename(path) in _HASH_NAMES or _is_script(text):
        parts = [(m.start(), m.group(0))
                 for m in _HASH_COMMENT.finditer(text)]
    else:
        parts = []
    for offset, part in parts:
        for m in _PATH.finditer(part):
            if part[m.end():m.end() + 1] in ("*", "{", "<", "$") or \
                    part[m.end():m.end() + 2] == "-*":
                continue  # a pattern, not a path
            yield text.count("\n", 0, offset + m.start()) + 1, m.group(1)


def _is_script(text):
    return text.startswith("#!")


def _exists(root, name):
    name = name.rstrip("/.")
    if os.path.exists(os.path.join(root, name)):
        return True
    # A target the build makes in that folder (bench/bench-planner).
    folder, target = os.path.split(name)
    try:
        with open(os.path.join(root, folder, "meson.build"),
                  encoding="utf-8") as f:
            return "'" + target + "'" in f.read()
    except OSError:
        return False


def check_named_paths(root, paths):
    """Problems ("FILE:LINE: names PATH, which does not exist") for the
    files paths (relative to root) name."""
    problems = []
    for path in paths:
        if path in UNCHECKED:
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8",
                      errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        for line, name in _texts(root, path, text):
            if not _exists(root, name):
                problems.append(f"{path}:{line}: names {name}, which does "
                                "not exist")
    return problems


def prose_files(root):
    """The files whose comments or text check_named_paths reads."""
    found = []
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and
                         d != "subprojects" and
                         not (top == root and d.startswith("build")))
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(top, name), root)
            if name.endswith(_C_SUFFIXES + _HASH_SUFFIXES + (".md",)) or \
                    name in _HASH_NAMES or rel.startswith("scripts/"):
                found.append(rel)
    return found
