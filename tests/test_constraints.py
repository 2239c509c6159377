"""constraints-gpu.txt is the stack the committed GPU results were measured on: every library a GPU result records
in environment.versions is pinned there at the version it recorded, and the project's own bounds admit each pin."""

from __future__ import annotations

import json
import re

from packaging.requirements import Requirement

from tests.conftest import REPO

PIN = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+)$")


def pins() -> dict[str, str]:
    found = {}
    for line in (REPO / "constraints-gpu.txt").read_text().splitlines():
        match = PIN.match(line.strip())
        if match:
            found[match.group(1).lower().replace("_", "-")] = match.group(2)
    return found


def recorded_gpu_versions() -> dict[str, set[str]]:
    seen: dict[str, set[str]] = {}
    for path in (REPO / "results").rglob("*.json"):
        data = json.loads(path.read_text())
        env = data.get("environment") if isinstance(data, dict) else None
        if not env or not env.get("cuda_available"):
            continue
        for name, version in (env.get("versions") or {}).items():
            if version is not None and name != "vramlab":
                seen.setdefault(name, set()).add(version.split("+")[0])
    return seen


def test_every_recorded_gpu_library_is_pinned_at_the_version_it_recorded():
    recorded, pinned = recorded_gpu_versions(), pins()
    assert {"torch", "transformers", "peft", "unsloth", "bitsandbytes"} <= set(recorded)
    for name, versions in recorded.items():
        assert len(versions) == 1, (name, versions)  # one environment made every GPU number
        assert pinned.get(name) == next(iter(versions)), name


def test_the_projects_own_requirements_admit_every_pin():
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pinned = pins()
    for text in project["dependencies"] + project["optional-dependencies"]["gpu"]:
        requirement = Requirement(text)
        name = requirement.name.lower().replace("_", "-")
        if name in pinned:
            assert requirement.specifier.contains(pinned[name], prereleases=True), (text, pinned[name])


def test_the_readme_installs_the_gpu_stack_through_the_constraints():
    readme = (REPO / "README.md").read_text()
    assert "pip install -c constraints-gpu.txt -e '.[gpu]'" in readme
    assert "pip install -e '.[gpu]'          #" not in readme  # the unconstrained line it replaced
