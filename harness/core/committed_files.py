"""Which committed (published) files of a checkout differ from their commit: the README's tables, the reports and
the workflow are made from the committed files, so an uncommitted edit or deletion of one of them must stop a
command that would otherwise carry it into a published file, or measure a published cell again as if it were new."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT_S = 30
# what `git diff --name-status` says of a file, in words
_CHANGES = {"M": "edited", "D": "deleted", "T": "replaced by something that is not a file"}


@dataclass(frozen=True)
class ChangedFile:
    path: str  # from the checkout's root, as git names it
    change: str  # edited, deleted, ...
    root: Path  # the checkout's

    def shown(self) -> str:
        """The path as a person in the current folder types it."""
        full = self.root / self.path
        return os.path.relpath(full) if full.is_relative_to(Path.cwd()) else str(full)

    def restore(self) -> str:
        inside = Path.cwd().resolve().is_relative_to(self.root.resolve())
        return f"`git {'' if inside else f'-C {self.root} '}checkout HEAD -- {self.shown() if inside else self.path}`"


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess | None:
    """git run in `folder`, or None where there is no git or no commit to compare with (an installed copy, a folder
    that is no checkout): nothing is published there."""
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done if done.returncode == 0 else None


def checkout_root(folder: Path) -> Path | None:
    """The root of the git checkout `folder` lies in, where it has a commit, or None."""
    top = _git(folder, "rev-parse", "--show-toplevel")
    if top is None or _git(folder, "rev-parse", "--verify", "--quiet", "HEAD^{commit}") is None:
        return None
    return Path(top.stdout.strip())


def changed_committed(folder: Path, *pathspecs: str) -> list[ChangedFile]:
    """The files committed under `pathspecs` (git pathspecs from the checkout's root, `:(exclude)...` allowed) that
    the working tree (or the index) no longer has as the commit has them: edited, deleted, or a folder in a file's
    place. Files git does not track are not among them."""
    root = checkout_root(folder)
    if root is None:
        return []
    done = _git(root, "diff", "--name-status", "--no-renames", "-z", "HEAD", "--", *pathspecs)
    if done is None:
        return []
    fields = done.stdout.split("\0")
    return [ChangedFile(path, _CHANGES.get(kind[:1], "changed"), root)
            for kind, path in zip(fields[0::2], fields[1::2], strict=False) if kind and kind[:1] != "A"]


def ignored(root: Path, folder: Path) -> bool:
    """Whether the checkout at `root` ignores what is written in `folder` (a path from the root, there or not): its
    .gitignore names it or a folder above it. False where there is no git: nothing there is known to be ignored."""
    # the trailing slash asks about a folder, so that a pattern such as /exports/ matches one not made yet
    return _git(root, "check-ignore", "-q", "--", f"{folder.as_posix()}/") is not None


def untracked(folder: Path) -> list[Path]:
    """The files under `folder` that its checkout neither tracks nor ignores (new in `git status`), as paths under
    `folder`; none where there is no git."""
    done = _git(folder, "ls-files", "--others", "--exclude-standard", "-z", "--", ".")
    return [] if done is None else [Path(folder) / name for name in done.stdout.split("\0") if name]


def in_checkout(path: Path) -> tuple[Path, Path] | None:
    """The root of the git checkout `path` (a file or folder, there or not) lies in, and `path` from that root; None
    where it is in no checkout with a commit."""
    root = checkout_root(nearest_folder(path))
    if root is None:
        return None
    try:
        return root, Path(path).resolve().relative_to(root.resolve())
    except ValueError:
        return None


def nearest_folder(path: Path) -> Path:
    """`path`, or the nearest of its parents that is a folder: where git can be asked about it."""
    return next(p for p in [Path(path), *Path(path).parents] if p.is_dir())
