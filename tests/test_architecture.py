"""The layering rules of docs/architecture.md, checked on the import graph of ``src/pixelmill``.

Every ``import`` and ``from ... import`` is read with :mod:`ast`, at module level and inside
functions alike (a function-level import hides a cycle; it does not remove it).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "pixelmill"

SURFACES = ("api", "web")
"""The HTTP surfaces: the only packages that may import the wiring (``resources``, ``app``)."""

INFRASTRUCTURE = (
    "db",
    "engines",
    "imaging",
    "migrations",
    "observability",
    "queue",
    "ratelimit",
    "storage",
)
"""The layers the domains build on."""

PACKAGES = tuple(sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()))

DOMAINS = tuple(name for name in PACKAGES if name not in SURFACES + INFRASTRUCTURE)
"""Every other package is a domain (a new package is one unless it is named above). Neither a
domain nor the infrastructure imports the wiring (``resources``, ``worker``) or a surface."""

ENGINE_SHARED = ("base", "registry", "runtime")
"""What every capability under ``engines/`` may import besides its own folder."""

HOSTED_MAY_IMPORT = ("pixelmill.providers", "pixelmill.errors")
"""What a hosted variant (``engines/<cap>/hosted.py``, ``engines/runtime/hosted.py``) and the
routing table (``engines/registry.py``) may import besides ``pixelmill.engines``: the provider
transport it is handed by the wiring, and the provider error. Every other engine module imports
only ``pixelmill.engines`` and the shared vocabulary below."""

ENGINES_MAY_IMPORT = ("pixelmill.categories", "pixelmill.models", "pixelmill.models.catalogue")
"""Leaf modules every engine may read: the product categories (one enum) and the catalogue of open
models (data); neither imports anything of pixelmill."""


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    target: str  # dotted module name (a submodule when ``from pkg import submodule``)
    type_checking: bool
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(dotted: str) -> bool:
    base = SRC.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                for child in node.body:
                    for sub in ast.walk(child):
                        if isinstance(sub, ast.Import | ast.ImportFrom):
                            lines.add(sub.lineno)
    return lines


def imports_of(path: Path) -> list[Import]:
    name = module_name(path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(), filename=str(path))
    guarded = _type_checking_lines(tree)
    found: list[Import] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                base = name.split(".")
                drop = node.level - 1 if is_package else node.level
                base = base[: len(base) - drop]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                targets.append(sub if is_module(sub) else module)
        for target in targets:
            if target == "pixelmill" or target.startswith("pixelmill."):
                found.append(Import(name, target, node.lineno in guarded, node.lineno))
    return found


@functools.cache
def all_imports() -> tuple[Import, ...]:
    """Read once per run: every test below walks the same graph."""
    return tuple(imp for path in sorted(PACKAGE.rglob("*.py")) for imp in imports_of(path))


def top(dotted: str) -> str:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle in the directed graph, as a list of nodes, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_checker_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    tree = ast.parse("def f():\n    from pixelmill.jobs import service\n")
    inner = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert inner and inner[0].module == "pixelmill.jobs"
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    assert find_cycle(edges) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    found = imports_of(PACKAGE / "jobs" / "lifecycle.py")
    assert any(i.target == "pixelmill.db.models" for i in found)


def test_no_cycle_between_top_level_packages() -> None:
    edges: dict[str, set[str]] = {}
    for imp in all_imports():
        if imp.type_checking:
            continue
        a, b = top(imp.importer), top(imp.target)
        if a != b:
            edges.setdefault(a, set()).add(b)
    assert find_cycle(edges) is None, f"import cycle: {' -> '.join(find_cycle(edges) or [])}"


def test_every_domain_is_checked() -> None:
    known = {"accounts", "credits", "generation", "jobs", "library", "marketing", "operations"}
    known |= {"providers", "storefront", "webhooks"}
    assert known <= set(DOMAINS), sorted(known - set(DOMAINS))
    assert set(SURFACES + INFRASTRUCTURE) <= set(PACKAGES), "a named package no longer exists"


@pytest.mark.parametrize("domain", DOMAINS + INFRASTRUCTURE)
def test_domains_never_import_the_wiring_or_a_surface(domain: str) -> None:
    bad = [
        f"{imp.importer}:{imp.line} imports {imp.target}"
        for imp in all_imports()
        if top(imp.importer) == domain
        and imp.importer.split(".")[1] == domain
        and top(imp.target) in ("resources", "api", "app", "worker", "cli")
    ]
    assert not bad, "\n".join(bad)


def test_engines_import_no_other_capabilitys_internals() -> None:
    bad = []
    for imp in all_imports():
        parts = imp.importer.split(".")
        if parts[:2] != ["pixelmill", "engines"] or len(parts) < 3:
            continue
        if parts[2] in ENGINE_SHARED or not (PACKAGE / "engines" / parts[2]).is_dir():
            continue
        target = imp.target.split(".")
        if target[:2] != ["pixelmill", "engines"] or len(target) < 3:
            continue
        if target[2] in ENGINE_SHARED or target[2] == parts[2]:
            continue
        if len(target) > 3:  # another capability's inner module
            bad.append(f"{imp.importer}:{imp.line} imports {imp.target}")
    assert not bad, "\n".join(bad)


def test_engines_are_pure_and_only_hosted_variants_reach_the_provider_transport() -> None:
    bad = []
    for imp in all_imports():
        parts = imp.importer.split(".")
        if parts[:2] != ["pixelmill", "engines"] or top(imp.target) == "engines":
            continue
        if imp.target in ENGINES_MAY_IMPORT:
            continue
        hosted = parts[-1] == "hosted" or imp.importer == "pixelmill.engines.registry"
        allowed = hosted and any(
            imp.target == p or imp.target.startswith(p + ".") for p in HOSTED_MAY_IMPORT
        )
        if not allowed:
            bad.append(f"{imp.importer}:{imp.line} imports {imp.target}")
    assert not bad, "\n".join(bad)


def test_providers_are_transport_and_routing_only() -> None:
    """``providers/`` knows no capability: it imports neither ``engines`` nor ``operations``
    (what a routed capability asks is its ``engines/<cap>/hosted.py``)."""
    bad = [
        f"{imp.importer}:{imp.line} imports {imp.target}"
        for imp in all_imports()
        if top(imp.importer) == "providers" and top(imp.target) in ("engines", "operations")
    ]
    assert not bad, "\n".join(bad)


# ---- who owns what: prices, the jobs tables, thin handlers ------------------------------------

PRICE_OWNER = "credits"
"""The one package that states a price in credits (``credits/pricing.py``)."""

JOB_TABLES = ("Job", "JobResult", "Batch")
"""The models of the job machinery's tables; only ``jobs/`` queries them (others ask
``jobs.service``)."""

HANDLER_MAX_LINES = 40
"""An API handler (a function under a ``@router.<method>`` decorator) from ``def`` to its last
line, docstring included: it parses, authenticates and makes one call."""

ROUTER_METHODS = ("get", "post", "put", "patch", "delete")


def _numbers(node: ast.AST) -> list[int]:
    """The whole numbers written in ``node`` other than 0 and 1, leaving out indices and slices
    (``text[:12]``) and keyword arguments (``Field(max_length=16)``): sizes, not prices."""
    if isinstance(node, (ast.Subscript, ast.keyword)):
        return []
    if isinstance(node, ast.Constant):
        return [node.value] if type(node.value) is int and node.value not in (0, 1) else []
    return [n for child in ast.iter_child_nodes(node) for n in _numbers(child)]


def price_literals(path: Path, tree: ast.AST) -> list[str]:
    """Places that state a price: a name containing ``price`` bound to a number (or a table of
    numbers), or a ``*price*`` function that returns a number written in it."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if any("price" in n.lower() for n in names) and _numbers(node.value):
                found.append(f"{path}:{node.lineno} {names[0]}")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and "price" in node.name:
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and ret.value is not None and _numbers(ret.value):
                    found.append(f"{path}:{ret.lineno} {node.name}")
    return found


