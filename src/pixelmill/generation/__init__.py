"""Asynchronous generation on the job machinery: avatars (guided and from a reference photo)
today; product photos with people, try-on, video and ad packs to come. Each is a catalog
operation, run by a registry engine through a job kind (:class:`pixelmill.jobs.runner.JobKind`)."""
