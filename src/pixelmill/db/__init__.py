"""Database: typed SQLAlchemy models, engine construction and session scopes."""
