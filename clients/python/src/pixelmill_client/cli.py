"""``pixelmill-client``: the command line.

One command per processing operation (generated from ``OPERATIONS``) on files, globs, folders
or URLs, in parallel with a bound and a progress bar per file and overall; generation, jobs,
batches, the library, webhooks and the account. ``--json`` prints machine-readable output.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import re
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlparse

from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from pixelmill_client import __version__
from pixelmill_client import models as m
from pixelmill_client._core import OPERATIONS, Operation, is_url
from pixelmill_client.aio import AsyncClient
from pixelmill_client.config import ConfigError, Settings, resolve
from pixelmill_client.errors import (
    APIConnectionError,
    AuthenticationError,
    InsufficientCredits,
    PixelmillError,
    RateLimited,
    ServerError,
    WaitTimeout,
)

# Exit codes (also in --help).
OK = 0
USAGE = 1  # bad arguments, or a request the server refused (400/404/409/422)
AUTH = 2  # no key, or the server refused it (401/403)
CREDITS = 3  # not enough credits (402)
SOME_FAILED = 4  # some files failed, a job missed outputs, or a job or batch ended failed
UNAVAILABLE = 5  # server error (5xx), rate limited after retries, network error, timeout

EXIT_CODES = """exit codes:
  0  success
  1  usage error, or a request the server refused (bad input, unknown id)
  2  authentication: no API key, or an invalid one
  3  insufficient credits
  4  some files failed, or a job or batch ended failed
  5  server or network error (5xx, rate limited after retries, timeout)"""

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff", ".gif"}

ASK_ABOVE_CREDITS = 10
"""A run that will spend more than this asks first (``--yes`` answers for scripts)."""

# soft_wrap: a line is never broken at the console's width (ids, URLs and paths stay whole and
# copyable, also when piped, where the width would be 80).
err = Console(stderr=True, highlight=False, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)


class UsageError(Exception):
    pass


def exit_code_for(exc: BaseException) -> int:
    if isinstance(exc, AuthenticationError):
        return AUTH
    if isinstance(exc, InsufficientCredits):
        return CREDITS
    if isinstance(exc, APIConnectionError | ServerError | RateLimited | WaitTimeout):
        return UNAVAILABLE
    return USAGE


def dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [dump(v) for v in value]
    if isinstance(value, dict):
        return {k: dump(v) for k, v in value.items()}
    return value


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(dump(value), indent=2) + "\n")


# ---- inputs and outputs -----------------------------------------------------------------------


def expand_inputs(args: Sequence[str], recursive: bool = False) -> list[str]:
    """Files, folders (their images), globs and URLs, in order, without duplicates."""
    found: list[str] = []
    for arg in args:
        path = Path(arg)
        if is_url(arg):
            found.append(arg)
        elif path.is_dir():
            pattern = "**/*" if recursive else "*"
            found += sorted(
                str(p) for p in path.glob(pattern) if p.suffix.lower() in IMAGE_SUFFIXES
            )
        elif path.is_file():
            found.append(arg)
        elif glob.has_magic(arg):
            matches = sorted(p for p in glob.glob(arg, recursive=True) if Path(p).is_file())
            if not matches:
                raise UsageError(f"no file matches {arg}")
            found += matches
        else:
            raise UsageError(f"no such file or folder: {arg}")
    if not found:
        raise UsageError("no images to process")
    return list(dict.fromkeys(found))


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str, default: str = "result") -> str:
    """``text`` as a file name that needs no quoting in any shell or file system: letters,
    digits, ``.``, ``_`` and ``-`` (anything else becomes one ``-``; no leading dot)."""
    return _UNSAFE.sub("-", text).strip("-.") or default


def stem_of(source: str) -> str:
    name = urlparse(source).path.rsplit("/", 1)[-1] if is_url(source) else Path(source).name
    return safe_name(Path(name).stem, "image")


FILE_LINE_MAX = 160
"""The most characters of a file's line in ``pixelmill-client <operation>`` without ``-v``."""


def clip(text: str, width: int) -> str:
    """``text`` whole when it fits ``width``, else its start and end around an ellipsis
    (a path keeps its folder's start and its file name)."""
    if len(text) <= width:
        return text
    tail = (width - 1) * 2 // 3
    return text[: width - 1 - tail] + "…" + text[len(text) - tail :]


def file_line(source: str, output: str, credits: int) -> str:
    """One processed file, at most :data:`FILE_LINE_MAX` characters:
    ``✓ SOURCE → OUTPUT (N credit(s))``."""
    return f"✓ {clip(source, 70)} → {clip(output, 70)} ({credits} credit(s))"


def ext_of_url(url: str, default: str = "png") -> str:
    suffix = Path(urlparse(url).path).suffix.lstrip(".").lower()
    return suffix or default


class Namer:
    """Output paths: ``DIR/<stem>.<ext>`` with ``-o DIR``, else ``<stem>-<operation>.<ext>``
    beside the input (a URL's result goes to the current folder); never two alike."""

    def __init__(self, outdir: Path | None, operation: str) -> None:
        self.outdir = outdir
        self.operation = operation
        self.taken: set[Path] = set()

    def path(self, source: str, ext: str) -> Path:
        stem = stem_of(source)
        if self.outdir is not None:
            base = self.outdir / f"{stem}.{ext}"
        else:
            folder = Path(".") if is_url(source) else Path(source).parent
            base = folder / f"{stem}-{self.operation}.{ext}"
        candidate, n = base, 2
        while candidate in self.taken:
            candidate = base.with_name(f"{base.stem}-{n}{base.suffix}")
            n += 1
        self.taken.add(candidate)
        return candidate


