"""Platform ads: a product cut-out laid out with real type at each platform's exact size
(``platforms.py``), styles and layouts (``layout.py``), fonts, fitting and WCAG contrast
(``typography.py``), and the ``ad`` engine.

What other capabilities and domains may use is exported here: the ad pack and asset
collections render several ads from one cut-out with :func:`render_ad`."""

from pixelmill.engines.ads.engine import (
    AdEngine,
    AdParams,
    PlatformName,
    StyleName,
    ad_details,
    cut_out,
)
from pixelmill.engines.ads.layout import (
    MIN_CONTRAST,
    STYLE_NAMES,
    STYLES,
    AdCopy,
    AdRender,
    TextBlock,
    render_ad,
)
from pixelmill.engines.ads.platforms import PLATFORMS, Platform
from pixelmill.engines.ads.typography import contrast_ratio, relative_luminance

__all__ = [
    "MIN_CONTRAST",
    "PLATFORMS",
    "STYLES",
    "STYLE_NAMES",
    "AdCopy",
    "AdEngine",
    "AdParams",
    "AdRender",
    "Platform",
    "PlatformName",
    "StyleName",
    "TextBlock",
    "ad_details",
    "contrast_ratio",
    "cut_out",
    "relative_luminance",
    "render_ad",
]
