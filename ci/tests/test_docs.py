"""The README stays short and the documentation whole: README.md is at most
160 lines with its layout table near the top, every relative link of
README.md and docs/*.md reaches a file of the repository (and a heading of
it, where the link names one), every page of docs/ is linked from the
README, the README's exit statuses hold every status the commands declare,
and every topic of the long README it replaced is still a heading here or
in docs/."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

MAX_README_LINES = 160
LAYOUT_BEFORE_LINE = 60

# The `##` headings of the README before it was split (git show 3fb1313:README.md).
OLD_HEADINGS = ("The two commands", "What the report shows", "Layout")
# That README's paragraphs with a bold title, each a topic of its own.
OLD_TOPICS = (
    "Labels: what `run` runs",
    "The PyTorch under test",
    "Several torch versions, one report",
    "Flags per version",
    "use_deterministic_algorithms's own list",
    "The 2.x settings",
    "Invariance, graded",
    "PyTorch's own cuDNN calls",
    "The questions users bring to a GPU",
    "A finding is not a failure",
    "A new machine says what to add",
    "A team keeps its own findings without editing the repository",
)

_FENCE = re.compile(r"^```.*?^```[ \t]*$", re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """The text with fenced code blocks blanked (their lines kept, so that
    line numbers hold): a `#` comment in a shell example is no heading."""
    return _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def headings(path: Path) -> list[str]:
    return [m.group(2) for m in _HEADING.finditer(_prose(path.read_text(encoding="utf-8")))]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation other than
    '-' and '_' dropped, spaces as '-'."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for h in headings(path):
        s = slug(h)
        out.add(f"{s}-{seen[s]}" if s in seen else s)
        seen[s] = seen.get(s, 0) + 1
    return out


def pages(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def broken_links(root: Path) -> list[str]:
    """FILE:LINE: link, for each relative link that reaches no file of the
    tree (or no heading of its page)."""
    problems = []
    for page in pages(root):
        text = _prose(page.read_text(encoding="utf-8"))
        for m in _LINK.finditer(text):
            target = m.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            where = f"{page.relative_to(root)}:{text.count(chr(10), 0, m.start()) + 1}: {target}"
            file, _, anchor = target.partition("#")
            dest = Path(os.path.normpath(page.parent / file)) if file else page
            if root not in (dest, *dest.parents) or not dest.exists():
                problems.append(f"{where}: no such file in the repository")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"{where}: no heading '{anchor}' in {dest.relative_to(root)}")
    return problems


def lost_topics(root: Path) -> list[str]:
    """The old README's headings and topics that are a heading of no page."""
    found = {h for page in pages(root) for h in headings(page)}
    return [t for t in OLD_HEADINGS + OLD_TOPICS if t not in found]


def unlinked_pages(root: Path) -> list[str]:
    readme = (root / "README.md").read_text(encoding="utf-8")
    linked = {Path(os.path.normpath(root / m.group(1).partition("#")[0])) for m in _LINK.finditer(readme)}
    return [str(p.relative_to(root)) for p in sorted((root / "docs").glob("*.md")) if p not in linked]


def layout_table_line(root: Path) -> int | None:
    """The line of the first table row under the README's `## Layout`."""
    lines = (root / "README.md").read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "## Layout"), None)
    if start is None:
        return None
    for i in range(start + 1, len(lines)):
        if lines[i].startswith("## "):
            return None
        if lines[i].startswith("|"):
            return i + 1
    return None


def readme_exit_statuses(root: Path) -> set[int]:
    return {int(m.group(1)) for m in re.finditer(r"^\| (\d+) \|", (root / "README.md").read_text(encoding="utf-8"),
                                                 re.MULTILINE)}


def declared_exit_statuses(root: Path) -> set[int]:
    """The statuses the commands list where they declare them: cli/exits.py
    (MEANINGS, read as text, so that a copy of the tree is read as it is)
    and the report's docstring."""
    found: set[int] = set()
    exits = root / "cli" / "exits.py"
    if exits.exists():
        text = exits.read_text(encoding="utf-8")
        names = dict(re.findall(r"^([A-Z_]+) = (\d+)$", text, re.MULTILINE))
        block = text.partition("MEANINGS = {")[2].partition("\n}")[0]
        found |= {int(names[n]) for n in re.findall(r"^    ([A-Z_]+):", block, re.MULTILINE) if n in names}
    report = root / "reports" / "__main__.py"
    if report.exists():
        doc = report.read_text(encoding="utf-8").split('"""')[1]
        found |= {int(s) for s in re.findall(r"^\s+(\d+)\s", doc.partition("Exit status")[2], re.MULTILINE)}
    return found


