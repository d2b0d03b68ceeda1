"""The import graph of the tree, folder to folder, from the C++ includes and
the Python imports, held to the floors of DESIGN.md and the README's layout.

    python3 -m ci.import_graph [--dot]

prints every edge between top-level folders with its count (or a Graphviz
graph with --dot) and then every edge that runs against the floors, and exits
1 when there is one. A folder may import its own floor and the floors below
it; folders on one floor that are declared apart (generators/ and reports/)
never import each other. Inside reports/, the verdicts (the package itself)
import neither page/ nor tools/ (but `python3 -m reports` writes the page),
and page/ never imports tools/.

C++ floors, lowest first: harness/ (no engine code), selection/ (PyTorch's
selection policy, which calls no engine), backends/ (the engines), runner/
(the model's dispatch and the case runner), then suites/ and benchmarks/
(the gtest and Google Benchmark binaries). Python: inputs/ (what a user hands
the tool), then generators/ and reports/, then ci/, cli/, the probes of
torch's Python (probes/) and the scripts beside the C++ (benchmarks, cmake),
which may use any of them. catalog/ (the TOML a user edits) holds no code.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Folder -> floor; a folder not named here is not part of the graph.
CPP_FLOORS = {"harness": 0, "selection": 1, "backends": 2, "runner": 3, "suites": 4, "benchmarks": 4}
PY_FLOORS = {"inputs": 0, "generators": 1, "reports": 1, "ci": 2, "cli": 2, "probes": 2, "benchmarks": 2, "cmake": 2}
# Folders of one floor that must not import each other.
APART = ({"generators", "reports"},)
# What a build generates into its include path (ops_list.h, the case tables'
# layer list): part of the floor of the folder it is generated for.
GENERATED = {"ops_list.h": "harness", "bench_layers.h": "benchmarks"}

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
_SKIP = {"build", ".git"}


def _files(suffixes: tuple[str, ...]) -> list[Path]:
    return sorted(p for p in ROOT.rglob("*") if p.suffix in suffixes and p.is_file()
                  and not (set(p.relative_to(ROOT).parts) & _SKIP) and "data" not in p.relative_to(ROOT).parts)


def cpp_edges() -> Counter[tuple[str, str]]:
    """(from folder, to folder) -> how many includes, over the tree's C++."""
    edges: Counter[tuple[str, str]] = Counter()
    for path in _files((".h", ".cc", ".cu")):
        source = path.relative_to(ROOT).parts[0]
        for target in _INCLUDE.findall(path.read_text(encoding="utf-8", errors="replace")):
            folder = GENERATED.get(target, target.split("/", 1)[0]) if "/" in target or target in GENERATED else None
            if folder is None:  # a file beside it, by its bare name
                folder = source
            edges[(source, folder)] += 1
    return edges


