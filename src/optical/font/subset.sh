#!/usr/bin/env bash
# Regenerates DejaVuSansMono-subset.ttf from the system DejaVu Sans Mono
# (Debian package fonts-dejavu-core) with fonttools' pyftsubset.
# Kept: ASCII, Latin-1, Latin Extended-A, general punctuation, arrows, a few
# math signs, box drawing, block elements, check/ballot marks. Hinting and
# layout tables are dropped: the renderer (fontdue) uses neither.
set -euo pipefail
cd "$(dirname "$0")"
SRC=${1:-/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf}
pyftsubset "$SRC" \
  --unicodes="U+0020-007E,U+00A0-017F,U+2010-2027,U+2030-203A,U+20AC,U+2122,U+2190-2195,U+2212,U+2260,U+2264-2265,U+2500-259F,U+2713-2714,U+2717-2718" \
  --no-hinting --layout-features='' --drop-tables+=GSUB,GPOS,GDEF,kern,FFTM \
  --name-IDs='*' --notdef-outline \
  --output-file=DejaVuSansMono-subset.ttf
# The reader's zero: DejaVu Sans Mono draws `0` with a dot inside, which at
# snapshot sizes (10-12 px) blurs into the counter and reads as `6`, `8` or
# `@` (bench/LEGIBILITY.md). Drop the dot contour (the first of the three):
# a plain oval, as DejaVu Sans draws it.
python3 - DejaVuSansMono-subset.ttf <<'PY'
import sys
from fontTools.ttLib import TTFont
from fontTools.ttLib.tables._g_l_y_f import GlyphCoordinates
path = sys.argv[1]
font = TTFont(path)
glyf = font["glyf"]
zero = glyf[font.getBestCmap()[ord("0")]]
if zero.numberOfContours == 3:
    coords, ends, flags = zero.getCoordinates(glyf)
    start = ends[0] + 1
    zero.coordinates = GlyphCoordinates(coords[start:])
    zero.flags = flags[start:]
    zero.endPtsOfContours = [e - start for e in ends[1:]]
    zero.numberOfContours = 2
    zero.recalcBounds(glyf)
font.save(path)
PY
