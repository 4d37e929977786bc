"""The web dashboard: a single-page app served at ``/app`` from files packaged in ``static/``.

It is a client of the public HTTP surfaces only (the JWT account surface and the API key
surfaces); nothing here reads the database or calls a service."""