# ---- progress ---------------------------------------------------------------------------------


def make_progress(quiet: bool) -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=quiet,
        transient=False,
    )


@dataclass
class FileOutcome:
    source: str
    ok: bool
    output: str | None = None
    credits_used: int = 0
    method: str | None = None
    error: str | None = None
    status_code: int | None = None
    exception: BaseException | None = field(default=None, repr=False)

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "ok": self.ok,
            "output": self.output,
            "credits_used": self.credits_used,
            "method": self.method,
            "error": self.error,
            "status_code": self.status_code,
        }


# Steps of one file: read and send, processed (answer received), result saved.
FILE_STEPS = 3


async def process_files(
    client: AsyncClient,
    op: Operation,
    sources: list[str],
    params: dict[str, Any],
    namer: Namer,
    parallel: int,
    progress: Progress,
    echo: bool,
    verbose: bool = False,
) -> list[FileOutcome]:
    """Each file processed and saved; with ``echo`` a short line per file (file, output,
    credits), with ``verbose`` the server's ``details.method`` and a failure's whole reason."""
    overall = progress.add_task(f"{op.name}: {len(sources)} file(s)", total=len(sources))
    gate = asyncio.Semaphore(max(1, parallel))
    stop: list[BaseException] = []  # an auth or credits failure stops the files not started

    async def one(source: str) -> FileOutcome:
        async with gate:
            if stop:
                return FileOutcome(source, False, error="skipped: " + str(stop[0]))
            label = stem_of(source) if len(source) > 40 else source
            task = progress.add_task(f"  {label}: sending", total=FILE_STEPS)
            try:
                result = await client.process(op.name, source, **params)
                progress.update(task, advance=1, description=f"  {label}: processed")
                output = await save_result(client, op, source, result, namer)
                progress.update(task, advance=1, description=f"  {label}: saved")
                outcome = FileOutcome(source, True, str(output), result.credits_used, result.method)
                if echo:
                    line = file_line(source, str(output), result.credits_used)
                    progress.console.print(
                        "[green]✓[/]" + escape(line[1:]), soft_wrap=True, highlight=False
                    )
                    if verbose:
                        method = escape(result.method or "done")
                        progress.console.print(f"    method: {method}", soft_wrap=True)
            except (PixelmillError, OSError) as exc:
                if isinstance(exc, AuthenticationError | InsufficientCredits):
                    stop.append(exc)
                outcome = FileOutcome(
                    source,
                    False,
                    error=getattr(exc, "detail", None) or str(exc),
                    status_code=getattr(exc, "status_code", None),
                    exception=exc,
                )
                if echo:
                    why = outcome.error or ""
                    line = f"✗ {clip(source, 70)}: {why}"
                    line = line if verbose else clip(line, FILE_LINE_MAX)
                    progress.console.print(
                        "[red]✗[/]" + escape(line[1:]), soft_wrap=True, highlight=False
                    )
            finally:
                progress.update(task, completed=FILE_STEPS, visible=False)
                progress.advance(overall)
            return outcome

    return list(await asyncio.gather(*(one(s) for s in sources)))


async def save_result(
    client: AsyncClient, op: Operation, source: str, result: m.ProcessingResult, namer: Namer
) -> Path:
    if not op.image_result or result.result_url is None:
        path = namer.path(source, "json")
        data = json.dumps(result.model_dump(mode="json"), indent=2).encode()
        await asyncio.to_thread(_write, path, data)
        return path
    ext = result.format or ext_of_url(result.result_url)
    ext = "jpg" if ext == "jpeg" else ext
    path = namer.path(source, ext)
    await client.download(result.result_url, path)
    return path


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def files_exit_code(outcomes: list[FileOutcome]) -> int:
    failed = [o for o in outcomes if not o.ok]
    if not failed:
        return OK
    errors = [o.exception for o in failed if o.exception is not None]
    if any(isinstance(e, AuthenticationError) for e in errors):
        return AUTH
    if any(isinstance(e, InsufficientCredits) for e in errors):
        return CREDITS
    if len(failed) == len(outcomes) and all(exit_code_for(e) == UNAVAILABLE for e in errors):
        return UNAVAILABLE
    return SOME_FAILED


# ---- jobs and batches -------------------------------------------------------------------------


async def watch_job(
    client: AsyncClient, job_id: str, interval: float, limit: float, quiet: bool
) -> m.Job:
    with make_progress(quiet) as progress:
        task = progress.add_task(f"job {job_id}: pending", total=None)

        def show(job: m.Job) -> None:
            total = job.progress.total or job.images_to_generate or None
            done = job.progress.completed + job.progress.failed
            progress.update(
                task, total=total, completed=done, description=f"job {job_id}: {job.status}"
            )

        return await client.wait(job_id, progress=show, interval=interval, timeout=limit)


async def download_results(
    client: AsyncClient, results: Sequence[m.JobResult | m.BatchImageResult], folder: Path
) -> list[str]:
    paths: list[str] = []
    for i, r in enumerate(results, 1):
        path = folder / f"{i:02d}-{safe_name(r.scene or 'result')}.{ext_of_url(r.url)}"
        await client.download(r.url, path)
        paths.append(str(path))
    return paths


