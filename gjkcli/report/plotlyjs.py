"""plotly.js inside gjk's pages, deflated: a page costs about 2 MB of script, not 4.8.

plotly's Python package ships one bundle, ``plotly.min.js``, already minified and holding every
trace type (4.8 MB in plotly 6 and 7); its partial bundles (``plotly-gl3d``, ``plotly-cartesian``)
are published only on npm, which gjk's installs do not reach. A page that holds the bundle as text
costs that much whatever it draws: a two-part check was 4.8 MB. Compressed with gzip and written
as base64 the bundle is about 1.96 MB; the page inflates it with the browser's own
DecompressionStream (Chromium 80, Firefox 113, Safari 16.4 and later) and runs it, then runs the
page's scripts that need Plotly, which wait as ``<script type="text/x-gjk-after-plotly">``. No
request leaves the page: it stays one file that works offline.

The compressed bundle is made once per process (about 0.3 s on an idle machine).
"""
from __future__ import annotations

import base64
import gzip
import re
from functools import lru_cache

__all__ = ["self_contained", "AFTER_PLOTLY"]

# The type of a script that needs Plotly: the browser does not run it; the loader does, in order.
AFTER_PLOTLY = "text/x-gjk-after-plotly"

# A script element to run after plotly.js: plotly's own (type text/javascript) and gjk's (no type).
_SCRIPT = re.compile(r'<script(?: type="text/javascript")?>')

_LOADER = """<script type="application/octet-stream" id="gjk-plotlyjs">{packed}</script>
<script>
(function () {{
  function failed(error) {{
    const p = document.createElement('p');
    p.className = 'error';
    p.textContent = 'This page could not start its 3D view (' + error + '): it needs a browser ' +
      'that inflates gzip itself (Chromium 80, Firefox 113, Safari 16.4 or later).';
    document.body.prepend(p);
    console.error(error);
  }}
  if (typeof DecompressionStream === 'undefined') return failed('no DecompressionStream');
  const text = atob(document.getElementById('gjk-plotlyjs').textContent);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  new Response(stream).text().then(function (code) {{
    const plotly = document.createElement('script');
    plotly.textContent = code;
    document.head.appendChild(plotly);
    document.querySelectorAll('script[type="{after}"]').forEach(function (waiting) {{
      const run = document.createElement('script');
      run.textContent = waiting.textContent;
      waiting.replaceWith(run);
    }});
  }}).catch(failed);
}})();
</script>
"""


def self_contained(page: str) -> str:
    """`page` (a whole HTML page whose scripts use Plotly, without plotly.js) with plotly.js
    inside, deflated: its scripts wait for it, and the loader goes before ``</body>``."""
    waiting = _SCRIPT.sub(f'<script type="{AFTER_PLOTLY}">', page)
    loader = _LOADER.format(packed=_packed(), after=AFTER_PLOTLY)
    at = waiting.rindex("</body>")
    return waiting[:at] + loader + waiting[at:]


@lru_cache(maxsize=1)
def _packed() -> str:
    """plotly.min.js, gzip-compressed (no timestamp: the same bytes every run), in base64."""
    from plotly.offline import get_plotlyjs

    return base64.b64encode(gzip.compress(get_plotlyjs().encode("utf-8"), compresslevel=6, mtime=0)).decode("ascii")
