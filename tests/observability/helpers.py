"""Reading a Prometheus exposition the way Prometheus does (prometheus_client's parser), and
an OTLP/HTTP receiver for the spans the processes export."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    """Every sample of an exposition: (name, labels) -> value."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sample ``name{labels}`` (0 when absent: a counter not touched yet), summed over
    any label left out (the ``pid`` of a multi-process gauge)."""
    wanted = set(labels.items())
    return sum(v for (n, found), v in samples.items() if n == name and wanted <= found)


@dataclass
class Receiver:
    url: str
    spans: list[dict[str, Any]] = field(default_factory=list)