async def finish_job(client: AsyncClient, args: argparse.Namespace, job: m.Job) -> int:
    files: list[str] = []
    if args.output and job.results:
        files = await download_results(client, job.results, Path(args.output))
    if args.json:
        print_json({**job.model_dump(mode="json"), "downloaded": files})
    else:
        colour = "green" if job.status == "completed" else "red"
        out.print(
            f"job {job.job_id}: [{colour}]{job.status}[/] · {len(job.results)} result(s) · "
            f"{job.credits_used} credit(s) used"
        )
        if job.error:
            out.print(f"error: {escape(job.error)}")
        for w in job.warnings or []:
            out.print(f"[yellow]warning:[/] {escape(w)}")
        for r in job.results:
            out.print(f"  {escape(r.scene or 'result')}: {escape(r.url)}")
        if job.failures:
            print_failures(job.failures)
        for f in files:
            out.print(f"  saved {escape(f)}")
    if job.status != "completed" or job.failures:
        return SOME_FAILED
    return OK


def print_failures(failures: Sequence[m.JobFailure]) -> None:
    """The outputs a job did not deliver (not charged): each one's index (as the server
    counts, from 0) and its reason, whole: a table on a terminal, a line each when piped."""
    if not out.is_terminal:
        for f in failures:
            out.print(f"  not delivered: output {f.index}: {escape(f.reason)}")
        return
    t = Table(title="Not delivered (not charged)")
    t.add_column("output", justify="right")
    t.add_column("reason", overflow="fold")
    for f in failures:
        t.add_row(str(f.index), escape(f.reason))
    out.print(t)


async def watch_batch(
    client: AsyncClient, batch_id: str, interval: float, limit: float, quiet: bool
) -> m.Batch:
    with make_progress(quiet) as progress:
        task = progress.add_task(f"batch {batch_id}: pending", total=None)

        def show(batch: m.Batch) -> None:
            done = batch.progress.completed + batch.progress.failed
            progress.update(
                task,
                total=batch.progress.total or batch.total_images or None,
                completed=done,
                description=f"batch {batch_id}: {batch.status}",
            )

        return await client.wait_batch(batch_id, progress=show, interval=interval, timeout=limit)


async def finish_batch(client: AsyncClient, args: argparse.Namespace, batch: m.Batch) -> int:
    files: list[str] = []
    if getattr(args, "output", None):
        for image in batch.images:
            folder = Path(args.output) / safe_name(image.id or image.job_id or "image", "image")
            files += await download_results(client, image.results, folder)
    if args.json:
        print_json({**batch.model_dump(mode="json"), "downloaded": files})
    else:
        p = batch.progress
        out.print(
            f"batch {batch.batch_id}: {batch.status}{' (cancelled)' if batch.cancelled else ''}"
            f" · {p.completed} completed, {p.failed} failed of {p.total}"
            f" · {batch.credits_used} credit(s) used"
        )
        for f in files:
            out.print(f"  saved {escape(f)}")
    return SOME_FAILED if batch.progress.failed else OK


# ---- output helpers ---------------------------------------------------------------------------


def cells(rows: Sequence[BaseModel], columns: Sequence[str]) -> list[list[str]]:
    data = [row.model_dump(mode="json") for row in rows]
    return [["" if d.get(c) is None else str(d.get(c)) for c in columns] for d in data]


def table(rows: Sequence[BaseModel], columns: Sequence[str], title: str) -> Table:
    """For a terminal: every value whole (a long one folds within its column, never cut)."""
    t = Table(title=title)
    for c in columns:
        t.add_column(c, overflow="fold")
    for values in cells(rows, columns):
        t.add_row(*(escape(v) for v in values))
    return t


def print_rows(rows: Sequence[BaseModel], columns: Sequence[str], title: str) -> None:
    """A table on a terminal; piped, tab-separated lines (a header, then one line a row) with
    every id and URL whole, for ``cut`` and ``awk``."""
    if out.is_terminal:
        out.print(table(rows, columns, title))
        return
    for values in [list(columns), *cells(rows, columns)]:
        sys.stdout.write("\t".join(v.replace("\t", " ").replace("\n", " ") for v in values) + "\n")


def show(args: argparse.Namespace, value: Any, columns: Sequence[str] = (), title: str = "") -> int:
    if args.json:
        print_json(value)
    elif isinstance(value, list):
        if value:
            print_rows(value, columns, title)
        else:
            out.print(f"no {title.lower()}")
    elif isinstance(value, BaseModel):
        for k, v in value.model_dump(mode="json").items():
            if v is not None:
                out.print(f"[bold]{k}[/]: {escape(str(v))}")
    else:
        out.print(escape(str(value)))
    return OK


def confirm_cost(args: argparse.Namespace, credits: int, what: str) -> None:
    """Before a run that will spend more than ``ASK_ABOVE_CREDITS``: say what it costs, and
    go on only with ``--yes`` or a yes typed at a terminal (raises :class:`UsageError`)."""
    if credits <= ASK_ABOVE_CREDITS:
        return
    line = f"{what}: up to {credits} credits"
    if args.yes:
        if not (args.json or args.quiet):
            err.print(f"{escape(line)} (--yes)")
        return
    if not sys.stdin.isatty():
        raise UsageError(
            f"{line}; more than {ASK_ABOVE_CREDITS} needs a yes: pass --yes "
            "(the input is not a terminal, so there is no one to ask)"
        )
    err.print(escape(line))
    answer = input("Go ahead? [y/N] ").strip().lower()
    if answer not in ("y", "yes"):
        raise UsageError("cancelled: nothing was spent")


