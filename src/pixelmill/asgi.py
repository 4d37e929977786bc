"""ASGI entry point for uvicorn: ``pixelmill.asgi:app`` (settings from the environment)."""

from pixelmill.app import create_app

app = create_app()
