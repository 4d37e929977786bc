"""Advertising: platform ads, asset collections and ad packs from a product page."""
