"""One registry pattern for everything that has kinds (policies, selectors, and later
predictors, corrections, redirection rules).

A :class:`Registry` maps a canonical name to an item; a family module fills it with a decorator
when imported, and every list of names (config validation, tables, figures, CLI help) is read from
it, never written a second time::

    SELECTORS = Registry("selector", canonical=str.lower)

    @SELECTORS.decorator("random", description="uniform choice each period")
    class RandomSelector: ...

    SELECTORS.lookup("Random")   # -> the class; unknown names raise ConfigurationError
    SELECTORS.names()            # -> ("random", ...) in registration order
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Generic, TypeVar

from scheduler.core.errors import ConfigurationError, quote

T = TypeVar("T")


def _identity(name: str) -> str:
    return name


_NUMBERED = re.compile(r"^(.*?)([0-9]+)$")


def name_listing(names: Iterable[str]) -> str:
    """``names`` joined by commas, a run of five or more numbered names with one prefix and
    consecutive numbers written as its ends (``LF1..LF576``): an error listing the known
    names stays short when hundreds of learned functions are registered."""
    out: list[str] = []
    run: list[tuple[str, int, str]] = []

    def flush() -> None:
        if len(run) >= 5:
            out.append(f"{run[0][2]}..{run[-1][2]}")
        else:
            out.extend(name for _, _, name in run)
        run.clear()

    for name in names:
        match = _NUMBERED.match(name)
        if match is None:
            flush()
            out.append(name)
            continue
        prefix, number = match.group(1), int(match.group(2))
        if run and not (run[-1][0] == prefix and run[-1][1] + 1 == number):
            flush()
        run.append((prefix, number, name))
    flush()
    return ", ".join(out)


class Registry(Mapping[str, T], Generic[T]):
    """Named items of one kind, in registration order; read-only for its users (a Mapping).

    Parameters
    ----------
    kind
        What the items are, singular (``"policy"``), used in error messages.
    canonical
        Maps a name as a user writes it to the registered spelling (``str.upper`` for
        policies: ``spf`` finds ``SPF``); registered names must already be canonical.
    plural
        The plural of ``kind`` for messages (default: ``kind + "s"``, ``policy`` → policies).
    """

    def __init__(
        self,
        kind: str,
        *,
        canonical: Callable[[str], str] = _identity,
        plural: str | None = None,
    ) -> None:
        self.kind = kind
        self.plural = plural or (kind[:-1] + "ies" if kind.endswith("y") else kind + "s")
        self._canonical = canonical
        self._items: dict[str, T] = {}
        self._descriptions: dict[str, str] = {}

    # -- filling ----------------------------------------------------------------------------
    def add(self, name: str, item: T, description: str = "") -> T:
        """Register ``item`` under ``name``; a name registered twice is a programming error."""
        if not isinstance(name, str) or not name or self._canonical(name) != name:
            raise ValueError(f"{self.kind} name {name!r} is not in canonical form")
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = item
        self._descriptions[name] = description
        return item

    def decorator(self, name: str, description: str = "") -> Callable[[T], T]:
        """``@registry.decorator(name, description)``: :meth:`add` the decorated object."""

        def register(item: T) -> T:
            return self.add(name, item, description)

        return register

    def remove(self, name: str) -> T:
        """Unregister ``name`` and return its item (tests and plugins that register temporarily)."""
        self._descriptions.pop(name, None)
        return self._items.pop(name)

    # -- reading ----------------------------------------------------------------------------
    def canonical(self, name: object) -> str | None:
        """The registered spelling of ``name``, or None when it is not registered."""
        if not isinstance(name, str):
            return None
        key = self._canonical(name.strip())
        return key if key in self._items else None

    def lookup(self, name: object, *, where: str = "") -> T:
        """The item called ``name`` (in any spelling ``canonical`` accepts).

        Raises
        ------
        ConfigurationError
            ``name`` is not registered; the message lists the known names and starts with
            ``where`` (a config key, a CLI option) when given.
        """
        key = self.canonical(name)
        if key is None:
            prefix = f"{where}: " if where else ""
            raise ConfigurationError(
                f"{prefix}unknown {self.kind} {quote(name)}; known {self.plural}: "
                f"{name_listing(self._items)}"
            )
        return self._items[key]

    def names(self) -> tuple[str, ...]:
        """Every registered name, in registration order."""
        return tuple(self._items)

    def description(self, name: str) -> str:
        """The one-line description registered with ``name``."""
        self.lookup(name)  # raises for an unknown name
        return self._descriptions[self.canonical(name)]  # type: ignore[index]

    def __getitem__(self, name: str) -> T:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._items)})"
