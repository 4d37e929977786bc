"""Reading a product page: fetched through the SSRF guard (every hop validated and pinned,
size and time bounded), then the product's facts from, in order of trust, JSON-LD
``Product`` data, OpenGraph/``product:`` meta tags, and the page's ``<title>`` and ``<img>``
elements. Parsing uses the standard library's :mod:`html.parser` (tolerant of broken markup;
no parser dependency)."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin

import httpx

from pixelmill.imaging import FetchPolicy, pinned_request

PAGE_MAX_BYTES = 3 * 1024 * 1024
PAGE_TIMEOUT_S = 15.0
MAX_IMAGES = 8
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_PAGE_ACCEPT = "text/html, application/xhtml+xml;q=0.9, */*;q=0.1"


class PageError(ValueError):
    """The page cannot be used: not fetched, not HTML, or no product on it. A ``ValueError``,
    so a job whose plan raises it fails with its credits released."""


@dataclass
class ProductFacts:
    """What the page says about its product. ``source`` names where the name came from
    (``json-ld``, ``opengraph``, ``html``)."""

    url: str
    name: str
    description: str = ""
    brand: str = ""
    price: str = ""
    currency: str = ""
    category: str = ""
    images: list[str] = field(default_factory=list)
    source: str = "json-ld"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def price_label(self) -> str:
        """``$49.00``-style label for an ad badge ('' without a price)."""
        if not self.price:
            return ""
        symbols = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "AUD": "A$", "CAD": "C$"}
        try:
            amount = float(self.price)
        except ValueError:
            return self.price[:12]
        text = f"{amount:.0f}" if amount == int(amount) else f"{amount:.2f}"
        symbol = symbols.get(self.currency.upper())
        if symbol:
            return f"{symbol}{text}"
        return f"{text} {self.currency}".strip()


def fetch_page(url: str, policy: FetchPolicy) -> tuple[str, bytes]:
    """GET ``url`` under the SSRF rules, following up to ``policy.max_redirects`` redirects
    (each target checked before anything is sent to it). Returns the final URL and the body.
    Refused addresses raise :class:`~pixelmill.imaging.ImageInputError`; anything else that
    makes the page unusable raises :class:`PageError`."""
    current = url
    for _ in range(policy.max_redirects + 1):
        response = pinned_request("GET", current, policy, headers={"Accept": _PAGE_ACCEPT})
        if response.status_code in _REDIRECTS and response.headers.get("Location"):
            try:
                current = str(httpx.URL(current).join(response.headers["Location"]))
            except (httpx.InvalidURL, ValueError) as exc:
                raise PageError("the product page redirected to an invalid location") from exc
            continue
        if not response.is_success:
            raise PageError(f"the product page answered HTTP {response.status_code}")
        return current, response.content
    raise PageError(f"the product page redirected more than {policy.max_redirects} times")


class _Collector(HTMLParser):
    """Collects JSON-LD scripts, meta tags, the title and image sources."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.json_ld: list[str] = []
        self.meta: dict[str, str] = {}
        self.title = ""
        self.images: list[tuple[str, str, int]] = []  # (src, alt, declared area)
        self._in_ld = False
        self._in_title = False
        self._buffer: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "script" and a.get("type", "").lower().strip() == "application/ld+json":
            self._in_ld, self._buffer = True, []
        elif tag == "meta":
            key = (a.get("property") or a.get("name") or a.get("itemprop") or "").lower()
            if key and "content" in a and key not in self.meta:
                self.meta[key] = a["content"]
        elif tag == "title":
            self._in_title = True
        elif tag == "img":
            src = a.get("src") or a.get("data-src") or ""
            if not src and a.get("srcset"):
                src = a["srcset"].split(",")[0].strip().split(" ")[0]
            if src and not src.startswith("data:"):
                area = _int(a.get("width")) * _int(a.get("height"))
                self.images.append((src, a.get("alt", ""), area))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._in_ld:
            self.json_ld.append("".join(self._buffer))
            self._in_ld = False
        elif tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_ld:
            self._buffer.append(data)
        elif self._in_title:
            self.title += data


def _int(value: str | None) -> int:
    try:
        return int(float(value or 0))
    except ValueError:
        return 0


def _text(value: Any) -> str:
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, dict):
        return _text(value.get("name") or value.get("@value") or "")
    if isinstance(value, list) and value:
        return _text(value[0])
    if isinstance(value, int | float):
        return str(value)
    return ""


def _types(node: dict[str, Any]) -> set[str]:
    t = node.get("@type", [])
    items = t if isinstance(t, list) else [t]
    return {str(x).rsplit("/", 1)[-1].lower() for x in items}


