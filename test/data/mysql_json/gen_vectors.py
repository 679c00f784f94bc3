#!/usr/bin/env python3
"""Writes hand.txt and diffs.txt: MySQL binary JSON values (and PARTIAL_UPDATE_ROWS
JSON diffs) encoded by this small independent encoder of the format, each beside the
text MySQL 8 prints for it, written by hand below (not computed). See README.

    python3 test/data/mysql_json/gen_vectors.py   (from the repository root)
"""
import os
import struct

# ---- values: Python data plus tagged tuples for the types Python lacks -----------------
# ('i16', v) ('u16', v) ('i32', v) ('u32', v) ('i64', v) ('u64', v) ('dbl', v)
# ('dec', precision, scale, "digits") ('opq', field_type, bytes)
# ('date', y, m, d) ('datetime', ftype, y, m, d, hh, mm, ss, us) ('time', neg, h, m, s, us)
# ('big', value): the value as a large container; ('raw', type, bytes): as given


def varlen(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


DIG2BYTES = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4]


def decimal_bin(prec, scale, text):
    neg = text.startswith('-')
    text = text.lstrip('-')
    ip, _, fp = text.partition('.')
    fp = (fp + '0' * scale)[:scale]
    intg = prec - scale
    ip = ip.rjust(intg, '0')
    out = bytearray()
    ix, ig = intg % 9, intg // 9
    pos = 0
    if ix:
        out += int(ip[:ix]).to_bytes(DIG2BYTES[ix], 'big')
        pos = ix
    for _ in range(ig):
        out += int(ip[pos:pos + 9]).to_bytes(4, 'big')
        pos += 9
    fg, fx = scale // 9, scale % 9
    for i in range(fg):
        out += int(fp[i * 9:i * 9 + 9]).to_bytes(4, 'big')
    if fx:
        out += int(fp[fg * 9:]).to_bytes(DIG2BYTES[fx], 'big')
    out[0] ^= 0x80
    if neg:
        out = bytearray(b ^ 0xFF for b in out)
    return bytes([prec, scale]) + bytes(out)


def packed_datetime(y, mo, d, h, mi, s, us):
    ym = y * 13 + mo
    ymd = (ym << 5) | d
    hms = (h << 12) | (mi << 6) | s
    return struct.pack('<q', (((ymd << 17) | hms) << 24) + us)


def packed_time(neg, h, mi, s, us):
    v = (((h << 12) | (mi << 6) | s) << 24) + us
    return struct.pack('<q', -v if neg else v)


def opaque(ftype, data):
    return bytes([ftype]) + varlen(len(data)) + data


def scalar(v):
    """(type, bytes) of a non-container value."""
    if v is None:
        return 4, b'\x00'
    if v is True:
        return 4, b'\x01'
    if v is False:
        return 4, b'\x02'
    if isinstance(v, str):
        b = v.encode()
        return 12, varlen(len(b)) + b
    if isinstance(v, float):
        return 11, struct.pack('<d', v)
    if isinstance(v, int):
        if -32768 <= v <= 32767:
            return 5, struct.pack('<h', v)
        if -2**31 <= v < 2**31:
            return 7, struct.pack('<i', v)
        if -2**63 <= v < 2**63:
            return 9, struct.pack('<q', v)
        return 10, struct.pack('<Q', v)
    tag = v[0]
    fmt = {'i16': (5, '<h'), 'u16': (6, '<H'), 'i32': (7, '<i'), 'u32': (8, '<I'),
           'i64': (9, '<q'), 'u64': (10, '<Q'), 'dbl': (11, '<d')}
    if tag in fmt:
        t, f = fmt[tag]
        return t, struct.pack(f, v[1])
    if tag == 'dec':
        return 15, opaque(246, decimal_bin(v[1], v[2], v[3]))
    if tag == 'opq':
        return 15, opaque(v[1], v[2])
    if tag == 'date':
        return 15, opaque(10, packed_datetime(v[1], v[2], v[3], 0, 0, 0, 0))
    if tag == 'datetime':
        return 15, opaque(v[1], packed_datetime(*v[2:]))
    if tag == 'time':
        return 15, opaque(11, packed_time(*v[1:]))
    if tag == 'raw':
        return v[1], v[2]
    raise ValueError(v)


def inlined(t, large):
    return t in (4, 5, 6) or (large and t in (7, 8))