def credits_per_image(op: Operation, params: dict[str, Any]) -> int:
    """What one image costs (the catalog's figure: ``1``, ``2``, or ``1 (8x: 2)``)."""
    if op.name == "upscale" and params.get("scale") == 8:
        return 2
    found = re.match(r"\d+", op.credits)
    return int(found.group()) if found else 1


# ---- commands ---------------------------------------------------------------------------------

Handler = Callable[[AsyncClient, argparse.Namespace], Awaitable[int]]


async def cmd_process(client: AsyncClient, args: argparse.Namespace) -> int:
    op: Operation = OPERATIONS[args.operation]
    sources = expand_inputs(args.inputs, args.recursive)
    params: dict[str, Any] = dict(args.param or [])
    for opt in op.options:
        value = getattr(args, opt.name.replace("-", "_"), None)
        if value is not None:
            params[opt.name] = value
    outdir = Path(args.output) if args.output else None
    namer = Namer(outdir, op.name)
    confirm_cost(
        args, credits_per_image(op, params) * len(sources), f"{op.name} of {len(sources)} file(s)"
    )
    with make_progress(args.quiet or args.json) as progress:
        outcomes = await process_files(
            client,
            op,
            sources,
            params,
            namer,
            args.parallel,
            progress,
            not args.json,
            verbose=getattr(args, "verbose", False),
        )
    ok = sum(o.ok for o in outcomes)
    credits = sum(o.credits_used for o in outcomes)
    code = files_exit_code(outcomes)
    if args.json:
        print_json(
            {
                "operation": op.name,
                "processed": ok,
                "failed": len(outcomes) - ok,
                "credits_used": credits,
                "exit_code": code,
                "files": [o.as_json() for o in outcomes],
            }
        )
    else:
        out.print(f"{ok} of {len(outcomes)} file(s) processed, {credits} credit(s) used")
    return code


async def cmd_account(client: AsyncClient, args: argparse.Namespace) -> int:
    account = await client.account()
    if args.json:
        print_json(account)
        return OK
    limits = account.rate_limits
    out.print(f"[bold]{account.email}[/] (id {account.id}) · plan {account.subscription_tier}")
    out.print(f"credits: [bold]{account.credits}[/] (purchased {account.total_purchased or 0})")
    if limits:
        per_day = limits.requests_per_day if limits.requests_per_day is not None else "unlimited"
        out.print(
            f"limits: {limits.requests_per_minute}/min, {per_day}/day, "
            f"files up to {limits.max_file_size_mb} MB"
        )
    return OK


async def cmd_history(client: AsyncClient, args: argparse.Namespace) -> int:
    page = await client.history(limit=args.limit, offset=args.offset)
    if args.json:
        print_json(page)
        return OK
    cols = ("created_at", "operation", "status", "credits_used", "processing_id")
    return show(args, page.items, cols, f"History ({page.total} in all)")


async def product_uuid_for(
    client: AsyncClient, value: str, category: str | None, announce: bool
) -> tuple[str, bool]:
    """A product UUID, or a local file uploaded first; and whether it was uploaded here."""
    if await asyncio.to_thread(Path(value).is_file):
        product = await client.upload_product(value, category=category)
        if announce:
            err.print(f"uploaded {value} as product {product.uuid}")
        return product.uuid, True
    return value, False


VIDEO_CREDITS = 50
AD_PACK_PARTS = {"images": 6, "ads": 2, "captions": 1, "video": 50}
"""The ad pack's parts and their prices (the server's answer has the exact ``parts``)."""


async def cmd_video(client: AsyncClient, args: argparse.Namespace) -> int:
    confirm_cost(args, VIDEO_CREDITS, "generate video (a talking video)")
    created = await client.generate_video(
        args.image,
        args.script or "",
        duration=args.duration,
        aspect=args.aspect,
        subtitles=args.subtitles,
        product_name=args.product_name,
        webhook_url=args.webhook_url,
        idempotency_key=args.idempotency_key,
    )
    if not args.wait:
        return show(args, created)
    if not args.json:
        err.print(f"video job {created.job_id}: {created.credits_reserved} credit(s) reserved")
    with make_progress(args.quiet or args.json) as progress:
        task = progress.add_task(f"video {created.job_id}: pending", total=None)

        def step(job: m.VideoJob) -> None:
            doing = f" ({job.current_step})" if job.current_step else ""
            progress.update(task, description=f"video {job.job_id}: {job.status}{doing}")

        job = await client.wait_video(
            created.job_id, progress=step, interval=args.interval, timeout=args.timeout_wait
        )
    files: list[str] = []
    if args.output and job.video_url:
        path = Path(args.output) / f"video-{job.job_id}.mp4"
        await client.download(job.video_url, path)
        files.append(str(path))
    if args.json:
        print_json({**job.model_dump(mode="json"), "downloaded": files})
    else:
        out.print(
            f"video {job.job_id}: {job.status} · {job.credits_used} credit(s) used"
            + (f" · {job.duration_seconds:.1f} s" if job.duration_seconds else "")
        )
        if job.error:
            out.print(f"error: {escape(job.error)}")
        if job.video_url:
            out.print(f"  video: {escape(job.video_url)}")
        for f in files:
            out.print(f"  saved {escape(f)}")
    return OK if job.status == "completed" else SOME_FAILED


