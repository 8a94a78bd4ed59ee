"""Check that .ci/floors.txt pins every dependency of pyproject.toml at its floor.

Every entry of ``[project] dependencies`` must be ``name>=X`` and .ci/floors.txt must pin
``name==X`` (``1.13`` and ``1.13.0`` are the same version), with no extra or missing
names.  Exit status 0 when they agree, 1 (with one line per difference) otherwise.
Run by .ci/run before it installs the floors.
"""
import pathlib
import re
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _version(text):
    parts = [int(p) for p in text.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def main():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    problems, floors = [], {}
    for dep in deps:
        m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*>=\s*([0-9][0-9.]*)\s*", dep)
        if not m:
            problems.append(f"pyproject.toml: {dep!r} is not of the form name>=version")
            continue
        floors[_norm(m.group(1))] = m.group(2)
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
            problems.append(f"{name}: pinned in .ci/floors.txt but not a dependency in pyproject.toml")
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
