"""ASGI entry point for uvicorn: ``pixelmill.asgi:app`` (settings from the environment)."""

from pixelmill.app import create_app
from pixelmill.config import Settings
from pixelmill.observability.logs import configure_logging
from pixelmill.observability.tracing import setup_tracing

settings = Settings()
configure_logging(settings.log_format, settings.log_level)
setup_tracing("pixelmill-api")  # before the app's database engine and clients exist
app = create_app(settings)
