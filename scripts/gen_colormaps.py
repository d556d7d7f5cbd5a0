#!/usr/bin/python3
# Usage: scripts/gen_colormaps.py src/core/plot/colormap_data.cc [MATPLOTLIB_DIR]
# Reads the published colour-map tables of matplotlib (_cm_listed.py, _cm.py)
# as text (no import of matplotlib) and writes them as C++ arrays.
# MATPLOTLIB_DIR: e.g. the lib/matplotlib folder of `apt-get download
# python3-matplotlib` unpacked with dpkg-deb -x.
import sys
MPL = sys.argv[2] if len(sys.argv) > 2 else '/usr/lib/python3/dist-packages/matplotlib'
ns = {}
src = open(MPL + '/_cm_listed.py').read()
exec(src[src.index('_magma_data'):src.index('cmaps = {')], ns)
cm = open(MPL + '/_cm.py').read()
s = cm.index('_RdBu_data = (')
exec(cm[s:cm.index(')\n\n', s) + 1], ns)
out = ['// Generated from matplotlib 3.6.3 (Debian python3-matplotlib 3.6.3-1+b1):',
       '//  - lib/matplotlib/_cm_listed.py: _viridis_data, _magma_data, _cividis_data',
       '//    (256 entries each; viridis and magma by Nathaniel J. Smith and Stefan',
       '//    van der Walt, CC0; cividis by Jamie R. Nunez, Christopher R. Anderton and',
       '//    Ryan S. Renslow, PLOS ONE 13(7) e0199239, 2018);',
       '//  - lib/matplotlib/_cm.py: _RdBu_data, the 11-class ColorBrewer RdBu',
       '//    (Cynthia Brewer, colorbrewer2.org, Apache-2.0), low = red, high = blue.',
       '// Regenerate with scripts/gen_colormaps.py; do not edit by hand.',
       '#include "core/plot/colormap_data.h"', '', 'namespace pe::plot {', '']
for name, key in [('kViridisData', '_viridis_data'), ('kMagmaData', '_magma_data'),
                  ('kCividisData', '_cividis_data'), ('kRdBuData', '_RdBu_data')]:
    d = ns[key]
    out.append(f'const std::array<Rgb, {len(d)}> {name} = {{{{')
    for r, g, b in d:
        out.append(f'    {{{float(r)!r}, {float(g)!r}, {float(b)!r}}},')
    out.append('}};')
    out.append('')
out.append('}  // namespace pe::plot')
open(sys.argv[1], 'w').write('\n'.join(out) + '\n')
