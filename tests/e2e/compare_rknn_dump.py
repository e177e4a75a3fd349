#!/usr/bin/env python3
"""compare_rknn_dump.py: `rknn-diag inspect --json` against ../shared/tools/rknn_dump.py, the reference
decoder, on every .rknn file under ../shared/rknn/models, tensor by tensor and node by node.

Usage: compare_rknn_dump.py RKNN_DIAG SHARED_DIR

rknn_dump.py is imported in place (importlib); its own decoding functions (split_file, FlatBuf,
decode_attr_blob, parse_dict_string) give the expected values, so nothing here decodes the format a
third time. Exit 0 when everything matches, 1 on a mismatch (each one printed), 77 when ../shared or
its files are absent and CI is not set (a failure when it is).
"""
import importlib.util
import json
import math
import os
import struct
import subprocess
import sys


def skip(why):
    if os.environ.get('CI'):
        print('FAIL: %s (CI is set, so a skip is a failure)' % why)
        sys.exit(1)
    print('SKIP: %s' % why)
    sys.exit(77)


def load_reference(shared):
    path = os.path.join(shared, 'tools', 'rknn_dump.py')
    if not os.path.isfile(path):
        skip('needs %s' % path)
    spec = importlib.util.spec_from_file_location('rknn_dump', path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Checker:
    def __init__(self, path):
        self.path = path
        self.errors = []
        self.checks = 0

    def eq(self, what, got, want):
        self.checks += 1
        if not same(got, want):
            self.errors.append('%s: %s: rknn-diag %r, rknn_dump.py %r' % (self.path, what, got, want))


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            if math.isnan(a) and math.isnan(b):
                return True
            return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))
        return False
    if isinstance(a, list) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def json_float(v):
    """JSON has no NaN/inf: rknn-diag writes null there."""
    return None if isinstance(v, float) and not math.isfinite(v) else v


