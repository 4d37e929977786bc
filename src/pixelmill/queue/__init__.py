"""Where asynchronous tasks run: an in-process thread pool (the embedded default) or Celery
workers on Redis, behind one small protocol. Queues carry task names and ids only; the database
holds the truth, and tasks are dispatched only after the transaction that created their rows
committed (:func:`dispatch_after_commit`)."""

from pixelmill.queue.base import TaskQueue, TaskRunner, dispatch_after_commit, run_after_commit

__all__ = ["TaskQueue", "TaskRunner", "dispatch_after_commit", "run_after_commit"]
