"""Format conversion (PNG, JPEG, WebP)."""
