"""A study is one registered object: :class:`Study`, in the :data:`STUDIES` registry.

Each study is a sub-package ``scheduler/studies/<name>/`` holding

- ``study.py``: its :class:`Study` entry, registered with :func:`register_study` when imported;
- ``config.schema.yaml``: the schema of its config section ``<name>:`` (every key's type,
  default, bounds and description: the one home of its defaults);
- a plan (``plan.py``): a frozen object built from the validated, defaults-filled config by
  ``Study.plan``, answering ``targets()`` (what ``rule all`` asks for), the paths the study writes
  and the settings of each step;
- its steps, statistics, figures; and, outside the package, its rules file
  ``workflow/rules/<name>.smk``, its report captions ``workflow/report/<name>/`` and its tests
  ``tests/studies/<name>/``.

:func:`discover_studies` imports every sub-package's ``study`` module, so adding a study adds
files and edits none: the workflow (``workflow/rules/common.smk``) validates the configuration
against :func:`config_schema` (the root schema with every study's section), plans the selected
studies with :func:`plan_studies`, includes their rules files and gathers their targets.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from scheduler.core.config_schema import fill_defaults, load_schema
from scheduler.core.errors import ConfigurationError
from scheduler.core.registry import Registry

__all__ = [
    "ROOT_SCHEMA",
    "STUDIES",
    "SetupCall",
    "Study",
    "StudyPlan",
    "config_schema",
    "discover_studies",
    "plan_studies",
    "register_study",
    "selected_studies",
    "setup_calls",
    "study_section",
    "validated_config",
]

#: The schema of the keys every study shares (``studies``, ``seed``, the trace catalogue, the
#: archive, how jobs run); :func:`config_schema` adds each study's section to it.
ROOT_SCHEMA = Path(__file__).with_name("config.schema.yaml")
#: The file name of a study's section schema, in the study's package folder.
SECTION_SCHEMA = "config.schema.yaml"

#: A call made before any plan is built and again in every worker process of the step pool
#: (``(function, args)``): a study's registrations that other studies' plans may read (the
#: learned study registers its functions LF1 … as policies).
SetupCall = tuple[Callable[..., Any], tuple[Any, ...]]


class StudyPlan(Protocol):
    """What the workflow asks of every study's plan (each plan adds its paths and settings)."""

    def targets(self) -> list[str]:
        """The files ``rule all`` asks for (paths relative to the working directory)."""
        ...


@dataclass(frozen=True)
class Study:
    """A registered study.

    Attributes
    ----------
    name
        The config section, the rules file ``workflow/rules/<name>.smk``, the folders
        ``results/<name>/``, ``logs/<name>/`` and ``workflow/report/<name>/``.
    title
        Its name for readers: the report's category, the docs.
    question
        One paragraph: the question it answers and the source it reproduces (the report's
        landing page).
    plan
        Builds the plan from a whole configuration (the plan validates its section).
    rank
        Its place among the studies (the default ``studies`` list, the report, the docs).
    setup
        The :data:`SetupCall` s its configuration implies (none by default).
    """

    name: str
    title: str
    question: str
    plan: Callable[[Mapping[str, Any]], StudyPlan]
    rank: int
    setup: Callable[[Mapping[str, Any]], Sequence[SetupCall]] = field(default=lambda config: ())

    @property
    def package(self) -> str:
        return f"{__package__.rsplit('.', 1)[0]}.{self.name}"

    @property
    def schema_path(self) -> Path:
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise ConfigurationError(f"study {self.name!r}: no package {self.package}")
        return Path(next(iter(spec.submodule_search_locations))) / SECTION_SCHEMA

    @property
    def rules(self) -> str:
        """Its rules file, relative to ``workflow/rules/``."""
        return f"{self.name}.smk"


#: Every study, in registration order (:func:`discover_studies` registers them by rank).
STUDIES: Registry[Study] = Registry("study", canonical=str.lower, plural="studies")


def register_study(study: Study) -> Study:
    """Add ``study`` to :data:`STUDIES` (a ``study`` module calls it once, when imported)."""
    return STUDIES.add(study.name, study, study.question)


def _study_packages() -> list[str]:
    """The sub-packages of ``scheduler.studies`` that hold a ``study`` module."""
    parent = importlib.import_module(__package__.rsplit(".", 1)[0])
    names = []
    for info in pkgutil.iter_modules(parent.__path__):
        if info.ispkg and importlib.util.find_spec(f"{parent.__name__}.{info.name}.study"):
            names.append(info.name)
    return sorted(names)


def discover_studies() -> tuple[Study, ...]:
    """Import every study's ``study`` module (once) and return the studies by rank."""
    parent = __package__.rsplit(".", 1)[0]
    for name in _study_packages():
        importlib.import_module(f"{parent}.{name}.study")
    return tuple(sorted(STUDIES.values(), key=lambda s: (s.rank, s.name)))