def container(v, large):
    """(type, bytes) of a dict/list (force large with large=True)."""
    osz = 4 if large else 2
    w = (lambda n: struct.pack('<I', n)) if large else (lambda n: struct.pack('<H', n))
    if isinstance(v, dict):
        items = sorted(v.items(), key=lambda kv: (len(kv[0].encode()), kv[0].encode()))
        keys = [k.encode() for k, _ in items]
        vals = [x for _, x in items]
    else:
        keys, vals = None, list(v)
    n = len(vals)
    hdr = 2 * osz + (n * (osz + 2) if keys is not None else 0) + n * (1 + osz)
    tail = bytearray()
    key_entries = bytearray()
    if keys is not None:
        for k in keys:
            key_entries += w(hdr + len(tail)) + struct.pack('<H', len(k))
            tail += k
    val_entries = bytearray()
    for x in vals:
        t, b = encode(x, large)
        if inlined(t, large):
            val_entries += bytes([t]) + b.ljust(osz, b'\x00')
        else:
            val_entries += bytes([t]) + w(hdr + len(tail))
            tail += b
    size = hdr + len(tail)
    if not large and size > 0xFFFF:
        return container(v, True)
    t = (0 if keys is not None else 2) + (1 if large else 0)
    return t, w(n) + w(size) + bytes(key_entries) + bytes(val_entries) + bytes(tail)


def encode(v, large=False):
    if isinstance(v, tuple) and v[0] == 'big':
        return container(v[1], True)
    if isinstance(v, (dict, list)):
        return container(v, large)
    return scalar(v)


def doc(v):
    t, b = encode(v)
    return bytes([t]) + b


# ---- the vectors: value, then the text MySQL 8 prints (by hand) ----------------------------
E = '!corrupt'
deep = []
d = deep
for _ in range(99):
    d.append([])
    d = d[0]
too_deep = [deep]

