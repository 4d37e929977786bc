"""Helpers shared across the suite: real services, real servers, no mocks. One module per role:

- ``services``: the local PostgreSQL and Redis (skip when down, fail under ``CI=true``) and a
  fresh PostgreSQL schema per run.
- ``settings``: the test settings (``make_settings``) and the fast job settings of the suites
  that run jobs (``job_settings``).
- ``accounts``: accounts made through the real account service, and logging in.
- ``credits``: balances, held reservations and the ledger's consistency.
- ``waiting``: polling with a deadline (``wait_until``) and waiting for job runs in flight to
  end (``drain_jobs``), instead of sleeps.
- ``servers``: the app under a real uvicorn or a test client, and a fixed-response HTTP server.
- ``api``: uploads and job polling through the real HTTP surface.
- ``images``: small real test images made on the fly.
- ``webhooks``: a real webhook receiver on loopback.
- ``s3``: a real S3 protocol server (its fixtures are registered by the root ``conftest.py``).

Helpers only one folder needs stay in that folder (``tests/providers/fakes.py``,
``tests/storefront/helpers.py``, ``tests/imaging/loopback.py``, ...).
"""
