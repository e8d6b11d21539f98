"""An argparse-like reader over located tokens: exact names, `--flag=value`, `--no-flag`,
unambiguous prefixes (argparse `allow_abbrev`), `_` for `-` where the engine accepts it."""

from __future__ import annotations

import json
from bisect import bisect_left
from functools import lru_cache

from kvlint.extract.pod.argv import Token, flag_name, split_flag
from kvlint.fileio import json_value as parse_json
from kvlint.record import field, record


@record(frozen=True)
class Option:
    name: str  # canonical long form, e.g. --max-model-len
    kind: str  # "value" | "bool" | "negatable" (--x / --no-x, BooleanOptionalAction)


@record
class Parsed:
    """What one engine command line says: options in order, positionals, and problems."""

    values: dict[str, tuple[Token, Token | None, bool]] = field(
        default_factory=dict
    )  # canonical -> (flag, value, negated)
    positionals: list[Token] = field(default_factory=list)
    problems: list[tuple[Token, str]] = field(default_factory=list)  # (token, message) -> KV005
    unknown: list[Token] = field(default_factory=list)
    ambiguous: list[tuple[Token, list[str]]] = field(default_factory=list)  # a prefix and what it matches

    def get(self, name: str) -> tuple[Token, Token | None, bool] | None:
        return self.values.get(name)


class OptionTable:
    def __init__(
        self,
        options: list[Option],
        aliases: dict[str, str],
        engine: str,
        abbrev: bool,
        underscores: bool,
        joined_value: tuple[str, ...] = (),
    ) -> None:
        self.engine = engine
        self.joined_value = joined_value  # short flags written with their value attached (vLLM -O3)
        self.abbrev = abbrev
        self.underscores = underscores
        self.options = {o.name: o for o in options}
        self.names: dict[str, tuple[str, bool]] = {}  # spelling -> (canonical, negated)
        self._sorted: list[str] | None = None
        for o in options:
            self.names[o.name] = (o.name, False)
            if o.kind == "negatable":
                self.names["--no-" + o.name[2:]] = (o.name, True)
        for alias, target in aliases.items():
            if target in self.options:
                self.names[alias] = (target, False)

    def lookup(self, spelled: str) -> tuple[str, bool] | list[str] | None:
        """(canonical, negated); a list of candidates when the prefix is ambiguous; None if unknown."""
        key = spelled
        if self.underscores and "_" in key and key.startswith("--"):
            key = "--" + key[2:].replace("_", "-")
        found = self.names.get(key)
        if found is not None:
            return found
        if not self.abbrev or not key.startswith("--"):
            return None
        if self._sorted is None:
            self._sorted = sorted(self.names)
        # names sharing the prefix are contiguous in sorted order: O(log n) per flag, not a scan of
        # every name (83,000 unknown flags in one args list took seconds), walked by index (a
        # slice from the first hit would copy the rest of the table for every flag)
        names = self._sorted
        at = bisect_left(names, key)
        hits = []
        while at < len(names) and names[at].startswith(key):
            hits.append(names[at])
            at += 1
        if not hits:
            return None
        targets = {self.names[h] for h in hits}
        if len(targets) == 1:
            return next(iter(targets))
        return hits or None

    def parse(self, tokens: list[Token]) -> Parsed:
        out = Parsed()
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            i += 1
            if tok.text == "--":  # end of options
                out.positionals.extend(tokens[i:])
                break
            if not tok.text.startswith("-") or tok.text == "-" or _is_number(tok.text):
                out.positionals.append(tok)
                continue
            i = self._option(tokens, i, tok, out)
        return out

    def _option(self, tokens: list[Token], i: int, tok: Token, out: Parsed) -> int:
        """Reads the option `tok` (tokens[i] is the word after it) into `out`; the index past what it used."""
        if self._plain_unknown(tok):  # what the rest concludes for it, without its `=value` token
            return _unknown(tokens, i, tok, out, "=" in tok.text)
        name, inline = self._spelled(tok)
        if self._json_key(name):  # kept under the option's canonical name: `--compilation-config.mode`
            head, key = name.split(".", 1)
            value = inline if inline is not None else tokens[i] if i < len(tokens) else None
            if value is not None:
                out.values[f"{self.lookup(head)[0]}.{key}"] = (tok, value, False)  # type: ignore[index]
            return i + 1 if inline is None and i < len(tokens) else i
        found = self.lookup(name)
        if isinstance(found, list):
            out.ambiguous.append((tok, found))
            out.problems.append(
                (
                    tok,
                    f"ambiguous option {name}: could be {', '.join(found[:4])}"
                    + (" …" if len(found) > 4 else ""),
                )
            )
            return i
        if found is None:
            return _unknown(tokens, i, tok, out, inline is not None)
        return self._store(tokens, i, tok, name, inline, found, out)

    def _plain_unknown(self, tok: Token) -> bool:
        """An option the table does not have, written without a JSON key (`.`) or a joined short
        value (`-O3`): most of an args list of made-up flags, read without building each one's
        `=value` token and its location."""
        name = flag_name(tok)
        if "." in name or name.startswith(self.joined_value):
            return False
        return self.lookup(name) is None

    def _spelled(self, tok: Token) -> tuple[str, Token | None]:
        """The option's name and its `=value`, if any."""
        name, inline = split_flag(tok)
        for short in self.joined_value:  # vLLM rewrites -O3 to --optimization-level 3
            if len(name) > len(short) and name.startswith(short) and name[len(short) :].isdigit():
                return short, type(tok)(name[len(short) :], tok.where)
        return name, inline

    def _json_key(self, name: str) -> bool:
        """--compilation-config.mode 3: a key of a JSON option."""
        return "." in name and name.startswith("--") and isinstance(self.lookup(name.split(".", 1)[0]), tuple)

    def _store(
        self,
        tokens: list[Token],
        i: int,
        tok: Token,
        name: str,
        inline: Token | None,
        found: tuple[str, bool],
        out: Parsed,
    ) -> int:
        """Records a known option and its value (the next word if it takes one); the index past it."""
        canonical, negated = found
        kind = self.options[canonical].kind
        value: Token | None = inline
        if (
            kind != "value"
            and value is None
            and i < len(tokens)
            and tokens[i].text.lower() in ("true", "false")
        ):
            value = tokens[i]  # StoreBoolean-style `--flag false` (older vLLM)
            i += 1
        if kind == "value" and value is None:
            if i >= len(tokens):
                out.problems.append((tok, f"{name} expects a value"))
                return i
            value = tokens[i]
            i += 1
        out.values[canonical] = (tok, value, negated)
        return i