def _modules(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def python_edges() -> Counter[tuple[str, str]]:
    """(from folder, to folder) -> how many modules import it, over the tree's
    Python (an import of a package of this tree, by its top-level name)."""
    edges: Counter[tuple[str, str]] = Counter()
    for path in _files((".py",)):
        source = path.relative_to(ROOT).parts[0]
        if source not in PY_FLOORS:
            continue
        for name in _modules(ast.parse(path.read_text(encoding="utf-8"))):
            if name in PY_FLOORS:
                edges[(source, name)] += 1
    return edges


def module_imports(package: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (relative or by
    the package's name, TYPE_CHECKING imports included: an import is an
    import), over the package's own files and its subpackages' (its tests
    left out). A module of a subpackage is named by its dotted path below the
    package ("page.render")."""
    folder = ROOT / package
    modules = {".".join(p.relative_to(folder).with_suffix("").parts) for p in folder.rglob("*.py")
               if p.stem != "__init__" and "tests" not in p.relative_to(folder).parts}

    def known(parts: list[str]) -> str | None:  # the longest leading part that is a module
        for n in range(len(parts), 0, -1):
            if ".".join(parts[:n]) in modules:
                return ".".join(parts[:n])
        return None

    out: dict[str, set[str]] = {}
    for m in sorted(modules):
        here = m.split(".")[:-1]
        found: set[str] = set()
        for node in ast.walk(ast.parse((folder / (m.replace(".", "/") + ".py")).read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                module = (node.module or "").split(".") if node.module else []
                if node.level:
                    if node.level - 1 > len(here):
                        continue
                    base = here[:len(here) - (node.level - 1)] + module
                elif module and module[0] == package:
                    base = module[1:]
                else:
                    continue
                found |= {k for k in (known(base + [a.name]) for a in node.names) if k}
                if known(base):
                    found.add(known(base))
            elif isinstance(node, ast.Import):
                found |= {k for a in node.names if a.name.startswith(package + ".")
                          for k in [known(a.name.split(".")[1:])] if k}
        out[m] = found - {m}
    return out


# reports/ in layers: the verdicts (the package itself), the page that formats
# them (page/) and the separate commands (tools/). A layer imports only the
# layers before it; the command line of the report (__main__) writes the page.
REPORT_LAYERS = ("", "page", "tools")


def report_layer_breaks(imports: dict[str, set[str]]) -> list[str]:
    """Each import of reports/ that runs against REPORT_LAYERS."""
    def layer(m: str) -> int:
        first = m.split(".")[0] if "." in m else ""
        return REPORT_LAYERS.index(first) if first in REPORT_LAYERS else 0
    return [f"reports/{m.replace('.', '/')}.py imports reports/{n.replace('.', '/')}.py, a layer above it"
            for m, targets in sorted(imports.items()) for n in sorted(targets)
            if layer(n) > layer(m) and not (m == "__main__" and REPORT_LAYERS[layer(n)] == "page")]


def cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """Each circle of modules that import, directly or through others, a
    module that imports them: one per strongly connected group, as a path
    that starts and ends at its first module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(m: str) -> None:  # Tarjan's strongly connected components
        index[m] = low[m] = len(index)
        stack.append(m)
        for n in sorted(imports.get(m, ())):
            if n not in index:
                visit(n)
                low[m] = min(low[m], low[n])
            elif n in stack:
                low[m] = min(low[m], index[n])
        if low[m] == index[m]:
            group = []
            while True:
                n = stack.pop()
                group.append(n)
                if n == m:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for m in sorted(imports):
        if m not in index:
            visit(m)
    out = []
    for group in groups:  # a path around the circle, for the reader
        path, seen = [group[0]], {group[0]}
        while True:
            nxt = next((n for n in sorted(imports[path[-1]]) if n in group and (n not in seen or n == group[0])), None)
            if nxt is None or nxt == group[0]:
                break
            path.append(nxt)
            seen.add(nxt)
        out.append(path + [group[0]])
    return out


def against_floors(edges: Counter[tuple[str, str]], floors: dict[str, int]) -> list[str]:
    """Every edge that imports a higher floor, or a folder declared apart."""
    bad = []
    for (a, b), n in sorted(edges.items()):
        if a == b or a not in floors or b not in floors:
            if a != b and (a in floors) != (b in floors):
                bad.append(f"{a} -> {b} ({n}): {b if b not in floors else a}/ is on no floor")
            continue
        if floors[b] > floors[a]:
            bad.append(f"{a} -> {b} ({n}): up from floor {floors[a]} to floor {floors[b]}")
        elif any({a, b} <= group for group in APART):
            bad.append(f"{a} -> {b} ({n}): {a}/ and {b}/ are declared apart")
    return bad


def graph() -> dict[str, tuple[Counter[tuple[str, str]], list[str]]]:
    cpp, py = cpp_edges(), python_edges()
    return {"C++": (cpp, against_floors(cpp, CPP_FLOORS)), "Python": (py, against_floors(py, PY_FLOORS))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m ci.import_graph", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dot", action="store_true", help="a Graphviz digraph of the edges")
    args = parser.parse_args(argv)
    found = graph()
    if args.dot:
        print("digraph imports {")
        for language, (edges, _) in found.items():
            for (a, b), n in sorted(edges.items()):
                if a != b:
                    print(f'  "{language}:{a}" -> "{language}:{b}" [label={n}];')
        print("}")
    else:
        for language, (edges, _) in found.items():
            floors = CPP_FLOORS if language == "C++" else PY_FLOORS
            print(f"{language} (floors: " + ", ".join(f"{f}/ {n}" for f, n in sorted(floors.items(),
                                                                                   key=lambda kv: (kv[1], kv[0])))
                  + ")")
            for (a, b), n in sorted(edges.items(), key=lambda kv: (floors.get(kv[0][0], 9), kv[0])):
                if a != b:
                    print(f"  {a} -> {b}: {n}")
    bad = [f"{language}: {line}" for language, (_, lines) in found.items() for line in lines]
    bad += [f"Python: reports/ modules import each other in a circle: {' -> '.join(c)}"
            for c in cycles(module_imports("reports"))]
    bad += [f"Python: {line}" for line in report_layer_breaks(module_imports("reports"))]
    for line in bad:
        print(f"AGAINST THE FLOORS: {line}", file=sys.stderr)
    if not bad:
        print("no import runs up a floor")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
