"""Deblurring: blind blur estimation (none / Gaussian / motion) and TV deconvolution."""

from pixelmill.engines.deblur.engine import UnblurEngine, UnblurParams
from pixelmill.engines.runtime.blur import estimate_blur_sigma

__all__ = ["UnblurEngine", "UnblurParams", "estimate_blur_sigma"]