def _unknown(tokens: list[Token], i: int, tok: Token, out: Parsed, inline: bool) -> int:
    """An option the engine does not have; the index past it and its value."""
    out.unknown.append(tok)
    if not inline and i < len(tokens) and not tokens[i].text.startswith("-"):
        return i + 1  # an unknown option probably takes the next word as its value
    return i


def _is_number(text: str) -> bool:
    if text.startswith("--"):  # float() takes one sign at most: `--x` is never a number
        return False
    try:
        float(text)
    except ValueError:
        return False
    return True


def _old_kind(name: str, note: str) -> str:
    head = note.split(";")[0].split()[0] if note.strip() else ""
    if head in ("bool", "value", "negatable"):
        return head
    return "bool" if name.startswith(("--enable-", "--disable-")) else "value"


@lru_cache(maxsize=8)
def load_table(path: str, engine: str) -> OptionTable:
    """An engine's option list, shipped as data in its package (kvlint/engines/<engine>/data/options.json)."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    options = [Option(name, kind) for name, kind in data["options"].items() if name.startswith("--")]
    options += [Option(name, kind) for name, kind in data["options"].items() if not name.startswith("--")]
    # `old`: options of earlier releases, still accepted (their note starts with the kind, or, for a
    # field only documented, says enable_*/disable_* were store_true and the rest values)
    old = (data.get("old") or {}).items()
    options += [Option(name, _old_kind(name, note)) for name, note in old if name not in data["options"]]
    return OptionTable(
        options,
        data.get("aliases", {}),
        engine,
        bool(data.get("abbrev")),
        bool(data.get("underscores")),
        tuple(data.get("joined_value", ())),
    )


def truthy(value: Token | None, negated: bool) -> bool | None:
    """A boolean option's value: `--x`, `--no-x`, `--x=false`, `--x true`."""
    if negated:
        return False
    if value is None:
        return True
    text = value.text.strip().lower()
    if text in ("true", "1", "yes", "on", ""):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    return None


def json_value(text: str):
    """A JSON option's value; quotes a shell would have removed are taken off first (a script the argv reader
    splits by words keeps `'{"a": 1}'` whole, quotes and all). Raises ValueError when it is not JSON."""

    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return parse_json(text)
