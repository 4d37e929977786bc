"""``pixelmill-client`` as a script sees it: piped output keeps every id and URL whole on one
line (tables become tab-separated lines), saved file names are plain, a 422 reads
``field: message``, an unreachable server is named with what to check, and a run that would
spend more than 10 credits says so first and goes on only with ``--yes`` (a script without it
is refused, nothing spent)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.credits import balance_of
from tests.support.images import png_bytes

from client_harness import Live
from pixelmill_client.cli import FILE_LINE_MAX, clip, file_line, main, safe_name
from pixelmill_client.errors import validation_message

SCRIPT = Path(sys.executable).parent / "pixelmill-client"
PLAIN = re.compile(r"[A-Za-z0-9._-]+")


def script(live: Live, key: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed console script, stdout and stderr pipes, stdin not a terminal."""
    assert SCRIPT.exists(), f"{SCRIPT} is missing: pip install ./clients/python"
    env = {**os.environ, "PIXELMILL_URL": live.url, "PIXELMILL_API_KEY": key, "COLUMNS": "80"}
    return subprocess.run(
        [str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=180,
        check=False,
    )


def test_piped_output_keeps_ids_and_urls_whole(live: Live, tmp_path: Path) -> None:
    acct = live.account(credits=10)
    (tmp_path / "bottle, front (1).png").write_bytes(png_bytes(200, 150))
    proc = script(
        live, acct.api_key, "generate", "scenes", "bottle, front (1).png", "--num", "2",
        "--wait", "--interval", "0.2", "-o", "out", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    product = re.search(r"as product (\S+)", proc.stderr)
    assert product and len(product[1]) == 36, proc.stderr  # a whole UUID
    urls = re.findall(r"^  \S.*?: (http\S+)$", proc.stdout, re.M)
    assert len(urls) == 2 and all(len(u) > 80 and "sig=" in u for u in urls), proc.stdout
    saved = sorted((tmp_path / "out").iterdir())
    assert len(saved) == 2 and all(PLAIN.fullmatch(p.name) for p in saved), saved
    assert not any(len(line) == 80 for line in proc.stdout.splitlines())  # nothing wrapped

    # A table, piped: a header and one tab-separated line a row, the values whole.
    listed = script(live, acct.api_key, "jobs", "list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    header, *rows = listed.stdout.splitlines()
    assert header.split("\t")[:3] == ["job_id", "type", "status"]
    (row,) = rows
    job_id = row.split("\t")[0]
    assert len(job_id) >= 32 and "…" not in listed.stdout, listed.stdout
    products = script(live, acct.api_key, "products", "list", cwd=tmp_path)
    assert products.stdout.splitlines()[1].split("\t")[0] == product[1]
    # --json everywhere, the same ids.
    as_json = script(live, acct.api_key, "jobs", "list", "--json", cwd=tmp_path)
    assert [j["job_id"] for j in json.loads(as_json.stdout)] == [job_id]


def test_validation_errors_read_field_colon_message(
    live: Live, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    acct = live.account(credits=50)
    product = tmp_path / "bottle.png"
    product.write_bytes(png_bytes(200, 150))
    code = main(
        ["generate", "scenes", str(product), "--num", "13", "--yes", "--url", live.url,
         "--api-key", acct.api_key],
    )  # fmt: skip
    printed = capsys.readouterr().err
    assert code == 1
    assert "error (422): num_scenes: Input should be less than or equal to 12" in printed
    assert "[{" not in printed and "'loc'" not in printed  # no Python repr of the list
    assert balance_of(live.resources, acct.id) == 50


def test_an_unreachable_server_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["account", "--url", "http://127.0.0.1:9", "--api-key", "pk_live_x", "--retries", "0"]
    assert main(args) == 5
    printed = capsys.readouterr().err
    assert "http://127.0.0.1:9/api/v2/account" in printed and "ConnectError" in printed
    assert "check that a pixelmill server is running at http://127.0.0.1:9" in printed
    assert main([*args, "--json"]) == 5
    body: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert body["exit_code"] == 5 and "--url, PIXELMILL_URL" in body["error"]


def test_more_than_ten_credits_needs_a_yes(live: Live, tmp_path: Path) -> None:
    acct = live.account(credits=30)
    folder = tmp_path / "skus"
    folder.mkdir()
    for sku in ("a", "b"):
        (folder / f"{sku}.png").write_bytes(png_bytes(120, 90))
    # 2 images x 6 scenes = 12 credits: a script without --yes is refused, nothing spent.
    refused = script(live, acct.api_key, "batches", "create", "skus", cwd=tmp_path)
    assert refused.returncode == 1
    assert "a batch of 2 image(s) x 6 scene(s) at 1 credit each: up to 12 credits" in (
        refused.stderr
    )
    assert "pass --yes" in refused.stderr and refused.stdout == ""
    assert balance_of(live.resources, acct.id) == 30
    # 10 credits or fewer: no question.
    small = script(live, acct.api_key, "batches", "create", "skus", "--per-product", "1",
                   "--json", cwd=tmp_path)  # fmt: skip
    assert small.returncode == 0, small.stderr
    assert json.loads(small.stdout)["credits_reserved"] == 2
    # --yes: the cost line, then the run.
    agreed = script(live, acct.api_key, "batches", "create", "skus", "--yes", cwd=tmp_path)
    assert agreed.returncode == 0, agreed.stderr
    assert "up to 12 credits (--yes)" in agreed.stderr
    assert balance_of(live.resources, acct.id) == 30 - 2 - 12


def test_names_and_phrases() -> None:
    assert safe_name("marble counter, soft light") == "marble-counter-soft-light"
    assert safe_name("../a b/ c") == "a-b-c" and safe_name("…") == "result"
    assert clip("x" * 10, 10) == "x" * 10
    assert clip("/very/long/" + "d" * 100 + "/photo.jpg", 40).endswith("/photo.jpg")
    assert len(clip("y" * 500, 70)) == 70
    line = file_line("/in/" + "a" * 300 + ".jpg", "/out/" + "b" * 300 + ".png", 2)
    assert len(line) <= FILE_LINE_MAX and line.endswith(".png (2 credit(s))"), line
    detail = [
        {"loc": ["body", "num_scenes"], "msg": "Input should be less than or equal to 12"},
        {"loc": ["query", "limit"], "msg": "Field required"},
        {"loc": ["body"], "msg": "Invalid JSON"},
    ]
    assert validation_message(detail).splitlines() == [
        "num_scenes: Input should be less than or equal to 12",
        "limit: Field required",
        "body: Invalid JSON",
    ]


def test_generate_ad_pack_and_video_with_progress(
    live: Live, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.marketing.test_ad_http import shop

    acct = live.account(credits=60)
    with shop() as base:
        code = main(
            ["generate", "ad-pack", f"{base}/product", "--no-video", "--wait", "--interval",
             "0.2", "-o", str(tmp_path / "pack"), "--url", live.url, "--api-key", acct.api_key],
        )  # fmt: skip
    printed = capsys.readouterr()
    assert code == 0, printed.out + printed.err
    assert re.search(r"ad pack \d+: completed · 6 photo\(s\), 8 ad\(s\)", printed.out), printed.out
    assert "9 credit(s) used" in printed.out and "ad pack" in printed.err  # the progress line
    saved = sorted(p.name for p in (tmp_path / "pack").iterdir())
    assert len(saved) == 6 + 8 + 1 and "captions.json" in saved
    assert all(PLAIN.fullmatch(name) for name in saved), saved
    assert balance_of(live.resources, acct.id) == 51

    # The video costs 50: asked first (refused without --yes), then made with --yes.
    photo = tmp_path / "bottle.png"
    photo.write_bytes(png_bytes(240, 320))
    args = ["generate", "video", str(photo), "--script", "Fresh water, anywhere.", "--json",
            "--url", live.url, "--api-key", acct.api_key]  # fmt: skip
    assert main(args) == 1
    assert "up to 50 credits" in json.loads(capsys.readouterr().out)["error"]
    code = main([*args, "--yes", "--wait", "--interval", "0.2", "-o", str(tmp_path / "v")])
    video = json.loads(capsys.readouterr().out)
    assert code == 0 and video["status"] == "completed" and video["credits_used"] == 50, video
    (mp4,) = video["downloaded"]
    assert Path(mp4).name == f"video-{video['job_id']}.mp4"
    assert Path(mp4).read_bytes()[4:8] == b"ftyp"
    assert balance_of(live.resources, acct.id) == 1


def test_one_short_line_per_file_and_details_with_v(live: Live, tmp_path: Path) -> None:
    """Each processed file is one line of at most 160 characters (file, output, credits); the
    method the server used (``details.method``, hundreds of characters) comes with ``-v``, and
    in ``--json``."""
    acct = live.account(credits=10)
    (tmp_path / "photo.png").write_bytes(png_bytes(200, 150))
    plain = script(live, acct.api_key, "remove-background", "photo.png", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    printed = plain.stdout + plain.stderr
    [line] = [x for x in printed.splitlines() if x.startswith("✓")]
    assert line == "✓ photo.png → photo-remove-background.png (1 credit(s))", printed
    assert "method" not in printed
    assert max(len(x) for x in printed.splitlines()) <= FILE_LINE_MAX, printed

    verbose = script(live, acct.api_key, "remove-background", "photo.png", "-v", cwd=tmp_path)
    assert verbose.returncode == 0, verbose.stderr
    lines = (verbose.stdout + verbose.stderr).splitlines()
    i = next(i for i, x in enumerate(lines) if x.startswith("✓ photo.png → "))
    method = lines[i + 1]
    assert method.startswith("    method: ") and len(method) > 40, lines

    as_json = script(live, acct.api_key, "remove-background", "photo.png", "--json", cwd=tmp_path)
    [item] = json.loads(as_json.stdout)["files"]
    assert item["method"] == method.removeprefix("    method: ")
    assert balance_of(live.resources, acct.id) == 7
