"""Frozen dataclasses that are cheap to define and to make.

The events of a stream are frozen dataclasses, made up to a million times a second and
defined at every `import panto`. `import dataclasses` alone brings in `inspect`, `re` and
`copy`, and `@dataclass` compiles half a dozen methods per class: together about a third of
what `import panto` used to cost. `dataclass(frozen=True)` here makes a class that behaves as
`@dataclasses.dataclass(frozen=True)` makes it (the same `__init__` signature, repr, equality,
hash, FrozenInstanceError on assignment, pickling), with `__slots__` for fast attribute access
and construction, and works with `dataclasses.fields`, `asdict`, `astuple`, `replace` and
`is_dataclass`: `__dataclass_fields__` and `__dataclass_params__` are built, by the real
`dataclasses` module, the first time something asks for them.

Type checkers see the real decorator: the modules that use this one import
`dataclasses.dataclass` and `dataclasses.field` under TYPE_CHECKING.

A field with `init=False` (the events' `kind`) is constant per class: it lives on the class,
not in a slot. Only what panto's classes use is supported: frozen, fields in the class's own
annotations (no inheritance of fields), plain defaults (no default_factory).
"""

from __future__ import annotations

from _thread import get_ident
from operator import attrgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Set, Tuple, Type, TypeVar

    T = TypeVar("T", bound=type)
    Obj = TypeVar("Obj")

__all__ = ["dataclass", "field", "maker", "construct"]

_MISSING = object()


class _FieldSpec:
    """What `field()` puts in a class body, read by `dataclass()`."""

    __slots__ = ("default", "init")

    def __init__(self, default: Any, init: bool) -> None:
        self.default = default
        self.init = init


def field(*, default: Any = _MISSING, init: bool = True) -> Any:
    """`dataclasses.field`, for the arguments panto uses (`default`, `init`)."""
    return _FieldSpec(default, init)


def dataclass(*, frozen: bool) -> Callable[[T], T]:
    """`@dataclass(frozen=True)`: see the module's doc."""
    if not frozen:
        raise TypeError("panto._frozen makes frozen dataclasses only")

    def wrap(cls: T) -> T:
        made: T = _make(cls)
        return made

    return wrap


def maker(cls: Any) -> Any:
    """A subclass of the frozen class `cls` whose objects are filled with plain attribute
    stores, the fastest Python has (it sets attributes as `object` does, and makes its objects
    empty), then become `cls` objects by `obj.__class__ = cls`: for making many at once (a
    batch of ContentDelta events), where `cls(...)` would spend most of its time in
    `object.__setattr__`. Being a subclass with no slots of its own keeps that class change
    cheap (CPython checks the layouts are the same by walking up to `cls`). The caller sets
    every field; the objects are never handed out before they become `cls` objects."""
    body = {"__slots__": (), "__module__": cls.__module__, "__init__": object.__init__, "__setattr__": object.__setattr__,
            "__delattr__": object.__delattr__}
    return type(f"{cls.__name__}Maker", (cls,), body)


_new = object.__new__
_set = object.__setattr__


def construct(cls: Type[Obj], *values: Any) -> Obj:
    """`cls(*values)`, every field given in order, without compiling `cls.__init__` (see
    _LazyInit): for the events a stream makes, so that a process that only reads streams never
    pays for compiling their classes' `__init__`."""
    obj: Obj = _new(cls)
    for name, value in zip(cls.__slots__, values):  # type: ignore[attr-defined]
        _set(obj, name, value)
    return obj


def _make(cls: Any) -> Any:
    names: List[str] = list(cls.__dict__.get("__annotations__", {}))
    init_names: List[str] = []
    defaults: Dict[str, Any] = {}
    constants: Dict[str, Any] = {}
    for name in names:
        value = cls.__dict__.get(name, _MISSING)
        init = True
        if isinstance(value, _FieldSpec):
            value, init = value.default, value.init
        if init:
            if value is _MISSING and defaults:
                raise TypeError(f"non-default argument {name!r} follows default argument")
            if value is not _MISSING:
                defaults[name] = value
            init_names.append(name)
        elif value is _MISSING:
            raise TypeError(f"{cls.__name__}.{name}: a field with init=False needs a default")
        else:
            constants[name] = value

    namespace = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__") and k not in init_names}
    namespace.update(constants)
    namespace["__slots__"] = tuple(init_names)
    namespace["__match_args__"] = tuple(init_names)
    new = type(cls)(cls.__name__, cls.__bases__, namespace)
    new.__qualname__ = cls.__qualname__

    new.__init__ = _LazyInit(init_names, defaults)
    key = attrgetter(*names) if len(names) > 1 else (lambda obj, _g=attrgetter(names[0]): (_g(obj),))
    new.__repr__ = _make_repr(names)
    new.__eq__ = _make_eq(key)
    new.__hash__ = lambda self: hash(key(self))
    field_set = frozenset(names)
    new.__setattr__ = _make_setattr(new, field_set)
    new.__delattr__ = _make_delattr(new, field_set)
    slots = attrgetter(*init_names) if len(init_names) > 1 else None
    new.__getstate__ = _make_getstate(init_names, slots)
    new.__setstate__ = _make_setstate(init_names)
    spec = _DataclassSpec(names, defaults, constants)
    new.__dataclass_fields__ = _Described("__dataclass_fields__", spec)
    new.__dataclass_params__ = _Described("__dataclass_params__", spec)
    for method in ("__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__getstate__", "__setstate__"):
        getattr(new, method).__qualname__ = f"{new.__qualname__}.{method}"
    return new


