"""The ComfyUI adapter: upload the inputs (``POST /upload/image``), queue the operator's
workflow with the inputs substituted (``POST /prompt``), follow ``GET /history/{prompt_id}`` to
completion and fetch the images with ``GET /view``. Cancelling removes the prompt from the queue
(``POST /queue`` ``{"delete": [id]}``) and interrupts it (``POST /interrupt``) when it is the
prompt running (``GET /queue``).

Workflows are JSON files in the API format (ComfyUI's "Save (API)") in
``PIXELMILL_COMFYUI_WORKFLOWS``, or shipped in ``providers/workflows/`` (the operator's file of
the same name wins). A string value that is exactly ``{{name}}`` is replaced by the
value itself (a number stays a number); ``{{name}}`` inside a longer string is replaced by text.
Names: ``image`` (the uploaded input), ``mask``, ``garment``, ``prompt``, ``negative_prompt``,
``seed`` and whatever else the engine passes (docs/backends.md).
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from pixelmill.cancel import CancelToken
from pixelmill.providers.http import (
    HttpPolicy,
    ProviderFailure,
    ProviderHttp,
)

NAME = "comfyui"
SHIPPED = Path(__file__).with_name("workflows")
"""The workflows that ship with pixelmill (``providers/workflows/README.md``)."""
_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")


def substitute(node: Any, values: dict[str, Any]) -> Any:
    """``node`` with every ``{{name}}`` placeholder of ``values`` filled in (a copy)."""
    if isinstance(node, dict):
        return {k: substitute(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [substitute(v, values) for v in node]
    if isinstance(node, str):
        whole = _PLACEHOLDER.fullmatch(node.strip())
        if whole and whole.group(1) in values:
            return values[whole.group(1)]
        return _PLACEHOLDER.sub(
            lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), node
        )
    return node


def placeholders(node: Any) -> set[str]:
    """The placeholder names a workflow uses."""
    if isinstance(node, dict):
        return set().union(*(placeholders(v) for v in node.values())) if node else set()
    if isinstance(node, list):
        return set().union(*(placeholders(v) for v in node)) if node else set()
    if isinstance(node, str):
        return set(_PLACEHOLDER.findall(node))
    return set()


class ComfyUIProvider:
    """Runs a named workflow template with images and values; returns the output images."""

    name = NAME

    def __init__(
        self,
        base_url: str,
        workflows: Path | None,
        policy: HttpPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
        *,
        poll_interval: float = 0.5,
        run_timeout: float = 600.0,
    ) -> None:
        self.http = ProviderHttp(NAME, base_url, policy=policy, transport=transport)
        self.workflows = workflows
        self.poll_interval = poll_interval
        self.run_timeout = run_timeout
        self.client_id = uuid.uuid4().hex

    def close(self) -> None:
        self.http.close()

    def workflow(self, name: str) -> dict[str, Any]:
        """The workflow template ``name``: a file directly inside the operator's folder
        (``PIXELMILL_COMFYUI_WORKFLOWS``), else one of the shipped workflows (:data:`SHIPPED`)."""
        if Path(name).name != name or not name.endswith(".json"):
            raise ValueError(f"a ComfyUI route names a .json file in the folder, got {name!r}")
        folders = [f for f in (self.workflows, SHIPPED) if f is not None]
        path = next((f / name for f in folders if (f / name).is_file()), None)
        if path is None:
            where = " or ".join(str(f) for f in folders)
            raise ValueError(f"no workflow {name} in {where}")
        try:
            template = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"workflow {name} is not JSON: {exc}") from None
        if not isinstance(template, dict) or not template:
            raise ValueError(f"workflow {name} is not an API-format workflow (an object)")
        return template

    def upload(self, data: bytes, cancel: CancelToken | None = None) -> str:
        """``POST /upload/image``; the name a LoadImage node takes."""
        response = self.http.request(
            "POST",
            "upload/image",
            files={"image": (f"pixelmill-{uuid.uuid4().hex}.png", data, "image/png")},
            data={"type": "input", "overwrite": "true"},
            cancel=cancel,
        )
        body = self.http.json_object(response)
        name, sub = body.get("name"), body.get("subfolder") or ""
        if not isinstance(name, str) or not name:
            raise ProviderFailure(NAME, "the upload answer has no name")
        return f"{sub}/{name}" if sub else name

    def fill(
        self,
        workflow: str,
        images: dict[str, bytes],
        values: dict[str, Any],
        cancel: CancelToken | None = None,
    ) -> dict[str, Any]:
        """``workflow`` as it is queued: ``images`` uploaded (``POST /upload/image``) and
        every placeholder filled with their names and ``values``. ``scripts/validate-comfyui``
        posts what this returns to a real server's ``/prompt``."""
        template = self.workflow(workflow)
        filled = dict(values)
        for key, data in images.items():
            filled[key] = self.upload(data, cancel)
        prompt: dict[str, Any] = substitute(template, filled)
        return prompt

    def run(
        self,
        workflow: str,
        images: dict[str, bytes],
        values: dict[str, Any],
        cancel: CancelToken | None = None,
    ) -> list[bytes]:
        """Upload ``images`` (placeholder name -> PNG bytes), queue ``workflow`` with them and
        ``values``, wait for it and return its output images in node order."""
        with self.http.slot(cancel):
            prompt = self.fill(workflow, images, values, cancel)
            queued = self.http.json_object(
                self.http.request(
                    "POST",
                    "prompt",
                    json={"prompt": prompt, "client_id": self.client_id},
                    cancel=cancel,
                )
            )
            if queued.get("error") or queued.get("node_errors"):
                raise ProviderFailure(
                    NAME, f"the workflow was refused: {str(queued.get('error'))[:200]}"
                )
            pid = queued.get("prompt_id")
            if not isinstance(pid, str) or not pid:
                raise ProviderFailure(NAME, "the /prompt answer has no prompt_id")
            entry = self._wait(pid, cancel)
            return self._outputs(entry, cancel)

    def _wait(self, pid: str, cancel: CancelToken | None) -> dict[str, Any]:
        def entry() -> Any:
            return self.http.json_object(
                self.http.request("GET", f"history/{pid}", cancel=cancel)
            ).get(pid)

        def ended(entry: Any) -> bool:
            if not isinstance(entry, dict):
                return False
            status = entry.get("status") or {}
            if isinstance(status, dict) and status.get("status_str") == "error":
                raise ProviderFailure(NAME, "the workflow failed on the ComfyUI server")
            return not isinstance(status, dict) or bool(status.get("completed", True))

        found: dict[str, Any] = self.http.poll(
            entry,
            ended,
            partial(self.withdraw, pid),
            what="the workflow",
            interval=self.poll_interval,
            timeout=self.run_timeout,
            cancel=cancel,
        )
        return found

    def withdraw(self, pid: str) -> None:
        """Remove ``pid`` from the queue; interrupt it if it is the prompt running now. The
        ``/interrupt`` of older servers stops whatever runs, so it is sent only when
        ``GET /queue`` lists ``pid`` as running, or cannot be read (the body names
        ``prompt_id`` for servers that take one). Best effort: it may have just ended."""
        with contextlib.suppress(ProviderFailure):
            self.http.request("POST", "queue", json={"delete": [pid]})
        running: bool | None = None
        with contextlib.suppress(ProviderFailure):
            queue = self.http.json_object(self.http.request("GET", "queue"))
            entries = queue.get("queue_running")
            if isinstance(entries, list):
                running = any(isinstance(e, list) and len(e) > 1 and e[1] == pid for e in entries)
        if running is not False:
            with contextlib.suppress(ProviderFailure):
                self.http.request("POST", "interrupt", json={"prompt_id": pid})

    def _outputs(self, entry: dict[str, Any], cancel: CancelToken | None) -> list[bytes]:
        outputs = entry.get("outputs")
        if not isinstance(outputs, dict):
            raise ProviderFailure(NAME, "the history entry has no outputs")
        files: list[bytes] = []
        for node_id in sorted(outputs, key=lambda k: (len(k), k)):
            node = outputs[node_id]
            for image in node.get("images", []) if isinstance(node, dict) else []:
                if not isinstance(image, dict) or image.get("type", "output") != "output":
                    continue  # previews and temp files are not results
                params = {
                    "filename": str(image.get("filename", "")),
                    "subfolder": str(image.get("subfolder", "")),
                    "type": "output",
                }
                response = self.http.request("GET", "view", params=params, cancel=cancel)
                files.append(response.content)
        if not files:
            raise ProviderFailure(NAME, "the workflow produced no output image")
        return files


