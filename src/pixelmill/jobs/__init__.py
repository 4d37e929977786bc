"""Asynchronous jobs and batches: the lifecycle (the only state machine), the service that
creates, claims, runs and finishes them, the thin queue tasks and the sweeper."""
