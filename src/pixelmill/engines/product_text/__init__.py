"""Product copy from templates, never a language model: storefront copy (description, tags, alt
text) from a product's own words and its photo's measured facts (``engine``), captions per
platform (``captions``) and voice-over scripts sized to a duration (``scripts``)."""

from pixelmill.engines.product_text.ad_copy import AdCopyEngine, AdCopyParams, AdText
from pixelmill.engines.product_text.captions import METHOD as CAPTIONS_METHOD
from pixelmill.engines.product_text.captions import RULES as CAPTION_RULES
from pixelmill.engines.product_text.captions import (
    first_sentence,
    hashtags_for,
    shorten,
    write_captions,
)
from pixelmill.engines.product_text.engine import (
    TEXT_FIELDS,
    ProductTextEngine,
    ProductTextParams,
    TextField,
)
from pixelmill.engines.product_text.scripts import (
    DEFAULT_TONE,
    TONES,
    WORDS_PER_SECOND,
    ScriptResult,
    count_words,
    facts_from_analysis,
    write_script,
)

__all__ = [
    "CAPTIONS_METHOD",
    "CAPTION_RULES",
    "DEFAULT_TONE",
    "TEXT_FIELDS",
    "TONES",
    "WORDS_PER_SECOND",
    "AdCopyEngine",
    "AdCopyParams",
    "AdText",
    "ProductTextEngine",
    "ProductTextParams",
    "ScriptResult",
    "TextField",
    "count_words",
    "facts_from_analysis",
    "first_sentence",
    "hashtags_for",
    "shorten",
    "write_captions",
    "write_script",
]  # fmt: skip
