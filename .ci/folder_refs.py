#!/usr/bin/env python3
"""The folder graph of one Swift module: which folder refers to which, by the
names it uses (files of one module never import each other, so a name is the
only trace of a reference).

    .ci/folder_refs.py Sources/TokenGate [--strict] [--where]

A folder refers to another when one of its files uses a name declared there:
a top-level type, protocol or type alias, a top-level function, or a member
that an extension adds to a type declared outside the module (used as
`.name`). Comments and string literals are not read. Files directly in the
module's folder form the folder ".". Prints every reference with its names
(`--where` adds file:line), the two-way pairs and the cycles, then a summary
line. With `--strict` it exits 1 on any cycle (a two-way pair is the shortest).
"""
import os
import re
import sys
from collections import defaultdict

DECLARATION = re.compile(
    r"^(?:\s*@[\w.]+(?:\([^)]*\))?)*\s*(?:(?:public|package|internal|private|fileprivate|open|final|indirect|nonisolated)\s+)*"
    r"(struct|class|enum|protocol|actor|typealias|func|extension)\s+([A-Za-z_][\w.]*)")
MEMBER = re.compile(r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s*)*(?:(?:public|package|internal|private|fileprivate|static|mutating|nonisolated|final)\s+)*"
                    r"(?:func|var|let)\s+([A-Za-z_]\w*)")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def code_lines(text):
    """The file's lines with comments and string literals blanked."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r'"""(?:.|\n)*?"""', lambda m: "\n" * m.group(0).count("\n"), text)
    lines = []
    for line in text.split("\n"):
        line = re.sub(r'#?"(?:[^"\\\n]|\\.)*"#?', '""', line)
        line = line.split("//", 1)[0]
        lines.append(line)
    return lines


def folder_of(root, path):
    relative = os.path.relpath(os.path.dirname(path), root)
    return "." if relative == "." else relative.split(os.sep)[0]


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    strict = "--strict" in argv
    where = "--where" in argv
    if len(args) != 1:
        print(__doc__)
        return 64
    root = args[0].rstrip("/")
    files = {}
    for directory, _, names in os.walk(root):
        for name in names:
            if name.endswith(".swift"):
                path = os.path.join(directory, name)
                with open(path, encoding="utf-8") as handle:
                    files[path] = code_lines(handle.read())

    declared_types = {}   # name -> folder
    functions = {}        # top-level functions: name -> folder
    for path, lines in files.items():
        folder = folder_of(root, path)
        for line in lines:
            if line[:1].isspace():
                continue
            match = DECLARATION.match(line)
            if not match:
                continue
            kind, name = match.groups()
            if kind == "func":
                functions.setdefault(name, folder)
            elif kind != "extension":
                declared_types.setdefault(name, folder)

    members = {}          # extension members of outside types: name -> folder
    for path, lines in files.items():
        folder = folder_of(root, path)
        depth = 0
        extending_outside = False
        for line in lines:
            if depth == 0:
                match = DECLARATION.match(line)
                extending_outside = bool(match and match.group(1) == "extension"
                                         and match.group(2).split(".")[0] not in declared_types)
            elif depth == 1 and extending_outside:
                match = MEMBER.match(line)
                if match and match.group(1) not in ("init", "description", "body"):
                    members.setdefault(match.group(1), folder)
            depth += line.count("{") - line.count("}")

    references = defaultdict(lambda: defaultdict(set))   # (a, b) -> name -> places
    for path, lines in files.items():
        folder = folder_of(root, path)
        for number, line in enumerate(lines, 1):
            for match in IDENTIFIER.finditer(line):
                name = match.group(0)
                target = declared_types.get(name) or functions.get(name)
                if target is None and name in members and match.start() > 0 and line[match.start() - 1] == ".":
                    target = members[name]
                if target is not None and target != folder:
                    references[(folder, target)][name].add(f"{os.path.relpath(path, root)}:{number}")

    graph = defaultdict(set)
    for (a, b) in references:
        graph[a].add(b)
    folders = sorted({folder_of(root, p) for p in files})
    for folder in folders:
        targets = sorted(graph.get(folder, ()))
        parts = []
        for target in targets:
            names = references[(folder, target)]
            shown = ", ".join(sorted(names)[:6]) + (", …" if len(names) > 6 else "")
            parts.append(f"{target} ({shown})")
            if where:
                for name in sorted(names):
                    parts.append("      " + name + ": " + " ".join(sorted(names[name])[:4]))
        print(f"{folder:16} → " + ("; ".join(p for p in parts if not p.startswith("      ")) if parts else "nothing"))
        if where:
            for part in parts:
                if part.startswith("      "):
                    print(part)

    pairs = sorted({tuple(sorted((a, b))) for a in graph for b in graph[a] if a in graph.get(b, ())})
    # Strongly connected components (Tarjan), to name cycles longer than a pair.
    index, low, stack, on_stack, components, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for folder in folders:
        if folder not in index:
            visit(folder)
    for a, b in pairs:
        print(f"two-way: {a} ⇄ {b}")
    for component in components:
        print("cycle: " + " → ".join(component))
    print(f"{root}: {len(folders)} folders, {len(pairs)} two-way pairs, {len(components)} cycles")
    return 1 if strict and components else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