class ReadmeTest(unittest.TestCase):
    def test_the_readme_is_short(self) -> None:
        n = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
        self.assertLessEqual(n, MAX_README_LINES, f"README.md has {n} lines; move detail to docs/")

    def test_the_layout_table_is_near_the_top(self) -> None:
        line = layout_table_line(ROOT)
        self.assertIsNotNone(line, "README.md has no table under '## Layout'")
        self.assertLess(line, LAYOUT_BEFORE_LINE)

    def test_every_link_resolves(self) -> None:
        self.assertEqual(broken_links(ROOT), [])

    def test_nothing_of_the_old_readme_is_lost(self) -> None:
        self.assertEqual(lost_topics(ROOT), [])

    def test_every_docs_page_is_reached_from_the_readme(self) -> None:
        self.assertEqual(unlinked_pages(ROOT), [])

    def test_the_readme_lists_every_exit_status(self) -> None:
        declared = declared_exit_statuses(ROOT)
        self.assertTrue({0, 1, 3} <= declared, f"no exit statuses read from the commands: {declared}")
        listed = readme_exit_statuses(ROOT)
        self.assertTrue({0, 1, 2, 3, 130} <= declared, declared)
        self.assertLessEqual(declared, listed)


class ControlTest(unittest.TestCase):
    """Each check fails on a copy of the documentation broken on purpose."""

    def setUp(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="bc-docs-"))
        self.addCleanup(shutil.rmtree, self.root)
        # The pages are copied to be edited; the rest of the tree is linked.
        shutil.copy(ROOT / "README.md", self.root / "README.md")
        shutil.copytree(ROOT / "docs", self.root / "docs")
        for entry in ROOT.iterdir():
            if entry.name not in ("README.md", "docs", ".git"):
                (self.root / entry.name).symlink_to(entry)

    def edit(self, name: str, old: str, new: str) -> None:
        path = self.root / name
        text = path.read_text(encoding="utf-8")
        self.assertIn(old, text)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")

    def test_the_copy_passes(self) -> None:
        self.assertEqual((broken_links(self.root), lost_topics(self.root), unlinked_pages(self.root)), ([], [], []))

    def test_a_link_to_a_missing_file_fails(self) -> None:
        self.edit("README.md", "(docs/probes.md)", "(docs/probe.md)")
        self.assertTrue(any("docs/probe.md: no such file" in p for p in broken_links(self.root)))

    def test_a_link_to_a_missing_heading_fails(self) -> None:
        self.edit("README.md", "docs/report.md#a-finding-is-not-a-failure", "docs/report.md#a-finding-is-a-failure")
        self.assertTrue(any("no heading 'a-finding-is-a-failure'" in p for p in broken_links(self.root)))

    def test_a_link_out_of_the_repository_fails(self) -> None:
        (self.root / "docs" / "extra.md").write_text("[x](../../outside.md)\n", encoding="utf-8")
        self.assertTrue(any("docs/extra.md:1" in p for p in broken_links(self.root)))

    def test_a_missing_heading_fails(self) -> None:
        self.edit("docs/probes.md", "## Invariance, graded", "## Invariance")
        self.assertEqual(lost_topics(self.root), ["Invariance, graded"])

    def test_a_heading_only_in_a_code_block_is_missing(self) -> None:
        self.edit("docs/report.md", "## A new machine says what to add", "```\n## A new machine says what to add\n```")
        self.assertIn("A new machine says what to add", lost_topics(self.root))

    def test_an_unlinked_page_fails(self) -> None:
        (self.root / "docs" / "orphan.md").write_text("# Orphan\n", encoding="utf-8")
        self.assertEqual(unlinked_pages(self.root), ["docs/orphan.md"])

    def test_a_long_readme_fails(self) -> None:
        readme = self.root / "README.md"
        readme.write_text("\n" * 100 + readme.read_text(encoding="utf-8"), encoding="utf-8")
        self.assertGreater(len(readme.read_text(encoding="utf-8").splitlines()), MAX_README_LINES)
        self.assertGreaterEqual(layout_table_line(self.root), LAYOUT_BEFORE_LINE)

    def test_an_undocumented_exit_status_fails(self) -> None:
        self.edit("README.md", "| 2 |", "| two |")
        self.assertNotIn(2, readme_exit_statuses(self.root))

    def test_a_status_declared_in_cli_exits_is_read(self) -> None:
        # The control of the reader: a status added to cli/exits.py is one the README must list.
        (self.root / "cli").unlink()
        shutil.copytree(ROOT / "cli", self.root / "cli")
        self.edit("cli/exits.py", "INTERRUPTED = 130\n", "INTERRUPTED = 130\nBUSY = 75\n")
        self.edit("cli/exits.py", "    INTERRUPTED: ", "    BUSY: \"busy\",\n    INTERRUPTED: ")
        self.assertIn(75, declared_exit_statuses(self.root))
        self.assertNotIn(75, declared_exit_statuses(ROOT))


if __name__ == "__main__":
    unittest.main()
