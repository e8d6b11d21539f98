"""Read the options `trtllm-serve serve` takes in each TensorRT-LLM release, for
kvlint/engines/trtllm/data/flag_sets.json.

    python benchmarks/click_flags.py read ROOT > serve_options.json
    python benchmarks/click_flags.py write serve_options.json kvlint/engines/trtllm/data/flag_sets.json

ROOT holds, for each release, one of:

- `trtllm-<release>/tensorrt_llm/commands/serve.py` (and any module of that folder its decorators come
  from) as the release's tag has it: `git show v1.0.0:tensorrt_llm/commands/serve.py` in a clone of
  NVIDIA/TensorRT-LLM. Read with `ast`, never imported: every `@click.option(...)` (or click_option_group's
  `@optgroup.option`) of the function the `@click.command("serve")` decorator names, and the options of a
  decorator that is a function of this module or of a module of the folder (`from tensorrt_llm.commands.x
  import opts`): each string argument that starts with `-` is a name, `"--x/--no-x"` declares both, and a
  `type=click.Choice([...])` of literal strings gives the option's values (`ChoiceWithAlias` or a computed
  list: its values are left unjudged);
- `trtllm-<release>.html`: the release's trtllm-serve page of the repository's gh-pages branch
  (`git show origin/gh-pages:1.0.0/commands/trtllm-serve/trtllm-serve.html`, `<release>/commands/
  trtllm-serve.html` before 1.0), whose Syntax section sphinx-click renders from the same click command:
  each `<dt id="cmdoption-trtllm-serve-serve-...">` of the `serve` section lists every name of one option
  (`--config, --extra_llm_api_options`), and its `Options:` field the click.Choice values.

click adds `--help` to every command. `read` prints {release: {"read": what was read, "options": [...],
"choices": {option: [values] | null}}}; `write` turns that into the table's `releases`, `read`, `flags` (each
option -> runs of consecutive releases that have it) and `choices` (runs of equal values), keeping the other
keys of the file (engine, table, about, parser words).
"""

from __future__ import annotations

import ast
import html
import json
import os
import re
import sys

import engine_flags

# A listing shows a Choice's values, not the aliases a ChoiceWithAlias also takes (tensorrt_llm/commands/
# serve.py on main: `ChoiceWithAlias(["pytorch", "tensorrt", "_autodeploy"], {"trt": "tensorrt"})`): from
# the first release whose listing names its target, --backend's values are not judged.
ALIASED_FROM = {"--backend": "tensorrt"}


def _version(release: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", release)[:3])


# --- serve.py, read with ast


def _is_option(call: ast.expr) -> bool:
    """`click.option(...)` or `optgroup.option(...)`."""
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "option"
        and isinstance(call.func.value, ast.Name)
    )


def _names(call: ast.Call) -> list[str]:
    out = []
    for arg in call.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("-"):
            out += [n.strip() for n in arg.value.split("/") if n.strip().startswith("-")]
    return out


def _choice(call: ast.Call) -> tuple[bool, list[str] | None]:
    """Whether the option's `type=` is a click Choice, and its values where they are literal strings (None
    for a computed list or a ChoiceWithAlias, whose aliases the values do not show)."""
    for kw in call.keywords:
        value = kw.value
        if kw.arg != "type" or not isinstance(value, ast.Call) or "Choice" not in ast.unparse(value.func):
            continue
        items = value.args[0] if value.args else None
        literal = isinstance(items, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in items.elts
        )
        plain = ast.unparse(value.func) in ("click.Choice", "Choice")
        return True, [e.value for e in items.elts] if literal and plain else None
    return False, None


