"""The v2 JSON surface (API key)."""
