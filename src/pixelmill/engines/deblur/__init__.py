"""Deblurring: Gaussian blur estimation and Wiener deconvolution of the luminance."""

from pixelmill.engines.deblur.engine import UnblurEngine, UnblurParams
from pixelmill.engines.runtime.blur import estimate_blur_sigma

__all__ = ["UnblurEngine", "UnblurParams", "estimate_blur_sigma"]
