"""Settings: one typed object read from the environment (prefix ``PIXELMILL_``).

Every backend switch lives here (database, queue, rate-limit storage, object storage), and
validators refuse unsafe combinations: a default secret outside development, ``celery`` without a
Redis URL, ``s3`` without a bucket.
"""

from __future__ import annotations

import os
import secrets
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class CreditPack(BaseModel):
    """A pack of credits sold through Stripe Checkout (``PIXELMILL_CREDIT_PACKS``)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$", description="its name in the API")
    credits: int = Field(gt=0, le=10_000_000, description="credits granted once paid")
    price_cents: int = Field(
        gt=0, le=100_000_000, description="what it costs, in the currency's smallest unit"
    )
    currency: str = Field(pattern=r"^[a-z]{3}$", description="ISO 4217 code, lower case")

    @model_validator(mode="after")
    def _stripe_can_charge_it(self) -> CreditPack:
        """Stripe's amount rules (docs/billing.md): a three-decimal currency's amount ends in
        0; an ISK amount (in hundredths at Stripe, whole krónur only) is a multiple of 100."""
        step = STRIPE_AMOUNT_STEP.get(self.currency, 1)
        if self.price_cents % step:
            raise ValueError(
                f"pack {self.id}: Stripe takes {self.currency.upper()} amounts in multiples of "
                f"{step} (its smallest unit), not {self.price_cents}"
            )
        return self


STRIPE_AMOUNT_STEP = {"bhd": 10, "jod": 10, "kwd": 10, "omr": 10, "tnd": 10, "isk": 100}
"""Currencies whose Stripe amounts must be a multiple of more than one smallest unit."""


class Settings(BaseSettings):
    """All runtime configuration. Field descriptions double as operator documentation."""

    model_config = SettingsConfigDict(env_prefix="PIXELMILL_", extra="ignore")

    env: Literal["development", "testing", "production"] = Field(
        "development", description="production refuses default secrets"
    )
    data_dir: Path = Field(Path("./data"), description="local state: SQLite file, results, secret")
    database_url: str | None = Field(
        None, description="SQLAlchemy URL; default: a SQLite file under data_dir"
    )
    secret_key: str | None = Field(
        None,
        description="signs JWTs and result URLs and keys the API-key hashes; in development a "
        "random one is generated once and kept in data_dir/secret_key",
    )
    jwt_lifetime_minutes: int = Field(60 * 24, ge=1, description="lifetime of login tokens")
    public_base_url: str | None = Field(
        None, description="absolute base for result and poll URLs; default: from the request"
    )
    queue: Literal["inline", "celery"] = Field("inline", description="where async jobs run")
    redis_url: str | None = Field(None, description="needed by celery and Redis rate limits")
    ratelimit_storage: str = Field(
        "memory://",
        description="a `limits` storage URI: memory:// (one process) or redis://host:port/db; "
        "while Redis is unreachable each process counts in its own memory (no 500s)",
    )
    ratelimit_retry_seconds: float = Field(
        5,
        gt=0,
        description="while the rate-limit storage is unreachable, how often one request tries "
        "it again before counting in memory",
    )
    storage: Literal["local", "s3"] = Field(
        "local",
        description="where results and library images live: local (under data_dir) or s3 "
        "(an S3-compatible bucket shared by every node; credentials from the standard AWS "
        "variables)",
    )
    s3_bucket: str | None = Field(None, description="the bucket, needed by storage=s3")
    s3_endpoint_url: str | None = Field(
        None,
        description="an S3-compatible endpoint (MinIO, R2, Ceph...), addressed path-style; "
        "unset: AWS S3",
    )
    s3_region: str | None = Field(
        None, description="the bucket's region; unset: AWS_REGION / AWS_DEFAULT_REGION"
    )
    s3_prefix: str = Field(
        "",
        description="prepended to every object name (several installs in one bucket); results "
        "go under <prefix>files/, library images under <prefix>library/",
    )
    allow_loopback_urls: bool = Field(
        False, description="let image_url and webhook URLs reach 127.0.0.1/::1 (demos, tests)"
    )
    free_credits: int = Field(10, ge=0, description="credits granted to a new account")
    result_ttl_hours: float = Field(24, gt=0, description="how long result URLs stay valid")
    enterprise_requests_per_minute: int = Field(
        3000, ge=1, description="per-minute cap of the enterprise plan (it has no daily cap)"
    )
    max_upload_bytes: int = Field(
        50 * 1024 * 1024, ge=1, description="absolute ceiling for one image, whatever the plan"
    )
    max_image_pixels: int = Field(
        40_000_000, ge=1, description="largest decoded image (decompression-bomb guard)"
    )
    free_tool_daily_limit: int = Field(3, ge=0, description="anonymous uses per tool per IP")
    cpu_workers: int = Field(
        default_factory=lambda: max(1, os.cpu_count() or 1),
        description="size of the pool that runs engines",
    )
    sync_threads: int = Field(
        8,
        ge=1,
        description="threads for synchronous endpoints (raise it for PostgreSQL over a network)",
    )
    max_queued_requests: int | None = Field(
        None,
        ge=0,
        description="synchronous image requests that may wait for a free CPU worker in one "
        "process (beyond them: 503 with Retry-After, nothing read, decoded or charged); "
        "unset: 8 per CPU worker",
    )
    max_queue_wait_seconds: float = Field(
        30,
        gt=0,
        description="longest a synchronous image request waits for a free CPU worker before "
        "it is answered 503 with Retry-After",
    )
    malloc_mmap_threshold: int = Field(
        4 * 1024 * 1024,
        ge=0,
        le=32 * 1024 * 1024,
        description="glibc: allocations of at least this many bytes (decoded images, engine "
        "intermediates) get their own mapping, handed back to the system when freed; smaller "
        "ones come from the heap, trimmed when the process goes idle (0: glibc's sliding "
        "default, up to 32 MiB)",
    )
    malloc_arena_max: int = Field(
        2, ge=0, description="glibc: most malloc arenas per process (0: glibc's default)"
    )
    job_workers: int = Field(2, ge=1, description="inline queue: concurrent jobs")
    webhook_workers: int = Field(
        4, ge=1, description="inline queue: concurrent webhook deliveries (a pool of their own)"
    )
    job_lease_seconds: int = Field(
        15,
        ge=10,
        description="a running job's lease: its run renews it every quarter of this while it is "
        "alive (a heartbeat); a job whose lease ran out (its worker died) is taken up again by "
        "the next sweep: a dead run is noticed within this plus the sweep interval (20 s by "
        "default)",
    )
    job_dispatch_timeout_seconds: float = Field(
        20,
        gt=0,
        description="a job sent to the queue but not claimed by a worker this long after its "
        "last dispatch (a queue message lost with Redis) is dispatched again by the next sweep; "
        "a job saved but never sent (its server died between saving and sending) is sent by "
        "the first sweep 5 s after it was saved (or after this, if shorter); the claim makes "
        "duplicates harmless",
    )
    sweep_interval_seconds: float = Field(
        5,
        gt=0,
        description="how often each process sweeps: stranded jobs, overdue webhook deliveries, "
        "the credit holds of dead synchronous calls, expired idempotency keys",
    )
    reads_per_minute: int = Field(
        600,
        ge=1,
        description="per-minute read allowance of an account (or its plan's per-minute rate, "
        "where higher): every GET and HEAD (balance, history, usage, lists, job polls), from any "
        "client, counts here and never in the plan's work limits",
    )
    test_key_requests_per_minute: int = Field(
        10,
        ge=1,
        description="per-minute cap of a test key (pk_test_...), counted in a bucket of its own "
        "per account: test calls never spend the plan's rate, and never more than this",
    )
    auth_cache_seconds: float = Field(
        5,
        ge=0,
        description="how long a process remembers whom an API key or access token belongs to "
        "(0: never). A key revoked or regenerated, or an account deactivated, by another "
        "process stops working here within this bound; in the process that did it, at once",
    )
    sync_reservation_timeout_seconds: float = Field(
        15,
        gt=0,
        description="a synchronous call renews its credit reservation every quarter of this "
        "while it runs; a reservation silent this long belongs to a process that died and the "
        "sweeper returns its credits (with a failed history row), at most this plus "
        "PIXELMILL_SWEEP_INTERVAL_SECONDS after the death (20 s by default)",
    )
    job_max_attempts: int = Field(
        3, ge=1, description="runs of a job (first run plus sweeper retries) before it fails"
    )
    scene_size: int = Field(
        1024, ge=256, le=2048, description="side of the square images scene jobs produce"
    )
    webhook_retry_base_seconds: float = Field(
        60,
        gt=0,
        description="first webhook retry delay; each next one is 4x longer, capped at 10 hours "
        "(with the default 60 s and 9 attempts the retries span about 36 hours)",
    )
    webhook_max_attempts: int = Field(9, ge=1, description="webhook delivery attempts in all")
    webhook_timeout_seconds: float = Field(10, gt=0, description="one webhook attempt's deadline")
    analyze_products: bool = Field(
        True,
        description="after an upload without category or description, fill them in with the "
        "analysis engine in the background (seconds of CPU per product)",
    )
    celery_queue: str = Field(
        "pixelmill", min_length=1, description="the Redis queue name Celery tasks travel on"
    )
    routes: dict[str, str] = Field(
        default_factory=dict,
        description="operation -> '<provider>:<model or workflow>' (openai, replicate, comfyui); "
        "set one per operation as PIXELMILL_ROUTE_<OPERATION> (e.g. PIXELMILL_ROUTE_ANALYZE="
        "openai:gpt-4o-mini); an operation without a route runs its offline engine "
        "(docs/backends.md)",
    )
    backend_profile: Literal["offline", "openai", "replicate", "comfyui"] = Field(
        "offline",
        description="route every operation a backend can serve to its default model or shipped "
        "workflow in one step (the table in engines/registry.py and docs/backends.md); a "
        "PIXELMILL_ROUTE_<OPERATION> overrides its operation; offline: no routes",
    )
    provider_fallback: Literal["offline", "error"] = Field(
        "offline",
        description="when a routed provider fails: offline (run the offline engine, said in "
        "details) or error (502/503 with the credits released)",
    )
    provider_timeout_seconds: float = Field(
        120, gt=0, description="one provider HTTP request's deadline (read/write/pool)"
    )
    provider_max_attempts: int = Field(
        3, ge=1, description="tries of one provider request (retried on 429/5xx and timeouts)"
    )
    provider_concurrency: int = Field(
        4, ge=1, description="requests in flight to one provider per process"
    )
    openai_base_url: str = Field(
        "https://api.openai.com/v1",
        description="an OpenAI-compatible API root (OpenAI, Ollama's http://127.0.0.1:11434/v1, "
        "vLLM, LM Studio, LocalAI)",
    )
    openai_api_key: str | None = Field(None, description="sent as a Bearer token; never logged")
    replicate_api_token: str | None = Field(None, description="Replicate's Bearer token")
    replicate_base_url: str = Field("https://api.replicate.com", description="Replicate's API")
    comfyui_url: str | None = Field(None, description="a ComfyUI server, e.g. http://gpu:8188")
    comfyui_workflows: Path | None = Field(
        None,
        description="a folder of ComfyUI API-format workflow JSON files routes name; a file "
        "here wins over the shipped workflow of the same name (providers/workflows/)",
    )
    video_input: str | None = Field(
        None,
        description="the input of the Replicate prediction PIXELMILL_ROUTE_VIDEO runs, as a JSON "
        'template (default {"image": "{{image}}", "audio": "{{audio}}"}; placeholders image, '
        "audio, script, aspect, seed, duration; docs/backends.md)",
    )
    speech_voice: str = Field(
        "alloy",
        min_length=1,
        description="the voice PIXELMILL_ROUTE_SPEECH asks its provider for (an OpenAI voice "
        "such as alloy, nova, onyx, shimmer; a Replicate model's voice name)",
    )
    models_dir: Path | None = Field(
        None,
        description="open ONNX models the operator pulled or placed (pixelmill models catalog "
        "| pull | list | verify; rembg-format background models by rembg's names): background "
        "removal, upscale, colorize and inpainting use the best present (docs/models.md)",
    )
    models_mirror: str | None = Field(
        None,
        description="pixelmill models pull fetches MIRROR/<file> instead of each model's "
        "upstream URL (a site without internet; the sha256 is checked all the same)",
    )
    onnx_providers: str | None = Field(
        None,
        description="ONNX Runtime execution providers, comma-separated, in order (cuda, "
        "tensorrt, rocm, openvino, coreml, directml, cpu or ORT's full names); unset: CUDA "
        "when onnxruntime-gpu is installed, else the CPU (docs/models.md)",
    )
    font_dir: Path | None = Field(
        None,
        description="one more folder of fonts, searched before the installed DejaVu faces "
        "(ad layouts, video subtitles; a file there named as a DejaVu face replaces it)",
    )

    metrics: bool = Field(
        False,
        description="expose Prometheus metrics: GET /metrics on the API, and a metrics port on "
        "each `pixelmill worker` (docs/observability.md)",
    )
    metrics_token: str | None = Field(
        None,
        description="when set, /metrics and the worker's metrics port answer only "
        "`Authorization: Bearer <this>` (401 otherwise)",
    )
    worker_metrics_host: str = Field(
        "127.0.0.1",
        description="the interface a worker's metrics port listens on (0.0.0.0 in a container "
        "Prometheus scrapes from outside)",
    )
    worker_metrics_port: int = Field(
        9808, ge=1, le=65535, description="the port a `pixelmill worker` serves /metrics on"
    )
    log_format: Literal["text", "json"] = Field(
        "text",
        description="text, or json: one JSON object per line with time, level, logger, message "
        "and the request's request_id, account_id, job_id, route, status, duration_ms",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="the lowest level logged"
    )
    worker_max_tasks_per_child: int | None = Field(
        None,
        ge=1,
        description="a `pixelmill worker` runs its tasks in a child process that is replaced by "
        "a fresh one after this many tasks (unset: never; bounds what a slow leak in a native "
        "library can grow to)",
    )
    worker_max_memory_per_child_mb: int | None = Field(
        None,
        ge=64,
        description="a `pixelmill worker`'s child process is replaced by a fresh one once its "
        "resident memory is above this many MiB after a task (unset: never)",
    )

    stripe_secret_key: str | None = Field(
        None,
        description="a Stripe secret key (sk_live_... or sk_test_...): with "
        "PIXELMILL_STRIPE_WEBHOOK_SECRET it turns on credit packs sold through Stripe Checkout "
        "(docs/billing.md); unset: the billing endpoints answer 404; never logged",
    )
    stripe_webhook_secret: str | None = Field(
        None,
        description="the signing secret (whsec_...) of the Stripe webhook endpoint that "
        "points at /api/v2/billing/stripe-webhook",
    )
    stripe_api_base: str = Field(
        "https://api.stripe.com", description="Stripe's API (tests point it at a local server)"
    )
    credit_packs: list[CreditPack] | None = Field(
        None,
        description='the packs on sale, a JSON list of {"id", "credits", "price_cents", '
        '"currency"}; unset: the default packs of docs/billing.md',
    )

    fault_kill_before_publish: bool = Field(
        False,
        description="FAULT INJECTION, for the multi-node tests only (refused in production): "
        "with the celery queue, the process SIGKILLs itself after a job's transaction commits "
        "and before its queue message is published (a crash between save and dispatch)",
    )

    @model_validator(mode="before")
    @classmethod
    def _route_variables(cls, data: object) -> object:
        """``PIXELMILL_ROUTE_<OPERATION>`` variables join ``routes`` (explicit ones win)."""
        if not isinstance(data, dict):
            return data
        found = {
            name[len("PIXELMILL_ROUTE_") :].lower(): value
            for name, value in os.environ.items()
            if name.upper().startswith("PIXELMILL_ROUTE_") and value.strip()
        }
        if found:
            data = {**data, "routes": {**found, **dict(data.get("routes") or {})}}
        return data

    @field_validator("stripe_secret_key", "stripe_webhook_secret", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _refuse_unsafe(self) -> Settings:
        if self.env != "development" and (self.secret_key is None or len(self.secret_key) < 32):
            raise ValueError(
                "PIXELMILL_SECRET_KEY must be set to a random string of at least 32 characters "
                f"when PIXELMILL_ENV={self.env}"
            )
        if self.fault_kill_before_publish and self.env == "production":
            raise ValueError(
                "PIXELMILL_FAULT_KILL_BEFORE_PUBLISH is a test hook: never in production"
            )
        if self.queue == "celery" and not self.redis_url:
            raise ValueError("PIXELMILL_QUEUE=celery needs PIXELMILL_REDIS_URL")
        if self.storage == "s3" and not self.s3_bucket:
            raise ValueError("PIXELMILL_STORAGE=s3 needs PIXELMILL_S3_BUCKET")
        if (self.stripe_secret_key is None) != (self.stripe_webhook_secret is None):
            raise ValueError(
                "PIXELMILL_STRIPE_SECRET_KEY and PIXELMILL_STRIPE_WEBHOOK_SECRET go together: "
                "set both to sell credit packs, or neither"
            )
        if self.credit_packs is not None:
            ids = [pack.id for pack in self.credit_packs]
            if not ids or len(set(ids)) != len(ids):
                raise ValueError("PIXELMILL_CREDIT_PACKS must list at least one pack, ids unique")
        if self.s3_prefix and (self.s3_prefix.startswith("/") or not self.s3_prefix.endswith("/")):
            raise ValueError("PIXELMILL_S3_PREFIX must not start with / and must end with /")
        return self

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'pixelmill.db').resolve()}"

    @cached_property
    def resolved_secret_key(self) -> str:
        """The configured secret, or (development only) one generated once per data dir."""
        if self.secret_key:
            return self.secret_key
        path = self.data_dir / "secret_key"
        if path.exists():
            return path.read_text().strip()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        key = secrets.token_urlsafe(48)
        # Created with 0600 so other local users cannot forge tokens.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(key)
        return key

    @property
    def storage_dir(self) -> Path:
        return self.data_dir / "files"
