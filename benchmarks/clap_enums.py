"""The values clap accepts for each `value_enum` option of TGI's launcher, read from launcher/src/main.rs.

Called by benchmarks/engine_flags.py for every TGI tag it reads. An option whose field type is an enum
that derives clap's `ValueEnum` (v0.7.0 on, e.g. `quantize: Option<Quantization>`) takes only the
enum's value names: each variant's name in kebab-case (clap derive's default, heck's `to_kebab_case`:
`BitsandbytesNf4` -> `bitsandbytes-nf4`, `Fp8` -> `fp8`), or the `#[clap(name = "...")]` /
`#[value(name = "...")]` it states, plus its `alias`es; a `skip`ped variant is not a value. clap
compares them as written (no `ignore_case` in any tag read) and stops the launcher with "error:
invalid value 'x' for '--quantize <QUANTIZE>'", for a value on the command line or from the option's
environment variable (`env`: the field's name in upper case, `QUANTIZE`) alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_ENUM = re.compile(r"#\[derive\(([^)]*)\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub\s+)?enum\s+(\w+)\s*\{", re.DOTALL)
_VARIANT = re.compile(r"^\s*([A-Z]\w*)\s*(?:=\s*[^,]+)?,?\s*$")
_FIELD = re.compile(r"^\s*(?:pub\s+)?([a-z_][a-z0-9_]*)\s*:\s*([^,]+),?\s*$")


def kebab(name: str) -> str:
    """heck's to_kebab_case (the word split clap derive uses): a boundary after a character that is not
    upper-case (or a digit after lower-case) when an upper-case one follows, and before an upper-case
    character that ends an upper-case run and a lower-case one follows; digits keep the run's case
    (`BitsandbytesNF4` -> `bitsandbytes-nf4`, `BFloat16` -> `b-float16`, `Fp8e4m3fn` -> `fp8e4m3fn`)."""
    words: list[str] = []
    word = ""
    mode = ""  # "lower" | "upper" | "" (a boundary)
    for i, c in enumerate(name):
        nxt = name[i + 1] if i + 1 < len(name) else ""
        next_mode = "lower" if c.islower() else "upper" if c.isupper() else mode
        if nxt and next_mode == "lower" and nxt.isupper():
            words.append(word + c)
            word, mode = "", ""
        elif nxt and mode == "upper" and c.isupper() and nxt.islower():
            words.append(word)
            word, mode = c, "upper"
        else:
            word += c
            mode = next_mode
    words.append(word)
    return "-".join(w.lower() for w in words if w)


def _items(lines: list[str], item: re.Pattern) -> Iterator[tuple[re.Match, list[str]]]:
    """The lines of a Rust body that `item` matches (an enum variant, a struct field), each with the
    `#[...]` attribute lines written above it; comments skipped."""
    attrs: list[str] = []
    for line in lines:
        s = line.strip()
        if not s or s.startswith("//"):
            continue
        if s.startswith("#["):
            attrs.append(s)
            continue
        found = item.match(line)
        if found is not None:
            yield found, attrs
            attrs = []


def value_enums(text: str) -> dict[str, list[str]]:
    """Every enum deriving ValueEnum (or clap 3's ArgEnum): name -> the values clap takes."""
    out: dict[str, list[str]] = {}
    for m in _ENUM.finditer(text):
        if not re.search(r"\b(ValueEnum|ArgEnum)\b", m.group(1)):
            continue
        body = text[m.end() : text.find("\n}", m.end())]
        values: list[str] = []
        for variant, attrs in _items(body.splitlines(), _VARIANT):
            told = " ".join(a for a in attrs if a.startswith(("#[clap(", "#[value(", "#[arg(")))
            if re.search(r"\bskip\b", told):
                continue
            name = re.search(r'\bname\s*=\s*"([^"]+)"', told)
            values.append(name.group(1) if name else kebab(variant.group(1)))
            values += re.findall(r'\balias\s*=\s*"([^"]+)"', told)
        out[m.group(2)] = values
    return out


def enum_options(text: str) -> dict[str, dict]:
    """The launcher's options whose type is a ValueEnum: "--field-name" -> {"type": "clap", "values",
    "env"} (env: the variable clap also reads, or absent)."""
    enums = value_enums(text)
    start = text.find("struct Args {")
    if start < 0 or not enums:
        return {}
    body = text[start : text.find("\n}", start)]
    out: dict[str, dict] = {}
    for field, attrs in _items(body.splitlines()[1:], _FIELD):
        told = " ".join(attrs)
        name, kind = field.group(1), field.group(2).strip()
        inner = re.fullmatch(r"Option<\s*(\w+)\s*>|(\w+)", kind)
        enum = (inner.group(1) or inner.group(2)) if inner else None
        if enum not in enums or not re.search(r"\blong\b", told):
            continue
        explicit = re.search(r'\blong\s*=\s*"([^"]+)"', told)
        entry: dict = {"type": "clap", "values": sorted(enums[enum])}
        env = re.search(r'\benv\s*=\s*"([^"]+)"', told)
        if env or re.search(r"\benv\b", told):
            entry["env"] = env.group(1) if env else name.upper()
        out["--" + (explicit.group(1) if explicit else name.replace("_", "-"))] = entry
    return out
