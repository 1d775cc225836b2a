"""Whitespace-separated ASCII numbers read with NumPy: token bounds by one pass over the bytes, then
eight digits at a time as one little-endian 64-bit word (the SWAR method), with no loop per token.

A buffer starts with PAD spaces (so the 8-byte word ending at any token lies inside it) and ends with
a newline. Tokens the vectorized path cannot read (an exponent, 'nan', a '+' sign, more than 19
significant digits) go through a strict regular expression and Python's own conversion; only
malformed input and those rare spellings take that path.
"""

from __future__ import annotations

import re

import numpy as np

PAD = 24
_ZEROS = np.uint64(0x3030303030303030)  # '0' in every byte
_HIGH = np.uint64(0x8080808080808080)
_NINE_TO_HIGH = np.uint64(0x7676767676767676)  # byte + 0x76 sets the high bit exactly when the byte is above 9
_FOLDS = [
    (np.uint64(8), np.uint64(10), np.uint64(0x00FF00FF00FF00FF)),
    (np.uint64(16), np.uint64(100), np.uint64(0x0000FFFF0000FFFF)),
    (np.uint64(32), np.uint64(10000), np.uint64(0xFFFFFFFF)),
]
_ALL = 0xFFFFFFFFFFFFFFFF
# of a word whose last n bytes are digits, keep those bytes; the others become 0 and add nothing
_KEEP = np.array([0] + [(_ALL << (8 * (8 - n))) & _ALL for n in range(1, 9)], dtype=np.uint64)
_POW10 = np.array([10**k for k in range(20)], dtype=np.uint64)
_FPOW10 = 10.0 ** np.arange(20)
_E8, _E16 = np.uint64(10**8), np.uint64(10**16)
# the spellings the slow path accepts, as C's strtoull / strtof would read them whole
INT_RE = re.compile(rb"[+-]?[0-9]+\Z")
FLOAT_RE = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z|[+-]?(?:inf|infinity|nan)\Z", re.I)
SPACES = re.compile(rb"[\x00-\x20]+")  # what separates tokens: every byte up to the space, as Tokens reads them
# the ids an integer slot of each width takes: Paddle reads unsigned values and reinterprets the bits
INT_RANGE = {"int64": (-(2**63), 2**64 - 1), "int32": (-(2**31), 2**32 - 1)}


