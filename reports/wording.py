"""The words of a report, held to its readers' terms: no reason names a
source file of the harness or a call site ("at backends/pytorch/pytorch.cc:516"),
and no rule line reads "fact(s) hold" instead of saying which facts held.
The browser check applies it to every fresh report (./backendcheck test)."""

from __future__ import annotations

import re
from typing import Any

# A source file of the harness, with or without its line (pytorch.cc:516,
# runner/case_run.cc, torch_backends.py:448), or a call site ("at X:N").
SOURCE = re.compile(r"(?<![\w.-])[\w./-]*\.(?:cc|h|cu|py)(?::\d+)?(?![\w])|\bat \S+:\d+")
COUNTED = re.compile(r"\bfact\(s\) hold")
LINE = "the line of "  # a reason line, as reasons() marks it
# A Python interpreter's path, as the probes' records frame what they say
# ("PyTorch 2.15.0 (/home/ci/.cache/backendcheck/torch-2.15.0/bin/python): ...").
INTERPRETER = r"(?:/[\w.+-]+)+/python[\d.]*(?![\w/])"


def reasons(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, text) of every reason in report.json: each claim's, each of
    its platforms', its prediction's, and each documented entry's."""
    out = []
    for c in data.get("claims", []):
        out.append((f"claim {c['id']}", str(c.get("reason", ""))))
        out += [(f"claim {c['id']} on {p}", str(r)) for p, r in c.get("platform_reasons", {}).items()]
        if c.get("prediction"):
            out.append((f"claim {c['id']}'s prediction", str(c["prediction"].get("reason", ""))))
        out += [(f"{LINE}claim {c['id']} on {p}", str(r)) for p, r in c.get("platform_lines", {}).items()]
        if c.get("prediction") and "line" in c["prediction"]:
            out.append((f"{LINE}claim {c['id']}'s prediction", str(c["prediction"]["line"])))
    for platform, listed in (data.get("documented") or {}).items():
        out += [(f"documented entry {e.get('id')} on {platform}", str(e.get("reason", "")))
                for e in listed.get("entries", [])]
    return out


# What no line a user reads may hold (the grid, the card, the first
# screen): a printed dict, a digest, a metric's field name, a Compare's side
# label, the harness's own terms. Each: (pattern, what it is).
FORBIDDEN = ((re.compile(r"\{"), "a printed dictionary"), (re.compile(r"[0-9a-fA-F]{16}"), "a digest"),
             (re.compile(r"[a-z]_ns\b|_bytes\b"), "a metric's field name"), (re.compile(r"\bB:"), "a Compare's side label"),
             (re.compile(r"\breference:\w"), "an engine's internal name"),
             (re.compile(r"\bpositive control\b"), "the harness's term 'positive control'"),
             (re.compile(r"\bthe model\b"), "the harness's term 'the model'"),
             (re.compile(r"\bmatrix\b"), "the harness's term 'matrix'"), (re.compile(r"\bRule: "), "a rule's name"))