#: Schema keywords of schedlab's, resolved when the schema is composed: ``x-names:
#: "module:NAME"`` becomes ``enum`` holding the names of the registry or sequence ``NAME`` of
#: ``module``, and ``x-default: "module:NAME"`` becomes ``default`` holding them (a list of names
#: has one home: its registry or constant in the package); ``x-maximum: "module:NAME"`` becomes
#: ``maximum`` holding the number ``NAME`` (a bound the package's own checks apply too, e.g. the
#: learner's settings, has one home: that constant).
NAMES_KEYWORD = "x-names"
DEFAULT_KEYWORD = "x-default"
MAXIMUM_KEYWORD = "x-maximum"


def _attribute(reference: str) -> Any:
    module, _, attribute = str(reference).partition(":")
    return getattr(importlib.import_module(module), attribute)


def _names_of(reference: str) -> list[Any]:
    value = _attribute(reference)
    return list(value.names() if isinstance(value, Registry) else value)


def _number_of(reference: str) -> int | float:
    value = _attribute(reference)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{MAXIMUM_KEYWORD}: {reference} is not a number: {value!r}")
    return int(value) if float(value).is_integer() else float(value)


def _resolve_names(node: Any) -> Any:
    if isinstance(node, dict):
        for keyword, target in ((NAMES_KEYWORD, "enum"), (DEFAULT_KEYWORD, "default")):
            reference = node.pop(keyword, None)
            if reference is not None:
                node[target] = _names_of(reference)
        reference = node.pop(MAXIMUM_KEYWORD, None)
        if reference is not None:
            node["maximum"] = _number_of(reference)
        for item in node.values():
            _resolve_names(item)
    elif isinstance(node, list):
        for item in node:
            _resolve_names(item)
    return node


def config_schema(names: Iterable[str] | None = None) -> dict[str, Any]:
    """The schema of a whole configuration: the root schema, its ``studies`` key listing the
    registered studies (all of them by default), and the section schema of each study in
    ``names`` (every registered study when None)."""
    studies = discover_studies()
    wanted = {s.name for s in studies} if names is None else set(names)
    schema = load_schema(ROOT_SCHEMA)
    known = [s.name for s in studies]
    studies_key = schema["properties"]["studies"]
    studies_key["items"]["enum"] = known
    studies_key["default"] = known
    for study in studies:
        if study.name in wanted:
            section = load_schema(study.schema_path)
            section.setdefault("default", {})
            schema["properties"][study.name] = section
    return _resolve_names(schema)


def validated_config(
    config: Mapping[str, Any] | None, names: Iterable[str] | None = None
) -> dict[str, Any]:
    """``config`` checked against :func:`config_schema` with every default filled in (a copy).

    Only the sections of the studies in ``names`` are checked and kept (by default the studies
    ``config`` selects: its ``studies`` key); the other studies' sections are left out of the
    result, unchecked (a study left out is neither checked nor planned).
    """
    known = {study.name for study in discover_studies()}
    instance = dict(config or {})
    if names is None:
        shared = config_schema([])
        for name in sorted(known):  # any value: a section is checked only when selected
            shared["properties"][name] = {"description": f"the {name} study's section"}
        names = fill_defaults(instance, shared)["studies"]
    chosen = list(names)
    for name in known.difference(chosen):
        instance.pop(name, None)
    return fill_defaults(instance, config_schema(chosen))


def study_section(config: Mapping[str, Any] | None, name: str) -> tuple[dict[str, Any], Any]:
    """``(whole, section)``: ``config`` validated for study ``name`` alone (the shared keys and
    its section, defaults filled) and its section. Every plan starts here."""
    whole = validated_config(config, [name])
    return whole, whole[name]


def selected_studies(config: Mapping[str, Any]) -> tuple[Study, ...]:
    """The studies a validated ``config`` selects (its ``studies`` key), by rank."""
    selected = set(config["studies"])
    return tuple(s for s in discover_studies() if s.name in selected)


def plan_studies(config: Mapping[str, Any]) -> dict[str, StudyPlan]:
    """Plan every selected study of a validated ``config``: first every selected study's setup
    calls (so that a plan may name what another study registers), then the plans, by rank."""
    studies = selected_studies(config)
    for study in studies:
        for function, args in study.setup(config):
            function(*args)
    return {study.name: study.plan(config) for study in studies}


def setup_calls(config: Mapping[str, Any]) -> list[SetupCall]:
    """Every selected study's setup calls (for the step pool's worker processes)."""
    return [call for study in selected_studies(config) for call in study.setup(config)]
