"""The JWT surface: account, credits, (later) catalog, avatars, try-on."""
