"""Pages served in place of the web, for evaluations on a machine with no network.

``troupe eval --web stand-in`` answers every page the navigator asks for with
one made from its address (a title, a heading, a paragraph, a link and a
search form), so a request set's web steps run the browser's tools for real
while nothing leaves the machine. The pages say what they are: a run on them
scores whether the navigator was asked and its tools ran, not what the web
holds.
"""

from __future__ import annotations

from html import escape
from urllib.parse import unquote, urlsplit

STAND_IN_NOTE = "a stand-in page served by troupe eval: no request left this machine"


def stand_in_page(url: str) -> str:
    """The HTML served for ``url``: its host and path as title and heading."""
    parts = urlsplit(url)
    host = parts.hostname or "page"
    words = " ".join(w for w in unquote(parts.path).replace("-", " ").split("/") if w)
    title = f"{host} {words}".strip()
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{escape(title)}</title></head><body>"
        f"<h1>{escape(title)}</h1>"
        f"<p>This is {escape(STAND_IN_NOTE)} for {escape(url)}.</p>"
        f"<a href='/about'>About {escape(host)}</a>"
        "<form action='/search'><input name='q' aria-label='Search'>"
        "<button type='submit'>Search</button></form>"
        "</body></html>"
    )
