"""Prompt-driven editing: a rule-based interpreter and the classical operations behind it."""

from pixelmill.engines.edit.engine import EditEngine, EditParams

__all__ = ["EditEngine", "EditParams"]
