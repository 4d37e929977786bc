"""``pixelmill models catalog | pull | list | verify``: the open models an operator may pull into
``PIXELMILL_MODELS_DIR``, and what is there. Registered on the main command in ``cli.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from pixelmill.models.catalogue import CatalogueEntry

models = typer.Typer(
    help="Open models in PIXELMILL_MODELS_DIR: the catalogue, verified pulls, list, verify.",
    no_args_is_help=True,
)


def _folder(required: bool) -> Path | None:
    from pixelmill.config import Settings

    folder = Settings().models_dir
    if folder is None:
        if required:
            typer.echo("error: set PIXELMILL_MODELS_DIR to the folder to pull into", err=True)
            raise typer.Exit(1)
        typer.echo("PIXELMILL_MODELS_DIR is not set: every engine runs its offline method")
        raise typer.Exit(0)
    if not required and not folder.is_dir():
        typer.echo(f"error: PIXELMILL_MODELS_DIR={folder} is not a folder", err=True)
        raise typer.Exit(1)
    return folder


def _size(entry: CatalogueEntry) -> str:
    return f"{entry.size / 1e6:.1f} MB" if entry.size is not None else "?"


@models.command("catalog")
def catalog(
    as_json: Annotated[bool, typer.Option("--json", help="one JSON array")] = False,
) -> None:
    """Every model `pull` can fetch: name, operations, family, file, size, sha256, licence,
    commercial use and source URL (docs/models.md cites where each digest comes from)."""
    from pixelmill.models.catalogue import CATALOGUE

    if as_json:
        typer.echo(json.dumps([e.as_json() for e in CATALOGUE], indent=2))
        return
    for e in CATALOGUE:
        use = "commercial use ok" if e.commercial_use else "NON-COMMERCIAL"
        typer.echo(
            f"{e.name}  [{', '.join(e.operations)}]  family={e.family}  file={e.file}  "
            f"size={_size(e)}  sha256={e.sha256}  licence={e.licence} ({use})  url={e.url}"
        )


@models.command("pull")
def pull(
    names: Annotated[list[str] | None, typer.Argument(help="catalogue names")] = None,
    all_models: Annotated[
        bool,
        typer.Option("--all", help="every catalogued model whose licence allows commercial use"),
    ] = False,
    non_commercial: Annotated[
        bool,
        typer.Option(
            "--non-commercial",
            help="with --all, also the models whose licence forbids commercial use",
        ),
    ] = False,
    mirror: Annotated[
        str | None,
        typer.Option(
            help="fetch MIRROR/<file> instead of the upstream URL (a site without internet; "
            "default: PIXELMILL_MODELS_MIRROR)"
        ),
    ] = None,
) -> None:
    """Download models into PIXELMILL_MODELS_DIR, resuming an interrupted download; each file
    becomes visible only after its sha256 matches the catalogue. A mismatch exits 1, names
    both digests and leaves nothing behind. --all leaves out the non-commercial models
    (CodeFormer, BRIA RMBG-2.0) unless --non-commercial is given; naming one pulls it."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TransferSpeedColumn,
    )

    from pixelmill.models.catalogue import CATALOGUE, by_name
    from pixelmill.models.pull import PullError, source_url
    from pixelmill.models.pull import pull as pull_one

    if all_models == bool(names):
        typer.echo("error: name one or more models, or pass --all", err=True)
        raise typer.Exit(2)
    entries = [e for e in CATALOGUE if e.commercial_use or non_commercial] if all_models else []
    for name in names or []:
        entry = by_name(name)
        if entry is None:
            known = ", ".join(e.name for e in CATALOGUE)
            typer.echo(f"error: {name} is not in the catalogue (known: {known})", err=True)
            raise typer.Exit(2)
        entries.append(entry)
    from pixelmill.config import Settings

    mirror = mirror or Settings().models_mirror
    folder = _folder(required=True)
    assert folder is not None
    failed = 0
    with Progress(
        TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn()
    ) as bar:
        for entry in entries:
            if not entry.commercial_use:
                bar.console.print(
                    f"{entry.name}: licensed {entry.licence}: not for commercial use",
                    highlight=False,
                )
            task = bar.add_task(entry.name, total=entry.size)

            def advance(done: int, total: int | None, task_id: int = task) -> None:
                bar.update(task_id, completed=done, total=total)  # type: ignore[arg-type]

            try:
                path = pull_one(entry, folder, mirror=mirror, progress=advance)
            except PullError as exc:
                failed += 1
                bar.console.print(f"[red]error[/red]: {exc}", markup=True, highlight=False)
                continue
            bar.console.print(
                f"{entry.name}: {path} (sha256 {entry.sha256} ok, from "
                f"{source_url(entry, mirror)})",
                highlight=False,
            )
    if failed:
        raise typer.Exit(1)


