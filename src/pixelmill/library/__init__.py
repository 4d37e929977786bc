"""The v2 library: products (saved product images, reused by scene jobs) and avatars."""
