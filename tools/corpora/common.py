"""What the corpus builders share: Debian's package metadata, the prose filter, the manifest's digests and build
date, and the command line (`--check`, `--propose-pages`). The corpora they write are harness/data/corpora/."""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

from harness.data.corpora import FOLDER as OUT_DIR

DOC_ROOT = Path("/usr/share/doc")
COMMON_LICENSES = Path("/usr/share/common-licenses")
DEBIAN_RELEASE = ("12", "bookworm")

# Paragraph filter (see `is_prose`)
MIN_WORDS = 6
MIN_LETTER_SHARE = 0.8
MAX_CODE_SHARE = 0.25
_CODEISH = re.compile(r"[_/\\{}\[\]<>=*#$|&@~^`%+]|\w\(|\(\d|^-|\d")


class BuildError(RuntimeError):
    """The installed packages do not give the expected corpus (a page, a version or a structure differs)."""


# --------------------------------------------------------------------------- Debian metadata

def run(*command: str, stdin: bytes | None = None) -> str:
    result = subprocess.run(command, input=stdin, capture_output=True, check=False,
                            env={**os.environ, "LC_ALL": "C.UTF-8"})
    if result.returncode != 0:
        raise BuildError(f"{' '.join(command[:3])} failed: {result.stderr.decode('utf-8', 'replace').strip()}")
    return result.stdout.decode("utf-8")


def package_versions(names: list[str]) -> dict[str, dict[str, str]]:
    fields = "${Package}\t${Version}\t${source:Package}\t${source:Version}\t${db:Status-Abbrev}\n"
    out = {}
    for line in run("dpkg-query", "-W", f"-f={fields}", *names).splitlines():
        name, version, source, source_version, status = line.split("\t")
        if not status.startswith("ii"):
            raise BuildError(f"package {name} is not installed")
        out[name] = {"version": version, "source_package": source, "source_version": source_version}
    return out


def owners(paths: list[Path]) -> dict[Path, str]:
    """The package that installed each file, from dpkg's database."""
    out: dict[Path, str] = {}
    for line in run("dpkg-query", "-S", *map(str, paths)).splitlines():
        if line.startswith(("diversion by", "local diversion")):
            continue
        packages, _, path = line.partition(": ")
        out[Path(path)] = packages.split(", ")[0]
    return out


def dep5(path: Path) -> tuple[dict[str, str], list[dict[str, str]], dict[str, str]]:
    """A machine-readable debian/copyright: (header, Files stanzas, standalone License texts)."""
    stanzas = []
    for block in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")):
        fields: dict[str, str] = {}
        key = None
        for line in block.splitlines():
            if line[:1] in (" ", "\t") and key:
                fields[key] += "\n" + line[1:]
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        if fields:
            stanzas.append(fields)
    header, rest = stanzas[0], stanzas[1:]
    files = [s for s in rest if "Files" in s]
    licenses = {}
    for stanza in rest:
        if "Files" not in stanza and "License" in stanza:
            name, _, text = stanza["License"].partition("\n")
            licenses[name.strip()] = "\n".join("" if line == "." else line for line in text.splitlines())
    return header, files, licenses


def debian_release() -> str:
    release = dict(line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line)
    version, codename = release.get("VERSION_ID", "").strip('"'), release.get("VERSION_CODENAME", "")
    if (version, codename) != DEBIAN_RELEASE:
        raise BuildError(f"built on Debian {DEBIAN_RELEASE[0]} ({DEBIAN_RELEASE[1]}), this is {version} ({codename})")
    return f"Debian {version} ({codename})"


# --------------------------------------------------------------------------- text

def normalise(text: str) -> str:
    """NFC; soft hyphens and zero-width characters removed; every run of white space one space."""
    text = unicodedata.normalize("NFC", text)
    text = re.sub("[\u00ad\u200b\u200c\u200d\u2060\ufeff]", "", text)
    return " ".join(text.split())


def is_prose(text: str) -> bool:
    """Running text, not a flag list, a formula, a path or a fragment.

    At least MIN_WORDS words; letters make at least MIN_LETTER_SHARE of the non-space characters;
    at most MAX_CODE_SHARE of the words look like code (hold one of _ / \\ { } [ ] < > = * # $ | &
    @ ~ ^ ` % + or a digit, a call like f( or a reference like (2), or start with a dash).
    """
    words = text.split()
    if len(words) < MIN_WORDS:
        return False
    nonspace = [c for c in text if not c.isspace()]
    if sum(c.isalpha() for c in nonspace) < MIN_LETTER_SHARE * len(nonspace):
        return False
    return sum(bool(_CODEISH.search(w)) for w in words) <= MAX_CODE_SHARE * len(words)


def page_order(page: str) -> str:
    """The order pages are taken in, for the split and for dropping repeated paragraphs: by sha256 of the id."""
    return hashlib.sha256(page.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- output

def write(path: Path, data: bytes) -> dict:
    path.write_bytes(data)
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def build_date(manifest: dict, previous: dict | None) -> str:
    """SOURCE_DATE_EPOCH if set; else the previous build's date when nothing else changed; else today (UTC)."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return dt.datetime.fromtimestamp(int(os.environ["SOURCE_DATE_EPOCH"]), dt.UTC).date().isoformat()
    if previous and {k: v for k, v in previous.items() if k != "built"} == manifest:
        return previous["built"]
    return dt.datetime.now(dt.UTC).date().isoformat()


def main(argv: list[str] | None, description: str, manifest_file: str,
         build: Callable[[Path, dict | None], dict], propose_pages: Callable[[], tuple[list[str], list[str], dict]],
         describe: Callable[[dict], str]) -> int:
    """The builders' command line: build into harness/data/corpora/, or --check (rebuild in a temporary folder and
    fail on any difference), or --propose-pages (print the page lists the selection rule gives)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="rebuild in a temporary folder; fail on any difference")
    parser.add_argument("--propose-pages", action="store_true", help="print the page lists the selection rule gives")
    args = parser.parse_args(argv)
    start = time.monotonic()
    if args.propose_pages:
        train, heldout, rejected = propose_pages()
        for page, why in sorted(rejected.items()):
            print(f"# left out {page}: {why}", file=sys.stderr)
        print(f"TRAIN_PAGES = {tuple(train)!r}\nHELDOUT_PAGES = {tuple(heldout)!r}")
        return 0
    manifest_path = OUT_DIR / manifest_file
    previous = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else None
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            manifest = build(Path(tmp), previous)
            changed = [name for name in [*manifest["files"], manifest_file]
                       if (Path(tmp) / name).read_bytes() != _read(OUT_DIR / name)]
        print(f"rebuilt in {time.monotonic() - start:.0f} s; "
              + (f"differs: {', '.join(changed)}" if changed else "identical to the committed files"))
        return 1 if changed else 0
    manifest = build(OUT_DIR, previous)
    for name, info in manifest["files"].items():
        print(f"{name}: {info['bytes']} bytes" + describe(info))
    print(f"built in {time.monotonic() - start:.0f} s")
    return 0


def _read(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""