def user_lines(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, text) of every line a user reads first: each claim's line in
    the grid and on each platform, the card's, and the first screen's."""
    out = []
    for c in data.get("claims", []):
        out.append((f"the grid's line of {c['id']}", str(c.get("grid_line", ""))))
        out += [(f"the line of {c['id']} on {', '.join(r.get('platforms') or ['all evidence'])}", str(r.get("line", "")))
                for r in c.get("rows", [])]
    for platform, card in (data.get("card") or {}).items():
        for section in card.get("sections", []):
            for line in section.get("lines", []):
                out.append((f"the card of {platform}", f"{line.get('says', '')} {line.get('setting', '')}"))
                out += [(f"the card of {platform}", str(x.get("text", "")))
                        for key in ("figures", "cost", "error", "harm") for x in line.get(key, [])]
        out += [(f"the card of {platform}", str(w.get("why", ""))) for w in card.get("not_evaluated", [])]
        out += [(f"the card of {platform}", f"{w.get('claim')} across the {w.get('level')}: "
                                             f"{w.get('setting') or w.get('op', '')} {w.get('cost', '')}")
                for w in card.get("workloads", [])]
    out += [(f"the first screen's line of {a.get('claim')}", str(a.get("line", ""))) for a in data.get("attention", [])]
    out += [("the first screen's upgrade", u) for u in (data.get("changes_grouped") or {}).get("upgrades", [])]
    return out


def forbidden(data: dict[str, Any]) -> list[str]:
    """One line per line a user reads that holds a FORBIDDEN shape or runs
    past LINE_CHARS."""
    out = []
    for where, text in user_lines(data):
        found = next(((m, what) for pattern, what in FORBIDDEN if (m := pattern.search(text))), None)
        if found is not None:
            out.append(f"{where} holds {found[1]} ({found[0].group(0)!r}): {text[:160]}")
        elif len(text) > LINE_CHARS:
            out.append(f"{where} runs to {len(text)} characters, past {LINE_CHARS}: {text[:160]}")
    return out


def problems(data: dict[str, Any]) -> list[str]:
    """One line per reason that shows the harness's internals, and per line a
    user reads that holds a forbidden shape (forbidden)."""
    out = forbidden(data)
    for where, text in reasons(data):
        if where.startswith(LINE) and (m := re.search(INTERPRETER, text)) is not None:
            out.append(f"{where.removeprefix(LINE)}: its reason line shows the interpreter's path ({m.group(0)!r}), "
                       f"which the environment section names once: {text[:160]}")
        elif (m := SOURCE.search(text)) is not None:
            out.append(f"{where}: its reason names the harness's source ({m.group(0)!r}): {text[:160]}")
        elif COUNTED.search(text):
            out.append(f"{where}: its reason counts facts instead of saying which held: {text[:160]}")
    return out


# A path on the machine (absolute, or elided as the "/…/python"),
# a test's name in gtest's form (TorchPython.InvarianceGrid,
# Cpu/Determinism.Bitwise/Fwd_Small), and a line that opens with what ran
# rather than what was seen ("Ran 2 test(s)", "Timed 6 comparison(s)").
PATH = re.compile(r"(?<![\w.:/-])(?:/|~/|…/)[\w.+-]+(?:/[\w.+…-]*)+")
TEST_NAME = re.compile(r"(?<![\w.])[A-Z][A-Za-z0-9]*(?:/[A-Z][A-Za-z0-9]*)?\.[A-Z][A-Za-z0-9]+(?:/\w+)?")
COUNT_LEAD = re.compile(r"^\s*(?:Ran|Timed|Compared)\b|^\s*\d+ (?:test|comparison|fact|case)\(?s?\)?\b")
SENTENCE_CHARS = 24  # shorter pieces ("not evaluated", "passed") repeat in any report
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+| — ")


def _found(item: str, text: str) -> re.Match[str] | None:
    return re.search(rf"(?<![\w]){re.escape(item)}(?![\w])" if item[-1:].isalnum() else re.escape(item), text)


def fact_first(shown: str, named: list[str], tests: list[str]) -> str:
    """Why a reason line, as `shown` (cut), does not state its fact first:
    it opens with a count of what ran, or shows a path or a test's name
    before the first thing it names (`named`); "" when it does."""
    if COUNT_LEAD.search(shown):
        return f"opens with what ran, not what was seen: {shown[:80]!r}"
    start = next((m for item in named[:1] if item and (m := _found(item[:60].rsplit(" ", 1)[0]
                                                                    if len(item) > 60 else item, shown))), None)
    fact_at = start.start() if start else len(shown)
    names = [t for name in tests for t in (name, name.rsplit("/", 1)[-1]) if len(t) >= 6]
    seen = [m for m in (PATH.search(shown), TEST_NAME.search(shown), SOURCE.search(shown)) if m is not None]
    seen += [m for t in names if (m := _found(t, shown)) is not None]
    first = min(seen, key=lambda m: m.start(), default=None)
    if first is not None and first.start() <= fact_at:
        return f"shows {first.group(0)!r} before its first fact: {shown[:120]!r}"
    return ""


def names_what_differed(shown: str, named: list[str], whole: bool) -> str:
    """Why a line of a refuted or unexpected verdict does not name what
    decided it (`named`, what differed from the claim): all of it where the
    line is shown `whole`, the first where it is cut; "" when it does."""
    if not named:
        return f"names nothing that decided it: {shown[:120]!r}"
    wanted = named if whole else [named[0][:60].rsplit(" ", 1)[0] if len(named[0]) > 60 else named[0]]
    missing = [item for item in wanted if _found(item, shown) is None]
    return f"does not name {', '.join(repr(m) for m in missing)}: {shown[:120]!r}" if missing else ""


def sentences(text: str) -> list[str]:
    """The sentences of a text worth comparing: split at ". ", "; ", " — ",
    whitespace made one, the short ones dropped."""
    pieces = (" ".join(p.split()).rstrip(".;") for p in _SENTENCE_END.split(text))
    return [p for p in pieces if len(p) >= SENTENCE_CHARS and len(p.split()) >= 3]


def repeated(units: list[tuple[str, str]]) -> list[str]:
    """The sentences said twice among a section's units, (place, text) each:
    twice in one unit, or in two places. Units of one place (the cells of a
    table's column, the items of one list: a row each) may share a sentence."""
    seen: dict[str, list[tuple[str, int]]] = {}
    for index, (place, text) in enumerate(units):
        for s in sentences(text):
            seen.setdefault(s, []).append((place, index))
    out = []
    for s, where in seen.items():
        places = {p for p, _ in where}
        if len(places) > 1 or len(where) > len({i for _, i in where}):
            out.append(s)
    return out


# A metric in a sentence: (less of it, more of it, its noun): "2.3× faster",
# "0.97–1.02× the time without it".
METRICS = {"steady_ns": ("faster", "slower", "time"), "total_ns": ("faster", "slower", "total time"),
           "workspace_bytes": ("smaller", "larger", "workspace")}


# A line's length on the page: at most this many characters (the whole
# text stays in report.json and in the folded evidence).
LINE_CHARS = 200
_LIST = re.compile(r"\[((?:'[^'\[\]{}]*'(?:, )?)+)\]")
_FLAT_DICT = re.compile(r"\{((?:'[^'{}]*': [^,{}\[\]…]+(?:, )?)+)(\}|…)")
_OPEN_DICT = re.compile(r"\{[^{}]*(?:\}|…|$)")
_DIGESTS = re.compile(r"\bdigest ([0-9a-f]{16,}) via (.+?) vs (.+?) ([0-9a-f]{16,})")
_HEX = re.compile(r"\b([0-9a-f]{8})[0-9a-f]{8,}\b")
_WORDS = ((re.compile(r"\b(\d+) distinct digest\(s\) in (\d+) runs of "), r"\1 different result(s) in \2 runs of "),
          (re.compile(r"\bpositive control caught after (\d+) runs"), r"the check's control varied after \1 runs"),
          (re.compile(r"\breference:(\w+)"), r"the harness's reference kernel (\1)"),
          (re.compile(r"\bsteady_ns\b"), "time"), (re.compile(r"\btotal_ns\b"), "total time"),
          (re.compile(r"\bworkspace_bytes\b"), "workspace"))


def plain(text: str) -> str:
    """A line in the reader's words: a Python list or flat dict printed by a
    probe as prose ("a, b"; "k=v, k2=w"), a deeper dict left to the evidence,
    two digests compared as "the same bits" or "different bits", any other
    digest cut to 8 hex digits, the metrics' field names as words."""
    said = _LIST.sub(lambda m: m.group(1).replace("'", ""), text)
    said = _FLAT_DICT.sub(lambda m: re.sub(r"'([^']*)': ", r"\1=", m.group(1)).replace("'", "")
                          + ("…" if m.group(2) == "…" else ""), said)
    while _OPEN_DICT.search(said):
        said = _OPEN_DICT.sub("(in the evidence)", said)
    said = _DIGESTS.sub(lambda m: f"{'the same' if m.group(1) == m.group(4) else 'different'} bits via {m.group(2)} "
                                  f"as with {m.group(3)}", said)
    said = _HEX.sub(r"\1", said)
    for pattern, words in _WORDS:
        said = pattern.sub(words, said)
    return said


# The terms the page cannot avoid, each with a line a PyTorch user reads:
# the page's glossary (its #glossary-KEY anchors), linked where they show.
GLOSSARY = {
    "verdicts": ("supported, refuted, inconclusive, not evaluated, error",
                 "supported: the evidence shows what the claim says; refuted: it shows otherwise; inconclusive: the "
                 "measurements do not decide it; not evaluated: this machine or install cannot run what decides it "
                 "(the reason says what would); error: the harness could not decide it (a crash, a timeout, a record "
                 "it could not read), never a finding about PyTorch."),
    "digest": ("digest", "a hash of a result's shape, dtype and bytes (XXH3-64 in the harness's own cases, SHA-256 "
                         "in PyTorch's Python probes): two results with one digest are the same bits; two digests "
                         "that differ are different bits, however small the difference."),
    "paired": ("median of paired runs",
               "the time with a setting and without it, measured in alternation on the same inputs, as the ratio of "
               "each pair; a shape is decisively faster or slower when the 90% interval of the median ratio leaves "
               "the band that two runs of one setting show (within noise otherwise)."),
    "positive-control": ("positive control",
                         "a change that must vary the result (a different thread count on a known thread-dependent "
                         "operation, inputs rounded to bf16): a check that says \"same bits\" is trusted only when its "
                         "control, run beside it, did vary."),
    "known-finding": ("known finding",
                      "a refuted claim whose cause is known for this kind of machine and install "
                      "(catalog/known_findings.toml, or a team's own file); only a verdict that is not what is "
                      "known fails the run."),
    "model": ("the model",
              "the harness's own re-implementation of PyTorch's dispatch and cuDNN selection: it predicts and "
              "explains, is held to PyTorch by the conformance cases, and never decides a verdict."),
    "repro": ("repro", "the string that names one case (problem, device, engine, algorithm, threads and each "
                       "setting that is not the default): ./backendcheck run --case REPRO runs it again."),
}
