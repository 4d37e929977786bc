"""Generative backends an operation may be routed to by configuration: an OpenAI-compatible
server (chat completions with images, the images API), Replicate (predictions) and ComfyUI
(workflows). Transport and routing only: each adapter speaks its provider's documented HTTP
protocol through ``httpx`` (:mod:`.http`: deadlines, retries with backoff and jitter honouring
``Retry-After``, a per-provider concurrency cap, cancellation; :mod:`.media`: images on the
wire); :mod:`.routing` reads the ``PIXELMILL_ROUTE_<OPERATION>`` settings and holds the clients
(:class:`Backends`). What a routed capability asks and how the answer maps back is its
``engines/<capability>/hosted.py`` (docs/backends.md)."""
