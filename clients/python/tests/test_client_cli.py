"""``pixelmill-client`` against a live server: a folder of 10 photos through the installed
console script, a scene job with ``--wait``, a batch from a folder, ``jobs watch``,
webhooks, the account, and the exit codes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image
from tests.support.credits import balance_of
from tests.support.images import jpeg_bytes, png_bytes
from tests.support.waiting import wait_until

from client_harness import Live
from pixelmill_client.cli import main

SCRIPT = Path(sys.executable).parent / "pixelmill-client"


def run_cli(live: Live, key: str, *args: str, capsys: pytest.CaptureFixture[str]) -> Any:
    """``main()`` in this process with ``--json``: (exit code, parsed stdout)."""
    code = main([*args, "--url", live.url, "--api-key", key, "--json"])
    text = capsys.readouterr().out
    return code, (json.loads(text) if text.strip() else None)


def photos(folder: Path, n: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        path = folder / f"photo-{i:02d}.jpg"
        path.write_bytes(jpeg_bytes(240 + 8 * i, 180))
        paths.append(path)
    return paths


def test_folder_of_ten_photos_through_the_console_script(live: Live, tmp_path: Path) -> None:
    """The installed ``pixelmill-client`` command removes the background of 10 photos, 4 at a
    time: 10 valid transparent PNGs, exit 0, 10 credits charged."""
    assert SCRIPT.exists(), f"{SCRIPT} is missing: pip install ./clients/python"
    acct = live.account(credits=20)
    sources = photos(tmp_path / "photos", 10)
    env = {**os.environ, "PIXELMILL_URL": live.url, "PIXELMILL_API_KEY": acct.api_key}
    started = time.monotonic()
    command = [str(SCRIPT), "remove-background", str(tmp_path / "photos")]
    command += ["-o", str(tmp_path / "out"), "--parallel", "4"]
    proc = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    print(f"10 photos through the CLI in {elapsed:.1f} s")
    assert "10 of 10 file(s) processed, 10 credit(s) used" in proc.stdout
    assert "remove-background: 10 file(s)" in proc.stderr  # the overall progress bar
    outputs = sorted((tmp_path / "out").iterdir())
    assert [p.stem for p in outputs] == [p.stem for p in sources]
    for path, source in zip(outputs, sources, strict=True):
        image = Image.open(io.BytesIO(path.read_bytes()))
        image.load()
        assert image.format == "PNG" and image.mode == "RGBA"
        assert image.size == Image.open(source).size
        low, high = image.getchannel("A").getextrema()
        assert isinstance(low, int)
        assert isinstance(high, int)
        assert low < 128 < high  # a real cut-out: transparent and opaque pixels
    assert balance_of(live.resources, acct.id) == 10


def test_processing_globs_urls_and_json_summary(
    live: Live, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    acct = live.account(credits=10)
    photos(tmp_path / "in", 3)
    code, body = run_cli(
        live,
        acct.api_key,
        "upscale",
        str(tmp_path / "in" / "*.jpg"),
        "--scale",
        "2",
        "--quality",
        "fast",
        capsys=capsys,
    )
    assert code == 0, body
    assert body["processed"] == 3 and body["failed"] == 0 and body["credits_used"] == 3
    for item in body["files"]:
        # Without -o the result lands beside its input, NAME-OPERATION.EXT.
        out = Path(item["output"])
        assert out.parent == tmp_path / "in" and out.stem.endswith("-upscale")
        source = Image.open(item["source"])
        assert Image.open(out).size == (source.width * 2, source.height * 2)
        assert item["method"]


def test_some_files_failed_exits_4_and_processes_the_rest(
    live: Live, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    acct = live.account(credits=10)
    photos(tmp_path / "in", 2)
    (tmp_path / "in" / "broken.png").write_bytes(b"this is not an image")
    code, body = run_cli(
        live, acct.api_key, "remove-text", str(tmp_path / "in"), "-o", str(tmp_path / "o"),
        capsys=capsys,
    )  # fmt: skip
    assert code == 4
    assert body["processed"] == 2 and body["failed"] == 1
    broken = next(f for f in body["files"] if not f["ok"])
    assert broken["source"].endswith("broken.png")
    assert broken["status_code"] in (400, 415, 422) and broken["error"]
    assert balance_of(live.resources, acct.id) == 8


def test_generate_scenes_with_wait_downloads_the_results(
    live: Live, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    acct = live.account(credits=10)
    product = tmp_path / "bottle.png"
    product.write_bytes(png_bytes(200, 150))
    out = tmp_path / "scenes"
    code, job = run_cli(
        live,
        acct.api_key,
        "generate",
        "scenes",
        str(product),
        "--num",
        "3",
        "--wait",
        "--interval",
        "0.2",
        "-o",
        str(out),
        capsys=capsys,
    )
    assert code == 0, job
    assert job["status"] == "completed" and job["credits_used"] == 3
    assert len(job["results"]) == 3 and len(job["downloaded"]) == 3
    for path in job["downloaded"]:
        Image.open(path).load()
    assert balance_of(live.resources, acct.id) == 7
    # jobs watch / get on the finished job, and the list.
    code, watched = run_cli(live, acct.api_key, "jobs", "watch", job["job_id"], capsys=capsys)
    assert code == 0 and watched["status"] == "completed"
    code, jobs = run_cli(live, acct.api_key, "jobs", "list", capsys=capsys)
    assert code == 0 and [j["job_id"] for j in jobs] == [job["job_id"]]


def test_batches_create_from_a_folder_and_wait(
    live: Live, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    acct = live.account(credits=10)
    folder = tmp_path / "skus"
    folder.mkdir()
    for sku in ("sku-1", "sku-2"):
        (folder / f"{sku}.png").write_bytes(png_bytes(160, 120))
    code, batch = run_cli(
        live,
        acct.api_key,
        "batches",
        "create",
        str(folder),
        "--per-product",
        "2",
        "--wait",
        "--interval",
        "0.2",
        "-o",
        str(tmp_path / "results"),
        capsys=capsys,
    )
    assert code == 0, batch
    assert batch["status"] == "completed" and batch["progress"]["completed"] == 2
    assert sorted(i["id"] for i in batch["images"]) == ["sku-1", "sku-2"]
    assert len(batch["downloaded"]) == 4
    assert {Path(p).parent.name for p in batch["downloaded"]} == {"sku-1", "sku-2"}
    assert balance_of(live.resources, acct.id) == 6


def test_account_and_webhooks_commands(
    live: Live, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    acct = live.account(credits=7)
    code, account = run_cli(live, acct.api_key, "account", capsys=capsys)
    assert code == 0 and account["credits"] == 7 and account["email"] == acct.email
    receiver = f"{live.url}/receiver/hook"
    code, hook = run_cli(live, acct.api_key, "webhooks", "create", receiver, capsys=capsys)
    assert code == 0 and hook["secret"].startswith("whsec_")
    assert hook["url"] == receiver  # the argument, not the server's --url
    code, hooks = run_cli(live, acct.api_key, "webhooks", "list", capsys=capsys)
    assert [h["id"] for h in hooks] == [hook["id"]] and hooks[0].get("secret") is None
    code, log = run_cli(live, acct.api_key, "webhooks", "deliveries", capsys=capsys)
    assert code == 0 and log == []
    code, own = run_cli(live, acct.api_key, "webhooks", "secret", capsys=capsys)
    assert code == 0 and own["secret"].startswith("whsec_")
    code, gone = run_cli(live, acct.api_key, "webhooks", "delete", str(hook["id"]), capsys=capsys)
    assert code == 0 and gone["id"] == hook["id"] and gone["deleted"] is True
    code, err = run_cli(live, acct.api_key, "webhooks", "delete", str(hook["id"]), capsys=capsys)
    assert code == 1 and err["status_code"] == 404 and err["error"] == "Webhook not found"


def test_exit_codes(live: Live, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    photo = photos(tmp_path / "in", 1)[0]
    broke = live.account(credits=0)
    # 2: an invalid key (the server's detail is shown).
    code, body = run_cli(live, "pk_live_not-a-real-key", "account", capsys=capsys)
    assert code == 2 and body == {"error": "Invalid API key", "status_code": 401, "exit_code": 2}
    # 3: not enough credits, nothing written.
    code, body = run_cli(
        live, broke.api_key, "enhance", str(photo), "-o", str(tmp_path / "o"), capsys=capsys
    )
    assert code == 3 and body["files"][0]["status_code"] == 402
    assert not (tmp_path / "o").exists()
    # 1: a missing file (usage), and an argparse error.
    assert main(["unblur", str(tmp_path / "nope.jpg"), "--api-key", broke.api_key]) == 1
    with pytest.raises(SystemExit) as exc:
        main(["upscale", str(photo), "--scale", "3", "--api-key", broke.api_key])
    assert exc.value.code == 1
    # 5: nothing listening (no retries, to keep it quick).
    code = main(
        ["account", "--url", "http://127.0.0.1:9", "--api-key", broke.api_key, "--retries", "0"]
    )
    assert code == 5
    capsys.readouterr()


def test_key_and_url_from_env_and_config_file(
    live: Live, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    acct = live.account(credits=3)
    for name in ("PIXELMILL_API_KEY", "PIXELMILL_URL", "PIXELMILL_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    # No key anywhere: exit 2 and say where to put one.
    assert main(["account", "--json"]) == 2
    assert "no API key" in capsys.readouterr().err
    # The config file.
    config = tmp_path / "xdg" / "pixelmill" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'url = "{live.url}"\napi_key = "{acct.api_key}"\n')
    assert main(["account", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["credits"] == 3
    # The environment wins over the file, and a flag over the environment.
    monkeypatch.setenv("PIXELMILL_API_KEY", "pk_live_wrong")
    assert main(["account", "--json"]) == 2
    capsys.readouterr()
    assert main(["account", "--json", "--api-key", acct.api_key]) == 0
    capsys.readouterr()


def test_jobs_cancel(live: Live, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    acct = live.account(credits=20)
    product = tmp_path / "bottle.png"
    product.write_bytes(png_bytes(200, 150))
    code, job = run_cli(
        live, acct.api_key, "generate", "scenes", str(product), "--num", "12", "--yes",
        capsys=capsys,
    )  # fmt: skip
    assert code == 0, job
    code, cancelled = run_cli(live, acct.api_key, "jobs", "cancel", job["job_id"], capsys=capsys)
    assert code == 0, cancelled
    assert cancelled["status"] == "failed" and cancelled["error"] == "cancelled"
    # Cancelling an ended job is refused (409: exit code 1).
    code, _ = run_cli(live, acct.api_key, "jobs", "cancel", job["job_id"], capsys=capsys)
    assert code == 1


def test_a_refused_tryon_removes_the_product_it_uploaded(
    live: Live, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``generate tryon FILE`` uploads the garment as ``clothing`` unless ``--category`` says
    otherwise; a try-on the server refuses (a non-clothing product) leaves no orphan product
    behind and charges nothing."""
    acct = live.account(credits=10)
    headers = {"Authorization": f"Bearer {acct.api_key}"}
    with httpx.Client(base_url=live.url, headers=headers, timeout=60) as http:
        job_id = http.post(
            "/api/v2/generate/avatar", json={"prompt": "a woman with short black hair"}
        ).json()["job_id"]

        def done() -> dict[str, Any] | None:
            body: dict[str, Any] = http.get(f"/api/v2/jobs/avatar/{job_id}").json()
            return body if body["status"] in ("completed", "failed") else None

        avatar = wait_until(done, timeout=120, interval=0.2)["avatars"][0]["uuid"]
        before = balance_of(live.resources, acct.id)
        garment = tmp_path / "lamp.png"
        garment.write_bytes(png_bytes(200, 150))
        code, body = run_cli(
            live, acct.api_key, "generate", "tryon", avatar, str(garment), "--num", "1",
            "--category", "furniture", capsys=capsys,
        )  # fmt: skip
        assert code != 0 and body is not None and "clothing" in json.dumps(body)
        assert http.get("/api/v2/products").json() == []
        assert balance_of(live.resources, acct.id) == before
        # the default category is clothing: the same call without it is accepted
        code, created = run_cli(
            live, acct.api_key, "generate", "tryon", avatar, str(garment), "--num", "1",
            capsys=capsys,
        )  # fmt: skip
        assert code == 0 and created["job_id"], created
        products = http.get("/api/v2/products").json()
        assert [p["category"] for p in products] == ["clothing"]
