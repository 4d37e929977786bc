"""The ad platforms of the spec and their pixel sizes.

Sizes are each platform's own published recommendation for a single-image post or ad (checked
against the platforms' ad-spec pages, 2024-2025); where a platform documents several, the one
chosen is named in ``note``. ``safe_top``/``safe_bottom`` keep text out of the bands that the
app's own interface covers on full-screen formats (stories, TikTok): about 14 % at the top and
20 % at the bottom.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Platform:
    name: str
    width: int
    height: int
    note: str
    safe_top: float = 0.0
    safe_bottom: float = 0.0

    @property
    def aspect(self) -> float:
        return self.width / self.height


PLATFORMS: dict[str, Platform] = {
    p.name: p
    for p in (
        Platform("instagram-square", 1080, 1080, "Instagram feed post, square 1:1"),
        Platform("instagram-story", 1080, 1920, "Instagram story / reel, 9:16", 0.12, 0.17),
        Platform("facebook-feed", 1200, 628, "Facebook feed link ad, 1.91:1"),
        Platform("facebook-square", 1080, 1080, "Facebook feed image ad, square 1:1"),
        Platform("twitter", 1600, 900, "X (Twitter) single-image ad, 16:9 (1200x675 also valid)"),
        Platform("linkedin", 1200, 627, "LinkedIn single-image ad, horizontal 1.91:1"),
        Platform("pinterest", 1000, 1500, "Pinterest standard pin, 2:3"),
        Platform("tiktok", 1080, 1920, "TikTok in-feed image ad, 9:16", 0.12, 0.2),
    )
}
"""Platform name -> its canvas, in the spec's order."""