def _walk(node: Any) -> list[dict[str, Any]]:
    """Every JSON object in a JSON-LD document (``@graph``, lists, nested values)."""
    found: list[dict[str, Any]] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _image_urls(value: Any) -> list[str]:
    urls: list[str] = []
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, str):
            urls.append(item)
        elif isinstance(item, dict):
            url = item.get("url") or item.get("contentUrl") or ""
            if isinstance(url, str) and url:
                urls.append(url)
    return urls


def _offer(value: Any) -> tuple[str, str]:
    offers = value if isinstance(value, list) else [value]
    for offer in offers:
        if not isinstance(offer, dict):
            continue
        price = offer.get("price", offer.get("lowPrice", ""))
        spec = offer.get("priceSpecification")
        if price in ("", None) and isinstance(spec, dict):
            price = spec.get("price", "")
        currency = offer.get("priceCurrency", "")
        if isinstance(spec, dict) and not currency:
            currency = spec.get("priceCurrency", "")
        if price not in ("", None):
            return _text(price), _text(currency)
    return "", ""


def _from_json_ld(scripts: list[str]) -> dict[str, Any] | None:
    for raw in scripts:
        try:
            doc = json.loads(raw.strip())
        except (json.JSONDecodeError, ValueError):
            continue
        for node in _walk(doc):
            if "product" in _types(node) or "productgroup" in _types(node):
                return node
    return None


_SPACE = re.compile(r"\s+")


def parse_product(html: str, page_url: str) -> ProductFacts:
    """The product of ``html`` (served at ``page_url``); :class:`PageError` when the page
    names no product (no JSON-LD ``Product``, no ``og:title``/``<title>`` or no image)."""
    collector = _Collector()
    try:
        collector.feed(html)
        collector.close()
    except (AssertionError, ValueError) as exc:  # html.parser on pathological markup
        raise PageError(f"the product page could not be parsed: {exc}") from exc
    meta = collector.meta
    node = _from_json_ld(collector.json_ld)
    facts: ProductFacts
    if node is not None and _text(node.get("name")):
        price, currency = _offer(node.get("offers"))
        facts = ProductFacts(
            url=page_url,
            name=_text(node.get("name")),
            description=_text(node.get("description")),
            brand=_text(node.get("brand")),
            price=price,
            currency=currency,
            category=_text(node.get("category")),
            images=_image_urls(node.get("image")),
            source="json-ld",
        )
    else:
        og_type = meta.get("og:type", "").lower()
        name = meta.get("og:title") or meta.get("twitter:title") or ""
        source = "opengraph"
        if not name:
            name, source = _SPACE.sub(" ", collector.title).strip(), "html"
        if not name:
            raise PageError("no product found on the page (no JSON-LD Product, og:title or title)")
        facts = ProductFacts(
            url=page_url,
            name=name,
            description=meta.get("og:description") or meta.get("description", ""),
            brand=meta.get("product:brand") or meta.get("og:site_name", ""),
            price=meta.get("product:price:amount") or meta.get("og:price:amount", ""),
            currency=meta.get("product:price:currency") or meta.get("og:price:currency", ""),
            category=meta.get("product:category", ""),
            source=source,
        )
        if og_type and "product" not in og_type and not facts.price and source != "html":
            facts.source = "opengraph (not typed as a product)"
    for key in ("og:image", "og:image:url", "og:image:secure_url", "twitter:image"):
        if meta.get(key):
            facts.images.append(meta[key])
    # <img> elements, the largest declared first, as a last resort.
    for src, _, _ in sorted(collector.images, key=lambda i: -i[2]):
        facts.images.append(src)
    seen: set[str] = set()
    absolute: list[str] = []
    for src in facts.images:
        url = urljoin(page_url, src.strip())
        if url.startswith(("http://", "https://")) and url not in seen:
            seen.add(url)
            absolute.append(url)
    facts.images = absolute[:MAX_IMAGES]
    facts.name = facts.name[:200]
    facts.description = facts.description[:2000]
    if not facts.images:
        raise PageError("no product image found on the page")
    return facts


def read_product_page(url: str, policy: FetchPolicy) -> ProductFacts:
    """Fetch and parse a product page (blocking). Raises :class:`PageError` (or the guard's
    :class:`~pixelmill.imaging.ImageInputError` for a refused address)."""
    final_url, body = fetch_page(url, policy)
    html = body.decode("utf-8", errors="replace")
    return parse_product(html, final_url)


def page_policy(allow_loopback: bool) -> FetchPolicy:
    return FetchPolicy(
        allow_loopback=allow_loopback,
        max_bytes=PAGE_MAX_BYTES,
        timeout_s=PAGE_TIMEOUT_S,
        max_redirects=5,
    )
