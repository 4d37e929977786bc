"""Plan limits, per-endpoint limits, anonymous per-IP limits and the X-RateLimit-* headers."""
