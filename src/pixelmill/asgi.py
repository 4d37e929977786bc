"""ASGI entry point for uvicorn: ``pixelmill.asgi:app`` (settings from the environment)."""

from pixelmill.app import create_app
from pixelmill.config import Settings
from pixelmill.observability.logs import configure_logging

settings = Settings()
configure_logging(settings.log_format, settings.log_level)
app = create_app(settings)
