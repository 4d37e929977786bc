"""pixelmill: a self-hostable, credit-billed HTTP API for AI image work."""

__version__ = "0.1.0"
