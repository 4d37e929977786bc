"""Marketing: talking product videos, platform ads, asset collections and ad packs (jobs)."""
