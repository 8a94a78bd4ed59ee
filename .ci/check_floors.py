"""Check that .ci/floors.txt pins every runtime dependency of pyproject.toml at its floor.

The runtime dependencies are ``[project] dependencies`` and the entries of the feature
extras of ``[project.optional-dependencies]`` (every extra but the tool extras
:data:`TOOL_EXTRAS`; self-references such as ``freeprob[sampler,plot]`` in ``all`` are
skipped).  Each must be ``name>=X`` (a name in several extras with the same floor) and
.ci/floors.txt must pin ``name==X`` (``1.13`` and ``1.13.0`` are the same version), with no
extra or missing names.  Exit status 0 when they agree, 1 (with one line per difference)
otherwise.  Run by .ci/run before it installs the floors (``.[all,test]``).
"""
import pathlib
import re
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: extras of tools, not of freeprob's features: their floors are not pinned
TOOL_EXTRAS = frozenset({"test", "notebooks", "docs"})


def _version(text):
    parts = [int(p) for p in text.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_requirements(project):
    """``[(where, requirement)]``: the dependencies and the feature extras' entries."""
    out = [("dependencies", dep) for dep in project.get("dependencies", [])]
    for extra, deps in project.get("optional-dependencies", {}).items():
        if extra in TOOL_EXTRAS:
            continue
        for dep in deps:
            if _norm(re.split(r"[\[<>=!~; ]", dep.strip(), maxsplit=1)[0]) != _norm(project["name"]):
                out.append((f"extra {extra!r}", dep))
    return out


def main():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    problems, floors = [], {}
    for where, dep in runtime_requirements(project):
        m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*>=\s*([0-9][0-9.]*)\s*", dep)
        if not m:
            problems.append(f"pyproject.toml ({where}): {dep!r} is not of the form name>=version")
            continue
        name = _norm(m.group(1))
        if name in floors and _version(floors[name]) != _version(m.group(2)):
            problems.append(f"pyproject.toml ({where}): {dep!r} disagrees with the floor >={floors[name]} "
                            "given elsewhere")
            continue
        floors[name] = m.group(2)
    pins = {}
    for line in (ROOT / ".ci" / "floors.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([0-9][0-9.]*)", line)
        if not m:
            problems.append(f".ci/floors.txt: {line!r} is not of the form name==version")
            continue
        pins[_norm(m.group(1))] = m.group(2)
    for name in sorted(floors.keys() | pins.keys()):
        if name not in pins:
            problems.append(f"{name}: floor >={floors[name]} in pyproject.toml but no pin in .ci/floors.txt")
        elif name not in floors:
            problems.append(f"{name}: pinned in .ci/floors.txt but not a dependency (or feature extra) in "
                            "pyproject.toml")
        elif _version(floors[name]) != _version(pins[name]):
            problems.append(f"{name}: pyproject.toml says >={floors[name]}, "
                            f".ci/floors.txt pins =={pins[name]}")
    for p in problems:
        print(f"check_floors: {p}", file=sys.stderr)
    if not problems:
        print(f"check_floors: {len(pins)} floors of pyproject.toml pinned in .ci/floors.txt")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