async def cmd_ad_pack(client: AsyncClient, args: argparse.Namespace) -> int:
    wanted = {part: not getattr(args, f"no_{part}") for part in AD_PACK_PARTS}
    cost = sum(price for part, price in AD_PACK_PARTS.items() if wanted[part])
    confirm_cost(args, cost, f"generate ad-pack ({', '.join(p for p, w in wanted.items() if w)})")
    created = await client.create_ad_pack(
        args.page,
        include_images=wanted["images"],
        include_ads=wanted["ads"],
        include_captions=wanted["captions"],
        include_video=wanted["video"],
        webhook_url=args.webhook_url,
        idempotency_key=args.idempotency_key,
    )
    if not args.wait:
        return show(args, created)
    if not args.json:
        err.print(f"ad pack {created.job_id}: {created.credits_reserved} credit(s) reserved")
    with make_progress(args.quiet or args.json) as progress:
        task = progress.add_task(f"ad pack {created.job_id}: pending", total=None)

        def step(pack: m.AdPack) -> None:
            done = pack.progress.get("completed", 0) + pack.progress.get("failed", 0)
            total = pack.progress.get("total") or None
            description = f"ad pack {pack.job_id}: {pack.status}"
            progress.update(task, total=total, completed=done, description=description)

        pack = await client.wait_ad_pack(
            created.job_id, progress=step, interval=args.interval, timeout=args.timeout_wait
        )
    files: list[str] = []
    if args.output:
        folder = Path(args.output)
        urls = [(f"photo-{i:02d}", u) for i, u in enumerate(pack.product_images, 1)]
        urls += [(f"ad-{safe_name(a.platform)}", a.url) for a in pack.static_ads]
        if pack.ugc_video_url:
            urls.append(("video", pack.ugc_video_url))
        for stem, url in urls:
            path = folder / f"{stem}.{ext_of_url(url)}"
            await client.download(url, path)
            files.append(str(path))
        if pack.captions:
            path = folder / "captions.json"
            await asyncio.to_thread(_write, path, json.dumps(pack.captions, indent=2).encode())
            files.append(str(path))
    if args.json:
        print_json({**pack.model_dump(mode="json"), "downloaded": files})
    else:
        out.print(
            f"ad pack {pack.job_id}: {pack.status} · {len(pack.product_images)} photo(s), "
            f"{len(pack.static_ads)} ad(s), {len(pack.captions)} caption(s)"
            f"{', a video' if pack.ugc_video_url else ''} · {pack.credits_used} credit(s) used"
        )
        if pack.error:
            out.print(f"error: {escape(pack.error)}")
        for warning in pack.warnings or ():
            out.print(f"warning: {escape(warning)}")
        for f in files:
            out.print(f"  saved {escape(f)}")
    return OK if pack.status == "completed" else SOME_FAILED


async def cmd_generate(client: AsyncClient, args: argparse.Namespace) -> int:
    kind = args.kind
    if kind == "video":
        return await cmd_video(client, args)
    if kind == "ad-pack":
        return await cmd_ad_pack(client, args)
    key = args.idempotency_key
    confirm_cost(args, args.num, f"generate {kind}, {args.num} image(s) at 1 credit each")
    if kind == "scenes":
        if is_url(args.product):
            created = await client.generate_scenes_from_url(
                args.product,
                args.num,
                category=args.category,
                webhook_url=args.webhook_url,
                idempotency_key=key,
            )
        else:
            uuid, _ = await product_uuid_for(client, args.product, args.category, not args.json)
            created = await client.generate_scenes(
                uuid,
                args.num,
                category=args.category,
                webhook_url=args.webhook_url,
                idempotency_key=key,
            )
    elif kind in ("product-photo", "tryon"):
        uuid, uploaded = await product_uuid_for(client, args.product, args.category, not args.json)
        try:
            created = await client.generate_product_photo(
                args.avatar,
                uuid,
                args.num,
                prompt=args.prompt,
                webhook_url=args.webhook_url,
                idempotency_key=key,
                tryon=kind == "tryon",
            )
        except PixelmillError:
            if uploaded:  # refused: the product uploaded for it goes too
                await client.delete_product(uuid)
                if not args.json:
                    err.print(f"removed product {uuid}, uploaded for the refused job")
            raise
    else:  # avatar
        if not args.prompt and not args.reference:
            raise UsageError("generate avatar needs --prompt or --reference IMAGE")
        created = await client.generate_avatar(
            args.prompt,
            reference_image=args.reference,
            num_outputs=args.num,
            webhook_url=args.webhook_url,
            idempotency_key=key,
        )
    if not args.wait:
        return show(args, created)
    if not args.json:
        err.print(
            f"job {created.job_id}: {created.credits_reserved} credit(s) reserved, "
            f"{created.credits_remaining} left"
        )
    if kind == "avatar":
        avatar_job = await client.wait_avatar(
            created.job_id, interval=args.interval, timeout=args.timeout_wait
        )
        return await finish_job(client, args, avatar_job)
    job = await watch_job(
        client, created.job_id, args.interval, args.timeout_wait, args.quiet or args.json
    )
    return await finish_job(client, args, job)


