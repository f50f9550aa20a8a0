r"""Input text that kills the process inside MLIR 22's own parser, refused before it is parsed.

Upstream's parser aborts (an assertion, not a diagnostic) on three kinds of input the fuzzers
found; they cannot be fixed in dequant, so each is recognised in the text first and reported as an
error at its line and column, the way the parser reports its own errors:
- a sub-channel `!quant.uniform<storage:expressed:{dim:block, ...}, {{scale:zp, ...}, ...}>` with a
  zero point outside [0, 2^w) for a w-bit storage type: the parser builds an unsigned w-bit APInt
  of it (so any negative zero point aborts, even one the storage type holds);
- a `linalg.generic` in custom form whose `iterator_types` holds something other than strings or
  `#linalg.iterator_type<...>` (its parser casts each element to a string attribute);
- any token MLIR's lexer rejects inside a file-metadata block `{-# ... #-}` (dialect or external
  resources): a string left open or with an unknown escape such as `\q`, a character no token
  starts with (`$`), a lone `.` or `/`, a `#`, `!`, `^`, `%` or `@` with no name after it. Where
  the resource parser consumes the lexer's error token it asserts (checked with `$`, `@1`, `.`,
  `%` and strings as a resource's value; a `/` there is an ordinary error): any such token is
  refused, as the parse would fail anyway; elsewhere the same token is an ordinary parse error.
  The text is lexed by the lexer's own rules (`_TOKEN`), so a `{-#` or `#-}` inside a string or
  a comment is no block's end. In the same walk: a hex string whose first 4 bytes, a resource
  blob's alignment, are 0 ("0x00000000..."): the parser then fails to allocate the blob and
  aborts ("LLVM ERROR: out of memory"; found by the stage fuzzer).

And one the Python bindings abort on once parsed: an op (generic form, with unregistered dialects
allowed) whose name is not valid UTF-8 (`"\\ff"(...)`): every walk over it makes the bindings
build a Python str of the name inside C++, which throws through the walk and terminates.

And any nesting deeper than `MAX_NESTING` (`nesting`): MLIR's parser and walks recurse once per
level of a region, bracket, parenthesis or angle bracket (5,000 nested regions, 20,000 nested
`[` or `tuple<` overflow an 8 MiB stack).

`check(text)` is run on every text dequant parses (dequant-opt, `dequant.jit` of a text). It
reads only these constructs; anything else goes to the parser unchanged.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

# storage spelled i8, u8 or as a builtin integer type (ui8, si8: the parser takes those too)
_SUBCHANNEL = re.compile(r"!quant\.uniform<\s*(ui|si|u|i)(\d+)(?:<[^>]*>)?\s*:\s*[A-Za-z0-9]+\s*:\s*\{")
# scale:zero point; the zero point decimal or hexadecimal (the parser takes 0x8000)
_PAIR = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*:\s*([-+]?(?:0[xX][0-9a-fA-F]+|\d+))")
_ITERATORS = re.compile(r"\blinalg\.generic\s*\{[^}]*?\biterator_types\s*=\s*\[([^\]]*)\]")
# a generic op: its quoted name starts a line or follows `=` (a symbol `@"..."(` is no op name)
_GENERIC_NAME = re.compile(r'(?m)(?:^|=)[ \t]*"((?:[^"\\\n]|\\.)*\\(?:[^"\\\n]|\\.)*)"\s*\(')
_ESCAPE = re.compile(r"\\([0-9a-fA-F]{2}|.)")
_ITERATOR = re.compile(r'\s*(?:"[^"]*"|#linalg\.iterator_type<\s*\w+\s*>)\s*')
# A string as MLIR's lexer takes it: it ends at its closing quote, before a newline, \v or \f; a
# backslash escapes `"`, `\\`, `n`, `t` or two hex digits (any other escape is an error).
# Unrolled (runs of plain characters) for speed; _OPENED stops where such a string goes wrong.
_OPENED = r'"[^"\\\n\v\f]*(?:\\(?:["\\nt]|[0-9a-fA-F]{2})[^"\\\n\v\f]*)*'
_STRING = _OPENED + '"'
# Outside a file-metadata block: a comment, a string (closed or not) or a block's start.
_BLOCK = re.compile(r'//[^\n\r]*|"[^"\\\n\v\f]*(?:\\.[^"\\\n\v\f]*)*"?|\{-\#')
# One token of MLIR's lexer (mlir/lib/AsmParser/Lexer.cpp, `Lexer::lexToken`), or what it skips;
# a text position none of these matches starts the lexer's error token.
_TOKEN = re.compile(
    r"[ \t\n\r\0]+"  # whitespace; a NUL inside the text is skipped too
    r"|//[^\n\r]*"  # a comment
    r"|\{-\#|\#-\}"  # a file-metadata block's ends (before `{` and `#name`)
    rf"|{_STRING}|@(?:{_STRING}|[A-Za-z_][\w$.]*)"
    r"|[#!^%](?:[0-9]+|[A-Za-z$._-][\w$.-]*)"  # attribute, type, SSA and block names
    r"|[A-Za-z_][\w$.]*"  # bare identifiers and keywords
    r"|0x[0-9a-fA-F]+|[0-9]+(?:\.[0-9]*(?:[eE][-+]?[0-9]+)?)?"
    r"|\.\.\.|->|[:,()\[\]{}<>=+*?|-]",
    re.ASCII,  # the lexer's isalpha and isdigit: ASCII only
)


# Deeper nesting than this is refused before parsing (see the module docstring).
MAX_NESTING = 1000
# `nesting` reads only these bytes ("events"); a model's weights (hex strings) hold none of them.
_EVENTS = np.zeros(256, bool)
_EVENTS[[ord(c) for c in '"\\\n/{}[]()<>-= \t\r']] = True
_EVENT_TABLE = bytes(_EVENTS.astype(np.uint8))
_DELTA = np.zeros(256, np.int64)
_DELTA[[ord(c) for c in "{[(<"]] = 1
_DELTA[[ord(c) for c in "}])>"]] = -1
_WHITE = np.zeros(256, bool)
_WHITE[[ord(c) for c in " \t\r\n"]] = True
_CHUNK = 1 << 22  # bytes per vectorized step: bounded temporaries on any input
QUOTE, BACKSLASH, NEWLINE, SLASH, MINUS = (ord(c) for c in '"\\\n/-')


def _since_reset(counts, resets, carry):
    """For each event, `counts` (a cumulative sum) minus its value at the last reset event (one
    holding the reset's own count: `resets` gives that value, or -1 where no reset), plus
    `carry` before the first reset."""
    base = np.maximum.accumulate(np.where(resets >= 0, resets, -1))
    return np.where(base >= 0, counts - base, counts + carry)


# Hex strings at least this long (a model's weights, "0x..." in a file-metadata block or a
# dense<"0x...">) are cut out of the text `nesting` reads (`_plain_strings`).
_BLOB_MIN = 4096
_PREFIX_MAX = 4096  # the most of a line before such a string that is read to place it


def _plain_strings(raw: bytes) -> list[tuple[int, int]]:
    """(start, end) of the contents of the long hex strings of `raw` (`"0x`, then at least
    `_BLOB_MIN` bytes) whose contents change none of `nesting`'s state: the line before the
    opening quote holds an even number of quotes and no backslash (so that quote, unescaped,
    opens a string, or sits in a comment), and the contents hold no backslash or newline up to
    the next quote (which closes the string). Inside a string or a comment nothing counts (depth,
    minus signs, comments), and the closing quote breaks any run of minus signs whatever precedes
    it; so the contents, replaced by one byte that is no event, leave `nesting`'s result
    unchanged. Found by memchr-speed searches: the weights of a model are most of its text and
    hold no byte `nesting` reads."""
    spans, pos = [], 0
    while (q := raw.find(b'"0x', pos)) >= 0:
        pos = q + 1
        end = raw.find(b'"', q + 1)
        if end < 0:
            break
        if end - q <= _BLOB_MIN or raw.find(b"\n", q, end) >= 0 or raw.find(b"\\", q, end) >= 0:
            continue
        line = raw.rfind(b"\n", max(0, q - _PREFIX_MAX), q) + 1
        if line == 0 and q > _PREFIX_MAX:
            continue  # a longer line: not read
        before = raw[line:q]
        if b"\\" in before or before.count(b'"') % 2:
            continue
        spans.append((q + 1, end))
        pos = end + 1
    return spans


def _without_plain_strings(raw: bytes) -> bytes:
    """`raw` with the contents of each of `_plain_strings` replaced by one byte `x`."""
    spans = _plain_strings(raw)
    if not spans:
        return raw
    view, parts, at = memoryview(raw), [], 0
    for start, end in spans:
        parts += [view[at:start], b"x"]
        at = end
    parts.append(view[at:])
    return b"".join(parts)


def nesting(text: str | bytes) -> int:
    """The deepest nesting of `{`, `[`, `(` and `<` in MLIR text (str, or its UTF-8 bytes),
    outside strings and comments (`->` and `>=` close nothing), or the longest run of minus signs (whitespace between) if
    longer: the affine parser recurses once per unary minus. Strings and comments end at their
    line's end, as MLIR's lexer ends them, so each line's state is its own.

    Vectorized: per chunk, only the bytes that matter (`_EVENTS`: quotes, backslashes, newlines,
    slashes, brackets, minus, `=`, whitespace) are gathered, and every state (inside a string:
    the parity of unescaped quotes since the line's start; inside a comment; the depth; the run
    of minus signs) is a cumulative sum over them, carried from chunk to chunk. No Python loop
    per character or per token; the contents of a model's weights (`_plain_strings`) are not
    read at all."""
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if not any(c in raw for c in b"{[(<-"):
        return 0
    raw = _without_plain_strings(raw)
    data = np.frombuffer(raw, np.uint8)
    n = data.size
    depth = deepest = minus = 0
    parity, comment, backslashes = 0, 0, 0  # the line's state at the chunk's start
    for start in range(0, n, _CHUNK):
        chunk = data[start : start + _CHUNK]
        # bytes.translate, one C loop, a chunk at a time: no temporary the size of the input
        p = np.flatnonzero(np.frombuffer(raw[start : start + _CHUNK].translate(_EVENT_TABLE), np.bool_))
        if p.size == 0:  # other bytes only: no string or comment changes, runs broken
            minus = backslashes = 0
            continue
        c = chunk[p]
        idx = np.arange(p.size)
        adjacent = np.empty(p.size, bool)  # no other byte between this event and the one before
        adjacent[0] = p[0] == 0
        adjacent[1:] = p[1:] - p[:-1] == 1
        # backslash runs, and the quotes they escape
        bs = c == BACKSLASH
        follows_bs = np.zeros(p.size, bool)
        follows_bs[1:] = bs[:-1] & adjacent[1:]
        run_start = np.maximum.accumulate(np.where(bs & ~follows_bs, idx, -1))
        runs = np.where(bs, idx - run_start + 1, 0)
        runs = np.where(bs & (run_start == 0) & (p[0] == 0), runs + backslashes, runs)
        before = np.zeros(p.size, np.int64)
        before[1:] = np.where(follows_bs[1:], runs[:-1], 0)
        if p[0] == 0:
            before[0] = backslashes
        quote = (c == QUOTE) & (before % 2 == 0)
        newline = c == NEWLINE
        # quotes since the line's start: odd inside a string
        quotes = np.cumsum(quote)
        count = _since_reset(quotes, np.where(newline, quotes, -1), parity)
        inside = count % 2 == 1
        # comments: the second '/' of a '//' outside a string, to the line's end
        second = np.zeros(p.size, bool)
        second[1:] = (c[1:] == SLASH) & (c[:-1] == SLASH) & adjacent[1:]
        if p[0] == 0 and start and data[start - 1] == SLASH and not parity:
            second[0] = c[0] == SLASH
        opens = np.cumsum(second & ~inside)
        in_comment = _since_reset(opens, np.where(newline, opens, -1), comment) > 0
        outside = ~inside & ~in_comment & ~quote
        # depth: '->' and '>=' close nothing
        d = np.where(outside, _DELTA[c], 0)
        gt = np.flatnonzero(c == ord(">"))
        if gt.size:
            g = start + p[gt]  # positions in data
            prev = data[np.maximum(g - 1, 0)]
            nxt = data[np.minimum(g + 1, n - 1)]
            arrow = ((prev == MINUS) & (g > 0)) | ((nxt == ord("=")) & (g + 1 < n))
            d[gt[arrow]] = 0
        levels = np.cumsum(d) + depth
        deepest = max(deepest, int(levels.max()))
        depth = int(levels[-1])
        # runs of minus signs, whitespace between (a gap holds another byte: the run ends)
        sign = (c == MINUS) & outside
        signs = np.cumsum(sign)
        breaks = ~adjacent | (~_WHITE[c] & ~sign)
        run = _since_reset(signs, np.where(breaks, signs - sign, -1), minus)
        deepest = max(deepest, int(run.max()))
        ends_here = p[-1] == chunk.size - 1  # else other bytes after the last event break the runs
        minus = int(run[-1]) if ends_here else 0
        backslashes = int(runs[-1]) if ends_here and bs[-1] else 0
        parity, comment = int(count[-1] % 2), int(in_comment[-1])  # 0 after a newline
    return deepest


def too_deep(text: str | bytes) -> int | None:
    """The nesting depth of `text` (str or UTF-8 bytes) if deeper than MAX_NESTING, else None."""
    depth = nesting(text)
    return depth if depth > MAX_NESTING else None


class ParserCrashError(ValueError):
    """Input MLIR 22's parser would abort on; the message gives its line:col and why."""

    def __init__(self, line: int, col: int, why: str):
        super().__init__(f"{line}:{col}: {why}")
        self.line, self.col, self.why = line, col, why


def _where(text: str | bytes, pos: int) -> tuple[int, int]:
    """(line, column) of `pos` in a str or ASCII bytes, both from 1."""
    newline = "\n" if isinstance(text, str) else b"\n"
    return text.count(newline, 0, pos) + 1, pos - (text.rfind(newline, 0, pos) + 1) + 1


def _closing(text: str, start: int) -> int:
    """The index after the `}` closing the `{` at `start` (or the text's end)."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i + 1
    return len(text)


def problems(text: str | bytes) -> list[tuple[tuple[int, int], str]]:
    """[((line, col), why)] for each construct of the input MLIR 22's parser aborts on. `text`:
    a str, or its UTF-8 bytes. ASCII bytes (a model's torch form) are read as they are when only
    the file-metadata blocks need reading (an index in them is then an index in characters);
    other bytes, and bytes holding what the other checks read, are decoded first."""
    if isinstance(text, bytes):
        if text.isascii() and not any(s in text for s in (b"quant.uniform", b"\\", b"linalg.generic")):
            return _metadata_problems(text)
        text = text.decode("utf-8")
    found = []
    if "quant.uniform" in text:
        for m in _SUBCHANNEL.finditer(text):
            width = int(m.group(2))
            dims_end = _closing(text, m.end() - 1)
            params = re.match(r"\s*,\s*\{", text[dims_end:])
            if params is None:
                continue
            start = dims_end + params.end() - 1
            for z in _PAIR.finditer(text, start, _closing(text, start)):
                zp = int(z.group(1), 16 if "x" in z.group(1).lower() else 10)
                if not 0 <= zp < 1 << width:
                    found.append((_where(text, z.start(1)),
                                  f"zero point {zp} of a sub-channel !quant.uniform with {width}-bit storage: MLIR 22's "
                                  f"parser aborts on a zero point outside [0, {(1 << width) - 1}] (it builds an unsigned "
                                  f"{width}-bit integer of it), so the input is refused before parsing"))  # fmt: skip
                    break
    if "\\" in text:
        for m in _GENERIC_NAME.finditer(text):
            raw = _ESCAPE.sub(lambda e: chr(int(e.group(1), 16)) if len(e.group(1)) == 2 else e.group(1), m.group(1))
            try:
                raw.encode("latin-1").decode("utf-8")
            except UnicodeError:
                found.append((_where(text, m.start(1) - 1),
                              f"op name \"{m.group(1)}\" is not valid UTF-8: the MLIR Python bindings abort on an "
                              f"op they cannot name, so the input is refused before parsing"))  # fmt: skip
    if "linalg.generic" in text:
        for m in _ITERATORS.finditer(text):
            items = [i for i in m.group(1).split(",") if i.strip()]
            bad = next((i.strip() for i in items if not _ITERATOR.fullmatch(i)), None)
            if bad is not None:
                found.append((_where(text, m.start(1)),
                              f"linalg.generic iterator_types element {bad!r} is not a string: MLIR 22's parser aborts "
                              f"on it, so the input is refused before parsing"))  # fmt: skip
    return found + _metadata_problems(text)


def _metadata_problems(text: str | bytes) -> list[tuple[tuple[int, int], str]]:
    """`problems` in the file-metadata blocks of a str or ASCII bytes."""
    found = []
    if _LEXER[bytes if isinstance(text, bytes) else str].block_start in text:
        bad = _metadata_lexer_error(text)
        if bad is not None and bad[1] == _ZERO_ALIGNMENT:
            found.append((_where(text, bad[0]),
                          "a resource blob whose alignment (its first 4 bytes) is 0: MLIR 22's parser aborts on it "
                          "(\"LLVM ERROR: out of memory\"), so the input is refused before parsing"))  # fmt: skip
        elif bad is not None:
            at, what = bad
            found.append((_where(text, at),
                          f"{what} in a file-metadata block {{-# ... #-}}: MLIR 22's parser can abort on "
                          "a token its lexer rejects there, so the input is refused before parsing"))  # fmt: skip
    return found


_ZERO_ALIGNMENT = "alignment 0"


class _Lexer(NamedTuple):
    """What `_metadata_lexer_error` reads, for a text of one type (str, or ASCII bytes)."""

    block: re.Pattern  # _BLOCK
    token: re.Pattern  # _TOKEN
    block_start: str | bytes
    block_end: str | bytes
    quote: str | bytes
    zero_alignment: str | bytes  # the start of a blob whose first 4 bytes are 0
    string_stops: tuple  # what a string skipped whole holds none of


_LEXER = {
    str: _Lexer(_BLOCK, _TOKEN, "{-#", "#-}", '"', '"0x00000000', ("\\", "\n", "\v", "\f")),
    bytes: _Lexer(re.compile(_BLOCK.pattern.encode()), re.compile(_TOKEN.pattern.encode()), b"{-#", b"#-}", b'"', b'"0x00000000',
                  (b"\\", b"\n", b"\v", b"\f")),
}  # fmt: skip


def _metadata_lexer_error(text: str | bytes) -> tuple[int, str] | None:
    """(index, the lexer's complaint) of the first token MLIR's lexer rejects inside a
    file-metadata block of `text`, or of a hex string whose first 4 bytes (a resource blob's
    alignment) are 0 (`_ZERO_ALIGNMENT`), or None. Outside the blocks only comments and strings are
    skipped whole (a `{-#` in them opens no block); an error there is the parser's to report.
    `text`: a str, or ASCII bytes (the same characters)."""
    lex = _LEXER[bytes if isinstance(text, bytes) else str]
    pos = 0
    while (m := lex.block.search(text, pos)) is not None:
        pos = m.end()
        if m.group() != lex.block_start:
            continue
        while pos < len(text):  # inside the block: token by token, to its `#-}`
            if text.startswith(lex.zero_alignment, pos):  # a blob of alignment 0
                return pos, _ZERO_ALIGNMENT
            if text.startswith(lex.quote, pos):  # a string (a weights blob: most of a model) by memchr-speed finds
                end = text.find(lex.quote, pos + 1)
                if end > 0 and all(text.find(c, pos + 1, end) < 0 for c in lex.string_stops):
                    pos = end + 1
                    continue
            t = lex.token.match(text, pos)
            if t is None:  # an error, the rare case: its message is worked out on str
                return _lexer_error(text if isinstance(text, str) else text.decode("ascii"), pos)
            pos = t.end()
            if t.group() == lex.block_end:
                break
    return None


_NAMES = {"#": "attribute", "!": "type", "^": "block", "%": "SSA value"}
_OPENED_AT = re.compile(_OPENED)


def _lexer_error(text: str, i: int) -> tuple[int, str]:
    """(index, what is wrong) of the lexer's error token starting at `i` (where `_TOKEN` fails)."""
    c = text[i]
    if c == '"' or text.startswith('@"', i):
        end = _OPENED_AT.match(text, text.index('"', i)).end()  # where the lexer stops
        if text.startswith("\\", end):
            return end, "unknown escape in a string literal"
        return i, "string literal without a closing quote"
    if c in _NAMES:
        return i, f"{c!r} with no {_NAMES[c]} name after it"
    if c == "@":
        return i, "'@' with no symbol name after it (a letter, '_' or a string)"
    if c == ".":
        return i, "'.' that is not an ellipsis '...'"
    return i, f"unexpected character {c!r}"


def check(text: str | bytes) -> None:
    """Raise ParserCrashError for the first construct MLIR 22's parser would abort on in `text`
    (a str, or its UTF-8 bytes)."""
    found = problems(text)
    if found:
        (line, col), why = found[0]
        raise ParserCrashError(line, col, why)