def _helpers(tree: ast.Module, folder: str) -> dict[str, list[ast.Call]]:
    """name -> the click.option calls inside a function of this module or one it imports from the folder."""
    out: dict[str, list[ast.Call]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = [c for c in ast.walk(node) if _is_option(c)]
        if isinstance(node, ast.ImportFrom) and node.module and folder:
            path = os.path.join(folder, *node.module.split(".")) + ".py"
            if os.path.isfile(path):
                with open(path, encoding="utf-8") as fh:
                    other = _helpers(ast.parse(fh.read()), "")
                out.update({a.asname or a.name: other.get(a.name, []) for a in node.names})
    return out


def read_source(text: str, folder: str = "") -> tuple[list[str], dict[str, list[str] | None]]:
    """The options and choices of the `serve` click command in serve.py's text."""
    tree = ast.parse(text)
    helpers = _helpers(tree, folder)
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or not any(_is_serve(d) for d in node.decorator_list):
            continue
        options, choices = ["--help"], {}
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            calls = [dec] if _is_option(dec) else helpers.get(getattr(target, "id", ""), [])
            for call in calls:
                names = _names(call)
                options += names
                is_choice, values = _choice(call)
                if names and is_choice:
                    choices[names[0]] = values
        return options, choices
    raise ValueError("no `serve` click command")


def _is_serve(dec: ast.expr) -> bool:
    if not isinstance(dec, ast.Call) or not isinstance(dec.func, ast.Attribute) or dec.func.attr != "command":
        return False
    return any(isinstance(a, ast.Constant) and a.value == "serve" for a in dec.args)


# --- a sphinx-click page

_BLOCK = re.compile(
    r'<dl class="std option">\s*<dt[^>]*id="cmdoption-trtllm-serve-(?:serve-)?([^"]+)"(.*?)</dl>\s*(?=<dl|<p|</section)',
    re.S,
)
_NAME = re.compile(r'<span class="sig-name descname"><span class="pre">(-[^<]+)</span>')
_VALUES = re.compile(r'Options<span class="colon">:</span></dt>\s*<dd[^>]*><p>([^<]*)</p>')


def read_page(text: str) -> tuple[list[str], dict[str, list[str] | None]]:
    """The options and choices of `serve` in a trtllm-serve page (its own section where the page lists
    subcommands; the whole Syntax section where trtllm-serve was one command)."""
    start = text.find('<section id="trtllm-serve-serve">')
    body = text[start:] if start >= 0 else text[text.find('id="syntax"') if 'id="syntax"' in text else 0 :]
    end = body.find("</section>")
    body = body[: end if end >= 0 else len(body)]
    options, choices = ["--help"], {}
    for m in _BLOCK.finditer(body):
        if m.group(1).startswith("arg-"):
            continue  # the MODEL argument
        names = [html.unescape(n) for n in _NAME.findall(m.group(2))]
        options += names
        values = _VALUES.search(m.group(2))
        if names and values:
            choices[names[0]] = [v.strip() for v in html.unescape(values.group(1)).split("|")]
    return options, choices


def read(root: str) -> dict[str, dict]:
    out = {}
    for entry in sorted(os.listdir(root)):
        m = re.match(r"trtllm-(\d[\w.]*?)(\.html)?$", entry)
        if not m:
            continue
        release, page = m.group(1), bool(m.group(2))
        path = os.path.join(root, entry)
        if page:
            with open(path, encoding="utf-8") as fh:
                options, choices = read_page(fh.read())
            what = f"NVIDIA/TensorRT-LLM gh-pages {release} trtllm-serve page (sphinx-click's `serve`)"
        else:
            with open(os.path.join(path, "tensorrt_llm", "commands", "serve.py"), encoding="utf-8") as fh:
                options, choices = read_source(fh.read(), path)
            what = f"NVIDIA/TensorRT-LLM@v{release}:tensorrt_llm/commands/serve.py"
        out[release] = {"read": what, "options": options, "choices": choices}
    return out


# --- the table


def _entry(option: str, values: list[str] | None) -> dict:
    """A release's choices for `option` as the table holds them: its values, or why they are not judged."""
    aliased = option in ALIASED_FROM and ALIASED_FROM[option] in (values or ())
    if aliased or not values:
        return {"unjudged": "ChoiceWithAlias (aliases not listed)" if aliased else "a computed Choice"}
    return {"type": "str", "values": values}


def write(per_release: dict[str, dict], table_path: str) -> None:
    """The table's releases, read, flags and choices, as runs of consecutive releases (engine_flags.py's
    flag_runs and choice_runs), the file's other keys kept."""
    with open(table_path, encoding="utf-8") as fh:
        table = json.load(fh)
    order = sorted(per_release, key=_version)
    sets = {r: set(per_release[r]["options"]) for r in order}
    entries = {r: {o: _entry(o, v) for o, v in per_release[r]["choices"].items()} for r in order}
    table.update(
        releases=order,
        read={r: per_release[r]["read"] for r in order},
        flags=engine_flags.flag_runs(order, sets),
        choices=engine_flags.choice_runs(order, entries),
    )
    with open(table_path, "w", encoding="utf-8") as fh:
        json.dump(table, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    if sys.argv[1] == "read":
        json.dump(read(sys.argv[2]), sys.stdout, indent=1)
    else:
        with open(sys.argv[2], encoding="utf-8") as fh:
            write(json.load(fh), sys.argv[3])