async def cmd_jobs(client: AsyncClient, args: argparse.Namespace) -> int:
    if args.action == "list":
        jobs = await client.list_jobs(limit=args.limit, status=args.status)
        cols = ("job_id", "type", "status", "images_to_generate", "credits_used", "created_at")
        return show(args, jobs, cols, "Jobs")
    if args.action == "get":
        job = await client.get_job(args.id)
        return await finish_job(client, args, job)
    if args.action == "cancel":
        job = await client.cancel_job(args.id)
        await finish_job(client, args, job)
        return OK
    job = await watch_job(
        client, args.id, args.interval, args.timeout_wait, args.quiet or args.json
    )
    return await finish_job(client, args, job)


async def cmd_batches(client: AsyncClient, args: argparse.Namespace) -> int:
    if args.action == "create":
        sources = [s for s in expand_inputs(args.inputs, args.recursive) if not is_url(s)]
        ids: dict[str, str] = {}
        for s in sources:
            ident, n = stem_of(s), 2
            while ident in ids:
                ident, n = f"{stem_of(s)}-{n}", n + 1
            ids[ident] = s
        confirm_cost(
            args,
            len(ids) * args.per_product,
            f"a batch of {len(ids)} image(s) x {args.per_product} scene(s) at 1 credit each",
        )
        created = await client.create_batch(
            dict(ids.items()),
            images_per_product=args.per_product,
            webhook_url=args.webhook_url,
            idempotency_key=args.idempotency_key,
        )
        if not args.wait:
            return show(args, created)
        if not args.json:
            err.print(
                f"batch {created.batch_id}: {created.total_images} image(s), "
                f"{created.credits_reserved} credit(s) reserved"
            )
        batch = await watch_batch(
            client, created.batch_id, args.interval, args.timeout_wait, args.quiet or args.json
        )
        return await finish_batch(client, args, batch)
    if args.action == "list":
        batches = await client.list_batches(limit=args.limit, status=args.status)
        cols = ("batch_id", "status", "total_images", "credits_used", "created_at")
        return show(args, batches, cols, "Batches")
    if args.action == "get":
        return await finish_batch(client, args, await client.get_batch(args.id))
    if args.action == "cancel":
        return await finish_batch(client, args, await client.cancel_batch(args.id))
    batch = await watch_batch(
        client, args.id, args.interval, args.timeout_wait, args.quiet or args.json
    )
    return await finish_batch(client, args, batch)


async def cmd_products(client: AsyncClient, args: argparse.Namespace) -> int:
    if args.action == "list":
        items = await client.list_products(category=args.category)
        return show(args, items, ("uuid", "name", "category", "width", "height"), "Products")
    if args.action == "upload":
        product = await client.upload_product(args.image, name=args.name, category=args.category)
        return show(args, product)
    if args.action == "get":
        return show(args, await client.get_product(args.uuid))
    return show(args, await client.delete_product(args.uuid))


async def cmd_avatars(client: AsyncClient, args: argparse.Namespace) -> int:
    if args.action == "public":
        gallery = await client.public_avatars()
        return show(args, gallery, ("id", "name", "gender"), "Public avatars")
    avatars = await client.list_avatars()
    return show(args, avatars, ("uuid", "name", "gender", "kind"), "Avatars")


async def cmd_webhooks(client: AsyncClient, args: argparse.Namespace) -> int:
    if args.action == "list":
        hooks = await client.list_webhooks()
        return show(args, hooks, ("id", "url", "created_at"), "Webhooks")
    if args.action == "create":
        hook = await client.create_webhook(args.hook_url, secret=args.secret)
        if not args.json:
            err.print("the signing secret is shown once: store it now")
        return show(args, hook)
    if args.action == "deliveries":
        log = await client.webhook_deliveries(status=args.status, limit=args.limit)
        return show(args, log, ("id", "event", "status", "attempts", "url"), "Deliveries")
    if args.action == "secret":
        return show(args, await client.signing_secret())
    return show(args, await client.delete_webhook(args.id))


# ---- the parser -------------------------------------------------------------------------------


