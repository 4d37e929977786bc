"""Colourisation of greyscale photos from a reference, a palette, or procedural palettes."""

from pixelmill.engines.colorize.engine import ColorizeEngine, ColorizeParams, is_colour_image

__all__ = ["ColorizeEngine", "ColorizeParams", "is_colour_image"]
