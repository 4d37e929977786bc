"""Selling and accounting for credits at the account level: usage reports (``usage.py``)."""
