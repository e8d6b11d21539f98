"""`@record`: kvlint's value classes (slots, keyword or positional construction, repr, eq).

Why not dataclasses: on Python 3.11 `@dataclass` compiles Python source for every method it
generates (`__init__`, `__repr__`, `__eq__`, and for frozen classes `__setattr__`,
`__delattr__`, `__hash__`), about 0.9 ms a class. kvlint has some forty value classes, and
`benchmarks/speed.py` measured 36 ms of a 120 ms one-file run in that compiler — more than
kvlint's own arithmetic, parsing and reporting together, on every pre-commit run. `record` builds
the same kind of class from the annotations with shared, already-compiled methods, so defining
a class costs microseconds. What it supports is only what kvlint uses: annotated fields with
defaults or `field(default_factory=..., compare=...)`, `frozen=True` (no assignment after construction,
hashable), `replace()` and `fields()`. As with dataclasses, a mutable default (a list, a dict, an
unhashable object) is refused at class definition, and a record subclass keeps its parent's fields.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

try:
    from typing import dataclass_transform  # tells type checkers a record is a dataclass-like class
except ImportError:  # Python 3.10: the decorator only informs type checkers

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:  # type: ignore[misc]
        return lambda decorated: decorated


C = TypeVar("C", bound=type)
R = TypeVar("R")

_MISSING: Any = object()
_set = object.__setattr__


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


class _Field:
    __slots__ = ("default", "compare")

    def __init__(self, default: Any, compare: bool) -> None:
        self.default = default
        self.compare = compare


def field(
    *, default: Any = _MISSING, default_factory: Callable[[], Any] | None = None, compare: bool = True
) -> Any:
    """A field with a default made fresh for each instance (`default_factory`: a list, a dict),
    or one left out of ==, hash and repr (`compare=False`: provenance notes)."""
    return _Field(_Factory(default_factory) if default_factory is not None else default, compare)


class FrozenRecordError(AttributeError):
    """Assignment to a field of a frozen record."""


def _is_classvar(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


@dataclass_transform(field_specifiers=(field,))
def record(cls: C | None = None, /, *, frozen: bool = False) -> Any:
    """Make `cls` a value class over its annotated fields (in order)."""

    def wrap(c: C) -> C:
        return _build(c, frozen)

    return wrap if cls is None else wrap(cls)


def _fields_of(cls: type) -> tuple[list[str], list[str], dict[str, Any], tuple[str, ...]]:
    """(field names, compared names, defaults, inherited names): the nearest record base's fields
    first, in order, then the class's own annotated fields (a redeclared one keeps its place)."""
    own = cls.__dict__
    parent = next((b for b in cls.__mro__[1:] if "__record_fields__" in b.__dict__), None)
    inherited: tuple[str, ...] = parent.__dict__["__record_fields__"] if parent is not None else ()
    names: list[str] = list(inherited)
    compared: list[str] = list(parent.__dict__["__record_compared__"]) if parent is not None else []
    defaults: dict[str, Any] = dict(parent.__dict__["__record_defaults__"]) if parent is not None else {}
    for name, annotation in own.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        if name not in names:
            names.append(name)
        spec = own.get(name, _MISSING)
        keep = spec.compare if type(spec) is _Field else True
        if type(spec) is _Field:
            spec = spec.default
        if keep and name not in compared:
            compared.append(name)
        elif not keep and name in compared:
            compared.remove(name)
        _refuse_mutable(cls, name, spec)
        if spec is not _MISSING:
            defaults[name] = spec
        else:
            defaults.pop(name, None)
    return names, compared, defaults, inherited


def _refuse_mutable(cls: type, name: str, spec: Any) -> None:
    if spec is not _MISSING and type(spec) is not _Factory and type(spec).__hash__ is None:
        raise ValueError(
            f"{cls.__name__}.{name}: mutable default {type(spec).__name__} would be shared by every "
            "instance; use field(default_factory=...)"
        )


def _build(cls: C, frozen: bool) -> C:
    own = cls.__dict__
    names, compared, defaults, inherited = _fields_of(cls)
    fields_ = tuple(names)
    namespace = {k: v for k, v in own.items() if k not in names and k not in ("__dict__", "__weakref__")}
    namespace["__slots__"] = tuple(n for n in fields_ if n not in inherited)
    namespace["__record_fields__"] = fields_
    namespace["__record_compared__"] = tuple(n for n in fields_ if n in compared)
    namespace["__record_defaults__"] = defaults
    owner: list[type] = []  # the class, once made: where a hot class's compiled __init__ goes
    namespace["__init__"] = _make_init(cls.__name__, fields_, defaults, owner)
    namespace.setdefault("__repr__", _repr)
    namespace.setdefault("__eq__", _eq)
    namespace["__reduce__"] = _reduce
    if frozen:
        namespace["__setattr__"] = _frozen_setattr
        namespace["__delattr__"] = _frozen_delattr
        namespace.setdefault("__hash__", _hash)
    elif "__hash__" not in own or own["__hash__"] is None:
        namespace["__hash__"] = None  # mutable and compared by value: unhashable, as with dataclasses
    new = type(cls)(cls.__name__, cls.__bases__, namespace)
    new.__qualname__ = cls.__qualname__
    owner.append(new)
    return new


