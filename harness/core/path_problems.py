"""What stands in the way of writing a path, said in words: the operating system's "File exists" or "Not a
directory" names no culprit when a file sits where a folder of the path should be."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.core.committed_files import ignored

# what a person can do about an error that is the file system's, not the path's
REMEDY = {errno.ENOSPC: "free some space there or give a folder on another file system",
          errno.EDQUOT: "free some space there or give a folder on another file system",
          errno.EROFS: "give a folder on a file system that can be written"}


def too_long(path: Path, room: int = 0) -> str | None:
    """What makes `path` longer than the file system takes (a folder or file name, or the whole path with `room`
    bytes left for the files a command makes under it), in words, or None: the operating system's "File name too
    long" would name neither which part nor the limit."""
    limits = {}
    for name, default in (("PC_NAME_MAX", 255), ("PC_PATH_MAX", 4096)):
        try:
            limits[name] = os.pathconf(nearest_existing(Path(path).absolute()), name)
        except (OSError, ValueError):
            limits[name] = default
    for part in Path(path).parts:
        if len(os.fsencode(part)) > limits["PC_NAME_MAX"]:
            return (f"the name {part[:40]}... is {len(os.fsencode(part))} bytes, and a file or folder name may have at "
                    f"most {limits['PC_NAME_MAX']} here")
    size = len(os.fsencode(str(Path(path).absolute())))
    if size + room >= limits["PC_PATH_MAX"]:
        return (f"the path is {size:,} bytes long, and a path may have at most {limits['PC_PATH_MAX'] - 1:,} here"
                + (f", the {room} of the files under it included" if room else ""))
    return None


def unexpanded_home(path: str) -> str | None:
    """What is wrong with a path that starts with a literal ~ (or ~user), in words, or None: the shell expands it
    only unquoted, and Snakemake's --config never, so '~/r' would make a folder named ~ in the working folder.
    ./~ still names such a folder on purpose."""
    first = str(path).split("/", 1)[0]
    if not first.startswith("~") or os.path.expanduser(first) == first:  # ~nosuchuser is a plain name
        return None
    return (f"the shell did not expand {first} (quoted, it stays a plain name), so it would name a folder called "
            f"{first} in the working folder; give the path unquoted, as $HOME/..., or in full")