_PRIMITIVES = {"INT", "FLOAT", "STRING", "BOOLEAN", "COMBO"}


def _spec_type(spec: Any) -> tuple[str, list[Any] | None, dict[str, Any]]:
    """An ``/object_info`` input spec as (type, combo options or ``None``, options dict): old
    combos are ``[[choices], {...}]``, new ones ``["COMBO", {"options": [...]}]``."""
    kind = spec[0] if isinstance(spec, list) and spec else spec
    extra = (
        spec[1] if isinstance(spec, list) and len(spec) > 1 and isinstance(spec[1], dict) else {}
    )
    if isinstance(kind, list):
        return "COMBO", kind, extra
    if kind == "COMBO":
        options = extra.get("options")
        return "COMBO", options if isinstance(options, list) else None, extra
    return str(kind), None, extra


def check_workflow(flow: dict[str, Any], object_info: dict[str, Any]) -> list[str]:
    """What a ComfyUI server whose ``/object_info`` is ``object_info`` would refuse in the
    API-format workflow ``flow`` (its placeholders filled), as far as the node definitions
    tell: unknown node classes, missing required inputs, inputs the class does not have, a
    link to a missing node or output, a link whose output type is not the input's type, a
    literal where a link is needed, a literal of the wrong type, out of its ``min``/``max``,
    or not one of a list's choices (an image-upload list accepts any name: the server's input
    folder changes), and no output node. An empty list: nothing found. ComfyUI's own
    validation (``scripts/validate-comfyui``) also checks each node's own rules."""
    problems: list[str] = []
    outputs_seen = False
    for node_id, node in flow.items():
        if not isinstance(node, dict) or not isinstance(node.get("class_type"), str):
            problems.append(f"node {node_id}: no class_type")
            continue
        cls = node["class_type"]
        info = object_info.get(cls)
        if not isinstance(info, dict):
            problems.append(f"node {node_id}: {cls} is not a node class on the server")
            continue
        outputs_seen = outputs_seen or bool(info.get("output_node"))
        declared = info.get("input", {})
        required = declared.get("required", {}) or {}
        optional = declared.get("optional", {}) or {}
        inputs = node.get("inputs", {})
        for name in required:
            if name not in inputs:
                problems.append(f"node {node_id} ({cls}): required input {name} is missing")
        for name, value in inputs.items():
            spec = required.get(name, optional.get(name))
            if spec is None:
                problems.append(f"node {node_id} ({cls}): {cls} has no input {name}")
                continue
            where = f"node {node_id} ({cls}) input {name}"
            problems.extend(_check_value(where, value, spec, flow, object_info))
    if not outputs_seen:
        problems.append("no output node (SaveImage or another output_node class)")
    return problems


