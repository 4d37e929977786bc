"""JWT quick videos (synchronous; 5 credits per started 10 s, at least 5; 150 words at most;
its own 10/minute bucket) and free scripts (templated, within ±20 % of the word budget)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from pixelmill.resources import Resources
from tests.marketing.media import probe
from tests.support.accounts import Account, login, make_account
from tests.support.credits import balance_of, held_reservations, ledger_consistent

SHORT = "Fresh coffee, made right. Try it today."
LONG = (
    "This is the coffee I make every single morning. It is rich and smooth, with a little "
    "sweetness at the end. The cup keeps it warm while I read. Honestly, it is the best part "
    "of my day. Try it yourself, you will not regret it."
)


def _jwt(client: TestClient, acct: Account) -> dict[str, str]:
    return {"Authorization": f"Bearer {login(client, acct.email, acct.password)}"}


def test_quick_video_charges_per_started_ten_seconds(
    client: TestClient, resources: Resources, image_server: str
) -> None:
    acct = make_account(resources, credits=24)
    headers = _jwt(client, acct)
    url = f"{image_server}/product.jpg"
    charged = 0
    for script, subtitles in ((SHORT, "false"), (LONG, "true")):
        r = client.post(
            "/api/tryon/quick-video",
            data={"image_url": url, "script": script, "enable_subtitles": subtitles},
            headers=headers,
        )
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["success"] is True
        seconds = body["duration_seconds"]
        info = probe(client.get(body["video_url"].removeprefix("http://testserver")).content)
        assert info.video_codec == "h264" and info.audio_codec == "aac"
        assert abs(info.duration - seconds) <= 1.0
        started_tens = max(1, -(-info.duration // 10))
        assert body["credits_used"] == 5 * started_tens, (info.duration, body["credits_used"])
        charged += body["credits_used"]
    assert charged == 5 + 10  # about 3 s, then about 16 s of speech
    assert balance_of(resources, acct.id) == 24 - charged

    # refused before any charge: over 150 words, empty, too few credits for the length
    over = client.post(
        "/api/tryon/quick-video",
        data={"image_url": url, "script": "word " * 151},
        headers=headers,
    )
    assert over.status_code == 422 and "150 words" in over.json()["detail"]
    empty = client.post(
        "/api/tryon/quick-video", data={"image_url": url, "script": "  "}, headers=headers
    )
    assert empty.status_code == 422
    poor = client.post(
        "/api/tryon/quick-video", data={"image_url": url, "script": LONG}, headers=headers
    )
    assert poor.status_code == 402  # 10 credits for about 16 s, 9 left
    assert balance_of(resources, acct.id) == 9
    assert ledger_consistent(resources, acct.id) and held_reservations(resources, acct.id) == 0


def test_quick_video_has_its_own_rate_limit(
    client: TestClient, resources: Resources, image_server: str
) -> None:
    acct = make_account(resources, credits=0)
    headers = _jwt(client, acct)
    codes = [
        client.post(
            "/api/tryon/quick-video",
            data={"image_url": f"{image_server}/product.jpg", "script": "word " * 151},
            headers=headers,
        ).status_code
        for _ in range(11)
    ]
    assert codes[:10] == [422] * 10 and codes[10] == 429


def test_generated_scripts_fit_the_duration(
    client: TestClient, resources: Resources, image_server: str
) -> None:
    acct = make_account(resources, credits=0)
    headers = _jwt(client, acct)
    for seconds, tone in ((5, "enthusiastic"), (15, "casual"), (30, "professional")):
        r = client.post(
            "/api/tryon/generate-script",
            data={
                "image_url": f"{image_server}/product.jpg",
                "duration_seconds": str(seconds),
                "tone": tone,
                "product_name": "Morning Roast" if seconds == 15 else "",
            },
            headers=headers,
        )
        assert r.status_code == 200, r.text
        body = r.json()
        budget = body["details"]["word_budget"]
        assert abs(body["word_count"] - budget) <= 0.2 * budget, body
        assert body["duration_seconds"] == seconds
        assert len(body["script"].split()) == body["word_count"]
        assert "not a language model" in body["details"]["method"]
        assert body["product_description"]  # from the image analysis when no hint is given
        if seconds == 15:
            assert body["product_name"] == "Morning Roast" and "Morning Roast" in body["script"]
    bad = client.post(
        "/api/tryon/generate-script",
        data={"image_url": f"{image_server}/product.jpg", "tone": "angry"},
        headers=headers,
    )
    assert bad.status_code == 422
    assert balance_of(resources, acct.id) == 0