# A class built this many times gets an `__init__` compiled for its fields (what dataclasses
# does for every class at definition): the shared one below binds each field in a loop, about
# 1.5 us more a call, which is most of the cost of a 1 MB args list (six records a flag, 72,000
# flags). Compiling costs about 0.1 ms, so only the classes a run builds often pay it.
HOT = 256
_INTERNAL = frozenset(("self", "_set", "_missing", "_refuse", "_defaults", "_extra", "_kw"))


def _make_init(class_name: str, names: tuple[str, ...], defaults: dict[str, Any], owner: list[type]):
    count = len(names)
    built = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        nonlocal built
        built += 1
        if built == HOT and owner and names and _INTERNAL.isdisjoint(names):
            owner[0].__init__ = _compiled_init(class_name, names, defaults)  # type: ignore[misc]
        if len(args) > count:
            raise TypeError(f"{class_name}() takes {count} field values but {len(args)} were given")
        for name, value in zip(names, args, strict=False):
            _set(self, name, value)
        for name in names[len(args) :]:
            value = kwargs.pop(name, _MISSING)
            if value is _MISSING:
                value = defaults.get(name, _MISSING)
                if value is _MISSING:
                    raise TypeError(f"{class_name}() missing field {name!r}")
                if type(value) is _Factory:
                    value = value.make()
            _set(self, name, value)
        if kwargs:
            clash = [k for k in kwargs if k in names]
            if clash:
                raise TypeError(f"{class_name}() got field {clash[0]!r} twice")
            raise TypeError(f"{class_name}() has no field {next(iter(kwargs))!r}")

    return __init__


def _compiled_init(class_name: str, names: tuple[str, ...], defaults: dict[str, Any]):
    """The same `__init__` as `_make_init`'s, written out for these fields (the names are Python
    identifiers from the class's annotations; defaults are passed as objects, never as text).
    A field passed both by position and by keyword gets Python's own message, which names it."""
    lines = [f"def __init__(self, {', '.join(f'{n}=_missing' for n in names)}, *_extra, **_kw):"]
    lines.append("    if _extra or _kw: _refuse(len(_extra), _kw)")
    for n in names:
        if n not in defaults:
            lines.append(
                f"    if {n} is _missing: raise TypeError({f'{class_name}() missing field {n!r}'!r})"
            )
        elif type(defaults[n]) is _Factory:
            lines.append(f"    if {n} is _missing: {n} = _defaults[{n!r}].make()")
        else:
            lines.append(f"    if {n} is _missing: {n} = _defaults[{n!r}]")
        lines.append(f"    _set(self, {n!r}, {n})")

    def _refuse(extra: int, kwargs: dict[str, Any]) -> None:
        if extra:
            raise TypeError(
                f"{class_name}() takes {len(names)} field values but {len(names) + extra} were given"
            )
        raise TypeError(f"{class_name}() has no field {next(iter(kwargs))!r}")

    scope = {"_set": _set, "_missing": _MISSING, "_refuse": _refuse, "_defaults": dict(defaults)}
    exec(compile("\n".join(lines), f"<record {class_name}>", "exec"), scope)  # noqa: S102
    return scope["__init__"]


def _values(obj: Any) -> tuple[Any, ...]:
    return tuple(getattr(obj, n) for n in obj.__record_fields__)


def _compared(obj: Any) -> tuple[Any, ...]:
    return tuple(getattr(obj, n) for n in obj.__record_compared__)


def _repr(self: Any) -> str:
    inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__record_compared__)
    return f"{type(self).__qualname__}({inner})"


def _eq(self: Any, other: Any) -> bool:
    if type(other) is not type(self):
        return NotImplemented
    return _compared(self) == _compared(other)


def _hash(self: Any) -> int:
    return hash(_compared(self))


def _reduce(self: Any):
    return (type(self), _values(self))  # positional order is field order: pickles and copies


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenRecordError(f"cannot assign to field {name!r} of frozen {type(self).__name__}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenRecordError(f"cannot delete field {name!r} of frozen {type(self).__name__}")


def fields(obj_or_cls: Any) -> tuple[str, ...]:
    """Field names in order."""
    return obj_or_cls.__record_fields__


def replace(obj: R, /, **changes: Any) -> R:
    """A copy of `obj` with some fields changed."""
    names: tuple[str, ...] = getattr(obj, "__record_fields__")  # noqa: B009 - set by @record, unknown to checkers
    unknown = [k for k in changes if k not in names]
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field {unknown[0]!r}")
    values = {n: getattr(obj, n) for n in names}
    values.update(changes)
    return type(obj)(**values)
