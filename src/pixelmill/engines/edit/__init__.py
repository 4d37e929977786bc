"""Prompt-driven editing: a rule-based interpreter and the classical operations behind it."""
