"""Webhooks: the endpoint registry, Standard Webhooks signing, and delivery with retries and a
log of every attempt."""
