"""A real pixelmill server whose ``convert`` engine blocks, for tests that need a synchronous
call in flight: in process (:class:`SlowConvert` with a gate) or as a separate process that a
test kills mid-request (``python -m tests.operations.slow_server PORT``, settings from the
``PIXELMILL_*`` environment)."""

from __future__ import annotations

import sys
import threading
from typing import ClassVar

from pydantic import BaseModel

from pixelmill.engines.base import EngineInputs, EngineResult
from pixelmill.engines.convert import ConvertEngine, ConvertParams


class SlowConvert(ConvertEngine):
    """The real convert engine, held at the start of each run until ``gate`` is set."""

    Params: ClassVar[type[BaseModel]] = ConvertParams

    def __init__(self, gate: threading.Event) -> None:
        super().__init__()
        self.gate = gate
        self.started = threading.Event()

    def _run(self, inputs: EngineInputs, params: ConvertParams) -> EngineResult:
        self.started.set()
        if not self.gate.wait(timeout=120):
            raise TimeoutError("the test never opened the gate")
        return super()._run(inputs, params)


def main(port: int) -> None:
    import uvicorn

    from pixelmill.app import create_app
    from pixelmill.config import Settings
    from pixelmill.resources import build_resources
    from pixelmill.worker import wire

    settings = Settings()
    res = wire(build_resources(settings))
    # Never opened: the process is killed while its call is in flight.
    res.pipeline.engines = {**res.pipeline.engines, "convert": SlowConvert(threading.Event())}
    uvicorn.run(create_app(settings, res), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(int(sys.argv[1]))