@models.command("list")
def models_list() -> None:
    """Each model file in PIXELMILL_MODELS_DIR: catalogue name, family, size, which engine uses
    it; rembg-format background models also with their sha256 and input shape."""
    from pixelmill.engines.background import best_model, find_models, verify_model
    from pixelmill.engines.runtime.families.presence import best, present
    from pixelmill.models.catalogue import by_file

    folder = _folder(required=False)
    assert folder is not None
    used = {
        m.path
        for m in (best(op, folder) for op in ("inpaint", "upscale", "colorize", "enhance"))
        if m is not None
    }
    rembg = find_models(folder)
    cutout = best_model(folder)
    if not rembg and not present(folder):
        typer.echo(f"{folder}: no model files; every engine runs its offline method")
    for model in rembg:
        if model.family is None and by_file(model.path.name) is not None:
            continue  # a catalogued model of another family: below
        check = verify_model(model, run=False)
        mark = "  <- used by background removal" if cutout and model.path == cutout.path else ""
        entry = by_file(model.path.name)
        name = f"{entry.name} " if entry and entry.name != model.name else ""
        typer.echo(
            f"{name}{model.name}  family={check.family or 'unknown'}  size={check.size_bytes}  "
            f"sha256={check.sha256}  input={check.input_shape}{mark}"
        )
    for found in present(folder):
        if found.entry.operations == ("background_removal",):
            continue
        ops = ", ".join(found.entry.operations)
        mark = f"  <- used by {ops}" if found.path in used else ""
        typer.echo(
            f"{found.name}  family={found.entry.family}  file={found.path.name}  "
            f"size={found.path.stat().st_size}{mark}"
        )


@models.command("verify")
def models_verify() -> None:
    """Open every model, check its inputs for its family and run it on a small image (catalogued
    files also against their sha256); exit status 1 when any fails."""
    from pixelmill.engines.background import find_models, verify_model
    from pixelmill.engines.runtime.families.presence import present, runner_for
    from pixelmill.models.catalogue import by_file
    from pixelmill.models.pull import file_digest

    folder = _folder(required=False)
    assert folder is not None
    failed = 0
    for model in find_models(folder):
        if model.family is None and by_file(model.path.name) is not None:
            continue  # a catalogued model of another family: below
        check = verify_model(model)
        problem = check.problem
        entry = by_file(model.path.name)
        # A rembg-format file the operator placed may be a build of their own: it is judged by
        # whether it opens and runs, and a digest other than the catalogue's is only noted.
        note = ""
        if entry is not None and check.sha256 != entry.sha256:
            note = "  (not the catalogued file: its sha256 differs)"
        failed += problem is not None
        typer.echo(
            f"{check.name}  {'ok' if problem is None else f'FAILED: {problem}'}  "
            f"size={check.size_bytes}  sha256={check.sha256}  input={check.input_shape}{note}"
        )
    for found in present(folder):
        if found.entry.operations == ("background_removal",):
            continue
        digest = file_digest(found.path)
        problems = []
        if digest != found.entry.sha256:
            problems.append(f"sha256 {digest}, the catalogue says {found.entry.sha256}")
        try:
            runner = runner_for(found)
            runner.load()
            _probe(runner)
        except Exception as exc:  # onnxruntime raises its own exception types
            problems.append(f"does not run: {exc}")
        problem = "; ".join(problems) or None
        failed += problem is not None
        typer.echo(
            f"{found.name}  {'ok' if problem is None else f'FAILED: {problem}'}  "
            f"size={found.path.stat().st_size}  sha256={digest}"
        )
    if failed:
        raise typer.Exit(1)


def _probe(runner: object) -> None:
    """Run a loaded runner on a small image and check what comes back."""
    import numpy as np

    from pixelmill.engines.runtime.families.colorizer import Colorizer
    from pixelmill.engines.runtime.families.face_restorer import FaceRestorer
    from pixelmill.engines.runtime.families.inpainter import Inpainter
    from pixelmill.engines.runtime.families.upscaler import Upscaler

    image = np.zeros((48, 64, 3), np.uint8)
    image[12:36, 16:48] = (200, 60, 40)
    if isinstance(runner, Upscaler):
        out = runner.upscale(image)
        want: tuple[int, ...] = (48 * runner.scale, 64 * runner.scale, 3)
    elif isinstance(runner, Inpainter):
        hole = np.zeros((48, 64), np.uint8)
        hole[20:28, 24:40] = 1
        out, want = runner.fill(image, hole), image.shape
    elif isinstance(runner, Colorizer):
        out, want = runner.colorize(image), image.shape
    elif isinstance(runner, FaceRestorer):
        face = [(24.0, 20.0), (40.0, 20.0), (32.0, 27.0), (32.0, 34.0)]
        out, want = runner.restore(image, [face]), image.shape
    else:
        raise ValueError(f"no probe for {type(runner).__name__}")
    if out.shape != want:
        raise ValueError(f"output {out.shape}, expected {want}")
