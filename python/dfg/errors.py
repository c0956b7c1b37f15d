"""The library's messages in a Python caller's words: where a message
names a dfgc flag (--shapes x:DIMS, --align 16, ...) the Python argument
that does the same is named instead, a flag Python has no argument for is
said to be the command line's, and C function names are left out. The rest of the message, the
library's own, stays as it is."""
import contextlib
import re

from . import _dfg

# (pattern, replacement) in order; the first ones are the most specific.
_FLAGS = [
    (r"--shapes ([^\s:=]+)=N", r"shapes={'\1': N}"),
    (r"--shapes ([^\s:=]+):DIMS", r"shapes={'\1': (DIMS, ...)}"),
    (r"--align (\d+|N)", r"alignment=\1"),
    (r"--precision (\w+)", r"precision='\1'"),
    (r"--planner (\w+)", r"planner='\1'"),
    (r"--prefer (\w+)", r"prefer='\1'"),
    (r"compile --device cuda", r"dfg.compile(...).session(device='cuda')"),
    (r"--device (\w+)", r"device='\1'"),
    # Flags with no Python argument in this version: the command line's.
    (r"\(?dfgc (--const [^\s,)]+)[^)]*\)?",
     r"(not in this version of the Python API; the command line has "
     r"dfgc \1)"),
    (r"\(dfg_\w+_options; dfgc (--[\w-]+)\)",
     r"(not in this version of the Python API; the command line has "
     r"dfgc \1)"),
    (r"\(compile with --no-onednn\)",
     r"(dfgc compile --no-onednn; not in this version of the Python API)"),
    # A C function's name opening the library's message says nothing to
    # a Python caller (the extension says what it was doing before it).
    (r"(?<=: )dfg_[a-z_]+: ", ""),
]


def in_python_words(message):
    """message with every dfgc flag it names put as the Python argument
    (or said to be the command line's)."""
    for pattern, replacement in _FLAGS:
        message = re.sub(pattern, replacement, message)
    return message


@contextlib.contextmanager
def python_words():
    """Re-raises a dfg.Error from the block with in_python_words(message),
    of the same type (dfg.ArgumentError stays one)."""
    try:
        yield
    except _dfg.Error as error:
        text = in_python_words(str(error))
        if text == str(error):
            raise
        raise type(error)(text) from None
