"""How the generated models (models.py) convert to and from JSON values.

Each field of a model has a codec: ``decode`` turns the JSON value the API
sent into the field's Python value, ``encode`` turns it back. Unknown
fields are ignored when reading, so a newer server's answers still parse;
a missing required field or a value of the wrong JSON type raises
ValueError naming the model and the field.
"""

from __future__ import annotations

import base64
import datetime
import sys
from typing import Any, Callable, ClassVar, Dict, Mapping, Optional, Sequence, Tuple, Type, TypeVar

M = TypeVar("M", bound="Model")


class Codec:
    """Converts one JSON value to a Python value and back."""

    def accepts(self, v: Any) -> bool:
        """Whether v has the JSON shape this codec reads (for unions)."""
        return True

    def decode(self, v: Any) -> Any:
        return v

    def encode(self, v: Any) -> Any:
        return v


class _Typed(Codec):
    def __init__(self, what: str, check: Callable[[Any], bool], convert: Callable[[Any], Any] = lambda v: v):
        self.what = what
        self.check = check
        self.convert = convert

    def accepts(self, v: Any) -> bool:
        return self.check(v)

    def decode(self, v: Any) -> Any:
        if not self.check(v):
            raise ValueError(f"want {self.what}, got {type(v).__name__}")
        return self.convert(v)


ANY = Codec()
STR = _Typed("a string", lambda v: isinstance(v, str))
BOOL = _Typed("a boolean", lambda v: isinstance(v, bool))
INT = _Typed("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool))
FLOAT = _Typed("a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), float)


class _Bytes(Codec):
    """format: byte, base64 on the wire."""

    def accepts(self, v: Any) -> bool:
        return isinstance(v, str)

    def decode(self, v: Any) -> bytes:
        if not isinstance(v, str):
            raise ValueError(f"want base64 text, got {type(v).__name__}")
        return base64.b64decode(v)

    def encode(self, v: Any) -> str:
        return base64.b64encode(bytes(v)).decode("ascii")


class _Time(Codec):
    """format: date-time, RFC 3339 on the wire (nanoseconds are cut to microseconds)."""

    def accepts(self, v: Any) -> bool:
        return isinstance(v, str)

    def decode(self, v: Any) -> datetime.datetime:
        if not isinstance(v, str):
            raise ValueError(f"want an RFC 3339 time, got {type(v).__name__}")
        return datetime.datetime.fromisoformat(v)

    def encode(self, v: Any) -> str:
        s = v.isoformat()
        return s[:-6] + "Z" if s.endswith("+00:00") else s


BYTES = _Bytes()
TIME = _Time()


class ListOf(Codec):
    def __init__(self, item: Codec):
        self.item = item

    def accepts(self, v: Any) -> bool:
        return isinstance(v, list)

    def decode(self, v: Any) -> Any:
        if not isinstance(v, list):
            raise ValueError(f"want an array, got {type(v).__name__}")
        return [self.item.decode(x) for x in v]

    def encode(self, v: Any) -> Any:
        return [self.item.encode(x) for x in v]


class MapOf(Codec):
    def __init__(self, value: Codec):
        self.value = value

    def accepts(self, v: Any) -> bool:
        return isinstance(v, dict)

    def decode(self, v: Any) -> Any:
        if not isinstance(v, dict):
            raise ValueError(f"want an object, got {type(v).__name__}")
        return {k: self.value.decode(x) for k, x in v.items()}

    def encode(self, v: Any) -> Any:
        return {k: self.value.encode(x) for k, x in v.items()}


class OneOf(Codec):
    """A union: the first variant whose JSON shape matches reads the value."""

    def __init__(self, *variants: Codec):
        self.variants = variants

    def accepts(self, v: Any) -> bool:
        return any(c.accepts(v) for c in self.variants)

    def decode(self, v: Any) -> Any:
        for c in self.variants:
            if c.accepts(v):
                return c.decode(v)
        raise ValueError(f"no variant reads a {type(v).__name__}")

    def encode(self, v: Any) -> Any:
        return v.to_dict() if isinstance(v, Model) else v


class Ref(Codec):
    """A nested model, looked up by name in models.py when first used."""

    def __init__(self, name: str):
        self.name = name
        self._cls: Optional[Type[Model]] = None

    def cls(self) -> Type["Model"]:
        if self._cls is None:
            self._cls = getattr(sys.modules["paddock.models"], self.name)
        return self._cls

    def accepts(self, v: Any) -> bool:
        return isinstance(v, dict)

    def decode(self, v: Any) -> Any:
        if not isinstance(v, dict):
            raise ValueError(f"want an object ({self.name}), got {type(v).__name__}")
        return self.cls().from_dict(v)

    def encode(self, v: Any) -> Any:
        return v.to_dict()


# A field of a model: its attribute, its JSON name, its codec and whether
# the schema requires it.
Field = Tuple[str, str, Codec, bool]


class Model:
    """The base of every generated model: from_dict and to_dict by the
    class's WIRE table."""

    WIRE: ClassVar[Sequence[Field]] = ()

    @classmethod
    def from_dict(cls: Type[M], d: Mapping[str, Any]) -> M:
        """Reads the model from a decoded JSON object; unknown keys are ignored."""
        if not isinstance(d, Mapping):
            raise ValueError(f"{cls.__name__}: want an object, got {type(d).__name__}")
        kwargs: Dict[str, Any] = {}
        for attr, key, codec, required in cls.WIRE:
            if key not in d or d[key] is None:
                if required:
                    raise ValueError(f"{cls.__name__}: {key} is required")
                continue
            try:
                kwargs[attr] = codec.decode(d[key])
            except ValueError as e:
                raise ValueError(f"{cls.__name__}.{key}: {e}") from None
        return cls(**kwargs)

    def to_dict(self) -> Dict[str, Any]:
        """The model as a JSON object; optional fields that are None are left out."""
        out: Dict[str, Any] = {}
        for attr, key, codec, required in self.WIRE:
            v = getattr(self, attr)
            if v is None and not required:
                continue
            out[key] = codec.encode(v)
        return out
