"""Calls between the files of a C tree, read from the sources.

scripts/check-layers uses it to see what includes cannot: a file that
calls a function defined in another file depends on that file, whichever
header the prototype came through (or none: an extern declaration).

What it reads: comments, string and character literals and preprocessor
lines are blanked; then, at brace depth 0, `NAME ( ... ) {` is a function
definition, global unless its declaration says `static`. Every other
occurrence of a global function's name in another file is a use of it: a
call, or its address taken (a table of function pointers, a comparison).
A name defined in two files (a stub and the real function built in
different configurations) is a use of both.

It needs no build and no tool beyond Python, so it runs wherever the
include check runs; it reads the tree as written, not as one
configuration compiles it. What it cannot see: a name a macro pastes
together (an X-macro table such as src/ir/ops.def naming each op's rules
by token pasting). Checked against `nm` of a release build's objects
(2026-11-29): it found 1117 of the 1150 references between the library's
files; the 33 it missed are of that kind (src/ir/op_table.c's rule
table, src/onnx/onnx_ops_table.c's importer table) or into generated
code, and through them the compiler sees two dispatch-table circles the
source reader does not (op_table with layout_rule and op_workspace;
onnx_ops_table with the onnx_ops_* files).
"""
import re

_LEXEME = re.compile(
    r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
    re.S)
_DIRECTIVE = re.compile(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', re.M)
_TOKEN = re.compile(r'[A-Za-z_]\w*|[{}();=,]')
_NOT_FUNCTIONS = {"if", "while", "for", "switch", "return", "sizeof",
                  "defined", "__attribute__", "__declspec", "_Static_assert",
                  "static_assert", "extern", "__global__", "__device__"}


def _blank(match):
    return re.sub(r'[^\n]', ' ', match.group(0))


def strip(text):
    """text with comments, literals and preprocessor lines blanked (line
    numbers kept)."""
    text = _LEXEME.sub(_blank, text)
    return _DIRECTIVE.sub(_blank, text)


def _functions(tokens):
    """The functions declared or defined at brace depth 0 of tokens, as
    (index of the name, index of its closing parenthesis, has a body,
    declared static)."""
    depth = 0
    declaration_static = False
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                declaration_static = False
        elif depth == 0 and t == ";":
            declaration_static = False
        elif depth == 0 and t == "static":
            declaration_static = True
        elif depth == 0 and t not in _NOT_FUNCTIONS and \
                re.match(r'[A-Za-z_]', t) and i + 1 < len(tokens) and \
                tokens[i + 1] == "(":
            j, level = i + 1, 0
            while j < len(tokens):
                level += {"(": 1, ")": -1}.get(tokens[j], 0)
                if level == 0:
                    break
                j += 1
            body = j + 1 < len(tokens) and tokens[j + 1] == "{"
            yield i, j, body, declaration_static
            i = j  # the parameters name types, never calls
        i += 1


def definitions(code):
    """(global, local): the names of the functions code defines, split by
    linkage. code is strip()'s result."""
    tokens = _TOKEN.findall(code)
    found_global, found_local = set(), set()
    for i, _, body, static in _functions(tokens):
        if body:
            (found_local if static else found_global).add(tokens[i])
    return found_global, found_local


def names(code):
    """Every identifier code names, declarations too (strip()'s result)."""
    return set(re.findall(r'[A-Za-z_]\w*', code))


def uses(code):
    """Every identifier code names (strip()'s result), but the name a
    prototype declares and its parameters: a declaration is not a call."""
    tokens = _TOKEN.findall(code)
    skipped = set()
    for i, j, body, _ in _functions(tokens):
        if not body:
            skipped.update(range(i, j + 1))
    return {t for k, t in enumerate(tokens)
            if k not in skipped and re.match(r'[A-Za-z_]', t)}


def file_calls(files):
    """files: {path: stripped code}. Returns (defined, edges): defined maps
    each global function name to the paths that define it; edges maps
    (caller path, callee path) to the names that make it, for every use
    in one file of a function another file defines (and the using file
    does not define itself, globally or static)."""
    defined, local = {}, {}
    for path, code in files.items():
        glob, loc = definitions(code)
        for name in glob:
            defined.setdefault(name, set()).add(path)
        local[path] = glob | loc
    edges = {}
    for path, code in files.items():
        for name in uses(code) - local[path]:
            for target in defined.get(name, ()):
                if target != path:
                    edges.setdefault((path, target), set()).add(name)
    return defined, edges