def job_table_queries(path: Path, tree: ast.AST) -> list[str]:
    """``select/update/delete/insert(Job...)`` and ``session.get(Job, ...)`` calls."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name not in ("select", "update", "delete", "insert", "get", "query"):
            continue
        first = node.args[0]
        while isinstance(first, ast.Attribute):  # select(Job.id)
            first = first.value
        if isinstance(first, ast.Name) and first.id in JOB_TABLES:
            found.append(f"{path}:{node.lineno} {name}({first.id})")
    return found


def long_handlers(path: Path, tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        routed = any(
            isinstance(d, ast.Call)
            and isinstance(d.func, ast.Attribute)
            and d.func.attr in ROUTER_METHODS
            for d in node.decorator_list
        )
        lines = (node.end_lineno or node.lineno) - node.lineno + 1
        if routed and lines > HANDLER_MAX_LINES:
            found.append(f"{path}:{node.lineno} {node.name} ({lines} lines)")
    return found


def scan(check: object, where: Path, skip: tuple[str, ...] = ()) -> list[str]:
    assert callable(check)
    found: list[str] = []
    for path in sorted(where.rglob("*.py")):
        rel = path.relative_to(where)
        if rel.parts[0] in skip:
            continue
        found.extend(check(rel, ast.parse(path.read_text())))
    return found


def test_the_ownership_checks_see_what_they_forbid(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "prices.py").write_text(
        "PACK_PRICES = {'images': 6}\n"
        "def video_price(n):\n    return 50\n"
        "def row(session, i):\n    return session.get(Job, i)\n"
        "def ids(session):\n    return session.scalars(select(Job.id))\n"
        "@router.post('/x')\ndef handler():\n" + "    pass\n" * 45
    )
    assert len(scan(price_literals, tmp_path)) == 2
    assert len(scan(job_table_queries, tmp_path)) == 2
    assert len(scan(long_handlers, tmp_path)) == 1
    assert scan(price_literals, tmp_path, skip=("shop",)) == []


def test_no_module_outside_credits_states_a_price() -> None:
    # engines draw price tags on ads (text), they do not charge.
    assert scan(price_literals, PACKAGE, skip=(PRICE_OWNER, "engines")) == []


def test_only_jobs_queries_the_jobs_tables() -> None:
    assert scan(job_table_queries, PACKAGE, skip=("jobs", "db", "migrations")) == []


def test_no_api_handler_is_over_40_lines() -> None:
    assert scan(long_handlers, PACKAGE / "api") == []
