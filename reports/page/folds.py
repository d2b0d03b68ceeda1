"""The page's folds, loaded when they open: a fold's body (the evidence
of a claim, a group of changes between versions, the case table) is not
written where it shows but into one gzip-compressed, base64-encoded JSON
list at the end of the page, which the page's script inflates (the
browser's DecompressionStream) the first time a fold opens, or a link
points into one. The page stays one self-contained file, a fraction of its
unfolded size; `unfolded` gives back the page as it would be with every
body in place, for a reader without a browser (the tests, grep)."""

from __future__ import annotations

import base64
import gzip
import json
import re

from markupsafe import Markup

# The element that carries the bodies, and the attribute of a fold whose
# body it holds (its index in the list).
PAYLOAD_ID = "folds"
ATTRIBUTE = "data-fold"

# A fold written without its body: its opening tag, its summary, its end.
_EMPTY_FOLD = re.compile(r'(<details\b[^>]*?) ' + ATTRIBUTE + r'="(\d+)"([^>]*>.*?</summary>)(</details>)', re.S)
_PAYLOAD = re.compile(r'<script type="application/gzip" id="' + PAYLOAD_ID + r'">([^<]*)</script>')


class Folds:
    """The bodies of one page's folds, in the order the page puts them."""

    def __init__(self) -> None:
        self.bodies: list[str] = []

    def put(self, body: str) -> Markup:
        """The fold attribute (` data-fold="N"`) of a body set aside."""
        self.bodies.append(str(body))
        return Markup(f' {ATTRIBUTE}="{len(self.bodies) - 1}"')

    def payload(self) -> Markup:
        """The script element that holds every body (gzip at a fixed mtime,
        so one report gives one page)."""
        packed = gzip.compress(json.dumps(self.bodies, ensure_ascii=False).encode("utf-8"), compresslevel=9, mtime=0)
        return Markup(f'<script type="application/gzip" id="{PAYLOAD_ID}">'
                      f'{base64.b64encode(packed).decode("ascii")}</script>')


def bodies(html: str) -> list[str]:
    """The folds' bodies a page carries ([] for a page without any)."""
    m = _PAYLOAD.search(html)
    return json.loads(gzip.decompress(base64.b64decode(m.group(1)))) if m else []


def unfolded(html: str) -> str:
    """The page with every fold's body in its place and no payload."""
    held = bodies(html)
    if not held:
        return html

    def put_back(m: re.Match[str]) -> str:
        return m.group(1) + m.group(3) + held[int(m.group(2))] + m.group(4)

    return _PAYLOAD.sub("", _EMPTY_FOLD.sub(put_back, html))


def main(argv: list[str] | None = None) -> int:
    """python3 -m reports.page.folds PAGE: the page unfolded, on stdout."""
    import sys
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python3 -m reports.page.folds INDEX_HTML", file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8") as f:
        sys.stdout.write(unfolded(f.read()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
