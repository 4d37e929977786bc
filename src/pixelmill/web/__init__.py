"""The web dashboard: a single-page app served at ``/app`` from files packaged in ``static/``.

It is a client of the public HTTP surfaces only (nothing here reads the database or calls a
service), written as plain ES modules with no build step and nothing loaded from elsewhere:

- ``static/api.js``: the session and the one ``api()`` door. Account pages use the access token
  from ``POST /api/auth/login`` (``/api/auth/me``, ``/api/credits/pricing``, the key
  regeneration, the avatar studio and try-on); everything on the API key surfaces (tools,
  jobs, batches, history, webhooks) uses the account's API key, which the browser keeps in
  ``localStorage`` under the account id: from the sign-up response, from a regeneration, or
  pasted (checked against ``GET /api/v2/account``). Signing out forgets both; an expired token
  keeps the key for the same account's next sign-in; a key refused with 401 is forgotten.
- Every request counts against the plan's rate limits like any client's, so the dashboard
  spends few: one ``/api/auth/me`` per page load, cached open reads (price list, OpenAPI
  document), polling that slows from 2 s to 8 s and keeps one request of the minute free
  (``X-RateLimit-Remaining``), and waits out a 429's ``Retry-After``.
- ``static/pages/tools.js`` builds each tool's form from the OpenAPI document (the
  ``v2 processing`` operations and their request schemas: enums, bounds, defaults,
  descriptions), and sends only the fields the person changed, so server defaults and presets
  apply exactly as for any client.
- The page is served with a strict Content-Security-Policy (``routes.py``): scripts, styles
  and requests from this origin only; inline styles are refused, so the scripts set styles
  through the CSSOM.

``tests/web`` drives it in Debian's headless Chromium (Playwright) against a live server."""