def compare_file(ref, cli, path):
    c = Checker(os.path.basename(os.path.dirname(path)) + '/' + os.path.basename(path))
    out = subprocess.run([cli, 'inspect', '--json', path], capture_output=True, text=True)
    if out.returncode != 0:
        c.errors.append('%s: rknn-diag inspect exited %d: %s' % (c.path, out.returncode, out.stderr.strip()))
        return c
    got = json.loads(out.stdout)
    data = open(path, 'rb').read()
    parts = ref.split_file(data)
    c.eq('format version', got['header']['format_version'], parts['version'])
    c.eq('header bytes', got['header']['header_bytes'], parts['header_size'])
    c.eq('model bytes', got['header']['model_bytes'], parts['data_size'])
    c.eq('json offset', got['header']['json_offset'], parts['json_offset'])
    c.eq('json bytes', got['header']['json_bytes'], len(parts['json']))
    jd = json.loads(parts['json'].decode('utf-8'))
    c.eq('JSON version', got['toolkit_version'], jd.get('version'))
    c.eq('JSON target_platform', got['json']['target_platform'], jd.get('target_platform'))
    c.eq('JSON network_platform', got['json']['network_platform'], jd.get('network_platform'))
    norm = {t['tensor_id']: t for t in jd.get('norm_tensor', [])}
    want_io = [(g['left'] == 'output', g['left_tensor_id'], norm[g['right_tensor_id']])
               for g in jd.get('graph', []) if g.get('left') in ('input', 'output')]
    c.eq('JSON io count', len(got['json']['io']), len(want_io))
    for x, (is_out, idx, t) in zip(got['json']['io'], want_io):
        c.eq('JSON io %s' % t['url'], [x['name'], x['is_output'], x['index'], x['shape'], x['qnt_type']],
             [t['url'], is_out, idx, t['size'], t['dtype']['qnt_type']])

    fb = ref.FlatBuf(parts['model'])
    rf = fb.fields(fb.root())

    def rstr(slot):
        return fb.string(rf[slot]) if slot in rf else ''
    c.eq('format', got['format'], rstr(1))
    c.eq('compiler', got['compiler']['text'], rstr(7))
    c.eq('compiler number', got['compiler']['number'], fb.i32(rf[6]) if 6 in rf else 0)
    c.eq('target platform', got['target_platform'], rstr(8))
    c.eq('source framework', got['source_framework'], rstr(9))
    c.eq('shape mode', got['shape_mode'], rstr(16))
    c.eq('schema version', got['schema_version'], fb.i32(rf[0]) if 0 in rf else 0)
    runtime = {}
    for slot, is_out in ((12, False), (13, True)):
        for name, v in json.loads(rstr(slot) or '{}').items():
            runtime[(name, is_out)] = (v.get('dtype'), v.get('layout'))
    c.eq('runtime io', {(x['name'], x['is_output']): (x['dtype'], x['layout']) for x in got['runtime_io']}, runtime)

    wslot = 20 if parts['version'] > 5 else 4
    blobs = []
    for t in fb.tables(rf[wslot]) if wslot in rf else []:
        tf = fb.fields(t)
        blobs.append(fb.vector(tf[0])[1] if 0 in tf else 0)
    c.eq('blob count', got['blobs'], len(blobs))

    d = ref.parse_dict_string(rstr(3)) if 3 in rf else None
    if isinstance(d, dict):
        attrs = d.get('attrs', {})
        c.eq('attrs names', [a['name'] for a in got['attrs']], list(attrs))
        for a in got['attrs']:
            w = attrs[a['name']]
            c.eq('attrs %s' % a['name'],
                 [a['idx'], a['shape'], a['layout'], a['dtype'], a['is_output'], a['mean'], a['std']],
                 [w.get('idx', -1), w.get('shape'), w.get('layout', ''), w.get('dtype', ''),
                  w.get('is_output', False), w.get('mean', []), w.get('std', [])])
        qt = d.get('quant_tab', {})
        c.eq('quant_tab names', [q['name'] for q in got['quant_tab']], list(qt))
        for q in got['quant_tab']:
            w = qt[q['name']]
            c.eq('quant_tab %s' % q['name'],
                 [q['dtype'], q['qmethod'], q['qtype'], q['min'], q['max'], q['scale'], q['zero_point']],
                 [w.get('dtype', ''), w.get('qmethod', ''), w.get('qtype', ''), w.get('min', []),
                  w.get('max', []), w.get('scale', []), w.get('zero_point', [])])
        c.eq('dynamic_shapes', got['dynamic_shapes'], d.get('dynamic_shapes'))
    else:
        c.eq('generator', got['generator'], rstr(3) or None)

    graphs = fb.tables(rf[2])
    c.eq('graph count', len(got['graphs']), len(graphs))
    for gi, g in enumerate(graphs):
        compare_graph(ref, fb, g, got['graphs'][gi], blobs, c, gi)
    return c