def file_in_the_way(path: Path) -> Path | None:
    """The first of `path`'s folders that is a file (so nothing can be created under it), or None."""
    for parent in reversed(Path(path).parents):
        if parent.exists() and not parent.is_dir():
            return parent
    return None


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (a named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def not_a_regular_file(path: Path) -> str | None:
    """What an existing `path` is where a file to read was expected ("a folder", "a FIFO (a named pipe)", "a
    symlink loop", ...), or None for a regular file or a path that does not exist. stat(2) only: opening a FIFO
    to find out would wait for a writer."""
    try:
        mode = os.stat(path).st_mode
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "a symlink loop"
        if os.path.islink(path):
            return f"a symlink to {os.readlink(path)}, which does not exist"
        return None
    kind = mode_kind(mode)
    return None if kind is None else kind + (f" (a symlink to {os.path.realpath(path)})" if os.path.islink(path)
                                             else "")


def link_loop(path: Path) -> bool:
    """Whether a symlink at or above `path` leads back to itself: resolving it then raises RuntimeError (Python
    3.11; OSError ELOOP from 3.13) where a path that is merely missing resolves, so a check that resolves it ends
    in a traceback."""
    try:
        Path(path).resolve(strict=True)
    except RuntimeError:
        return True
    except OSError as err:
        return err.errno == errno.ELOOP
    return False


def broken_link(path: Path) -> str | None:
    """What a broken symlink at or above `path` does, in words, or None: a loop ends resolving it in a traceback, and
    a link to nowhere in a bare "No such file or directory" where a folder is made through it, neither naming the
    link."""
    if link_loop(path):
        return f"a symlink on the path {path} loops (leads back to itself), so there is no folder there"
    for above in [Path(path), *Path(path).parents]:
        if os.path.islink(above) and not os.path.exists(above):
            return f"{above} is a link to {os.readlink(above)}, which does not exist"
    return None


def mode_kind(mode: int) -> str | None:
    """What a file of this stat(2) mode is, in words, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def nearest_existing(path: Path) -> Path:
    """`path`, or the nearest of its parents that exists: where a folder made under it would be made."""
    return next(p for p in [Path(path), *Path(path).parents] if os.path.lexists(p))


def unwritable(path: Path) -> Path | None:
    """The folder that keeps anything from being written at `path` (itself, or its nearest existing parent, on a
    read-only file system or without permission), or None; the operating system answers (access(2)), so root is
    refused only where a file system is read-only."""
    here = nearest_existing(path)
    return None if os.access(here, os.W_OK | os.X_OK) else here


def written_as_root(path: Path) -> Path | None:
    """The folder at or above `path` marked read-only for everyone (chmod a-w) that this process, run as root, writes
    all the same (unwritable() leaves root be, as the system does), or None: said, so that a write there surprises
    nobody."""
    here = nearest_existing(path)
    try:
        mode = here.stat().st_mode
    except OSError:  # a link to nowhere (or a loop) there: broken_link() names it where the folder is judged
        return None
    return here if os.geteuid() == 0 and not mode & 0o222 else None


def unmakeable(path: Path) -> str | None:
    """Why no folder can be made at `path`, in the system's words, or None: a folder is made and removed again in
    its nearest existing parent, since access(2) answers yes to root where mkdir still fails (/proc, /sys)."""
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".vramlab-folder-check-", dir=nearest_existing(Path(path).absolute())))
    except OSError as err:
        return err.strerror or str(err)
    return None


# what a results or reports folder leaves for the paths under it (<matrix>/evaluations/<cell id>/<task>.json)
FOLDER_ROOM = 256
# the folders of a checkout (a folder with an ablations/) whose every folder holds one matrix's results or reports
PUBLISHED_PARENTS = ("results", "reports")


def published_folder(path: Path) -> Path | None:
    """The folder of published results or reports `path` lies in (or is): an existing <checkout>/results/<name>/ or
    <checkout>/reports/<name>/, a checkout being a folder with an ablations/ folder; or None. A cache, a log or the
    output of another run there would be taken for the published files, and git would show it among them."""
    resolved = Path(path).resolve()
    for above in [resolved, *resolved.parents]:
        if above.parent.name in PUBLISHED_PARENTS and (above.parent.parent / "ablations").is_dir() and above.is_dir():
            return above
    return None


def linked_folder_problem(parent: Path, name: str, what: str, writes: bool = True) -> str | None:
    """Why <parent>/<name>/, the folder a command keeps one matrix's (or the claims') `what` ("results" or "reports")
    in, is no folder of its own, in words, or None: a broken link there (broken_link), or a link that resolves into
    a checkout's published folder other than the checkout's own <name>/ reached as itself (another matrix's, or a
    published one reached from outside), whose committed files would be written over through it. `writes` False
    (the folder is only read) lets a link to the published folder of the same name be, as reading changes nothing."""
    folder = Path(parent) / name
    broken = broken_link(folder)
    if broken is not None:
        return f"{broken}; give a folder of its own, or make the folder the link names"
    published = published_folder(folder)
    if published is None or published == Path(parent).resolve() / name or (not writes and published.name == name):
        return None
    return (f"{folder} is a link to the published {published}/, whose files "
            + (f"the {what} written there would replace" if writes else f"would be read as the {what} of {name}")
            + "; give a folder of its own")


# a checkout's folders that hold only what is published there (folders of matrices' results and reports, the matrix
# files): a cache or a run's own files at their top would be read as a matrix's folder or mixed with the matrices
CHECKOUT_FOLDERS = {"results": "the checkout's folder of published results",
                    "reports": "the checkout's folder of published reports",
                    "ablations": "the checkout's folder of matrix files"}


def published_place(path: Path) -> str | None:
    """Where `path` lies among a checkout's published files, in words ("<folder>/, a folder of ..."), or None: a
    matrix's published folder (published_folder), or the checkout's results/, reports/ or ablations/ itself or any
    folder under it. For what vramlab keeps for itself (a cache, leases, a status file), never for a new matrix's
    output, which belongs in results/<name>/."""
    published = published_folder(path)
    if published is not None:
        return f"{published}/, a folder of published results or reports"
    resolved = Path(path).resolve()
    for above in [resolved, *resolved.parents]:
        checkout = above.parent
        if above.name in CHECKOUT_FOLDERS and above.is_dir() and _is_checkout(checkout):
            return f"{above}/, {CHECKOUT_FOLDERS[above.name]}"
    return None


def checkout_published_root(path: Path) -> Path | None:
    """The checkout's results/ or reports/ folder that `path` is or lies in (a checkout being a folder with
    ablations/ beside them), or None."""
    resolved = Path(path).resolve()
    return next((above for above in [resolved, *resolved.parents]
                 if above.name in PUBLISHED_PARENTS and above.is_dir() and _is_checkout(above.parent)), None)


def among_the_other_kind(path: Path, kind: str) -> str | None:
    """Where `kind` ("results" or "reports") written at `path` would land among a checkout's published files of the
    other kind (its results/ and reports/ swapped, or one inside the other), in words, or None."""
    root = checkout_published_root(path)
    if root is None or root.name == kind:
        return None
    return f"{root}/ is {CHECKOUT_FOLDERS[root.name]}, so the {kind} would be written among them"


def checkout_place(path: Path) -> str | None:
    """Where a folder vramlab fills with its own files (a cache, leases) at `path` would mix them with a checkout's,
    in words, or None: among the published files (published_place), or anywhere else in a checkout's tree that its
    .gitignore does not name, where git would show hundreds of models' and bytecode files as the checkout's own."""
    place = published_place(path)
    if place is not None:
        return place
    resolved = Path(path).resolve()
    root = next((above for above in [resolved, *resolved.parents] if _is_checkout(above)), None)
    if root is None or ignored(root, resolved.relative_to(root)):
        return None
    return f"{root}/, a checkout of vramlab, in a folder its .gitignore does not name"


def _is_checkout(folder: Path) -> bool:
    """A folder with ablations/ and results/ or reports/ beside it (an ablations/ alone may be anyone's)."""
    return (folder / "ablations").is_dir() and any((folder / name).is_dir() for name in PUBLISHED_PARENTS)


def explain_os_error(err: OSError) -> str:
    """One line for an OSError a command met on a path it was given."""
    if err.filename and err.errno in (errno.EEXIST, errno.ENOTDIR):
        blocker = file_in_the_way(Path(err.filename) / "x")
        if blocker is not None:
            return (f"{err.filename}: cannot be written: {blocker} is a file, not a folder, so nothing can be "
                    "created under it; give a path whose folders are folders")
    remedy = f"; {REMEDY[err.errno]}" if err.errno in REMEDY else ""
    if err.filename:
        return f"{err.filename}: {err.strerror or err}{remedy}"
    return f"{err.strerror or err}{remedy}"


@contextmanager
def naming(path: Path) -> Iterator[None]:
    """An OSError of the block names `path` where the system named no file: a write, a flush or an fsync that
    finds the disk full names none, and the one line a person reads must say where."""
    try:
        yield
    except OSError as err:
        if not err.filename:
            err.filename = str(path)
        raise