def _check_value(
    where: str, value: Any, spec: Any, flow: dict[str, Any], object_info: dict[str, Any]
) -> list[str]:
    kind, options, extra = _spec_type(spec)
    if isinstance(value, list):  # a link: [source node id, output index]
        if len(value) != 2 or not isinstance(value[1], int) or str(value[0]) not in flow:
            return [f"{where}: link {value} names no node"]
        source = flow[str(value[0])]
        types = object_info.get(source.get("class_type", ""), {}).get("output", [])
        if not 0 <= value[1] < len(types):
            return [f"{where}: node {value[0]} has no output {value[1]}"]
        got = types[value[1]]
        if isinstance(got, list):  # a list-valued output feeds a COMBO
            got = "COMBO"
        if "*" not in (got, kind) and got != kind:
            return [f"{where}: takes {kind}, linked to a {got} output"]
        return []
    if isinstance(value, str) and _PLACEHOLDER.search(value):
        return [f"{where}: the placeholder in {value!r} was not filled"]
    if kind not in _PRIMITIVES:
        return [f"{where}: takes a {kind} link, got the literal {value!r}"]
    if kind == "COMBO":
        if extra.get("image_upload") or options is None or value in options:
            return []
        return [f"{where}: {value!r} is not one of {options[:8]}"]
    ok = {
        "INT": isinstance(value, int) and not isinstance(value, bool),
        "FLOAT": isinstance(value, (int, float)) and not isinstance(value, bool),
        "STRING": isinstance(value, str),
        "BOOLEAN": isinstance(value, bool),
    }[kind]
    if not ok:
        return [f"{where}: takes {kind}, got {value!r}"]
    if kind in ("INT", "FLOAT"):
        low, high = extra.get("min"), extra.get("max")
        if (low is not None and value < low) or (high is not None and value > high):
            return [f"{where}: {value} is outside {low}..{high}"]
    return []