class Tokens:
    """The tokens of a padded buffer of whole lines: byte bounds of each token, the token range of
    each line, and the value of every token of 1 to 8 plain digits (the counts and most ids)."""

    def __init__(self, buf: bytearray) -> None:
        self.buf = buf
        self.u8 = np.frombuffer(buf, np.uint8)
        # words[p] is the 8 bytes at offset p: an unaligned view, so a gather reads a token's word at once
        self.words = np.ndarray((len(buf) - 7,), "<u8", buffer=buf, strides=(1,))
        text = self.u8 > 32
        edges = np.flatnonzero(text[1:] != text[:-1]) + 1
        self.starts, self.ends = edges[0::2], edges[1::2]
        self.newlines = np.flatnonzero(self.u8 == 10)
        self.line_end = np.searchsorted(self.starts, self.newlines)
        self.line_start = np.concatenate([[0], self.line_end])[:-1]
        self.count = len(self.starts)
        n = self.ends - self.starts
        small, ok = _digits8(self.words[self.ends - 8], np.minimum(n, 8))
        # one more entry, never valid, for the lines already found malformed to point at
        self.small = np.append(small, np.uint64(0))
        self.small_ok = np.append(ok & (n <= 8), False)
        self._dots: np.ndarray | None = None

    @property
    def lines(self) -> int:
        return len(self.newlines)

    def line_text(self, line: int) -> bytes:
        begin = self.newlines[line - 1] + 1 if line else PAD
        return bytes(self.buf[begin : self.newlines[line]])

    def line_of(self, tokens: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.line_end, tokens, side="right")

    def token(self, index: int) -> bytes:
        return bytes(self.buf[self.starts[index] : self.ends[index]])

    def ints(self, index: np.ndarray, dtype: str) -> tuple[np.ndarray, np.ndarray]:
        """The tokens at `index` as integers of `dtype` (int64 or int32, taking the unsigned range
        too, reinterpreted), and which of them were integers in range."""
        out = self.small[index]
        ok = self.small_ok[index]
        rest = np.flatnonzero(~ok)
        if rest.size:
            value, good = self._signed(index[rest], dtype)
            out[rest], ok[rest] = value, good
        if dtype == "int32":  # keep the low 32 bits: a negative id's two's complement, as for int64
            return (out & np.uint64(2**32 - 1)).astype(np.uint32).view(np.int32), ok
        return out.view(np.int64), ok

    def floats(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The tokens at `index` as float32, and which of them were numbers."""
        begin, end = self.starts[index], self.ends[index]
        first = self.u8[begin]
        negative = first == 45
        begin = begin + (negative | (first == 43))
        dot = self._dot_positions()[index]
        int_end = np.where(dot >= 0, dot, end)
        frac_begin = np.where(dot >= 0, dot + 1, end)
        n_int, n_frac = int_end - begin, end - frac_begin
        fast = (dot != -2) & (n_int + n_frac >= 1) & (n_int + n_frac <= 19)
        whole, ok_int = _uints(self.words, begin, int_end)
        frac, ok_frac = _uints(self.words, frac_begin, end)
        n_frac = np.minimum(n_frac, 19)
        # digits of up to 19 places are exact in uint64; one division by an exact power of ten
        mantissa = whole * _POW10[n_frac] + frac
        value = mantissa.astype(np.float64) / _FPOW10[n_frac]
        value[negative] *= -1.0
        ok = fast & ok_int & ok_frac
        value = value.astype(np.float32)
        for i in np.flatnonzero(~ok):
            text = self.token(index[i])
            if FLOAT_RE.match(text):
                value[i], ok[i] = np.float32(float(text)), True
        return value, ok

    def _signed(self, index: np.ndarray, dtype: str) -> tuple[np.ndarray, np.ndarray]:
        begin, end = self.starts[index], self.ends[index]
        negative = self.u8[begin] == 45
        begin = begin + negative
        value, ok = _uints(self.words, begin, end)
        ok &= end > begin
        low, high = INT_RANGE[dtype]
        ok &= np.where(negative, value <= np.uint64(-low), value <= np.uint64(high))
        value[negative] = np.uint64(0) - value[negative]
        for i in np.flatnonzero(~ok):  # '+5', an id past 20 digits, or not an integer at all
            text = self.token(index[i])
            if INT_RE.match(text) and low <= int(text) <= high:
                value[i], ok[i] = np.uint64(int(text) & _ALL), True
        return value, ok

    def _dot_positions(self) -> np.ndarray:
        """Per token: the offset of its '.', -1 without one, -2 with several."""
        if self._dots is None:
            dots = np.flatnonzero(self.u8 == 46)
            owner = np.searchsorted(self.starts, dots, side="right") - 1
            where = np.full(self.count, -1, dtype=np.int64)
            where[owner] = dots
            where[owner[1:][owner[1:] == owner[:-1]]] = -2
            self._dots = where
        return self._dots


def _uints(words: np.ndarray, begin: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The digit strings buf[begin:end] (0 to 20 digits; empty reads 0) as uint64, and which were
    all digits and fit; a word ends at each string's end, one more for each further 8 digits."""
    n = end - begin
    value, ok = _digits8(words[end - 8], np.minimum(n, 8))
    ok &= n <= 20
    long = np.flatnonzero(n > 8)
    if long.size:
        n_long, end_long = n[long], end[long]
        middle, ok_middle = _digits8(words[end_long - 16], np.clip(n_long - 8, 0, 8))
        total = middle * _E8 + value[long]
        top = np.flatnonzero(n_long > 16)
        if top.size:
            head, ok_head = _digits8(words[end_long[top] - 24], np.clip(n_long[top] - 16, 0, 8))
            rest = total[top]
            # 2**64 - 1 = 1844 * 10**16 + 6744073709551615
            over = (head > np.uint64(1844)) | ((head == np.uint64(1844)) & (rest > np.uint64(6744073709551615)))
            total[top] = head * _E16 + rest
            ok_middle[top] &= ok_head & ~over
        value[long] = total
        ok[long] &= ok_middle
    return value, ok


def _digits8(words: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Words whose last n (0..8) bytes are a digit string, as (value, all those bytes were digits)."""
    d = words ^ _ZEROS  # a digit byte becomes 0..9 and no other byte does; no borrow crosses bytes
    d &= _KEEP[n]
    check = d + _NINE_TO_HIGH
    check |= d
    check &= _HIGH
    ok = check == 0
    # the first character is the lowest byte: fold neighbouring bytes, then pairs, then quads
    for shift, scale, mask in _FOLDS:
        check = d >> shift
        d *= scale
        d += check
        d &= mask
    return d, ok
