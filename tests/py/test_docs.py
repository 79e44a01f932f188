# SPDX-License-Identifier: MIT
"""The documentation stays findable: README.md is a short entry point (at
most 300 lines), every relative link of every Markdown page leads to a file
that is there (and to a heading that is there, for a #fragment into a
Markdown page), and every option a launcher's --help names is in its man
page.  Each checker is first shown to catch a planted fault."""
import json
import re
import urllib.parse
import subprocess

import pytest

from conftest import BUILD, ROOT

README_MAX_LINES = 300
SKIP_DIRS = {".git", "build", "build-san", "node_modules", "__pycache__", ".pytest_cache"}
LAUNCHERS = ["eatmydata", "syncstat", "nocache", "hirestimes", "cachestats", "cachedel",
             "crashtest"]

FENCE = re.compile(r"^ {0,3}(```|~~~)")
CODE_SPAN = re.compile(r"(`+).*?\1")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def pages(top):
    return sorted(p for p in top.rglob("*.md")
                  if not SKIP_DIRS.intersection(p.relative_to(top).parts[:-1]))


def prose(text):
    """The lines of a Markdown text outside code blocks, code spans blanked."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield n, CODE_SPAN.sub("", line)


def slug(heading):
    """GitHub's anchor for a heading: lower case, markup and punctuation
    dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page):
    seen, found = {}, set()
    fenced = False
    for line in page.read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
        m = None if fenced else HEADING.match(line)
        if m:
            s = slug(m.group(2))
            found.add(s if s not in seen else f"{s}-{seen[s]}")
            seen[s] = seen.get(s, 0) + 1
    return found


def broken_links(top):
    """Every relative link under top that leads nowhere, as 'page:line: target'."""
    broken = []
    for page in pages(top):
        for n, line in prose(page.read_text()):
            for target in LINK.findall(line):
                if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
                    continue  # https:, mailto: ...
                path, _, fragment = target.partition("#")
                dest = (page.parent / path).resolve() if path else page
                where = f"{page.relative_to(top)}:{n}: {target}"
                if not dest.exists():
                    broken.append(where + " (no such file)")
                elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                    broken.append(where + " (no such heading)")
    return broken


def test_readme_is_short():
    n = len((ROOT / "README.md").read_text().splitlines())
    assert n <= README_MAX_LINES, (
        f"README.md has {n} lines, more than {README_MAX_LINES}: move the detail to a page "
        "of doc/ and link it (STYLE.md, Layout)")


def test_links_resolve():
    assert len(pages(ROOT)) >= 10, pages(ROOT)
    broken = broken_links(ROOT)
    assert not broken, "relative links to nowhere:\n" + "\n".join(broken)


def test_a_planted_broken_link_is_caught(tmp_path):
    """The control: the checker finds a missing file and a missing heading,
    and passes the same pages once they are right."""
    (tmp_path / "doc").mkdir()
    (tmp_path / "doc/page.md").write_text("# A page\n\n## Its part: `x()`\n")
    readme = tmp_path / "README.md"
    readme.write_text("[ok](doc/page.md#its-part-x) [gone](doc/gone.md)\n"
                      "[bad](doc/page.md#no-such-part)\n"
                      "```\n[in code](nowhere.md)\n```\n`[span](nowhere.md)` [web](https://x.org/)\n")
    assert broken_links(tmp_path) == ["README.md:1: doc/gone.md (no such file)",
                                      "README.md:2: doc/page.md#no-such-part (no such heading)"]
    readme.write_text("[ok](doc/page.md#its-part-x) [top](doc/page.md#a-page)\n")
    assert broken_links(tmp_path) == []


def help_options(launcher):
    out = subprocess.run([BUILD / "bin" / launcher, "--help"], capture_output=True,
                         text=True, timeout=30).stdout
    return sorted(set(re.findall(r"(?<![\w-])(--?[a-zA-Z][a-zA-Z-]*)", out)))


def missing_from_man(launcher, man_text):
    """The options --help names that the man page (roff: \\- for each -) lacks."""
    text = man_text.replace("\\-", "-")
    return [o for o in help_options(launcher)
            if not re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])", text)]


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_man_page_has_every_option(launcher):
    man = (ROOT / "doc" / f"{launcher}.1").read_text()
    assert help_options(launcher), f"rerun: {BUILD}/bin/{launcher} --help"
    missing = missing_from_man(launcher, man)
    assert not missing, f"doc/{launcher}.1 lacks {missing} (rerun: {BUILD}/bin/{launcher} --help)"


def test_a_man_page_missing_an_option_is_caught():
    """The control: syncstat's page with compare's --skip-files taken out."""
    man = (ROOT / "doc/syncstat.1").read_text()
    assert missing_from_man("syncstat", man) == []
    assert missing_from_man("syncstat", man.replace("\\-\\-skip\\-files", "")) == ["--skip-files"]


SCHEMAS = sorted((ROOT / "doc").glob("*.schema.json"))


def schema_faults(schema):
    """What keeps a reader from resolving a JSON schema's $refs: an $id that is
    not an absolute URI with an authority (older jsonschema, Debian's 4.10,
    joins each $ref to it with urllib, which leaves "#/..." unjoined to an id
    such as "eatmydata.syncstat/4" or a URN), or a $ref that names nothing in
    the document."""
    base = schema.get("$id", "")
    u = urllib.parse.urlsplit(base)
    faults = [] if u.scheme in ("http", "https") and u.netloc and not u.fragment else \
        [f"$id {base!r} is not an absolute http(s) URI"]

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "$ref":
                    joined = urllib.parse.urljoin(base, v)
                    target = schema
                    for part in urllib.parse.urldefrag(joined)[1].split("/")[1:]:
                        target = target.get(part) if isinstance(target, dict) else None
                    if not joined.startswith(base + "#") or target is None:
                        faults.append(f"$ref {v!r} does not resolve")
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(schema)
    return faults


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_schema_refs_resolve_in_any_reader(path):
    assert schema_faults(json.loads(path.read_text())) == []


def test_a_schema_of_an_id_no_reader_resolves_is_caught():
    for bad_id in ["eatmydata.syncstat/4", "urn:eatmydata:syncstat:4"]:
        planted = {"$id": bad_id, "$defs": {"c": {}}, "items": {"$ref": "#/$defs/c"}}
        assert schema_faults(planted)
    assert schema_faults({"$id": "https://x.invalid/s", "items": {"$ref": "#/$defs/none"}})
    assert not schema_faults({"$id": "https://x.invalid/s", "$defs": {"c": {}},
                              "items": {"$ref": "#/$defs/c"}})