def compare_graph(ref, fb, g, gg, blobs, c, gi):
    gf = fb.fields(g)
    tensors = fb.tables(gf[0]) if 0 in gf else []
    nodes = fb.tables(gf[1]) if 1 in gf else []
    c.eq('graph %d inputs' % gi, gg['inputs'], fb.ints(gf[2]) if 2 in gf else [])
    c.eq('graph %d outputs' % gi, gg['outputs'], fb.ints(gf[3]) if 3 in gf else [])
    c.eq('graph %d tensor count' % gi, len(gg['tensors']), len(tensors))
    c.eq('graph %d node count' % gi, len(gg['nodes']), len(nodes))
    for ti, (t, x) in enumerate(zip(tensors, gg['tensors'])):
        tf = fb.fields(t)

        def s(slot):
            return fb.string(tf[slot]) if slot in tf else ''

        def vec(slot, fmt):
            return fb.ints(tf[slot], fmt) if slot in tf else []
        blob = fb.u32(tf[18]) if 18 in tf else None
        want = {
            'name': s(5), 'dtype_code': fb.u8(tf[0]) if 0 in tf else 0,
            'layout_code': fb.u8(tf[1]) if 1 in tf else 0, 'role_code': fb.u8(tf[2]) if 2 in tf else 0,
            'shape': vec(4, '<i'), 'native_shape': vec(3, '<i'), 'qmethod': s(6), 'qtype': s(7),
            'min': [json_float(v) for v in vec(8, '<f')], 'max': [json_float(v) for v in vec(9, '<f')],
            'scale': [json_float(v) for v in vec(10, '<f')], 'zero_point': vec(11, '<i'),
            'size': fb.u32(tf[12]) if 12 in tf else 0, 'mem_offset': fb.u32(tf[13]) if 13 in tf else 0,
            'blob': blob, 'blob_bytes': blobs[blob] if blob is not None and blob < len(blobs) else None,
        }
        for k, v in want.items():
            c.eq('tensor %d %s: %s' % (ti, want['name'], k), x[k], v)
        dtype_name = ref.ONNX_DTYPES[want['dtype_code']] if want['dtype_code'] < len(ref.ONNX_DTYPES) else None
        if dtype_name and dtype_name != 'undef':
            c.eq('tensor %d dtype name' % ti, x['dtype'], dtype_name)
        kind = ref.TENSOR_KIND.get(want['role_code'])
        if kind:
            c.eq('tensor %d role name' % ti, x['role'],
                 {'const?': 'const_other', 'compiler-const': 'compiler_const'}.get(kind, kind))
    for ni, (n, x) in enumerate(zip(nodes, gg['nodes'])):
        nf = fb.fields(n)
        what = 'node %d %s' % (ni, fb.string(nf[2]) if 2 in nf else '')
        c.eq(what + ' op_type', x['op_type'], fb.string(nf[1]) if 1 in nf else '')
        c.eq(what + ' name', x['name'], fb.string(nf[2]) if 2 in nf else '')
        c.eq(what + ' inputs', x['inputs'], fb.ints(nf[4]) if 4 in nf else [])
        c.eq(what + ' outputs', x['outputs'], fb.ints(nf[5]) if 5 in nf else [])
        target = fb.u8(nf[3]) if 3 in nf else None
        c.eq(what + ' target code', x['target_code'], target)
        c.eq(what + ' target', x['target'], 'CPU' if target is None else 'NPU' if target == 2 else 'other')
        c.eq(what + ' input names', x['input_names'], [fb.string(fb.fields(tensors[i])[5]) for i in x['inputs']])
        c.eq(what + ' task counts', x['task_counts'], fb.ints(nf[10]) if 10 in nf else [])
        blob = fb.blob(nf[9]) if 9 in nf else b''
        attrs = ref.decode_attr_blob(blob) if 9 in nf else {}
        if '<raw>' in attrs:
            c.eq(what + ' attribute bytes', x['attrs'], {'bytes_hex': attrs['<raw>']})
        elif attrs:
            c.eq(what + ' attributes', x['attrs'], attrs)
        elif blob:
            c.eq(what + ' short attribute blob', x['attrs'], {'bytes_hex': blob.hex()})
        else:
            c.eq(what + ' no attributes', x['attrs'], None)
        if 8 in nf:
            want = ref.FlatBuf.generic(fb, fb.deref(nf[8]))
            params = x['params']
            c.eq(what + ' param type', params['type'], fb.u8(nf[7]) if 7 in nf else 0)
            c.eq(what + ' param fields', {f['slot']: f['value'] for f in params['fields']}, want)
        else:
            c.eq(what + ' no params', x['params'], None)


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    cli, shared = argv[1], argv[2]
    models = os.path.join(shared, 'rknn', 'models')
    files = sorted(os.path.join(r, f) for r, _, fs in os.walk(models) for f in fs if f.endswith('.rknn'))
    if not files:
        skip('no .rknn files under %s' % models)
    ref = load_reference(shared)
    failed = 0
    for path in files:
        c = compare_file(ref, cli, path)
        for e in c.errors[:40]:
            print('MISMATCH ' + e)
        if len(c.errors) > 40:
            print('... %d more mismatches in %s' % (len(c.errors) - 40, c.path))
        print('%s %s: %d checks' % ('FAIL' if c.errors else 'OK  ', c.path, c.checks))
        failed += bool(c.errors)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
