"""What an operator watches: Prometheus metrics (:mod:`.metrics`), structured logs with the
request's context (:mod:`.logs`) and the HTTP middleware that feeds both (:mod:`.http`).
docs/observability.md lists the settings and the metric names."""
