#!/usr/bin/env python3
"""Writes the seed corpora of fuzz_adb_packet and fuzz_adb_sync (tests/fuzz/corpus/adb_*/).
Run from the repository root: python3 tests/fuzz/gen_corpus_adb.py"""
import struct

def hdr(cmd, a0, a1, data, check=True):
    c = struct.unpack('<I', cmd)[0]
    s = sum(data) & 0xffffffff if check else 0
    return struct.pack('<6I', c, a0, a1, len(data), s, c ^ 0xffffffff) + data

def rec(i, *vals):
    return i + b''.join(struct.pack('<I', v) for v in vals)

def stat2(ident, mode, size):
    return ident + struct.pack('<I', 0) + struct.pack('<QQIIIIQqqq', 1, 2, mode, 1, 0, 0, size, 0, 0, 0)

def dnt2(name, mode, size):
    return stat2(b'DNT2', mode, size) + struct.pack('<I', len(name)) + name

banner = b"device::ro.product.name=rk;features=shell_v2,cmd,stat_v2,ls_v2"
cnxn = hdr(b'CNXN', 0x01000001, 4096, banner)
okay = hdr(b'OKAY', 5, 1, b'')
def wrte(d): return hdr(b'WRTE', 5, 1, d, False)
sta2 = stat2(b'STA2', 0o40755, 4096)
done76 = b'DONE' + bytes(72)
lis = dnt2(b'.', 0o40755, 0) + dnt2(b'a.npy', 0o100644, 5) + done76
recv = b'DATA' + struct.pack('<I', 5) + b'hello' + b'DONE' + struct.pack('<I', 0)

P = 'tests/fuzz/corpus/adb_packet/'
seeds = {
    'session_v2.bin': cnxn + okay + okay + wrte(sta2) + okay + wrte(lis) + okay + wrte(recv) + hdr(b'CLSE', 5, 1, b'') + b'\x05',
    'auth_token.bin': hdr(b'AUTH', 1, 0, bytes(range(20))) + cnxn + okay + b'\x03',
    'session_v1.bin': hdr(b'CNXN', 0x01000000, 4096, b"device::features=shell_v2") + okay + okay
        + wrte(rec(b'STAT', 0o40755, 0, 0)) + okay + wrte(rec(b'DENT', 0o100644, 5, 0, 1) + b'x' + rec(b'DONE', 0, 0, 0, 0)) + b'\x00',
    'shell_v2.bin': cnxn + okay + okay + wrte(b'\x01' + struct.pack('<I', 3) + b'hi\n' + b'\x03' + struct.pack('<I', 1) + b'\x07') + b'\x01',
    'oversize.bin': struct.pack('<6I', 0x4e584e43, 0x01000001, 4096, 0x7fffffff, 0, 0x4e584e43 ^ 0xffffffff) + b'\x00',
    'regression_5_corrupt_magic.bin': cnxn[:20] + b'\x00\x00\x00\x00' + banner + b'\x02',
    # an empty WRTE while we wait for the OKAY of our request (was: memcpy to a NULL buffer, UBSan)
    'regression_5_empty_wrte.bin': cnxn + okay + wrte(b'') + okay + wrte(sta2) + b'\x05',
}
for name, data in seeds.items():
    open(P + name, 'wb').write(data)

S = 'tests/fuzz/corpus/adb_sync/'
seeds = {
    'stat_list_v2.bin': b'\x01' + sta2 + lis,
    'stat_list_v1.bin': b'\x00' + rec(b'STAT', 0o40755, 0, 0) + rec(b'DENT', 0o40755, 0, 0, 2) + b'..'
        + rec(b'DENT', 0o100644, 9, 0, 3) + b'abc' + rec(b'DONE', 0, 0, 0, 0),
    'recv.bin': b'\x02' + recv,
    'recv_fail.bin': b'\x02' + b'FAIL' + struct.pack('<I', 11) + b'open failed',
    'recv_bounded.bin': b'\x06' + b'DATA' + struct.pack('<I', 2000) + bytes(2000) + b'DONE' + bytes(4),
    'regression_5_huge_name.bin': b'\x01' + sta2 + b'DNT2' + bytes(68) + struct.pack('<I', 0xffffffff),
}
for name, data in seeds.items():
    open(S + name, 'wb').write(data)
