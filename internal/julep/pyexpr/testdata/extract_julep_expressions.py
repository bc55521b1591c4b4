# Extracts the "$ ..." expressions and {{ }} templates from Julep's documentation and cookbooks,
# as vendored in julep-expressions.json (see README.md beside this file). Usage:
#   python3 extract_julep_expressions.py DIR > julep-expressions.json
# where DIR holds julep-ai/julep's documentation/ and cookbooks/ at the pinned commit.
# Needs PyYAML. Every string value of a YAML block (a ```yaml fence, or a triple-quoted string in
# a notebook's code) is taken, and every quoted string literal in other code; a string that starts
# with "$ " is a Python expression, one with "{{" a template.
import json
import os
import re
import sys

import yaml

FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+-]*)[^\n]*\n(.*?)^[ \t]*```", re.S | re.M)
TRIPLE = re.compile(r'(\b[rRfFuU]{0,2})?("""|\'\'\')(.*?)\2', re.S)
QUOTED = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'')


def blocks(path, text):
    if path.endswith(".ipynb"):
        for cell in json.loads(text).get("cells", []):
            src = "".join(cell.get("source", []))
            if cell.get("cell_type") == "code":
                yield "python", src
            else:
                yield from ((m.group(1).lower(), m.group(2)) for m in FENCE.finditer(src))
    else:
        yield from ((m.group(1).lower(), m.group(2)) for m in FENCE.finditer(text))


def strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)


def from_yaml(text):
    try:
        return list(strings(yaml.safe_load(text)))
    except yaml.YAMLError:
        return None


def from_code(text):
    out = []
    for m in QUOTED.finditer(text):
        s = m.group(1) if m.group(1) is not None else m.group(2)
        try:
            s = json.loads('"' + s.replace('"', '\\"').replace("\\'", "'").replace('\\\\"', '\\"') + '"')
        except ValueError:
            pass
        out.append(s)
    return out


def candidates(lang, body):
    if lang in ("yaml", "yml"):
        got = from_yaml(body)
        return got if got is not None else from_code(body)
    out = []
    rest = body
    for m in TRIPLE.finditer(body):
        text = m.group(3)
        if "f" in (m.group(1) or "").lower():
            # A notebook's f-string: {{ and }} are its escapes for { and }.
            text = text.replace("{{", "{").replace("}}", "}")
        got = from_yaml(text)
        if got is not None and not isinstance(yaml.safe_load(text), str):
            out += got
            rest = rest.replace(m.group(0), "")
    return out + from_code(rest)


def main():
    root = sys.argv[1]
    found = {}
    for d in ("documentation", "cookbooks"):
        for base, _, files in sorted(os.walk(os.path.join(root, d))):
            for name in sorted(files):
                if not name.endswith((".md", ".mdx", ".ipynb")):
                    continue
                path = os.path.join(base, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                if not text:
                    print(f"skipped (empty): {rel}", file=sys.stderr)
                    continue
                for lang, body in blocks(path, text):
                    for s in candidates(lang, body):
                        t = s.strip()
                        if t.startswith("$ "):
                            form = "python"
                        elif "{{" in t and "}}" in t:
                            form = "template"
                        else:
                            continue
                        e = found.setdefault(s, {"expr": s, "form": form, "files": []})
                        if rel not in e["files"]:
                            e["files"].append(rel)
    json.dump(list(found.values()), sys.stdout, indent=1, ensure_ascii=False)
    print()


main()