class _LazyInit:
    """A class's `__init__` until first used (called, or looked at): compiling it costs more
    than all the rest of the class, and the events a stream makes do not call it. Then the
    compiled function replaces this on the class."""

    def __init__(self, names: List[str], defaults: Dict[str, Any]) -> None:
        self.names = names
        self.defaults = defaults

    def __get__(self, obj: Any, owner: Any) -> Any:
        init = _make_init(owner, self.names, self.defaults)
        type.__setattr__(owner, "__init__", init)
        return init if obj is None else init.__get__(obj, owner)


def _make_init(cls: Any, names: List[str], defaults: Dict[str, Any]) -> Any:
    # Compiled, as dataclasses does, for the exact signature (and its error messages).
    params = ", ".join(f"{n}=__default_{n}" if n in defaults else n for n in names)
    body = "\n".join(f"    __set(self, {n!r}, {n})" for n in names) or "    pass"
    scope: Dict[str, Any] = {"__set": object.__setattr__}
    scope.update({f"__default_{n}": v for n, v in defaults.items()})
    exec(f"def __init__(self, {params}):\n{body}\n", scope)
    init = scope["__init__"]
    init.__module__ = cls.__module__
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    annotations = cls.__dict__.get("__annotations__", {})
    init.__annotations__ = {**{n: annotations[n] for n in names}, "return": None}
    return init


def _make_repr(names: List[str]) -> Any:
    running: Set[Tuple[int, int]] = set()

    def __repr__(self: Any) -> str:
        key = (id(self), get_ident())
        if key in running:  # a field that holds the object itself
            return "..."
        running.add(key)
        try:
            fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        finally:
            running.discard(key)
        return f"{self.__class__.__qualname__}({fields})"

    return __repr__


def _make_eq(key: Callable[[Any], Any]) -> Any:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _frozen_error(message: str) -> Exception:
    from dataclasses import FrozenInstanceError  # only on this error: keeps the import cheap

    return FrozenInstanceError(message)


def _make_setattr(cls: Any, fields: frozenset) -> Any:  # type: ignore[type-arg]
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in fields:
            raise _frozen_error(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _make_delattr(cls: Any, fields: frozenset) -> Any:  # type: ignore[type-arg]
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in fields:
            raise _frozen_error(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __delattr__


def _make_getstate(names: List[str], slots: Any) -> Any:
    def __getstate__(self: Any) -> List[Any]:
        return list(slots(self)) if slots is not None else [getattr(self, n) for n in names]

    return __getstate__


def _make_setstate(names: List[str]) -> Any:
    set_field = object.__setattr__

    def __setstate__(self: Any, state: List[Any]) -> None:
        for name, value in zip(names, state):
            set_field(self, name, value)

    return __setstate__


class _DataclassSpec:
    """What the real `dataclasses` module needs to describe one of these classes."""

    def __init__(self, names: List[str], defaults: Dict[str, Any], constants: Dict[str, Any]) -> None:
        self.names = names
        self.defaults = defaults
        self.constants = constants

    def describe(self, cls: Any) -> None:
        """Sets the real `__dataclass_fields__` and `__dataclass_params__` on `cls`, taken from a
        twin class with the same fields that `dataclasses.dataclass` makes."""
        import dataclasses

        annotations = cls.__dict__.get("__annotations__", {})
        body: Dict[str, Any] = {"__annotations__": {n: annotations[n] for n in self.names}}
        body.update(self.defaults)
        body.update({n: dataclasses.field(default=v, init=False) for n, v in self.constants.items()})
        twin: Any = dataclasses.dataclass(frozen=True)(type(cls.__name__, (), body))
        cls.__dataclass_fields__ = twin.__dataclass_fields__
        cls.__dataclass_params__ = twin.__dataclass_params__


class _Described:
    """A class attribute (`__dataclass_fields__`, `__dataclass_params__`) made on first read."""

    def __init__(self, name: str, spec: _DataclassSpec) -> None:
        self.name = name
        self.spec = spec

    def __get__(self, obj: Any, owner: Any) -> Any:
        self.spec.describe(owner)
        return owner.__dict__[self.name]