HAND = [
    ({}, '{}'),
    ([], '[]'),
    ({'a': 1, 'b': [1, 2]}, '{"a": 1, "b": [1, 2]}'),
    ({'bb': 1, 'a': 2, 'c': 3, 'aa': 4}, '{"a": 2, "c": 3, "aa": 4, "bb": 1}'),
    ([None, True, False], '[null, true, false]'),
    ([('i16', -32768), ('i16', 32767), ('u16', 65535), ('u16', 0)], '[-32768, 32767, 65535, 0]'),
    ([('i32', -2147483648), ('u32', 4294967295)], '[-2147483648, 4294967295]'),
    (('i32', 70000), '70000'),
    (('u32', 70000), '70000'),
    (('i64', -9223372036854775808), '-9223372036854775808'),
    (('u64', 18446744073709551615), '18446744073709551615'),
    (('big', [('i32', -5), ('u32', 7), ('i16', -1), ('u16', 9), None, True, 'x']),
     '[-5, 7, -1, 9, null, true, "x"]'),
    (('big', {'k': ('i32', 2147483647), 'kk': {'in': [1]}, 'z': 'zz'}),
     '{"k": 2147483647, "z": "zz", "kk": {"in": [1]}}'),
    ([('big', {'x': ('big', [1, 'two', 3.5])})], '[{"x": [1, "two", 3.5]}]'),
    (1.0, '1.0'),
    (-2.5, '-2.5'),
    (0.1, '0.1'),
    (3.14159, '3.14159'),
    (1e15, '1e15'),
    (1e14, '100000000000000.0'),
    (123456789012345.6, '123456789012345.6'),
    (1.8446744073709552e19, '1.8446744073709552e19'),
    (1e-5, '0.00001'),
    (1.5e-20, '1.5e-20'),
    (1e300, '1e300'),
    (-1.7976931348623157e308, '-1.7976931348623157e308'),
    (5e-324, '5e-324'),
    (0.0, '0.0'),
    ([1.0, ('dbl', 2.0)], '[1.0, 2.0]'),
    ('', '""'),
    ('caf\u00e9 \u20ac \U0001F600', '"caf\u00e9 \u20ac \U0001F600"'),
    ('q"b\\s/', '"q\\"b\\\\s/"'),
    ('\b\f\n\r\t', '"\\b\\f\\n\\r\\t"'),
    ('\x00\x01\x1f\x7f', '"\\u0000\\u0001\\u001f\\u007f"'),
    ({'k"\n': 'v'}, '{"k\\"\\n": "v"}'),
    ('x' * 200, '"' + 'x' * 200 + '"'),
    ('y' * 17000, '"' + 'y' * 17000 + '"'),
    (('dec', 10, 2, '12345678.90'), '12345678.90'),
    (('dec', 10, 2, '-12345678.90'), '-12345678.90'),
    (('dec', 5, 5, '0.00001'), '0.00001'),
    (('dec', 2, 0, '7'), '7'),
    (('dec', 1, 0, '0'), '0'),
    (('dec', 65, 30, '12345678901234567890123456789012345.123456789012345678901234567890'),
     '12345678901234567890123456789012345.123456789012345678901234567890'),
    (('dec', 20, 10, '-0.0000000001'), '-0.0000000001'),
    ({'p': ('dec', 4, 2, '-1.50')}, '{"p": -1.50}'),
    (('date', 2024, 2, 29), '"2024-02-29"'),
    (('date', 0, 0, 0), '"0000-00-00"'),
    (('datetime', 12, 2015, 1, 15, 23, 24, 25, 0), '"2015-01-15 23:24:25.000000"'),
    (('datetime', 12, 9999, 12, 31, 23, 59, 59, 999999), '"9999-12-31 23:59:59.999999"'),
    (('datetime', 7, 2038, 1, 19, 3, 14, 7, 500000), '"2038-01-19 03:14:07.500000"'),
    (('time', False, 12, 34, 56, 0), '"12:34:56.000000"'),
    (('time', True, 838, 59, 59, 0), '"-838:59:59.000000"'),
    (('time', True, 0, 0, 1, 250000), '"-00:00:01.250000"'),
    (('time', False, 0, 0, 0, 1), '"00:00:00.000001"'),
    (('opq', 252, b'\xca\xfe'), '"base64:type252:yv4="'),
    (('opq', 16, b'\x01'), '"base64:type16:AQ=="'),
    (('opq', 15, b'abc'), '"base64:type15:YWJj"'),
    (('opq', 252, b''), '"base64:type252:"'),
    (('opq', 255, bytes(range(60))),
     '"base64:type255:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKiss'
     'LS4vMDEyMzQ1Njc4\\nOTo7'
     '"'),
    (deep, '[' * 100 + ']' * 100),
    (too_deep, E),
    # hostile headers: each one corrupt
    (('raw', 0, struct.pack('<HH', 1, 3)), E),           # 1 member in 3 bytes
    (('raw', 2, struct.pack('<HH', 1, 400) + b'\x05\x01\x00'), E),  # size beyond the data
    (('raw', 2, struct.pack('<HH', 1, 7) + b'\x0c\x09\x00'), E),    # offset past the size
    (('raw', 2, struct.pack('<HH', 1, 7) + b'\x0d\x00\x00'), E),    # value type 13
    (('raw', 0, struct.pack('<HHHH', 1, 12, 40, 1) + b'\x05\x01\x00\x61'), E),  # key offset
    (('raw', 4, b'\x03'), E),                           # literal 3
    (('raw', 12, b'\x05ab'), E),                        # string longer than the data
    (('raw', 12, b'\x80\x80\x80\x80\x80\x01'), E),      # length of 6 bytes
    (('raw', 9, b'\x01\x02'), E),                       # int64 truncated
    (('raw', 11, struct.pack('<d', float('inf'))), E),
    (('raw', 15, b'\xf6\x04\x42\x02\x81\x63'), E),      # DECIMAL(66,2)
    (('raw', 15, b'\xf6\x03\x03\x02\x81\x63'), E),      # DECIMAL(3,2) of 1 byte
    (('raw', 15, b'\xf6\x04\x03\x02\x81\x64'), E),      # fraction digits 100 in 2 digits
    (('raw', 15, b'\x0a\x04\x00\x00\x00\x00'), E),      # DATE of 4 bytes
    (('raw', 15, b'\x0b\x08' + struct.pack('<q', (1 << 24) * (61))), E),  # 61 seconds
    (('raw', 15, b'\x0c\x08' + struct.pack('<q', 1000000)), E),  # fraction 1000000
    (('raw', 15, b'\x0c\x08' + struct.pack('<q', -(1 << 24))), E),  # negative DATETIME
]

# ---- diffs: before, [(op, path, value)], expected after text ------------------------------
REPLACE, INSERT, REMOVE = 0, 1, 2


def lenenc(n):
    if n < 0xFB:
        return bytes([n])
    if n < 1 << 16:
        return b'\xfc' + struct.pack('<H', n)
    if n < 1 << 24:
        return b'\xfd' + struct.pack('<I', n)[:3]
    return b'\xfe' + struct.pack('<Q', n)


