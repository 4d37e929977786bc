"""``/app``: the dashboard page and its assets (left out of the OpenAPI document).

The page is static: ``index.html`` with a strict Content-Security-Policy (scripts, styles and
API calls from this origin only; images also from ``data:``/``blob:`` and signed result URLs,
which may carry the configured public host), and ``/app/assets/*`` from the package."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, RedirectResponse
from starlette.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).resolve().parent / "static"
APP_PATH = "/app"

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: blob: http: https:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)

router = APIRouter(include_in_schema=False)


@router.get(APP_PATH)
async def app_root() -> RedirectResponse:
    # The page loads its assets by relative paths, so it lives at /app/.
    return RedirectResponse(APP_PATH + "/", status_code=308)


@router.api_route(APP_PATH + "/", methods=["GET", "HEAD"])
async def app_page() -> FileResponse:
    return FileResponse(
        STATIC_DIR / "index.html",
        media_type="text/html; charset=utf-8",
        headers={
            "Content-Security-Policy": CONTENT_SECURITY_POLICY,
            "Cache-Control": "no-cache",
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "same-origin",
        },
    )


def mount(app: FastAPI) -> None:
    """Add the dashboard's page and its assets to ``app``."""
    app.include_router(router)
    app.mount(APP_PATH + "/assets", StaticFiles(directory=STATIC_DIR), name="dashboard-assets")