class Parser(argparse.ArgumentParser):
    """argparse with usage errors as exit code 1 (argparse's own is 2, our auth code)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(USAGE, f"{self.prog}: error: {message}\n")


def key_value(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    key, raw = text.split("=", 1)
    try:
        value: Any = json.loads(raw)
    except ValueError:
        value = raw
    return key.strip(), value


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def build_parser() -> Parser:
    common = Parser(add_help=False)
    s = argparse.SUPPRESS  # so a flag given before or after the command both count
    common.add_argument("--url", default=s, help="server base URL (env PIXELMILL_URL)")
    common.add_argument("--api-key", default=s, help="API key (env PIXELMILL_API_KEY)")
    common.add_argument(
        "--config",
        default=s,
        help="TOML file with url and api_key (default ~/.config/pixelmill/config.toml)",
    )
    common.add_argument("--json", action="store_true", default=s, help="JSON output for scripts")
    common.add_argument("-q", "--quiet", action="store_true", default=s, help="no progress bars")
    common.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=s,
        help="details of each file (the method the server used); --json has them all",
    )
    common.add_argument(
        "-y",
        "--yes",
        action="store_true",
        default=s,
        help=f"spend more than {ASK_ABOVE_CREDITS} credits without asking (for scripts)",
    )
    common.add_argument("--timeout", type=float, default=s, help="seconds per request (120)")
    common.add_argument("--retries", type=int, default=s, help="retries of 429/503/network (3)")

    parser = Parser(
        prog="pixelmill-client",
        description="Command line for a pixelmill server.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(
        dest="command", required=True, parser_class=Parser, metavar="COMMAND"
    )

    def command(name: str, help: str, handler: Handler, **kw: Any) -> Parser:
        p: Parser = sub.add_parser(
            name,
            help=help,
            description=help,
            parents=[common],
            epilog=EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **kw,
        )
        p.set_defaults(handler=handler)
        return p

    for op in OPERATIONS.values():
        p = command(op.name, f"{op.help} ({op.credits} credit(s) per image)", cmd_process)
        p.set_defaults(operation=op.name)
        p.add_argument("inputs", nargs="+", help="image files, folders, globs or http(s) URLs")
        p.add_argument(
            "-o", "--output", help="output folder (default: beside each input, NAME-OP.EXT)"
        )
        p.add_argument("-p", "--parallel", type=positive, default=4, help="files at once (4)")
        p.add_argument("-r", "--recursive", action="store_true", help="folders: subfolders too")
        for opt in op.options:
            p.add_argument(f"--{opt.name}", type=opt.type, choices=opt.choices, help=opt.help)
        p.add_argument(
            "--param",
            type=key_value,
            action="append",
            metavar="KEY=VALUE",
            help="any other field of the operation (VALUE parsed as JSON when it is)",
        )

    def wait_flags(p: Parser) -> None:
        p.add_argument("--interval", type=float, default=1.0, help="seconds between polls")
        p.add_argument(
            "--timeout-wait", type=float, default=600.0, help="give up waiting after (600 s)"
        )
        p.add_argument("-o", "--output", help="download the results into this folder")

    gen = command("generate", "start a generation job", cmd_generate)
    gsub = gen.add_subparsers(dest="kind", required=True, parser_class=Parser)
    for kind, text in (
        ("scenes", "product photos in generated scenes (1 credit per scene)"),
        ("product-photo", "a saved avatar with the product (1 credit per image)"),
        ("tryon", "a saved avatar wearing the product (clothing; 1 credit per image)"),
        ("avatar", "new avatars from a prompt or a reference photo (1 credit each)"),
    ):
        g = gsub.add_parser(kind, help=text, description=text, parents=[common])
        if kind in ("product-photo", "tryon"):
            g.add_argument("avatar", help="avatar UUID")
        if kind != "avatar":
            g.add_argument("product", help="product UUID, or an image file (uploaded first) or URL")
        default = {"scenes": 6, "avatar": 1}.get(kind, 6)
        g.add_argument("-n", "--num", type=positive, default=default, help=f"images ({default})")
        if kind == "scenes":
            g.add_argument("--category", help="product category")
        elif kind in ("product-photo", "tryon"):
            default_category = "clothing" if kind == "tryon" else None
            g.add_argument(
                "--category",
                default=default_category,
                help="the product's category when a file is uploaded ("
                + ("clothing: try-on takes clothing" if default_category else "measured")
                + ")",
            )
        if kind != "scenes":
            g.add_argument("--prompt", help="steers the result")
        if kind == "avatar":
            g.add_argument("--reference", help="a photo of a person (file or URL)")
        g.add_argument("--webhook-url", help="job.completed / job.failed go here")
        g.add_argument("--idempotency-key", help="default: a fresh one")
        g.add_argument("--wait", action="store_true", help="follow the job to its end")
        wait_flags(g)

    text = f"a short talking video from one still image ({VIDEO_CREDITS} credits)"
    v = gsub.add_parser("video", help=text, description=text, parents=[common])
    v.add_argument("image", help="a photo of a person or a product (file or URL)")
    v.add_argument("--script", help="what the voice says (default: written from the image)")
    v.add_argument("--duration", type=positive, default=5, help="seconds a written script aims at")
    v.add_argument("--aspect", choices=("9:16", "1:1", "16:9"), default="9:16")
    v.add_argument("--subtitles", action="store_true", help="burn the words into the video")
    v.add_argument("--product-name")
    text = (
        "photos, ads, captions and a video from a product page ("
        + ", ".join(f"{part} {price}" for part, price in AD_PACK_PARTS.items())
        + " credits)"
    )
    a = gsub.add_parser("ad-pack", help=text, description=text, parents=[common])
    a.add_argument("page", metavar="URL", help="the product page (http or https)")
    for part in AD_PACK_PARTS:
        a.add_argument(f"--no-{part}", action="store_true", help=f"leave out the {part}")
    for g in (v, a):
        g.add_argument("--webhook-url", help="job.completed / job.failed go here")
        g.add_argument("--idempotency-key", help="default: a fresh one")
        g.add_argument("--wait", action="store_true", help="follow the job with its progress")
        wait_flags(g)

    jobs = command("jobs", "list, show, watch or cancel jobs", cmd_jobs)
    jsub = jobs.add_subparsers(dest="action", required=True, parser_class=Parser)
    jl = jsub.add_parser("list", parents=[common], help="recent jobs")
    jl.add_argument("--limit", type=positive, default=20)
    jl.add_argument("--status", help="pending, queued, processing, completed or failed")
    for action, text in (("get", "a job's state"), ("watch", "follow a job with a progress bar")):
        j = jsub.add_parser(action, parents=[common], help=text)
        j.add_argument("id")
        wait_flags(j)
    jc = jsub.add_parser("cancel", parents=[common], help="cancel; unused credits come back")
    jc.add_argument("id")
    jc.set_defaults(output=None)

    batches = command("batches", "create, list, watch or cancel batches", cmd_batches)
    bsub = batches.add_subparsers(dest="action", required=True, parser_class=Parser)
    bc = bsub.add_parser("create", parents=[common], help="one batch from a folder of products")
    bc.add_argument("inputs", nargs="+", help="folders, files or globs (id = file name)")
    bc.add_argument("-r", "--recursive", action="store_true")
    bc.add_argument("--per-product", type=positive, default=6, help="scenes per image (6)")
    bc.add_argument("--webhook-url")
    bc.add_argument("--idempotency-key")
    bc.add_argument("--wait", action="store_true", help="follow the batch to its end")
    wait_flags(bc)
    bl = bsub.add_parser("list", parents=[common], help="recent batches")
    bl.add_argument("--limit", type=positive, default=20)
    bl.add_argument("--status")
    for action, text in (
        ("get", "a batch's state"),
        ("watch", "follow a batch with a progress bar"),
        ("cancel", "cancel; unused credits come back"),
    ):
        b = bsub.add_parser(action, parents=[common], help=text)
        b.add_argument("id")
        wait_flags(b)

    products = command("products", "the product library", cmd_products)
    psub = products.add_subparsers(dest="action", required=True, parser_class=Parser)
    pl = psub.add_parser("list", parents=[common])
    pl.add_argument("--category")
    pu = psub.add_parser("upload", parents=[common])
    pu.add_argument("image", help="file or URL")
    pu.add_argument("--name")
    pu.add_argument("--category")
    for action in ("get", "delete"):
        psub.add_parser(action, parents=[common]).add_argument("uuid")

    avatars = command("avatars", "saved avatars and the public gallery", cmd_avatars)
    asub = avatars.add_subparsers(dest="action", required=True, parser_class=Parser)
    asub.add_parser("list", parents=[common])
    asub.add_parser("public", parents=[common])

    hooks = command(
        "webhooks", "webhook receivers (list, create, delete, deliveries, secret)", cmd_webhooks
    )
    wsub = hooks.add_subparsers(dest="action", required=True, parser_class=Parser)
    wsub.add_parser("list", parents=[common])
    wc = wsub.add_parser("create", parents=[common])
    wc.add_argument("hook_url", metavar="URL", help="where the events are posted")
    wc.add_argument("--secret", help="whsec_<base64> or any string (default: generated)")
    wsub.add_parser("delete", parents=[common]).add_argument("id", type=int)
    wd = wsub.add_parser("deliveries", parents=[common], help="the delivery log")
    wd.add_argument("--status", choices=("pending", "delivered", "failed"))
    wd.add_argument("--limit", type=positive, default=20)
    wsub.add_parser("secret", parents=[common], help="the account's own signing secret")

    command("account", "the account, credits and plan limits", cmd_account)
    h = command("history", "processing history", cmd_history)
    h.add_argument("--limit", type=positive, default=20)
    h.add_argument("--offset", type=int, default=0)
    return parser


async def run(args: argparse.Namespace, settings: Settings) -> int:
    from pixelmill_client._core import RetryPolicy

    retry = RetryPolicy(max_retries=args.retries)
    async with AsyncClient(
        settings.api_key, settings.url, timeout=args.timeout, retry=retry
    ) as client:
        handler: Handler = args.handler
        return await handler(client, args)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    for name, value in (
        ("url", None),
        ("api_key", None),
        ("config", None),
        ("json", False),
        ("quiet", False),
        ("yes", False),
        ("timeout", 120.0),
        ("retries", 3),
    ):
        if not hasattr(args, name):
            setattr(args, name, value)
    try:
        settings = resolve(args.url, args.api_key, args.config)
    except ConfigError as exc:
        err.print(f"[red]error:[/] {exc}")
        return USAGE
    if not settings.api_key:
        err.print(
            "[red]error:[/] no API key: pass --api-key, set PIXELMILL_API_KEY, or put "
            'api_key = "pk_live_..." in ~/.config/pixelmill/config.toml'
        )
        return AUTH
    try:
        return asyncio.run(run(args, settings))
    except UsageError as exc:
        if args.json:
            print_json({"error": str(exc), "status_code": None, "exit_code": USAGE})
        else:
            err.print(f"[red]error:[/] {escape(str(exc))}")
        return USAGE
    except PixelmillError as exc:
        code = exit_code_for(exc)
        detail = exc.detail
        if isinstance(exc, APIConnectionError):
            detail += (
                f"; check that a pixelmill server is running at {settings.url} and that this "
                "is the right address (--url, PIXELMILL_URL or url in the config file)"
            )
        if args.json:
            print_json({"error": detail, "status_code": exc.status_code, "exit_code": code})
        else:
            where = f" ({exc.status_code})" if exc.status_code else ""
            err.print(f"[red]error{where}:[/] {escape(detail)}")
        return code
    except KeyboardInterrupt:
        err.print("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