def diffs_bytes(diffs):
    out = bytearray()
    for op, path, val in diffs:
        p = path.encode()
        out += bytes([op]) + lenenc(len(p)) + p
        if op != REMOVE:
            v = doc(val)
            out += lenenc(len(v)) + v
    return bytes(out)


BEFORE = {'a': 1, 'b': [10, 20, 30], 'c': {'d': 'x', 'e f': [True]}}
DIFFS = [
    (BEFORE, [(REPLACE, '$.a', 2)],
     '{"a": 2, "b": [10, 20, 30], "c": {"d": "x", "e f": [true]}}'),
    (BEFORE, [(REPLACE, '$.b[1]', 'twenty')],
     '{"a": 1, "b": [10, "twenty", 30], "c": {"d": "x", "e f": [true]}}'),
    (BEFORE, [(INSERT, '$.zz', None), (INSERT, '$.ab', [1])],
     '{"a": 1, "b": [10, 20, 30], "c": {"d": "x", "e f": [true]}, "ab": [1], "zz": null}'),
    (BEFORE, [(INSERT, '$.b[0]', 5), (INSERT, '$.b[9]', 40)],
     '{"a": 1, "b": [5, 10, 20, 30, 40], "c": {"d": "x", "e f": [true]}}'),
    (BEFORE, [(REMOVE, '$.b[1]', None), (REMOVE, '$.a', None)],
     '{"b": [10, 30], "c": {"d": "x", "e f": [true]}}'),
    (BEFORE, [(REPLACE, '$.c."e f"[0]', False), (INSERT, '$.c.d2', ('dec', 4, 2, '1.25'))],
     '{"a": 1, "b": [10, 20, 30], "c": {"d": "x", "d2": 1.25, "e f": [false]}}'),
    (BEFORE, [(REPLACE, '$."c".d', {'n': [1, 2]}), (REPLACE, '$.c.d.n[1]', 3)],
     '{"a": 1, "b": [10, 20, 30], "c": {"d": {"n": [1, 3]}, "e f": [true]}}'),
    (BEFORE, [(REPLACE, '$.b[last]', 'L'), (REMOVE, '$.b[last-2]', None)],
     '{"a": 1, "b": [20, "L"], "c": {"d": "x", "e f": [true]}}'),
    (BEFORE, [(REPLACE, '$', [1])], '[1]'),
    (BEFORE, [(REPLACE, '$.c."\\u0065 f"', 'u')],
     '{"a": 1, "b": [10, 20, 30], "c": {"d": "x", "e f": "u"}}'),
    (BEFORE, [], '{"a": 1, "b": [10, 20, 30], "c": {"d": "x", "e f": [true]}}'),
    (('big', {'big': [1, 2], 'k': 'v'}), [(INSERT, '$.big[1]', 1.5)],
     '{"k": "v", "big": [1, 1.5, 2]}'),
    ([[]], [(INSERT, '$[0][0]', 'in')], '[["in"]]'),
    (BEFORE, [(REPLACE, '$.nope', 1)], E),
    (BEFORE, [(REMOVE, '$.b[7]', None)], E),
    (BEFORE, [(REPLACE, '$.q.r', 1)], E),
    (BEFORE, [(INSERT, '$.a.x', 1)], E),
    (BEFORE, [(REPLACE, '$.b.x', 1)], E),
    (BEFORE, [(REPLACE, '$.a[0]', 1)], E),
    (BEFORE, [(REPLACE, '$.*', 1)], E),
    (BEFORE, [(REPLACE, '$**.d', 1)], E),
    (BEFORE, [(REPLACE, '$.b[0 to 1]', 1)], E),
    (BEFORE, [(REPLACE, '$.b[*]', 1)], E),
    (BEFORE, [(REPLACE, 'a', 1)], E),
    (BEFORE, [(REMOVE, '$', None)], E),
]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, 'hand.txt'), 'w') as f:
        f.write('# written by gen_vectors.py: hex of a binary JSON value <TAB> MySQL 8 text'
                ' (!corrupt: must be W2L_CORRUPT)\n')
        for v, want in HAND:
            f.write(doc(v).hex() + '\t' + want + '\n')
    with open(os.path.join(here, 'diffs.txt'), 'w') as f:
        f.write('# written by gen_vectors.py: hex of a before image <TAB> hex of its diffs'
                ' <TAB> the after image as MySQL 8 text (!corrupt: must be W2L_CORRUPT)\n')
        for before, diffs, want in DIFFS:
            f.write(doc(before).hex() + '\t' + (diffs_bytes(diffs).hex() or '-') + '\t' +
                    want + '\n')


main()
