"""The try-on gate on every surface that offers try-on: an avatar whose body the pose graph
saw edge-on (its shoulders and hips nearly on top of each other, as a person photographed from
behind or from the side gives) used to get a sliver of garment at the neck, delivered and
charged. Now each output fails with the reason and nothing is charged: the v2 try-on job, a
``POST /api/v2/jobs`` job with the avatar as its model, and the JWT ``/api/tryon/generate``."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import update

from pixelmill.db.models import Avatar
from pixelmill.resources import Resources
from tests.api.app_surface.test_tryon import shirt_png
from tests.generation.test_people import _avatar, _job, _product, _start, tshirt
from tests.support.accounts import login, make_account
from tests.support.api import wait_terminal
from tests.support.credits import consistent_balance

REASON = "could not be fitted to this body"


def _edge_on(resources: Resources, avatar_id: str) -> None:
    """The avatar's stored landmarks, as the pose graph gives them for a body seen edge-on."""
    with resources.db.transaction() as session:
        avatar = session.get(Avatar, avatar_id)
        assert avatar is not None and avatar.landmarks
        marks = dict(avatar.landmarks)
        cx = (marks["left_shoulder"][0] + marks["right_shoulder"][0]) / 2
        for name, (_x, y) in list(marks.items()):
            if name.split("_", 1)[-1] in ("shoulder", "hip", "elbow", "wrist"):
                marks[name] = [cx + (1.0 if name.startswith("left") else -1.0), y]
        session.execute(update(Avatar).where(Avatar.id == avatar_id).values(landmarks=marks))


def test_an_edge_on_body_fails_try_on_uncharged_on_every_surface(
    client: TestClient, resources: Resources
) -> None:
    acct = make_account(resources, credits=10)
    avatar = _avatar(client, acct)  # 1 credit
    _edge_on(resources, avatar)
    shirt = _product(client, acct, tshirt(), "clothing")
    before = consistent_balance(resources, acct.id)

    r = _start(client, acct, "tryon", avatar_uuid=avatar, product_uuid=shirt, num_outputs=2)
    assert r.status_code == 202, r.text
    job = wait_terminal(client, acct, r.json()["job_id"], timeout=180)
    assert job["status"] == "failed" and REASON in (job["error"] or ""), job
    assert job["credits_used"] == 0 and job["progress"]["failed"] == 2

    r = _job(client, acct, model_id=avatar, category="clothing")
    assert r.status_code == 202, r.text
    job = wait_terminal(client, acct, r.json()["job_id"], timeout=180)
    assert job["status"] == "failed" and REASON in (job["error"] or ""), job

    token = login(client, acct.email, acct.password)
    r = client.post(
        "/api/tryon/generate",
        data={"model_id": avatar, "model_type": "user", "num_outputs": "1"},
        files={"product_image": ("shirt.png", shirt_png(), "image/png")},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert r.status_code >= 400 and REASON in r.json()["detail"], r.text
    assert consistent_balance(resources, acct.id) == before
