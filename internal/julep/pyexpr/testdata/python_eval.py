# Evaluates Julep field values as Julep v1 does (agents_api/common/utils/expressions.py:
# "$ " expressions, {{ }} templates and other strings as f'''...''' bodies), with its allowed
# functions, stdlib members and constants, and values wrapped so that dict keys read as attributes
# (Julep wraps them in python-box's Box). Reads {"env": {...}, "cases": [src, ...]} as JSON on
# stdin; writes one JSON line per case: {"value": ...} or {"error": "..."}.
# Written for sinew's tests: it is not Julep's code, and uses only the standard library.
import base64
import functools
import json
import math
import re
import statistics
import string
import sys


class Box(dict):
    def __getattr__(self, k):
        try:
            return self[k]
        except KeyError:
            raise AttributeError(k)


def wrap(v):
    if isinstance(v, dict):
        return Box({k: wrap(x) for k, x in v.items()})
    if isinstance(v, list):
        return [wrap(x) for x in v]
    return v


def backwards_compatibility(expr):
    expr = expr.strip()
    if expr.startswith("$ "):
        return expr
    if "{{" in expr:
        return "$ f'''" + expr.replace("{{", "{").replace("}}", "}") + "'''"
    if ((expr.startswith("[") and expr.endswith("]")) or (expr.startswith("_[") and expr.endswith("]"))
            or expr.startswith("_.") or "outputs[" in expr or "inputs[" in expr or expr == "_"):
        return "$ " + expr
    return expr


def extract_json(s):
    if "```" in s:
        start = s.find("```json") + 7 if "```json" in s else s.find("```") + 3
        end = s.find("```", start)
        s = s[start:end].strip()
    return json.loads(s, strict=False)


class Mod:
    def __init__(self, **kw):
        self.__dict__.update(kw)


FUNCS = {
    "abs": abs, "all": all, "any": any, "bool": bool, "dict": dict, "enumerate": enumerate,
    "float": float, "int": int, "len": len, "list": list, "map": map, "max": max, "min": min,
    "round": round, "set": set, "str": str, "sum": sum, "tuple": tuple, "zip": zip,
    "reduce": functools.reduce, "range": range, "load_json": json.loads, "dump_json": json.dumps,
    "extract_json": extract_json,
    "search_regex": lambda p, s: re.search(p, s),
    "match_regex": lambda p, s: bool(re.fullmatch(p, s)),
}
STDLIB = {
    "re": Mod(search=re.search, match=re.match, fullmatch=re.fullmatch, findall=re.findall, sub=re.sub,
              split=re.split, escape=re.escape),
    "json": Mod(loads=json.loads, dumps=json.dumps),
    "math": Mod(**{k: getattr(math, k) for k in "sqrt exp ceil floor isinf isnan log log10 log2 pow sin cos tan asin acos atan atan2 pi e".split()}),
    "string": Mod(**{k: getattr(string, k) for k in "ascii_letters ascii_lowercase ascii_uppercase digits hexdigits octdigits punctuation whitespace printable".split()}),
    "statistics": Mod(**{k: getattr(statistics, k) for k in "mean median median_low median_high mode stdev".split()}),
    "base64": Mod(b64encode=lambda s: base64.b64encode(s.encode()).decode(), b64decode=lambda s: base64.b64decode(s).decode()),
}
CONSTS = {"NEWLINE": "\n", "true": True, "false": False, "null": None}


def jsonable(v):
    if isinstance(v, (tuple, list, range, map, zip, enumerate)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, set):
        return sorted(jsonable(x) for x in v)
    return v


class FeatureNotAvailable(Exception):
    pass


DISALLOW_METHODS = {"format", "format_map", "mro", "tb_frame", "gi_frame", "ag_frame", "cr_frame", "exec"}


def check(tree):
    """Refuses what Julep's simpleeval 1.0.3 (EvalWithCompoundTypes) does not evaluate."""
    import ast
    for n in ast.walk(tree):
        if isinstance(n, (ast.Lambda, ast.NamedExpr, ast.SetComp, ast.Await, ast.Yield)):
            raise FeatureNotAvailable(type(n).__name__)
        if isinstance(n, ast.Attribute) and (n.attr.startswith(("_", "func_")) or n.attr in DISALLOW_METHODS):
            raise FeatureNotAvailable(n.attr)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id not in FUNCS:
            raise NameError(f"function {n.func.id} not defined")


def evaluate(src, env):
    expr = backwards_compatibility(src).strip()
    if expr.startswith("$ "):
        expr = expr[1:].strip()
    else:
        expr = f"f'''{expr}'''"
    # One globals dict: comprehensions (their own scopes) see the names, as in simpleeval.
    names = {"__builtins__": {}, **STDLIB, **CONSTS, **FUNCS, **{k: wrap(v) for k, v in env.items()}}
    import ast
    check(ast.parse(expr, mode="eval"))
    return eval(compile(expr, "<julep>", "eval"), names)


def main():
    req = json.load(sys.stdin)
    for src in req["cases"]:
        try:
            out = {"value": jsonable(evaluate(src, req["env"]))}
        except Exception as e:  # a Python exception is an expected outcome of some cases
            out = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(out, ensure_ascii=False))


main()
