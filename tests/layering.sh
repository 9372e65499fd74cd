#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The layers of src/asyncprobe/ (README.md, Layout: the table between the
# "layers" markers, lowest layer first) against the code:
#   1. the table and the folders agree: every folder of src/asyncprobe/ is a
#      row, every row a folder with its public header and its Makemodule.am,
#      and the folder's headers name each of its .c files;
#   2. includes: a file uses its own folder's headers, and of another folder
#      only the public header, and only of a folder above it in the table;
#   3. objects (nm over the build tree): no object calls or reads a symbol
#      that a folder below it in the table defines.  A strict order of
#      folders leaves no room for two folders that call each other, directly
#      or around a circle.
# top_srcdir and top_builddir come from the Makefile (AM_TESTS_ENVIRONMENT).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-.}
if ! command -v python3 >/dev/null || ! command -v nm >/dev/null; then
	echo "1..0 # SKIP python3 or nm is not installed (Debian: python3, binutils)"
	exit 0
fi
exec python3 - "$top_srcdir" "$top_builddir" <<'EOF'
import os, re, subprocess, sys

src, build = sys.argv[1], sys.argv[2]
tree = os.path.join(src, 'src', 'asyncprobe')
points = []          # (ok, title, details)


def point(ok, title, details=()):
    points.append((ok, title, list(details)))


# --- the table
readme = open(os.path.join(src, 'README.md'), encoding='utf-8').read()
m = re.search(r'<!-- layers\b.*?-->(.*?)<!-- /layers -->', readme, re.S)
layers, headers = [], {}
if m:
    for row in m.group(1).splitlines():
        r = re.match(r'\|\s*`([^`]+)`\s*\|\s*(?:`([^`]+)`)?\s*\|', row)
        if r:
            name = r.group(1).rstrip('/')
            layers.append(name)
            headers[name] = r.group(2)
point(bool(layers), 'README.md has the layers table (<!-- layers --> ... <!-- /layers -->)')
rank = {name: i for i, name in enumerate(layers)}
folders = sorted(d for d in os.listdir(tree) if os.path.isdir(os.path.join(tree, d)))
top_files = sorted(f for f in os.listdir(tree) if f.endswith('.c'))

bad = [f'{d}/: a folder the table does not list' for d in folders if d not in rank]
bad += [f'{f}: a file at the top the table does not list' for f in top_files if f not in rank]
for name in layers:
    if name.endswith('.c'):
        if name not in top_files:
            bad.append(f'{name}: in the table, not in src/asyncprobe/')
        continue
    if name not in folders:
        bad.append(f'{name}/: in the table, not in src/asyncprobe/')
        continue
    if headers.get(name) != name + '.h':
        bad.append(f'{name}/: the table names {headers.get(name)!r} as its public header, not {name}.h')
    for need in (name + '.h', 'Makemodule.am'):
        if not os.path.isfile(os.path.join(tree, name, need)):
            bad.append(f'{name}/{need}: missing')
point(not bad, 'the table and the folders of src/asyncprobe/ agree', bad)

# Headers say where their code lives: each folder's public header (or its
# internal.h) names every .c file of the folder.
bad = []
for name in layers:
    d = os.path.join(tree, name)
    if name.endswith('.c') or not os.path.isdir(d):
        continue
    text = ''
    for h in (name + '.h', 'internal.h'):
        if os.path.isfile(os.path.join(d, h)):
            text += open(os.path.join(d, h), encoding='utf-8').read()
    bad += [f'{name}/{c}: named in neither {name}.h nor internal.h'
            for c in sorted(os.listdir(d)) if c.endswith('.c') and c not in text]
point(not bad, 'each folder\'s headers name every .c file of the folder', bad)


def layer_of(rel):
    """'engine/engine.c' -> 'engine', 'cli.c' -> 'cli.c'"""
    return rel.split('/')[0] if '/' in rel else rel


# --- includes
bad = []
sources = []
for dirpath, _, files in os.walk(tree):
    for f in files:
        if f.endswith(('.c', '.h')):
            sources.append(os.path.relpath(os.path.join(dirpath, f), tree))
for rel in sorted(sources):
    me = layer_of(rel)
    if me not in rank:
        continue
    for n, line in enumerate(open(os.path.join(tree, rel), encoding='utf-8'), 1):
        inc = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if not inc:
            continue
        path = inc.group(1)
        if path == 'async.h':
            continue                     # libasync's public header
        if '/' not in path:
            if '/' not in rel:
                bad.append(f'{rel}:{n}: includes "{path}", which is no folder\'s public header')
            elif not os.path.isfile(os.path.join(tree, me, path)):
                bad.append(f'{rel}:{n}: includes "{path}", which is not in {me}/')
            continue
        other = path.split('/')[0]
        if other not in rank:
            bad.append(f'{rel}:{n}: includes "{path}", from no layer of the table')
        elif other == me:
            continue
        elif path != f'{other}/{other}.h':
            bad.append(f'{rel}:{n}: includes "{path}", a header of {other}/ that is not its public one')
        elif rank[other] > rank[me]:
            bad.append(f'{rel}:{n}: includes "{path}", but {other}/ is a layer above {me}')
point(bool(sources) and not bad,
      f'includes: {len(sources)} files use only their own folder and the public headers of lower layers', bad)

# --- objects
objs = {}                                # layer -> [object paths]
btree = os.path.join(build, 'src', 'asyncprobe')
for dirpath, _, files in os.walk(btree):
    for f in files:
        if not f.endswith('.o'):
            continue
        rel = os.path.relpath(os.path.join(dirpath, f), btree)
        parts = [p for p in rel.split(os.sep) if p != '.libs']
        if len(parts) == 1:
            # the program's own objects: asyncprobe-cli.o
            layer = re.sub(r'^[^-]+-', '', parts[0])[:-2] + '.c'
        else:
            layer = parts[0]
        if '.libs' in rel.split(os.sep) and any(o.endswith(os.sep + f) for o in objs.get(layer, [])):
            continue
        objs.setdefault(layer, []).append(os.path.join(dirpath, f))
defined, undefined = {}, {}
for layer, files in objs.items():
    for o in files:
        out = subprocess.run(['nm', o], capture_output=True, text=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBRVWC':
                defined.setdefault(p[2], set()).add(layer)
            elif len(p) == 2 and p[0] == 'U':
                undefined.setdefault(layer, {}).setdefault(p[1], []).append(os.path.basename(o))
missing = [layer for layer in layers if layer not in objs]
point(not missing, 'objects: the build tree has objects of every layer',
      [f'{layer}: no object under {btree} (build first)' for layer in missing])
bad = []
edges = set()
for layer, syms in sorted(undefined.items()):
    if layer not in rank:
        bad.append(f'{layer}: objects of no layer of the table')
        continue
    for sym, users in sorted(syms.items()):
        for owner in sorted(defined.get(sym, ())):
            if owner == layer or owner not in rank:
                continue
            edges.add((layer, owner))
            if rank[owner] > rank[layer]:
                bad.append(f'{layer}/ ({", ".join(sorted(set(users)))}) uses {sym} of {owner}/, a layer above it')
point(not bad and bool(edges), f'objects: {len(edges)} uses between layers, each of a lower layer', bad)

print(f'1..{len(points)}')
for i, (ok, title, details) in enumerate(points, 1):
    print(f'{"ok" if ok else "not ok"} {i} - {title}')
    for d in details[:40]:
        print(f'# {d}')
EOF
